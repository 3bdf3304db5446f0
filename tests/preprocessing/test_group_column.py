"""``group_id`` kept only as the events' column: every reader sees what stats rows showed.

Preprocessing used to write each group as a row of the stats table
(``PlaneEdit.set_stat(rows, "group_id", values)``). Each test here runs that old path
beside today's on real fixtures and checks that the tables an event's arguments are
read from (``stats_in_order``), the event columns, trace details and the trace viewer's
JSON come out the same.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import all_host_files

from tensorboard_plugin_profile.preprocessing.plane_edit import PlaneEdit
from tensorboard_plugin_profile.preprocessing.preprocess import is_grouped, preprocess
from tensorboard_plugin_profile.store import frames_codec
from tensorboard_plugin_profile.tools import trace_details, trace_viewer
from tensorboard_plugin_profile.tools.trace_viewer_at import trace_index_of
from tensorboard_plugin_profile.xspace import read_xspace, schema
from tensorboard_plugin_profile.xspace.event_stats import stats_in_order

from .test_preprocess import derived_lines_space, make_space

FILES = all_host_files()


def _groups_as_stat_rows(edit: PlaneEdit, values, events=None) -> None:
    """What ``set_groups`` replaced: one ``group_id`` row per grouped event."""
    values = np.asarray(values, dtype=np.int64)
    rows = np.arange(len(values)) if events is None else np.asarray(events, dtype=np.int64)
    edit.set_stat(rows[values >= 0], schema.GROUP_ID, values[values >= 0])


def _old_and_new(make, monkeypatch) -> tuple:
    new = preprocess(make())
    with monkeypatch.context() as patch:
        patch.setattr(PlaneEdit, "set_groups", _groups_as_stat_rows)
        old = preprocess(make())
    return old, new


def _rows(table: pd.DataFrame) -> list:
    """The long table as comparable tuples (category codes and dtypes aside)."""
    columns = [table[c].astype(object).where(table[c].notna(), None) for c in table.columns]
    return list(zip(*[c.tolist() for c in columns]))


def _check_same(old, new) -> None:
    assert [p.name for p in old.planes] == [p.name for p in new.planes]
    for before, after in zip(old.planes, new.planes):
        assert before.implicit_group is None
        assert not (after.stats["stat"] == schema.GROUP_ID).any()  # the column only
        assert _rows(stats_in_order(after)) == _rows(before.stats), after.name
        assert list(after.events.columns) == list(before.events.columns)
        for column in before.events.columns:
            assert _rows(after.events[[column]]) == _rows(before.events[[column]]), column
        assert after.stat_names == before.stat_names
        grouped = np.flatnonzero(after.events[schema.GROUP_ID].notna().to_numpy())
        for row in grouped[:: max(1, len(grouped) // 50)].tolist():
            assert after.event_stat(schema.GROUP_ID, at=np.array([row])).tolist() == (
                before.event_stat(schema.GROUP_ID, at=np.array([row])).tolist()
            )
    assert old.group_names == new.group_names


@pytest.mark.parametrize("pure_python", ["0", "1"])
def test_the_group_column_shows_what_group_rows_showed_on_a_gpu_space(monkeypatch, pure_python):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", pure_python)
    old, new = _old_and_new(derived_lines_space, monkeypatch)
    _check_same(old, new)
    gpu = new.plane("/device:GPU:0")
    # Kernels got is_eager and flows after their group; the derived Steps event has its
    # group_id first, then step_name; the copy inherited a group after its own stats.
    names = stats_in_order(gpu)
    steps = int(np.flatnonzero(gpu.events["name"].astype(str).to_numpy() == "0")[0])
    assert names[names["event"] == steps]["stat"].astype(str).tolist() == ["group_id", "step_name"]
    copy = int(np.flatnonzero(gpu.events["name"].astype(str).to_numpy() == "MemcpyH2D")[0])
    assert names[names["event"] == copy]["stat"].astype(str).tolist()[-1] == "group_id"
    assert len(gpu.implicit_group.events) >= 3
    assert "".join(trace_viewer.trace_events_json(new)) == "".join(
        trace_viewer.trace_events_json(old)
    )


@pytest.mark.parametrize("pure_python", ["0", "1"])
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parents[3].name}/{p.name}" for p in FILES])
def test_every_fixture_lists_an_events_stats_as_before(path, pure_python, monkeypatch):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", pure_python)
    old, new = _old_and_new(lambda: read_xspace(str(path)), monkeypatch)
    if is_grouped(read_xspace(str(path))):  # the file's own rows, untouched
        assert all(p.implicit_group is None for p in new.planes)
        return
    _check_same(old, new)
    assert "".join(trace_viewer.trace_events_json(new, 20000)) == "".join(
        trace_viewer.trace_events_json(old, 20000)
    )
    index_old, index_new = trace_index_of([("h", old)]), trace_index_of([("h", new)])
    assert index_new.num_events == index_old.num_events
    shown = np.flatnonzero(index_new.group_id >= 0)
    for position in shown[:: max(1, len(shown) // 40)].tolist():
        assert trace_details.details(index_new, position) == trace_details.details(
            index_old, position
        )


def test_already_grouped_files_keep_their_rows():
    grouped = [p for p in FILES if is_grouped(read_xspace(str(p)))]
    assert grouped  # gpu_multi_worker: its profiler grouped it
    for path in grouped:
        space = read_xspace(str(path))
        out = preprocess(space)
        for before, after in zip(space.planes, out.planes):
            assert after.stats is before.stats and after.events is before.events
            assert after.implicit_group is None
            assert _rows(stats_in_order(after)) == _rows(before.stats)


def test_nothing_grouped_costs_no_column():
    python = [("work", 0, 10, {}), ("more", 20, 10, {"_c": 3})]
    out = preprocess(make_space([(0, "/host:CPU", [(1, "python", python)])]))
    group = out.planes[0].events[schema.GROUP_ID]
    assert group.isna().all() and not group.array._mask.strides[0]  # one broadcast value
    assert len(stats_in_order(out.planes[0])) == len(out.planes[0].stats) == 1


def test_a_plane_grouped_by_its_profiler_refuses_group_ids():
    python = [("step", 0, 10, {"group_id": 4})]
    plane = make_space([(0, "/host:CPU", [(1, "python", python)])]).planes[0]
    with pytest.raises(ValueError, match="stats table"):
        PlaneEdit(plane).set_groups(np.array([1]))


def test_the_disk_cache_keeps_the_column_and_its_places():
    path = next(p for p in FILES if "tf_keras_fit" in str(p))
    space = preprocess(read_xspace(str(path)))
    tree, arrays = frames_codec.encode(space)
    back = frames_codec.decode(tree, [np.array(a) for a in arrays])
    for before, after in zip(space.planes, back.planes):
        assert after.events[schema.GROUP_ID].dtype == before.events[schema.GROUP_ID].dtype
        assert after.implicit_group.events.tolist() == before.implicit_group.events.tolist()
        assert after.implicit_group.ranks.tolist() == before.implicit_group.ranks.tolist()
        assert _rows(stats_in_order(after)) == _rows(stats_in_order(before))
    assert len(space.plane("/host:CPU").implicit_group.events) > 0


@pytest.mark.parametrize("pure_python", ["0", "1"])
def test_a_replaced_stat_before_the_group_moves_it_up(monkeypatch, pure_python):
    # The op's own is_eager row (before its other stats) is replaced by grouping's, which
    # goes after group_id: group_id comes after the op's two kept rows, not three.
    monkeypatch.setenv("TBPROF_PURE_PYTHON", pure_python)
    python = [("FunctionRun", 0, 100, {"_r": 1, "_pt": 2, "_p": 77, "id": 5})]
    executor = [
        ("ExecutorState::Process", 20, 50, {"_ct": 2, "_c": 77, "id": 5, "iter_num": 0}),
        ("dense/MatMul:MatMul", 25, 10, {"is_eager": 1, "shape": "(f32[2])", "flops": 8}),
    ]

    def space():
        return make_space([(0, "/host:CPU", [(1, "python", python), (2, "tf_Compute", executor)])])

    old, new = _old_and_new(space, monkeypatch)
    _check_same(old, new)
    host = new.plane("/host:CPU")
    listed = stats_in_order(host)
    op = listed[listed["event"] == 2]["stat"].astype(str).tolist()
    assert op == ["shape", "flops", "group_id", "is_eager"]
    assert host.implicit_group.ranks[host.implicit_group.events == 2].tolist() == [2]

"""Event rows are dense integers below a plane's size: sets of them are flags, not hashes.

Preprocessing asks "which distinct events", "is this event among those" and "at which
index" of tens of millions of event rows. ``np.unique`` and ``np.isin`` answer with a
hash table or a sort of both sides (0.5-0.8 s at 11 M events); a flag per row and its
running count answer the same in one pass. Each test here checks the flag version
against the hash one on random rows, and that the edit's hot path calls neither.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import host_files
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.kernels import compiled, graph_passes
from tensorboard_plugin_profile.preprocessing import flows, group_column, group_roots, plane_edit
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.preprocessing.stat_table import StatRows
from tensorboard_plugin_profile.xspace import columns, event_stats, read_xspace, schema
from tensorboard_plugin_profile.xspace.model import KIND_UINT64

_ROWS = st.lists(st.integers(0, 300), max_size=60).map(lambda v: np.array(v, dtype=np.int64))


@settings(max_examples=200, deadline=None)
@given(st.lists(_ROWS, max_size=5), _ROWS, st.lists(st.integers(-1, 5), max_size=6))
def test_added_rows_by_flags_equal_unique_and_isin(parts, probe, set_at_values):
    stat_rows = [StatRows(rows, f"s{k}", 0) for k, rows in enumerate(parts)]
    added = group_column._Added.of(stat_rows)
    every = np.concatenate([np.zeros(0, dtype=np.int64), *parts])
    events, row_event = np.unique(every, return_inverse=True)
    assert added.events.dtype == np.int64
    assert added.events.tolist() == events.tolist()
    assert added.holds(probe).tolist() == np.isin(probe, events).tolist()
    # split: per event, rows made before the call that set its group, and after.
    row_part = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    set_at = np.resize(np.array(set_at_values or [-1], dtype=np.int64), len(events))
    before = row_part < set_at[row_event]
    count_before = np.bincount(row_event[before], minlength=len(events))
    count_after = np.bincount(row_event, minlength=len(events)) - count_before
    got_before, got_after = added.split(set_at)
    assert got_before.tolist() == count_before.tolist()
    assert got_after.tolist() == count_after.tolist()


@settings(max_examples=200, deadline=None)
@given(_ROWS, _ROWS)
def test_membership_by_flags_equals_isin(values, rows):
    assert group_column._member(values, rows).tolist() == np.isin(values, rows).tolist()


def _refuse(*args, **kwargs):
    raise AssertionError("a hash or sort of event rows on the edit's path")


@pytest.mark.parametrize("pure_python", ["0", "1"])
def test_the_group_places_hash_no_event_rows(monkeypatch, pure_python):
    # Before: _Added.of took np.unique of every added row and implicit_groups np.isin.
    monkeypatch.setenv("TBPROF_PURE_PYTHON", pure_python)
    path = host_files("tf_keras_fit")[0]
    expected = preprocess(read_xspace(str(path)))
    original = plane_edit.implicit_groups
    calls = []

    def strict(*args, **kwargs):
        calls.append(1)
        with monkeypatch.context() as patch:
            patch.setattr(np, "unique", _refuse)
            patch.setattr(np, "isin", _refuse)
            return original(*args, **kwargs)

    monkeypatch.setattr(plane_edit, "implicit_groups", strict)
    got = preprocess(read_xspace(str(path)))
    assert calls
    for before, after in zip(expected.planes, got.planes):
        assert after.implicit_group.events.tolist() == before.implicit_group.events.tolist()
        assert after.implicit_group.ranks.tolist() == before.implicit_group.ranks.tolist()


def _stat_rows_by_isin(stats: pd.DataFrame, names) -> dict:
    """``columns.stat_rows`` as it was: np.isin over the whole code column."""
    categories = stats["stat"].cat.categories
    codes = stats["stat"].cat.codes.to_numpy()
    out: dict = {}
    for i, c in enumerate(categories):
        if str(c) in set(names):
            rows = np.flatnonzero(np.isin(codes, [i]))
            found = out.get(str(c))
            out[str(c)] = rows if found is None else np.sort(np.concatenate([found, rows]))
    return out


_NAMES = ["a", "b", "c", "d"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_NAMES + [None]), max_size=80),
    st.lists(st.sampled_from(_NAMES + ["x"]), max_size=4),
)
def test_stat_rows_by_flags_equal_isin(stat, names):
    stats = pd.DataFrame({"stat": pd.Categorical(stat, categories=_NAMES)})
    got = columns.stat_rows(stats, names)
    expected = _stat_rows_by_isin(stats, names)
    assert {k: v.tolist() for k, v in got.items()} == {k: v.tolist() for k, v in expected.items()}


def test_stat_rows_hash_no_stats_rows(monkeypatch):
    # Before: np.isin of every row's stat code against the wanted ones.
    stats = read_xspace(str(host_files("tf_keras_fit")[0])).plane("/host:CPU").stats
    expected = columns.stat_rows(stats, ["_r", "id", "step_num"])
    monkeypatch.setattr(np, "isin", _refuse)
    got = columns.stat_rows(stats, ["_r", "id", "step_num"])
    assert {k: v.tolist() for k, v in got.items()} == {k: v.tolist() for k, v in expected.items()}
    assert sum(len(v) for v in got.values()) > 0


@pytest.mark.skipif(
    compiled.load(graph_passes.__name__) is None, reason="built without a C compiler"
)
@pytest.mark.parametrize("threads", ["1", "3"])
def test_stat_rows_count_rows_into_place_without_a_flag_or_sort_per_row(threads, monkeypatch):
    # Before: a flag per row of the table, np.flatnonzero over it and a stable argsort of
    # the wanted rows, all on one core. Now one compiled counting sort (split across
    # threads on large tables), equal to the numpy twin (TBPROF_PURE_PYTHON) and to isin.
    stats = read_xspace(str(host_files("tf_keras_fit")[0])).plane("/host:CPU").stats
    names = ["_r", "id", "step_num", "group_id", "absent"]
    monkeypatch.setenv(compiled.PURE_PYTHON_ENV, "1")
    twin = columns.stat_rows(stats, names)
    monkeypatch.setenv(compiled.PURE_PYTHON_ENV, "0")
    monkeypatch.setenv(compiled.PASS_THREADS_ENV, threads)
    monkeypatch.setattr(compiled, "PARALLEL_MIN_ROWS", 0)
    for refused in ("argsort", "flatnonzero", "nonzero", "isin"):
        monkeypatch.setattr(np, refused, _refuse)
    got = columns.stat_rows(stats, names)
    monkeypatch.undo()
    expected = _stat_rows_by_isin(stats, names)
    assert len(got) > 1 and sum(len(v) for v in got.values()) > 0
    for found in (got, twin):
        assert list(found) == list(expected)
        assert {k: v.tolist() for k, v in found.items()} == {
            k: v.tolist() for k, v in expected.items()
        }


def _add_flows_as_it_was(edit, host_id, is_host_plane):
    """``flows.add_flows`` before: a mask and filtered copy of the whole stats table for the
    launches, one table pass per stat, ``np.intersect1d`` of the producer/consumer rows."""
    plane, stats = edit.plane, edit.plane.stats
    launches = stats[(stats["stat"] == schema.CORRELATION_ID) & (stats["kind"] == KIND_UINT64)]
    if len(launches):
        rows = launches["event"].to_numpy()
        ids = launches["int_value"].to_numpy().view(np.uint64)
        category = np.full(len(rows), schema.CONTEXT_TYPE_GPU_LAUNCH, dtype=np.uint64)
        codes = flows.encode(flows.flow_ids(host_id, ids, np.zeros(len(rows))), 0, category)
        direction = flows.FLOW_OUT if is_host_plane else flows.FLOW_IN
        edit.add_stat(rows, schema.FLOW_STAT, codes | np.uint64(direction), KIND_UINT64)
    sides = (
        (schema.PRODUCER_TYPE, schema.PRODUCER_ID, flows.FLOW_OUT),
        (schema.CONSUMER_TYPE, schema.CONSUMER_ID, flows.FLOW_IN),
    )
    for type_stat, id_stat, direction in sides:
        typed, contexts = event_stats.int_stat(plane, type_stat)
        with_id, id_values = event_stats.int_stat(plane, id_stat)
        rows = np.intersect1d(typed, with_id, assume_unique=True)
        if not len(rows):
            continue
        context = contexts[np.searchsorted(typed, rows)]
        context = np.where((context < 0) | (context > schema.CONTEXT_TYPE_MAX), 0, context)
        ids = id_values[np.searchsorted(with_id, rows)].view(np.uint64)
        codes = flows.encode(flows.flow_ids(host_id, ids, context), direction, context)
        edit.add_stat(rows, schema.FLOW_STAT, codes, KIND_UINT64)


@pytest.mark.parametrize("name", ["gpu_multi_worker", "jax_cpu_train", "tf_keras_fit"])
def test_flows_read_the_stats_table_twice_and_match_rows_without_sorting(name, monkeypatch):
    # Before: four passes over the stats table (one per producer/consumer stat), a mask of
    # every row and a filtered copy of the table for the correlation ids, and a sort of
    # the producer/consumer rows (np.intersect1d). Every plane's flows must be the same.
    calls = []
    original = event_stats.stat_rows

    def counted(stats, names):
        calls.append(list(names))
        return original(stats, names)

    added = 0
    for plane in read_xspace(str(host_files(name)[0])).planes:
        edits = plane_edit.PlaneEdit(plane), plane_edit.PlaneEdit(plane)
        _add_flows_as_it_was(edits[0], 7, not schema.is_device_plane(plane.name))
        monkeypatch.setattr(event_stats, "stat_rows", counted)
        monkeypatch.setattr(np, "intersect1d", _refuse)
        calls.clear()
        flows.add_flows(edits[1], 7, not schema.is_device_plane(plane.name))
        monkeypatch.undo()
        assert len(calls) <= 2
        expected, got = (edit.build() for edit in edits)
        for table in ("events", "stats"):
            assert getattr(got, table).equals(getattr(expected, table))
        if len(got.stats):
            added += int((got.stats["stat"] == schema.FLOW_STAT).sum())
        if schema.FLOW_STAT in got.events:
            added += int(got.events[schema.FLOW_STAT].notna().sum())
    assert added > 0


def test_grouping_reads_each_stats_table_once_for_all_its_integer_stats(monkeypatch):
    # Before: one pass over a plane's stats table per stat grouping reads (12 per plane).
    space = read_xspace(str(host_files("tf_keras_fit")[0]))
    names = list(group_roots._COLUMNS)
    expected = {
        (plane.name, name): [a.tolist() for a in event_stats.int_stat(plane, name)]
        for plane in space.planes
        for name in names
    }
    calls = []
    original = event_stats.stat_rows

    def counted(stats, wanted):
        calls.append(list(wanted))
        return original(stats, wanted)

    monkeypatch.setattr(event_stats, "stat_rows", counted)
    nodes = group_roots.Nodes.of(space)
    assert len(calls) <= len(space.planes)
    offsets = np.cumsum([0] + [len(p.events) for p in space.planes])
    for name in names:  # the same rows and values as one name at a time
        stat = nodes.stats[name]
        for k, plane in enumerate(space.planes):
            mine = (stat.rows >= offsets[k]) & (stat.rows < offsets[k + 1])
            got = [(stat.rows[mine] - offsets[k]).tolist(), stat.values[mine].tolist()]
            assert got == expected[(plane.name, name)], (plane.name, name)

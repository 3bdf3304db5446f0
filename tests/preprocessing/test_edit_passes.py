"""PlaneEdit's placement of new events: compiled (_edit_passes.c) and numpy give the same, and
both are what a stable sort of all rows gives; typed columns stay those of the stats."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import all_host_files
from hypothesis import given, settings
from hypothesis import strategies as st
from xspace_builder import space_from_tables as make_space

from tensorboard_plugin_profile.kernels import compiled
from tensorboard_plugin_profile.preprocessing import edit_passes
from tensorboard_plugin_profile.preprocessing.placement import Placement
from tensorboard_plugin_profile.preprocessing.plane_edit import PlaneEdit
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess, preprocess_decoded
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, read_xspace, schema
from tensorboard_plugin_profile.xspace.columns import well_known_columns
from tensorboard_plugin_profile.xspace.event_stats import typed_column
from tensorboard_plugin_profile.xspace.model import KIND_DOUBLE, KIND_STR

BUILT = compiled.load(edit_passes.__name__) is not None
needs_compiled = pytest.mark.skipif(not BUILT, reason="built without a C compiler")
events = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(0, 4)), max_size=60)


def test_the_extension_is_built_here():
    assert BUILT


def _columns(rows, sort: bool) -> tuple:
    if sort:
        rows = sorted(rows, key=lambda r: (r[0], r[1], -r[2]))
    line, begin, duration = np.array(rows, dtype=np.int64).reshape(-1, 3).T
    return line.astype(np.int32), begin, duration


@settings(max_examples=300, deadline=None)
@given(events, events, st.booleans())
def test_insertion_points_are_where_a_stable_sort_puts_new_rows(old, new, sort_old):
    line, begin, duration = _columns(old, sort_old)
    new_line, new_begin, new_duration = _columns(new, False)
    results = [
        edit_passes.insertion_points(
            line, begin, duration, new_line, new_begin, new_duration, pure_python=pure
        )
        for pure in ([False, True] if BUILT else [True])
    ]
    order = np.lexsort(
        (-np.r_[duration, new_duration], np.r_[begin, new_begin], np.r_[line, new_line])
    )
    if (np.lexsort((-duration, begin, line)) != np.arange(len(old))).any():
        assert all(r is None for r in results)  # old rows out of order
        return
    position = np.flatnonzero(order >= len(old))
    expected = np.empty(len(new), dtype=np.int64)
    expected[order[position] - len(old)] = position - np.arange(len(position))
    for result in results:
        assert result is not None and result.tolist() == expected.tolist()


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40), st.lists(st.integers(0, 40), max_size=20))
def test_insert_rows_and_shifted_rows_agree(old, at):
    old_values = np.array(old, dtype=np.int16)
    at_rows = np.sort(np.minimum(np.array(at, dtype=np.int64), len(old)))
    values = np.arange(len(at_rows), dtype=np.int16) + 100
    compiled = edit_passes.insert_rows(old_values, at_rows, values, pure_python=False)
    fallback = edit_passes.insert_rows(old_values, at_rows, values, pure_python=True)
    assert compiled.dtype == fallback.dtype and compiled.tolist() == fallback.tolist()
    for dtype in (np.int64, np.int32):
        shifted, numpy_shifted = np.empty(len(old), dtype=dtype), np.empty(len(old), dtype=dtype)
        edit_passes.shifted_rows(at_rows, shifted, pure_python=False)
        edit_passes.shifted_rows(at_rows, numpy_shifted, pure_python=True)
        assert shifted.tolist() == numpy_shifted.tolist()
        assert fallback[shifted].tolist() == old_values.tolist()


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=60))
def test_stable_dest_agrees(keys):
    keys = np.array(keys, dtype=np.int64)
    ordered, numpy_ordered = keys.copy(), keys.copy()
    dest = edit_passes.stable_dest(ordered, 10, pure_python=False)
    numpy_dest = edit_passes.stable_dest(numpy_ordered, 10, pure_python=True)
    assert dest.tolist() == numpy_dest.tolist() and ordered.tolist() == numpy_ordered.tolist()
    assert ordered[dest].tolist() == keys.tolist()
    assert dest.tolist() == np.argsort(np.argsort(keys, kind="stable"), kind="stable").tolist()


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 120), max_size=80),
    st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
    st.integers(2, 9),
    st.one_of(st.none(), st.tuples(st.integers(0, 80), st.sampled_from([-1, 121, 127]))),
)
def test_used_codes_split_across_threads_give_the_same_flags(codes, dtype, threads, bad):
    # Parts of the codes set their flags on several threads (every store writes 1): the
    # same flags as one thread and numpy; a code out of range anywhere is an error.
    codes = np.array(codes, dtype=dtype)
    if bad is not None:
        codes = np.insert(codes, min(bad[0], len(codes)), bad[1]).astype(dtype)
        for pure, n in ((False, 1), (False, threads), (True, 1)):
            with pytest.raises(ValueError, match="out of range"):
                edit_passes.used_codes(codes, 121, pure_python=pure, threads=n)
        return
    one = edit_passes.used_codes(codes, 121, pure_python=False, threads=1)
    split = edit_passes.used_codes(codes, 121, pure_python=False, threads=threads)
    twin = edit_passes.used_codes(codes, 121, pure_python=True)
    assert split.tobytes() == one.tobytes() == twin.tobytes()
    assert np.flatnonzero(one).tolist() == sorted(set(codes.tolist()))


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=60), st.sampled_from([np.int8, np.int16, np.int32]))
def test_used_codes_and_recode_agree(codes, dtype):
    codes = np.array(codes, dtype=np.int16)
    table = (np.arange(201) * 7 % 101).astype(dtype)
    for pure in (False, True):
        used = edit_passes.used_codes(codes, 201, pure_python=pure)
        assert np.flatnonzero(used).tolist() == sorted(set(codes.tolist()))
        out = edit_passes.recode(codes, table, pure_python=pure)
        assert out.dtype == table.dtype and out.tolist() == table[codes].tolist()
        in_place = codes.astype(np.int64)  # written over its own codes
        wide = np.arange(201, dtype=np.int64)[::-1].copy()
        assert edit_passes.recode(in_place, wide, out=in_place, pure_python=pure) is in_place
        assert in_place.tolist() == wide[codes].tolist()


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=40),
    st.lists(st.integers(0, 40), max_size=10),
    st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
)
def test_insert_recoded_agrees(codes, at, dtype):
    codes = np.array(codes, dtype=np.int16)
    table = (np.arange(201) * 7 % 101).astype(dtype)
    at_rows = np.sort(np.minimum(np.array(at, dtype=np.int64), len(codes)))
    values = (np.arange(len(at_rows)) + 100).astype(dtype)
    expected = np.insert(table[codes], at_rows, values)
    for pure in (False, True):
        out = edit_passes.insert_recoded(codes, table, at_rows, values, pure_python=pure)
        assert out.dtype == table.dtype and out.tolist() == expected.tolist()


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 200), max_size=60),
    st.lists(st.integers(0, 60), max_size=20),
    st.integers(2, 9),
    st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
)
def test_the_split_passes_give_the_same_bytes_for_any_thread_count(codes, at, threads, dtype):
    # Each thread fills its own range of the output, found by binary search; with more
    # threads than rows some ranges are empty. Forced here below the size threshold.
    codes = np.array(codes, dtype=np.int16)
    table = (np.arange(201) * 7 % 101).astype(dtype)
    at_rows = np.sort(np.minimum(np.array(at, dtype=np.int64), len(codes)))
    values = (np.arange(len(at_rows)) + 100).astype(dtype)
    old = table[codes]
    expected = np.insert(old, at_rows, values)
    for count in (1, threads):
        out = edit_passes.insert_rows(old, at_rows, values, pure_python=False, threads=count)
        assert out.dtype == expected.dtype and out.tobytes() == expected.tobytes()
        out = edit_passes.insert_recoded(
            codes, table, at_rows, values, pure_python=False, threads=count
        )
        assert out.tobytes() == expected.tobytes()
        for width in (np.int32, np.int64):
            shifted = np.empty(len(old), dtype=width)
            edit_passes.shifted_rows(at_rows, shifted, pure_python=False, threads=count)
            assert expected[shifted].tobytes() == old.tobytes()
            assert (np.diff(shifted) >= 1).all()


def test_passes_split_only_above_the_threshold(monkeypatch):
    monkeypatch.delenv(compiled.PASS_THREADS_ENV, raising=False)
    assert compiled.pass_threads(compiled.PARALLEL_MIN_ROWS - 1) == 1
    assert compiled.pass_threads(10, threads=3) == 3  # an explicit count wins
    assert compiled.pass_threads(10, threads=100) == compiled.MAX_PASS_THREADS
    monkeypatch.setenv(compiled.PASS_THREADS_ENV, "1")
    assert compiled.pass_threads(compiled.PARALLEL_MIN_ROWS) == 1
    monkeypatch.setenv(compiled.PASS_THREADS_ENV, "2")
    assert compiled.pass_threads(compiled.PARALLEL_MIN_ROWS) == 2
    assert compiled.pass_threads(compiled.PARALLEL_MIN_ROWS - 1) == 1


@needs_compiled
@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_preprocessing_with_split_passes_gives_the_same_planes(path, monkeypatch):
    # The whole preprocessing of each fixture with every splitting pass on three threads
    # (the threshold lowered to nothing), against one thread.
    results = []
    for threads in ("1", "3"):
        monkeypatch.setenv(compiled.PASS_THREADS_ENV, threads)
        monkeypatch.setattr(compiled, "PARALLEL_MIN_ROWS", 0)
        results.append(preprocess_decoded(read_xspace(str(path))))
    for plane, expected in zip(*(r.planes for r in results)):
        for table in ("events", "stats", "lines", "event_metadata"):
            assert _frame_values(getattr(plane, table)) == _frame_values(getattr(expected, table))


def test_codes_out_of_range_are_rejected():
    for pure in (False, True):
        with pytest.raises(ValueError):
            edit_passes.recode(np.array([3], dtype=np.int8), np.arange(3), pure_python=pure)
        with pytest.raises(ValueError):
            edit_passes.stable_dest(np.array([5], dtype=np.int64), 5, pure_python=pure)
        with pytest.raises(ValueError):
            edit_passes.insert_recoded(
                np.array([3], dtype=np.int8), np.arange(3), np.array([0]), [1], pure_python=pure
            )


def test_insert_rows_rejects_unsorted_positions():
    with pytest.raises(ValueError):
        edit_passes.insert_rows(np.arange(4), np.array([3, 1]), np.array([7, 8]), pure_python=False)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("pure", [False, True])
def test_placement_is_a_stable_sort_of_old_then_new_rows(seed, pure, monkeypatch):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1" if pure else "0")
    rng = np.random.default_rng(seed)
    n_old, n_new = int(rng.integers(2, 300)), int(rng.integers(1, 40))
    line = rng.integers(0, 4, n_old + n_new).astype(np.int32)
    begin, duration = rng.integers(0, 20, n_old + n_new), rng.integers(0, 5, n_old + n_new)
    if seed % 3:  # old rows already in (line, begin, longest first) order: the insertion path
        old = np.lexsort((-duration[:n_old], begin[:n_old], line[:n_old]))
        line[:n_old], begin[:n_old], duration[:n_old] = line[old], begin[old], duration[old]
    table = pd.DataFrame(
        {"line": line[:n_old], "begin_ps": begin[:n_old], "duration_ps": duration[:n_old]}
    )
    placed = Placement.of(table, line[n_old:], begin[n_old:], duration[n_old:])
    expected = np.lexsort((-duration, begin, line))
    assert placed.permutation().tolist() == expected.tolist()
    assert placed.new_row[expected].tolist() == list(range(n_old + n_new))
    assert placed.place(begin[:n_old], begin[n_old:]).tolist() == begin[expected].tolist()


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_typed_columns_are_those_of_the_stats_after_preprocessing(path):
    # Untouched typed columns are carried to the new rows, touched ones rebuilt: both
    # must be what the stats table says (but group_id: only the column holds it, unless
    # the file came grouped).
    for plane in preprocess(read_xspace(str(path))).planes:
        rebuilt = well_known_columns(len(plane.events), plane.stats, schema.COLUMN_STATS)
        assert not set(schema.ROW_STATS) & set(plane.events.columns)  # read from the rows
        if plane.implicit_group is not None:
            assert not (plane.stats["stat"] == schema.GROUP_ID).any()
            del rebuilt[schema.GROUP_ID]
        for name, values in rebuilt.items():
            ours = plane.events[name]
            assert ours.dtype == values.dtype, name
            assert _values(ours) == _values(values), name
            if isinstance(ours.dtype, pd.CategoricalDtype):
                assert ours.cat.categories.tolist() == values.categories.tolist(), name


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_consuming_the_decoded_columns_gives_the_same_planes(path):
    # preprocess_decoded drops each decoded column once its copy is built; preprocess keeps
    # the (cached) input whole. Both must give the same tables.
    kept, consumed = read_xspace(str(path)), read_xspace(str(path))
    widths = [len(plane.events.columns) for plane in consumed.planes]
    ours, reference = preprocess_decoded(consumed), preprocess(kept)
    for plane, expected in zip(ours.planes, reference.planes):
        for table in ("events", "stats", "lines", "event_metadata"):
            assert _frame_values(getattr(plane, table)) == _frame_values(getattr(expected, table))
    assert [len(plane.events.columns) for plane in kept.planes] == widths
    edited = [i for i, p in enumerate(ours.planes) if p.events is not consumed.planes[i].events]
    assert all(len(consumed.planes[i].events.columns) < widths[i] for i in edited)


def _values(column) -> list:
    return [None if pd.isna(v) else v for v in pd.Series(column).astype(object).tolist()]


def _edited(plane, new_events: list, pure: bool, monkeypatch):
    """``plane`` with these (line, name, begin_ps, duration_ps) events added, stats set on
    old and new events (ints, a double, a string)."""
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1" if pure else "0")
    edit = PlaneEdit(plane)
    line = edit.add_line(line_id=99, name="added") if not len(plane.lines) else 0
    meta = [edit.metadata_id(name) for _, name, _, _ in new_events]
    rows = edit.add_events(
        [line if ln is None else ln for ln, *_ in new_events],
        meta,
        [b for *_, b, _ in new_events],
        [d for *_, d in new_events],
    )
    old = np.arange(0, len(plane.events), 2)
    edit.set_stat(np.r_[old, rows], schema.GROUP_ID, np.arange(len(old) + len(rows)))
    edit.add_stat(rows, "_c", 7)
    edit.set_stat(rows[:1], schema.STEP_NAME, ["step 1"], KIND_STR)
    edit.set_stat(old[:2], "avg_us", [0.5, -0.0], KIND_DOUBLE)
    edit.set_stat(old[:1], schema.ROOT_LEVEL, [5])  # replaces the decoded value
    return edit.build()


def _frame_values(frame: pd.DataFrame) -> dict:
    return {c: (str(frame[c].dtype), _values(frame[c])) for c in frame.columns}


@pytest.mark.parametrize("empty", [False, True])
def test_plane_edit_gives_the_same_with_and_without_the_compiled_passes(empty, monkeypatch):
    space = make_space(
        [(1, "/host:CPU", [] if empty else [(1, "a", _EVENTS), (2, "b", _EVENTS[:2])])]
    )
    plane = space.plane("/host:CPU")
    added = [(None, "new", 5_000, 2_000), (None, "new", 5_000, 9_000), (None, "late", 0, 0)]
    built = [_edited(plane, added, pure, monkeypatch) for pure in (False, True)]
    for table in ("events", "stats", "lines", "event_metadata"):
        assert _frame_values(getattr(built[0], table)) == _frame_values(getattr(built[1], table))
    events = built[0].events
    assert len(events) == len(plane.events) + 3
    # Each line's events by begin, longest first; typed columns are what the stats say.
    key = list(zip(events["line"], events["begin_ps"], -events["duration_ps"]))
    assert key == sorted(key)
    rebuilt = well_known_columns(len(events), built[0].stats, schema.COLUMN_STATS)
    for name, values in rebuilt.items():
        assert _values(events[name]) == _values(values), name
    assert built[0].stats["event"].is_monotonic_increasing
    consumers = typed_column(built[0], schema.CONSUMER_ID)
    assert _values(consumers[(events["name"] == "new").to_numpy()]) == [7, 7]
    if not empty:
        stats = built[0].stats
        assert stats[stats["stat"] == schema.ROOT_LEVEL]["int_value"].tolist() == [5, 1]
        levels = typed_column(built[0], schema.ROOT_LEVEL)
        assert _values(levels[(events["name"] == "outer").to_numpy()]) == [5, 1]


_EVENTS = [
    ("outer", 0, 10_000, {"_r": 1}),
    ("inner", 1_000, 2_000, {"step_num": 3}),
    ("inner", 5_000, 2_000, {"tf_op": "x:Y"}),
    ("after", 12_000, 1_000, {}),
]


@pytest.mark.parametrize("pure", [True, False])
def test_a_new_metadata_id_beyond_int32_widens_the_column(monkeypatch, pure):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1" if pure else "0")
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.event_metadata[2**31 - 1].name = "last int32 id"
    plane.lines.add(id=1, name="main").events.add(metadata_id=2**31 - 1, duration_ps=10)
    decoded = decode_xspace(space.SerializeToString(), "ids").plane("/host:CPU")
    assert decoded.events["metadata_id"].dtype == np.int32
    edit = PlaneEdit(decoded)
    added = edit.metadata_id("added")
    edit.add_events([0], [added], [5], [1])
    events = edit.build().events
    assert added == 2**31
    assert events["metadata_id"].tolist() == [2**31 - 1, 2**31]
    assert events["name"].astype(str).tolist() == ["last int32 id", "added"]

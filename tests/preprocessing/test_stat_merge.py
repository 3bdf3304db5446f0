"""PlaneEdit's merged stats table: the compiled pass (_stat_merge.c) and the numpy path
give the same table and typed columns, and that table is the stable sort by event of
the old rows kept and the new ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.kernels import compiled
from tensorboard_plugin_profile.preprocessing import stat_merge
from tensorboard_plugin_profile.preprocessing.stat_table import StatRows, merged_stats
from tensorboard_plugin_profile.xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR, KIND_UINT64

MERGE = compiled.load(stat_merge.__name__)
needs_compiled = pytest.mark.skipif(MERGE is None, reason="built without a C compiler")
NAMES = ["group_id", "step_name", "flow", "avg_us", "_c"]
INT_NAMES = ["group_id", "_c", "flow"]
STRINGS = ["", "x", "y:Z", "\x00"]
FLOATS = [0.0, -0.0, 0.5, float("nan")]


def test_the_extension_is_built_here():
    assert MERGE is not None


def _old_table(rows: list, event_dtype=np.int64) -> pd.DataFrame:
    """rows: (event, name index, int, float index, string index or -1); events int64 as the
    decoder writes them, int32 as an edited table holds them."""
    rows = sorted(rows, key=lambda r: r[0])  # the decoder's tables are sorted by event
    event, name, ints, floats, strs = (list(c) for c in zip(*rows)) if rows else ([],) * 5
    kinds = [KIND_STR if s >= 0 else KIND_DOUBLE if f else KIND_INT64 for f, s in zip(floats, strs)]
    return pd.DataFrame(
        {
            "event": np.array(event, dtype=event_dtype),
            "stat": pd.Categorical.from_codes(np.array(name, dtype=np.int8), categories=NAMES),
            "kind": np.array(kinds, dtype=np.int8),
            "int_value": np.array(ints, dtype=np.int64),
            "float_value": np.array([FLOATS[f] for f in floats], dtype=np.float64),
            "str_value": pd.Categorical.from_codes(
                np.array(strs, dtype=np.int8), categories=pd.Index(STRINGS, dtype=object)
            ),
        }
    )


def _addition(n: int, draw, ascending: bool) -> tuple:
    """(StatRows, replaces old values) of one set_stat/add_stat on events below n."""
    events = draw(st.lists(st.integers(0, n - 1), max_size=12))
    if ascending:
        events = sorted(events)
    name = draw(st.sampled_from(NAMES + ["new_int", "new_str"]))
    kind = draw(st.sampled_from([KIND_INT64, KIND_UINT64, KIND_DOUBLE, KIND_STR]))
    rows = StatRows(np.array(events, dtype=np.int64), name, kind)
    if kind == KIND_DOUBLE:
        rows.floats = np.array([draw(st.sampled_from(FLOATS)) for _ in events])
    elif kind == KIND_STR:
        strs = np.full(len(events), None, dtype=object)
        strs[:] = [draw(st.sampled_from([None, "x", "new", "\x00"])) for _ in events]
        rows.strs = strs
    elif draw(st.booleans()):  # one value broadcast to every event
        rows.ints = np.broadcast_to(np.int64(draw(st.integers(-3, 3))), (len(events),))
    else:
        rows.ints = np.array([draw(st.integers(-(2**63), 2**63 - 1)) for _ in events])
    return rows, draw(st.booleans())


@st.composite
def edits(draw):
    num_old = draw(st.integers(1, 12))
    added = draw(st.integers(0, 4))  # new events, rows after the old ones
    n = num_old + added
    old = draw(
        st.lists(
            st.tuples(
                st.integers(0, num_old - 1),
                st.integers(0, len(NAMES) - 1),
                st.integers(-5, 5),
                st.integers(0, len(FLOATS) - 1),
                st.integers(-1, len(STRINGS) - 1),
            ),
            max_size=25,
        )
    )
    # Ascending: stats on old events only, in order, and old rows keep their order (as
    # PlaneEdit's parts: the compiled merge); else anywhere (the counting sort).
    ascending = draw(st.booleans())
    limit = num_old if ascending else n
    additions = [_addition(limit, draw, ascending) for _ in range(draw(st.integers(0, 5)))]
    new_row = None
    if added or draw(st.booleans()):
        dtype = draw(st.sampled_from([np.int64, np.int32]))  # int32 where the rows fit
        new_row = np.array(draw(st.permutations(range(n))), dtype=dtype)
        if ascending:
            new_row[:num_old] = np.sort(new_row[:num_old])
    event_dtype = draw(st.sampled_from([np.int64, np.int32]))
    return _old_table(old, event_dtype), additions, new_row, n


def _merged(old, additions, new_row, n, pure: bool, threads=None):
    replaced: dict = {}
    for rows, replaces in additions:
        if replaces and len(rows.events):
            found = replaced.get(rows.name)
            replaced[rows.name] = rows.events if found is None else np.r_[found, rows.events]
    parts = [rows for rows, _ in additions if len(rows.events)]
    names = dict.fromkeys(r.name for r in parts)
    int_names = [name for name in names if name in INT_NAMES]
    return merged_stats(old, parts, replaced, new_row, int_names, n, pure, threads)


def _values(column) -> list:
    return [None if pd.isna(v) else v for v in pd.Series(column).astype(object).tolist()]


def _frame(frame: pd.DataFrame) -> dict:
    out = {c: (str(frame[c].dtype), _values(frame[c])) for c in frame.columns}
    out["float_bits"] = frame["float_value"].to_numpy().view(np.int64).tolist()
    for column in ("stat", "str_value"):
        out[column + " categories"] = frame[column].cat.categories.tolist()
    return out


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(edits())
def test_the_compiled_merge_and_numpy_agree(edit):
    (table, typed), (numpy_table, numpy_typed) = (_merged(*edit, pure) for pure in (False, True))
    assert _frame(table) == _frame(numpy_table)
    assert table["event"].is_monotonic_increasing
    unchanged = not len(edit[0]) and not any(len(rows.events) for rows, _ in edit[1])
    assert table["event"].dtype == np.int32 or unchanged  # half of int64's bytes
    assert typed.keys() == numpy_typed.keys()
    for name, column in typed.items():
        assert column.dtype == numpy_typed[name].dtype, name
        assert _values(column) == _values(numpy_typed[name]), name


def test_a_stable_sort_of_kept_then_new_rows():
    old = _old_table([(0, 0, 1, 0, -1), (1, 4, 2, 0, -1), (1, 0, 3, 0, -1)])
    group = StatRows(np.array([1, 2], dtype=np.int64), "group_id", KIND_INT64)
    group.ints = np.array([7, 8])
    flow = StatRows(np.array([0, 1], dtype=np.int64), "correlation_id", KIND_UINT64)
    flow.ints = np.array([2**63, 1], dtype=np.uint64).view(np.int64)
    for pure in [True] + ([False] if MERGE is not None else []):
        new_row = np.array([1, 0, 2], dtype=np.int64)  # events 0 and 1 swap places
        table, typed = merged_stats(
            old,
            [group, flow],
            {"group_id": group.events},
            new_row,
            ["group_id", "correlation_id"],
            3,
            pure,
        )
        rows = list(zip(table["event"], table["stat"].astype(str), table["int_value"]))
        # Old event 1 (now row 0) has its group_id replaced and its _c kept; old event 0
        # (now row 1) keeps its group_id. An event's rows: old ones, then each addition's.
        assert rows == [(0, "_c", 2), (0, "group_id", 7), (0, "correlation_id", 1)] + [
            (1, "group_id", 1),
            (1, "correlation_id", -(2**63)),
            (2, "group_id", 8),
        ], pure
        assert _values(typed["group_id"]) == [7, 1, 8]
        assert _values(typed["correlation_id"]) == [1, 2**63, None]


@needs_compiled
def test_parts_in_order_are_merged_and_others_counted():
    old = _old_table([(0, 0, 1, 0, -1), (2, 4, 2, 0, -1)])
    group = StatRows(np.array([0, 1, 2], dtype=np.int64), "group_id", KIND_INT64)
    group.ints = np.array([7, 8, 9])
    expected = [(0, "group_id", 1), (0, "group_id", 7), (1, "group_id", 8)]
    expected += [(2, "_c", 2), (2, "group_id", 9)]
    for order in ([0, 1, 2], [2, 1, 0]):  # ascending: merged; else counted
        rows = StatRows(group.events[order], "group_id", KIND_INT64, ints=group.ints[order])
        table, typed = merged_stats(old, [rows], {}, None, ["group_id"], 3, pure_python=False)
        rows = list(zip(table["event"], table["stat"].astype(str), table["int_value"]))
        assert rows == expected
        assert _values(typed["group_id"]) == [7, 8, 9]
    parts = tuple(
        (np.array(e, dtype=np.int64), None, None, 0, 1, 0, np.zeros(0, np.int64), np.zeros(0), -1)
        for e in ([0, 2], [1, 0])
    )
    out = (None, np.zeros(1, np.int8), *(np.zeros(4, t) for t in (np.int64, np.int8, np.int8)))
    out += (np.zeros(4, np.int64), np.zeros(4), np.zeros(4, np.int8))
    assert not MERGE.merge_rows(parts, out, (), 3)
    assert MERGE.merge_rows(parts[:1] + parts[:1], out, (), 3)
    assert out[2].tolist() == [0, 0, 2, 2]


@needs_compiled
def test_events_out_of_range_are_rejected():
    old = _old_table([(0, 0, 1, 0, -1)])
    rows = StatRows(np.array([5], dtype=np.int64), "group_id", KIND_INT64, ints=np.array([1]))
    with pytest.raises(ValueError):
        merged_stats(old, [rows], {}, None, ["group_id"], 3, pure_python=False)


def _same(a: tuple, b: tuple) -> None:
    (table, typed), (other, other_typed) = a, b
    assert _frame(table) == _frame(other)
    assert typed.keys() == other_typed.keys()
    for name, column in typed.items():
        assert column.dtype == other_typed[name].dtype, name
        assert _values(column) == _values(other_typed[name]), name


def _merged_on(edit, threads: int):
    return _merged(*edit, pure=False, threads=threads)


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(edits(), st.integers(2, 9))
def test_the_merge_split_across_threads_gives_the_same_table(edit, threads):
    # merge_rows cut into ranges of events (down to one event a range): the same table
    # as one thread and as numpy, for any thread count.
    one = _merged_on(edit, 1)
    _same(_merged_on(edit, threads), one)
    _same(one, _merged(*edit, pure=True))


@needs_compiled
@pytest.mark.parametrize("threads", range(2, 10))
def test_a_larger_merge_split_across_threads_gives_the_same_table(threads):
    # Thousands of events, old rows partly replaced, moved events, doubles and strings
    # scattered over every range: each range must start at its own rows, doubles, and
    # output row.
    rng = np.random.default_rng(threads)
    n = 3000
    old_rows = [
        (int(e), int(rng.integers(0, len(NAMES))), int(rng.integers(-9, 9)), int(f), int(s))
        for e, f, s in zip(
            rng.integers(0, n - 50, 9000),
            rng.integers(0, len(FLOATS), 9000),
            rng.integers(-1, len(STRINGS), 9000),
        )
    ]
    old = _old_table(old_rows, np.int32)
    group = StatRows(np.sort(rng.choice(n - 50, 1200, replace=False)), "group_id", KIND_INT64)
    group.ints = rng.integers(-(2**40), 2**40, len(group.events))
    avg = StatRows(np.sort(rng.integers(0, n - 50, 700)), "avg_us", KIND_DOUBLE)
    avg.floats = rng.choice(FLOATS, len(avg.events))
    new_row = np.arange(n, dtype=np.int64)
    new_row[: n - 50] += np.sort(rng.integers(0, 50, n - 50))  # ascending, with gaps
    new_row[n - 50 :] = np.setdiff1d(np.arange(n + 50), new_row[: n - 50])[:50]
    edit = (old, [(group, True), (avg, False)], new_row, n + 50)
    one = _merged_on(edit, 1)
    assert len(one[0]) > 9000
    _same(_merged_on(edit, threads), one)
    _same(one, _merged(*edit, pure=True))


def _merge_of(events: list, n: int, threads: int):
    """merge_rows of one part holding these events (code 0, no values), and its event out."""
    part = (np.array(events, np.int64), None, None, 0, 1, 0, np.zeros(0, np.int64), np.zeros(0), -1)
    m = len(events)
    out = (None, np.zeros(1, np.int8), np.zeros(m, np.int64), np.zeros(m, np.int8))
    out += (np.zeros(m, np.int8), np.zeros(m, np.int64), np.zeros(m), np.zeros(m, np.int8))
    return MERGE.merge_rows((part,), out, (), n, threads), out[2]


@needs_compiled
@pytest.mark.parametrize("threads", range(1, 10))
def test_the_split_order_check_finds_every_descent_and_bad_event(threads):
    # The order check runs on chunks of rows too: a descent at any row (inside a chunk or
    # where two meet) sends the part to the counting sort; an event out of range is an
    # error wherever it is, before or after a descent, for any thread count.
    events = [e // 2 for e in range(24)]
    merged, out = _merge_of(events, 12, threads)
    assert merged and out.tolist() == events
    for at in range(1, 24):
        swapped = events[:at] + [events[at - 1] - 1] + events[at + 1 :]
        if events[at - 1] > 0:
            assert not _merge_of(swapped, 12, threads)[0], at
        for bad in (at // 2, 23 - at // 2):
            with pytest.raises(ValueError):
                _merge_of(swapped[:bad] + [12] + swapped[bad + 1 :], 12, threads)

"""The compiled sequential passes (_passes.c) give exactly what the numpy/Python fallbacks give."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.steps import sweep as step_sweep
from tensorboard_plugin_profile.kernels import compiled, passes

BUILT = compiled.load(passes.__name__) is not None
needs_compiled = pytest.mark.skipif(not BUILT, reason="built without a C compiler")
ints = st.integers(min_value=-50, max_value=50)


def test_the_extension_is_built_here():
    # The dev/CI install has a C compiler; without it every other test here skips.
    assert BUILT


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), ints, st.integers(0, 40), st.integers(0, 5))))
def test_sweep_top_agrees(spans):
    # Balanced boundaries per group, sorted as step_sweep sorts them.
    rows = [(g, b, 1, k) for g, b, d, k in spans] + [(g, b + d, 0, k) for g, b, d, k in spans]
    rows.sort(key=lambda r: (r[0], r[1], r[2], -r[3]))
    group, _, start, kind = np.array(rows, dtype=np.int64).reshape(-1, 4).T
    compiled = passes.sweep_top(group, kind, start, 6, pure_python=False)
    fallback = passes.sweep_top(group, kind, start, 6, pure_python=True)
    assert compiled.tolist() == fallback.tolist()


def test_sweep_top_is_the_highest_open_type():
    group = np.zeros(6, dtype=np.int64)
    kind = np.array([1, 3, 3, 2, 2, 1])
    start = np.array([1, 1, 0, 1, 0, 0])
    for pure in (False, True):
        top = passes.sweep_top(group, kind, start, 4, pure_python=pure)
        assert top.tolist() == [1, 3, 1, 2, 1, 0]


def test_sweep_top_rejects_a_type_out_of_range():
    for pure in (False, True):
        with pytest.raises(ValueError):
            passes.sweep_top(np.zeros(1), np.array([7]), np.array([1]), 4, pure_python=pure)


def _runs_and_ends(draw_list):
    run = np.array([r for r, _ in draw_list], dtype=np.int64)
    return np.sort(run, kind="stable"), np.array([e for _, e in draw_list], dtype=np.int64)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), ints)))
def test_previous_enclosing_agrees(events):
    run, end = _runs_and_ends(events)
    compiled = passes.previous_enclosing(run, end, pure_python=False)
    fallback = passes.previous_enclosing(run, end, pure_python=True)
    assert compiled.tolist() == fallback.tolist()
    for i, j in enumerate(compiled.tolist()):  # and both are what the docstring says
        earlier = [k for k in range(i) if run[k] == run[i] and end[k] >= end[i]]
        assert j == (earlier[-1] if earlier else -1)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ints, st.integers(0, 30))))
def test_first_free_levels_agree(events):
    begin = np.sort(np.array([b for b, _ in events], dtype=np.int64))
    end = begin + np.array([d for _, d in events], dtype=np.int64)
    compiled = passes.first_free_levels(begin, end, pure_python=False)
    fallback = passes.first_free_levels(begin, end, pure_python=True)
    assert compiled.tolist() == fallback.tolist()
    for lane in np.unique(compiled).tolist():  # events sharing a lane never overlap
        on = np.flatnonzero(compiled == lane)
        assert np.all(begin[on][1:] >= end[on][:-1])


def test_the_environment_variable_forces_the_fallback(monkeypatch):
    # tracker_top is compiled only: None says the fallback was chosen.
    one = np.zeros(1, dtype=np.int64)
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    assert passes.tracker_top(one, one, one, 2) is None
    assert (passes.tracker_top(one, one, one, 2, pure_python=False) is None) == (not BUILT)
    monkeypatch.delenv("TBPROF_PURE_PYTHON")
    assert (passes.tracker_top(one, one, one, 2) is None) == (not BUILT)


TYPED_SPANS = st.lists(  # (group, begin, duration, type)
    st.tuples(
        st.integers(0, 3),
        st.integers(0, 60),
        st.one_of(st.just(0), st.integers(1, 25)),  # many instants
        st.sampled_from([0, 1, 7, 8, 11, 14, 15]),
    ),
    min_size=1,
)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(TYPED_SPANS)
def test_the_compiled_tracker_cuts_the_same_pieces_as_the_numpy_sweep(spans):
    frame = pd.DataFrame(
        [(g, b, b + d, k) for g, b, d, k in spans], columns=["group", "begin", "end", "type"]
    )
    compiled = step_sweep.non_overlapping(frame, 18, pure_python=False)
    fallback = step_sweep.non_overlapping(frame, 18, pure_python=True)
    assert compiled.values.tolist() == fallback.values.tolist()


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    TYPED_SPANS,
    st.lists(st.tuples(st.integers(-1, 4), st.integers(-5, 70), st.integers(0, 40)), max_size=5),
    st.sampled_from([1, 1 << 50]),  # packed keys, and steps too long to pack
    st.sampled_from([0, 1 << 58]),  # far apart steps: times count from each group's first
)
def test_the_compiled_step_breakdown_sums_the_pieces_as_numpy_does(spans, windows, scale, apart):
    frame = pd.DataFrame(
        [(g, b * scale + g * apart, (b + d) * scale + g * apart, k) for g, b, d, k in spans],
        columns=["group", "begin", "end", "type"],
    )
    by_group = {  # one window per group
        g: (b * scale + g * apart, (b + d) * scale + g * apart) for g, b, d in windows
    }
    group = np.array(sorted(by_group), dtype=np.int64)
    begin = np.array([by_group[g][0] for g in group.tolist()], dtype=np.int64)
    end = np.array([by_group[g][1] for g in group.tolist()], dtype=np.int64)
    compiled = step_sweep.breakdown(frame, (group, begin, end), 18, pure_python=False)
    fallback = step_sweep.breakdown(frame, (group, begin, end), 18, pure_python=True)
    for got, expected in zip(compiled, fallback):
        assert got.dtype == expected.dtype and got.shape == (len(group), 18)
        assert got.tolist() == expected.tolist()
    # And the sums are those of the pieces: whole pieces in ``total``.
    pieces = step_sweep.non_overlapping(frame, 18, pure_python=True)
    for g, row in zip(group.tolist(), compiled[1].tolist()):
        mine = pieces[pieces["group"] == g]
        lengths = (mine["end"] - mine["begin"]).groupby(mine["type"]).sum()
        assert row == [int(lengths.get(t, 0)) for t in range(18)]


@needs_compiled
def test_the_step_breakdown_rejects_unsorted_keys():
    layout = np.array([18, 8, 6, 0, 1, 0], dtype=np.int64)  # one group, from 0
    out = [np.zeros((1, 18), dtype=np.int64) for _ in range(3)]
    one = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError):
        keys = np.array([40, 3], dtype=np.int64)
        passes.step_breakdown(keys, layout, (one, one, one), out, pure_python=False)


big = st.integers(min_value=-(1 << 62), max_value=1 << 62)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 3), ints, st.integers(-5, 40), st.integers(0, 17))),
    st.sampled_from([1, 1 << 20, 1 << 40]),
    st.lists(st.tuples(st.integers(-3, 3), big, big, st.integers(0, 17)), max_size=2),
)
def test_packed_boundary_keys_agree(spans, scale, extreme):
    rows = [(g, b * scale, (b + d) * scale, k) for g, b, d, k in spans] + extreme
    group, begin, end, kind = np.array(rows, dtype=np.int64).reshape(-1, 4).T
    compiled = passes.pack_boundaries(group, begin, end, kind, 18, pure_python=False)
    fallback = passes.pack_boundaries(group, begin, end, kind, 18, pure_python=True)
    assert (compiled is None) == (fallback is None)
    if compiled is not None:
        assert compiled[0].tolist() == fallback[0].tolist()
        assert compiled[1].tolist() == fallback[1].tolist()
        order = np.argsort(compiled[0], kind="stable")  # the boundary order of step_sweep
        time = np.ravel(np.column_stack([begin, end]))
        start = np.tile([1, 0], len(group))
        kinds = np.repeat(kind, 2)
        expected = np.lexsort((-kinds, start, time, np.repeat(group, 2)))
        assert order.tolist() == expected.tolist()


def test_a_type_out_of_range_is_refused_by_both_packers():
    one = np.zeros(1, dtype=np.int64)
    for pure in [True, False] if BUILT else [True]:
        with pytest.raises(ValueError):
            passes.pack_boundaries(one, one, one, np.array([18]), 18, pure_python=pure)


def _sorted_activities(spans):
    """(line, begin, end) sorted as the PyTorch operator tree sorts them."""
    rows = sorted(((line, b, b + d) for line, b, d in spans), key=lambda r: (r[0], r[1], -r[2]))
    return np.array(rows, dtype=np.int64).reshape(-1, 3).T


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 12), st.integers(0, 6))))
def test_dropping_stack_agrees(spans):
    # Small times: many identical activities, zero durations and partial overlaps, where
    # the fallback mixes the vectorised nesting and the Python replay.
    line, begin, end = _sorted_activities(spans)
    kept, parent = passes.dropping_stack(line, begin, end, pure_python=False)
    kept_py, parent_py = passes.dropping_stack(line, begin, end, pure_python=True)
    assert kept.tolist() == kept_py.tolist()
    assert parent.tolist() == parent_py.tolist()


def test_dropping_stack_keeps_the_enclosing_activity():
    # Line 0: [0, 10] holds two identical [2, 6] (nested in each other) and [5, 12] (ends
    # after its enclosing one: dropped); line 1 starts a new stack.
    line, begin, end = _sorted_activities([(0, 0, 10), (0, 2, 4), (0, 2, 4), (0, 5, 7), (1, 3, 1)])
    for pure in (False, True):
        kept, parent = passes.dropping_stack(line, begin, end, pure_python=pure)
        assert kept.tolist() == [True, True, True, False, True]
        assert parent.tolist() == [-1, 0, 1, -1, -1]


@needs_compiled
def test_identical_activities_stay_in_compiled_code(monkeypatch):
    # PyTorch writes an op and its only child with the same begin and end; the vectorised
    # nesting pairs their ends the other way round, which sent the whole thread to a Python
    # loop per activity (twice) on every operator table.
    def no_python_loop(*args):
        raise AssertionError("a thread was replayed in Python")

    monkeypatch.setattr(passes, "_replay_dropping_stack", no_python_loop)
    spans = [(0, 10 * i, 5) for i in range(1000)] * 2
    kept, parent = passes.dropping_stack(*_sorted_activities(spans))
    assert kept.all() and parent[1::2].tolist() == list(range(0, 2000, 2))


# --- stable_order ------------------------------------------------------------------------
_DTYPES = ("int64", "uint64", "int32", "uint16", "int8", "bool")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_DTYPES),
    st.lists(st.integers(-(2**63), 2**64 - 1), max_size=60),
    st.integers(0, 70),
)
def test_stable_order_is_numpys_stable_argsort_in_both_paths(dtype, values, shift):
    """Keys of every integer width, in any range (the radix passes a range needs, and a
    constant digit skipped), many equal: both paths give the stable argsort exactly."""
    info = np.iinfo(dtype) if dtype != "bool" else None
    if info is None:
        key = np.array([v & 1 for v in values], dtype=bool)
    else:
        key = np.array([min(max(v >> min(shift, 63), info.min), info.max) for v in values], dtype)
    expected = np.argsort(key, kind="stable")
    for pure_python in (False, True):
        got = passes.stable_order(key, pure_python=pure_python)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected)


def test_stable_order_at_the_ends_of_the_int64_and_uint64_ranges():
    for key in (
        np.array([2**63 - 1, -(2**63), 0, -1, -(2**63), 2**63 - 1], dtype=np.int64),
        np.array([2**64 - 1, 0, 2**63, 2**64 - 1, 1], dtype=np.uint64),
        np.repeat(np.array([5, 5 + (1 << 44), 5 + (1 << 22)], dtype=np.int64), 1000),
        np.zeros(3, dtype=np.int64),  # one value: no pass at all
    ):
        for pure_python in (False, True):
            np.testing.assert_array_equal(
                passes.stable_order(key, pure_python=pure_python), np.argsort(key, kind="stable")
            )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 3), st.integers(0, 2)), max_size=80),
    st.booleans(),
)
def test_lex_order_is_numpys_lexsort_in_both_paths(rows, unsigned):
    """Runs of every length (pairs, long runs merge sorted in C), ties in every array."""
    key = np.array([r[0] for r in rows], dtype=np.uint64 if unsigned else np.int64)
    begin = np.array([r[1] for r in rows], dtype=np.int64)
    pos = np.array([r[2] for r in rows], dtype=np.int32)
    expected = np.lexsort((pos, begin, key))
    for pure_python in (False, True):
        got = passes.lex_order(key, (begin, pos), pure_python=pure_python)
        np.testing.assert_array_equal(got, expected)


def test_lex_order_of_one_long_run_is_merge_sorted():
    rng = np.random.default_rng(7)
    key = np.zeros(3000, dtype=np.uint64)
    begin, pos = rng.integers(0, 50, 3000), rng.integers(0, 5, 3000)
    expected = np.lexsort((pos, begin, key))
    np.testing.assert_array_equal(passes.lex_order(key, (begin, pos)), expected)


def test_stable_order_without_scratch_allocates_its_own():
    """The compiled sort's own buffers (no scratch given) give the same order."""
    twin = passes._passes
    if twin is None:
        pytest.skip("the compiled passes are not built")
    key = np.random.default_rng(3).integers(-(2**50), 2**50, 5000)
    out = np.empty(len(key), dtype=np.int64)
    twin.stable_order(key, True, out)
    np.testing.assert_array_equal(out, np.argsort(key, kind="stable"))
    with pytest.raises(ValueError, match="scratch"):
        twin.stable_order(key, True, out, np.empty(10, dtype=np.uint64))

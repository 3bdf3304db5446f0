"""The compiled trace index layout (``_layout.c``) gives exactly what numpy gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from peak_memory import peak_growth

from tensorboard_plugin_profile.analysis.trace import layout
from tensorboard_plugin_profile.kernels import blockpool, compiled, passes

LAYOUT = compiled.load(layout.__name__)
needs_compiled = pytest.mark.skipif(LAYOUT is None, reason="built without a C compiler")

# (line, begin, duration): lines map to rows through LINE_ROW (two lines share row 1).
LINE_ROW = np.array([2, 0, 1, 1], dtype=np.int64)
events_strategy = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.one_of(st.just(0), st.integers(1, 25))),
    max_size=80,
)


def _columns(events: list, presorted: bool) -> tuple:
    if presorted:  # each line in (begin, longest first) order, as preprocessing leaves it
        events = sorted(events, key=lambda e: (e[0], e[1], -e[2]))
    line = np.array([e[0] for e in events], dtype=np.int32)
    begin = np.array([e[1] for e in events], dtype=np.int64)
    return line, begin, np.array([e[2] for e in events], dtype=np.int64)


def _both(function, *args) -> tuple:
    return function(*args, pure_python=False), function(*args, pure_python=True)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(events_strategy, st.booleans())
def test_order_by_row_agrees_and_is_the_lexsort_order(events, presorted):
    line, begin, duration = _columns(events, presorted)
    compiled, fallback = _both(layout.order_by_row, line, LINE_ROW, begin, duration, 3)
    for a, b in zip(compiled, fallback):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    row = LINE_ROW[line]
    expected = np.lexsort((-duration, begin, row))
    assert compiled[0].tolist() == expected.tolist()


# Durations may be negative (a damaged file): the compiled pass then hands over to numpy.
damaged_strategy = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(-3, 25)), max_size=80
)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.one_of(events_strategy, damaged_strategy), st.booleans())
def test_lay_out_events_agrees(events, presorted):
    line, begin, duration = _columns(events, presorted)
    compiled, fallback = _both(layout.lay_out_events, line, LINE_ROW, begin, duration, 3)
    for field in layout.Layout.__dataclass_fields__:
        a, b = getattr(compiled, field), getattr(fallback, field)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), field
        else:
            assert a == b, field
    # Sorted by (row, depth) keeping time order; each event once.
    assert sorted(compiled.source.tolist()) == list(range(len(line)))
    assert np.all(np.diff(compiled.seg_row * 1000 + compiled.seg_depth) > 0)
    assert np.all(np.diff(compiled.seg_bounds) > 0)  # no empty segment
    # Inside a segment begins are sorted and each event begins at or after the previous
    # one's end: the facts that let the index keep neither (a window searches begins
    # read through source, and looks at the end of the one event before).
    b = begin[compiled.source]
    end = b + duration[compiled.source]
    for lo, hi in zip(compiled.seg_bounds[:-1], compiled.seg_bounds[1:]):
        assert np.all(b[lo + 1 : hi] >= end[lo : hi - 1]) and np.all(np.diff(b[lo:hi]) >= 0)


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(events_strategy, st.booleans(), st.sampled_from([0, 1, 3, 10, 40]))
def test_cuts_and_break_keys_agree(events, presorted, size):
    line, begin, duration = _columns(events, presorted)
    lay = layout.lay_out_events(line, LINE_ROW, begin, duration, 3)
    b, dur = begin[lay.source], duration[lay.source]
    end = b + dur
    keys = layout.break_keys(b, dur, lay.seg_bounds)
    at = np.arange(len(keys))
    keys_at = layout.break_keys_at(lay.seg_bounds, at, lambda p: (b[p], dur[p]))
    assert keys_at.tolist() == keys.tolist()
    # The definition, with ends: max(gap before, own duration, previous duration).
    for p in range(1, len(keys)):
        if p not in lay.seg_bounds:
            want = max(b[p] - end[p - 1], dur[p], dur[p - 1])
            assert keys[p] == want
    compiled, fallback = _both(layout.cuts, begin, duration, lay.source, lay.seg_bounds, size)
    assert compiled.dtype == fallback.dtype == np.int32
    assert compiled.tolist() == fallback.tolist() == np.flatnonzero(keys >= size).tolist()
    # Each segment starts with a cut, since nothing merges across segments.
    assert set(lay.seg_bounds[:-1].tolist()) <= set(compiled.tolist())


@needs_compiled
def test_a_row_past_64_overlapping_lanes_is_relaid_as_first_free_levels():
    # 150 events of 100 ps starting 1 ps apart: not nested, so re-laid by lanes; over 64
    # lanes are open at once, so the compiled pass goes from its scan to its heaps.
    begin = np.arange(150, dtype=np.int64)
    duration = np.full(150, 100, dtype=np.int64)
    line = np.zeros(150, np.int32)
    compiled, fallback = _both(layout.lay_out_events, line, LINE_ROW, begin, duration, 3)
    assert compiled.relaid_rows == fallback.relaid_rows == 1
    lanes = passes.first_free_levels(begin, begin + duration, pure_python=True)
    depth = np.repeat(compiled.seg_depth, np.diff(compiled.seg_bounds))
    assert depth.tolist() == lanes[compiled.source].tolist() and lanes.max() == 99
    assert compiled.source.tolist() == fallback.source.tolist()


@needs_compiled
def test_lay_out_rejects_a_source_out_of_range():
    times = np.array([0, 1, 2], dtype=np.int64)
    bounds = np.array([0, 3], np.int64)
    for order, fails in (([0, 1, 2], False), ([0, 3, 2], True)):
        source = np.array(order, np.int32)  # the row order, laid out in place
        args = (bounds, times, times, source, np.zeros(1, np.int64), np.zeros(3, np.int32))
        if fails:
            with pytest.raises(ValueError, match="source out of range"):
                LAYOUT.lay_out(*args)
        else:
            relaid, counts = LAYOUT.lay_out(*args)
            assert source.tolist() == [0, 1, 2] and relaid == 0
            assert np.frombuffer(counts, np.int64).tolist() == [3]  # one depth, 3 events


@needs_compiled
def test_order_by_row_rejects_a_line_without_row():
    with pytest.raises(ValueError):
        layout.order_by_row(np.array([4], np.int32), LINE_ROW, np.zeros(1, np.int64),
                            np.zeros(1, np.int64), 3, pure_python=False)  # fmt: skip


def test_empty():
    z = np.zeros(0, dtype=np.int64)
    for pure in (True, False):
        order, bounds = layout.order_by_row(np.zeros(0, np.int32), LINE_ROW, z, z, 3, pure)
        assert bounds.tolist() == [0, 0, 0, 0]
        lay = layout.lay_out_events(np.zeros(0, np.int32), LINE_ROW, z, z, 3, pure)
        assert lay.seg_bounds.tolist() == [0] and not len(lay.seg_row) and not len(lay.source)
        assert not len(layout.cuts(z, z, lay.source, lay.seg_bounds, 1000, pure))


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(st.permutations(list(range(40))), st.lists(st.integers(0, 39), max_size=15))
def test_marked_positions_agree(permutation, marked_events):
    source = np.array(permutation, dtype=np.int32)
    events = np.array(marked_events, dtype=np.int64)
    compiled, fallback = _both(layout.marked_positions, source, events)
    assert compiled.tolist() == fallback.tolist()
    assert sorted(source[compiled].tolist()) == sorted(set(marked_events))
    for bad_source, bad_events in (([0, 5], [1]), ([0, 1], [2])):
        with pytest.raises(ValueError, match="out of range"):
            layout.marked_positions(np.array(bad_source, np.int32), np.array(bad_events), False)


@needs_compiled
def test_lay_out_rejects_a_scratch_smaller_than_the_largest_row():
    times = np.zeros(3, dtype=np.int64)
    bounds = np.array([0, 1, 3], np.int64)  # the largest row holds 2 events
    for size, fails in ((1, True), (2, False)):
        source = np.array([0, 1, 2], np.int32)
        args = (bounds, times, times, source, np.zeros(2, np.int64), np.zeros(size, np.int32))
        if fails:
            with pytest.raises(ValueError, match="scratch smaller than the largest row"):
                LAYOUT.lay_out(*args)
        else:
            assert LAYOUT.lay_out(*args)[0] == 0


@pytest.mark.skipif(not blockpool.available(), reason="the block pool is Linux and compiled only")
def test_the_layout_scratch_is_made_of_blocks_the_conversion_freed():
    # The trace viewer opened first builds its index in the request that preprocessed the
    # profile: the blocks preprocessing freed are kept, and the layout's scratch (4 B per
    # event of the largest row) is made of them, not of fresh pages beside them.
    n = 1 << 21  # one row of 2 M events: 8 MiB of int32
    line, line_row = np.zeros(n, np.int32), np.zeros(1, np.int64)
    begin, duration = np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    with blockpool.reusing():
        freed = np.ones(4 * n, np.int32)  # 32 MiB written and freed, as preprocessing's columns
        del freed
        start = blockpool.stats()
        with peak_growth() as grown:
            lay = layout.lay_out_events(line, line_row, begin, duration, 1, pure_python=False)
        reused = blockpool.stats()["reused_bytes"] - start["reused_bytes"]
        fresh = blockpool.stats()["fresh_bytes"] - start["fresh_bytes"]
    assert lay.source[:3].tolist() == [0, 1, 2] and lay.seg_bounds.tolist() == [0, n]
    assert reused >= 2 * 4 * n and fresh == 0  # the source column and the scratch
    assert grown.bytes is None or grown.bytes < 4 * n  # the scratch faulted nothing new

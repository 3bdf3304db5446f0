"""The compiled trace index layout (``_layout.c``) gives exactly what numpy gives."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import fixture_names, host_files
from hypothesis import given, settings
from hypothesis import strategies as st
from peak_memory import peak_growth

from tensorboard_plugin_profile.analysis.trace import layout
from tensorboard_plugin_profile.kernels import blockpool, compiled, passes
from tensorboard_plugin_profile.tools import TOOLS
from tensorboard_plugin_profile.xspace import read_xspace

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
    for threads in range(2, 10):  # ranges of events counted and placed, and checked
        split = layout.order_by_row(line, LINE_ROW, begin, duration, 3, False, None, threads)
        assert [a.tobytes() for a in split] == [a.tobytes() for a in compiled]
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
    for threads in range(2, 10):  # ranges of positions, some empty, some inside segments
        split = layout.cuts(begin, duration, lay.source, lay.seg_bounds, size, False, threads)
        assert split.tobytes() == compiled.tobytes()
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
            relaid, counts, split = LAYOUT.lay_out(*args)
            assert source.tolist() == [0, 1, 2] and relaid == 0 and split == 0
            assert np.frombuffer(counts, np.int64).tolist() == [3]  # one depth, 3 events


@needs_compiled
def test_order_by_row_rejects_a_line_without_row():
    with pytest.raises(ValueError):
        layout.order_by_row(np.array([4], np.int32), LINE_ROW, np.zeros(1, np.int64),
                            np.zeros(1, np.int64), 3, pure_python=False)  # fmt: skip
    for threads in (1, 2, 3, 8):  # a bad line anywhere, on any thread count
        for at in range(6):
            line = np.zeros(6, np.int32)
            line[at] = 4
            with pytest.raises(ValueError, match="out of range"):
                layout.order_by_row(line, LINE_ROW, np.zeros(6, np.int64), np.zeros(6, np.int64),
                                    3, False, None, threads)  # fmt: skip


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
    for threads in range(2, 10):
        split = layout.marked_positions(source, events, False, threads)
        assert split.tobytes() == compiled.tobytes()
    assert sorted(source[compiled].tolist()) == sorted(set(marked_events))
    for bad_source, bad_events in (([0, 5], [1]), ([0, 1], [2])):
        for threads in (1, 3):
            with pytest.raises(ValueError, match="out of range"):
                layout.marked_positions(
                    np.array(bad_source, np.int32), np.array(bad_events), False, threads
                )


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


# --- one row laid out in parts on threads (_row_split.h) ------------------------------
def _nested_row(seed: int, tops: int = 12) -> tuple:
    """One row of top-level events, each with children nested up to 6 deep: equal begins,
    children ending with their parent, zero durations, and some tops touching (the next
    one begins where the last ended). A few rows get overlapping events (not nested)."""
    rng = np.random.default_rng(seed)
    events: list = []

    def nest(lo: int, hi: int, depth: int) -> None:
        events.append((lo, hi - lo))
        at = lo
        while depth < 6 and at < hi and rng.random() < 0.7:
            begin = int(rng.integers(at, hi + 1))
            end = int(rng.integers(begin, hi + 1)) if rng.random() < 0.8 else begin
            nest(begin, end, depth + 1)
            at = end

    at = 0
    for _ in range(tops):
        at += int(rng.integers(0, 3))  # 0: touching the previous top
        length = int(rng.integers(0, 40))
        nest(at, at + length, 0)
        at += length
    if seed % 5 == 4:  # two events of one depth overlap: the row is re-laid by lanes
        events.append((int(rng.integers(0, at + 1)), int(rng.integers(1, 30))))
    events.sort(key=lambda e: (e[0], -e[1]))
    begin = np.array([e[0] for e in events], np.int64)
    return np.zeros(len(events), np.int32), begin, np.array([e[1] for e in events], np.int64)


def _lay_out_direct(line, begin, duration, threads: int, window: int) -> tuple:
    """The compiled layout of every row, rows of 2 events or more split on ``threads``."""
    order, bounds = layout.order_by_row(line, LINE_ROW, begin, duration, 3, pure_python=False)
    source = np.array(order, np.int32)
    keys = np.zeros(3, np.int64)
    scratch = np.empty(max(int(np.diff(bounds).max(initial=0)), 1), np.int32)
    done = LAYOUT.lay_out(bounds, begin, duration, source, keys, scratch, threads, 2, window)
    if done is None:
        return None, 0
    return (source.tobytes(), keys.tobytes(), done[0], done[1]), done[2]


@needs_compiled
@pytest.mark.parametrize("threads", range(2, 10))
def test_a_row_split_on_threads_gives_the_one_thread_layout(threads):
    split_rows = 0
    for seed in range(40):
        line, begin, duration = _nested_row(seed)
        for window in (1, 3, 8, 65536):  # tiny windows guess cuts inside open events
            expected, _ = _lay_out_direct(line, begin, duration, 1, window)
            got, split = _lay_out_direct(line, begin, duration, threads, window)
            assert got == expected, (seed, window)
            split_rows += split
    assert split_rows > 0  # the parts were taken, not only the one-thread rerun


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.one_of(events_strategy, damaged_strategy), st.integers(2, 9), st.integers(1, 6))
def test_split_rows_agree_on_any_events(events, threads, window):
    # Equal begins, zero durations, not nested and damaged events, on any thread count.
    line, begin, duration = _columns(events, True)
    assert (
        _lay_out_direct(line, begin, duration, threads, window)[0]
        == (_lay_out_direct(line, begin, duration, 1, window)[0])
    )


@needs_compiled
def test_an_event_open_across_a_guessed_cut_makes_the_row_run_on_one_thread():
    # Event 0 spans the row; 99 short events nest in it. A window of 4 events guesses cuts
    # where the short events touch, inside event 0: the check fails, one thread reruns.
    begin = np.r_[0, np.arange(1, 100)].astype(np.int64)
    duration = np.r_[1000, np.ones(99)].astype(np.int64)
    line = np.zeros(100, np.int32)
    expected, _ = _lay_out_direct(line, begin, duration, 1, 4)
    got, split = _lay_out_direct(line, begin, duration, 3, 4)
    assert got == expected and split == 0
    # Without event 0 the same cuts hold (each short event is top-level): split.
    got, split = _lay_out_direct(line[1:], begin[1:], duration[1:], 3, 4)
    assert split == 1
    assert got == _lay_out_direct(line[1:], begin[1:], duration[1:], 1, 4)[0]


@needs_compiled
def test_break_cuts_reject_a_source_out_of_range_in_any_range():
    times = np.arange(8, dtype=np.int64)
    for bad_at in range(8):
        source = np.arange(8, dtype=np.int32)
        source[bad_at] = 8
        for threads in (1, 2, 3, 8):
            with pytest.raises(ValueError, match="source out of range"):
                LAYOUT.break_cuts(times, times, source, np.array([0, 3, 8]), 5, threads)


@needs_compiled
def test_a_source_out_of_range_is_rejected_on_threads():
    times = np.arange(6, dtype=np.int64)
    bounds = np.array([0, 6], np.int64)
    source = np.array([0, 1, 2, 9, 4, 5], np.int32)
    args = (bounds, times, np.ones(6, np.int64), source, np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="source out of range"):
        LAYOUT.lay_out(*args, np.zeros(6, np.int32), 3, 2, 2)


class _CountingLayout:
    """The compiled module, counting the rows it lays out in parts."""

    def __init__(self, module) -> None:
        self.module, self.split_rows = module, 0

    def __getattr__(self, name: str):
        return getattr(self.module, name)

    def lay_out(self, *args):
        done = self.module.lay_out(*args)
        self.split_rows += done[2] if done else 0
        return done


@needs_compiled
def test_every_fixtures_first_window_is_the_same_on_three_threads(monkeypatch):
    # The trace viewer's first window of every fixture host, its rows split on three
    # threads (the threshold lowered to nothing), against one thread.
    counting = _CountingLayout(LAYOUT)
    monkeypatch.setattr(layout, "_layout", counting)
    monkeypatch.setattr(compiled, "PARALLEL_MIN_ROWS", 0)
    params = {"format": "columnar", "resolution": "1500"}
    for name in fixture_names():
        for path in host_files(name):
            windows = []
            for threads in ("1", "3"):  # a fresh read each time: no memoised index
                monkeypatch.setenv(compiled.PASS_THREADS_ENV, threads)
                hosts = [(path.name[: -len(".xplane.pb")], read_xspace(str(path)))]
                out = TOOLS["trace_viewer@"].convert(hosts, params)
                windows.append(out if isinstance(out, bytes) else b"".join(out.chunks()))
            assert windows[0] == windows[1], path
    assert counting.split_rows > 0

"""Where each event of a trace index goes: order by (row, depth, begin), compiled or numpy.

Three steps, fused per row when compiled (``_layout.c``, GIL released):

1. ``order_by_row``: events by row, keeping input order inside a row (each line's
   events come sorted by (begin, longest first) from preprocessing, which is checked;
   otherwise a full sort by (row, begin, longest first) is made);
2. the depth of every event in its row (``depths``);
3. a stable sort by (row, depth): the index's columns and its (row, depth) segments.

Only what the index keeps is made per event: ``source`` (4 bytes), the event at each
position. The row and depth of a position follow from the segments, its begin and
duration from its event (the planes' own columns, read through ``source``), its break
key from those, and ``TraceIndex`` derives them where asked (``rows_at``,
``begins_at``, ``ends_at``, ``break_keys_at``, ``cuts``). Ends need not be kept: inside
a (row, depth) segment events never overlap (``begin[p + 1] >= end[p]``), so every end
before a position's is at most its begin.
At 11 M events every event-sized array is fresh memory the kernel must fault in,
which is most of the cost of building the index.

Compiled, a row of at least ``compiled.PARALLEL_MIN_ROWS`` events is cut at top-level
events into parts laid out on ``compiled.pass_threads`` threads (``_row_split.h``: the
cuts are guessed, then checked, and the row is laid out on one thread when a check
fails), so a profile whose main thread holds most events uses every core; the same
bytes for any thread count.

The numpy fallback gives identical results (``tests/analysis/test_trace_layout.py``);
``compiled.use_compiled`` chooses (``TBPROF_PURE_PYTHON=1`` forces the fallback).

Usage::

    lay = lay_out_events(line, line_row, begin, duration, num_rows)
    lay.source, lay.seg_bounds, lay.seg_row, lay.seg_depth
"""

from __future__ import annotations

import dataclasses
from typing import Literal, cast

import numpy as np

from ...kernels import compiled, graph_passes, passes
from . import depths

_layout = compiled.load(__name__)

NO_BREAK = np.iinfo(np.int64).max
SAMPLE_EVERY = 1024  # positions between two sampled begins (``search_begins``)
INT32_EVENTS = 2**31  # event numbers are int32 below this many events, else int64
MAX_COMPILED_EVENTS = INT32_EVENTS - 1  # the compiled passes number events in int32


def event_numbers(n: int) -> type:
    """The dtype of event numbers (order, source, positions) for ``n`` events."""
    return np.int32 if n < INT32_EVENTS else np.int64


def order_by_row(
    line, line_row, begin, duration, num_rows: int, pure_python=None, out=None, threads=None
):
    """(order, row bounds) of events sorted by (row, begin, longest first); ``line``
    int32 per event, ``line_row`` the row of each line. ``out``: an int32 array the
    compiled pass may write the order into (then returned); it runs on
    ``compiled.pass_threads`` threads."""
    begin, duration = passes._int64(begin), passes._int64(duration)
    line_row = passes._int64(line_row)
    n = len(begin)
    if compiled.use_compiled(_layout, pure_python, n, MAX_COMPILED_EVENTS):
        order = np.empty(n, dtype=np.int32) if out is None else out
        bounds = np.empty(num_rows + 1, dtype=np.int64)
        line = np.ascontiguousarray(line, dtype=np.int32)
        threads = compiled.pass_threads(n, threads)
        if _layout.row_order(line, line_row, begin, duration, num_rows, order, bounds, threads):
            return order, bounds
    row = line_row[line]
    order = _time_order(row, begin, begin + duration).astype(event_numbers(n), copy=False)
    bounds = np.r_[0, np.cumsum(np.bincount(row, minlength=num_rows))].astype(np.int64)
    return order, bounds


def _time_order(row: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Positions sorted by (row, begin, longest first): parents before children.

    A stable sort by row usually suffices (lines come sorted); it is checked, else a
    full lexsort (both keep equal keys in input order, so the result is the same).
    """
    small = row.astype(np.int16) if len(row) and row.max() < 2**15 else row
    order = np.argsort(small, kind="stable")  # radix sort for 16-bit keys
    r, b = row[order], begin[order]
    minus = b - end[order]
    same_row, same_begin = r[1:] == r[:-1], b[1:] == b[:-1]
    ordered = ~same_row | (b[1:] > b[:-1]) | (same_begin & (minus[1:] >= minus[:-1]))
    if ordered.all():
        return order
    return np.lexsort((begin - end, begin, row))


@dataclasses.dataclass
class Layout:
    source: np.ndarray  # int32 (int64 past 2**31 events): the input event at each position
    seg_row: np.ndarray  # int64 per (row, depth) segment
    seg_depth: np.ndarray  # int64
    seg_bounds: np.ndarray  # int64, segment s = positions [bounds[s], bounds[s + 1])
    relaid_rows: int  # rows re-laid by first-free lanes (not well nested)


def lay_out_events(line, line_row, begin, duration, num_rows: int, pure_python=None, threads=None):
    """The ``Layout`` of events given per input event (``line`` int32, ``line_row`` the
    row of each line, int64 times); ``threads``: see ``compiled.pass_threads``."""
    begin, duration = passes._int64(begin), passes._int64(duration)
    if compiled.use_compiled(_layout, pure_python, len(begin), MAX_COMPILED_EVENTS):
        threads = compiled.pass_threads(len(begin), threads)
        lay = _lay_out_compiled(line, line_row, begin, duration, num_rows, threads)
        if lay is not None:
            return lay
    order, bounds = order_by_row(line, line_row, begin, duration, num_rows, pure_python)
    begin_t = begin[order]
    depth_t, relaid = depths.depths_in_rows(bounds, begin_t, begin_t + duration[order], pure_python)
    return lay_out(order, bounds, depth_t, relaid)


def lay_out(order, bounds, depth_t, relaid_rows: int = 0) -> Layout:
    """numpy: events in row order (``order``, ``bounds``, their depths) sorted by (row,
    depth), keeping their order inside a (row, depth)."""
    num_rows = len(bounds) - 1
    row_t = np.repeat(np.arange(num_rows, dtype=np.int64), np.diff(bounds))
    by_depth = _by_depth(row_t, depth_t, num_rows)
    row, depth = row_t[by_depth], depth_t[by_depth]
    seg_row, seg_depth, seg_bounds = _segments(row, depth)
    return Layout(order[by_depth], seg_row, seg_depth, seg_bounds, relaid_rows)


def _lay_out_compiled(line, line_row, begin, duration, num_rows: int, threads: int = 1):
    """The compiled passes; None when some event ends before it begins (numpy then).
    The row order is written into the source column and each row is laid out in place
    there: the only scratch is one int32 per event of the largest row, a numpy buffer
    (inside ``blockpool.reusing()`` made of blocks preprocessing freed, not fresh pages:
    when the trace viewer is opened first, 4 B per event less at this stage's peak)."""
    n = len(begin)
    z = np.zeros(0, dtype=np.int64)  # the segments: made from the counts below
    lay = Layout(np.empty(n, np.int32), z, z, z, 0)
    order, bounds = order_by_row(
        line, line_row, begin, duration, num_rows, False, lay.source, threads
    )
    if order is not lay.source:
        lay.source[:] = order  # rows out of time order: numpy sorted them
    del order
    keys_per_row = np.empty(num_rows, dtype=np.int64)
    assert _layout is not None
    scratch = np.empty(max(int(np.diff(bounds).max(initial=0)), 1), dtype=np.int32)
    args = (bounds, begin, duration, lay.source, keys_per_row, scratch)
    done = _layout.lay_out(*args, threads, max(compiled.PARALLEL_MIN_ROWS, 2))
    del scratch
    if done is None:
        return None
    lay.relaid_rows, counts = done[0], np.frombuffer(done[1], dtype=np.int64)
    base = np.r_[0, np.cumsum(keys_per_row)].astype(np.int64)
    keys = np.flatnonzero(counts)
    lay.seg_bounds = np.r_[0, np.cumsum(counts[keys])].astype(np.int64)
    lay.seg_row = np.searchsorted(base, keys, side="right").astype(np.int64) - 1
    lay.seg_depth = keys - base[lay.seg_row]
    return lay


def _key_base(bounds: np.ndarray, depth_t: np.ndarray, num_rows: int) -> np.ndarray:
    """First dense (row, depth) key of each row: rows take max depth + 1 keys each."""
    top = np.zeros(num_rows, dtype=np.int64)
    starts = bounds[:-1][bounds[:-1] < bounds[1:]]
    if len(starts):
        nonempty = np.flatnonzero(bounds[:-1] < bounds[1:])
        top[nonempty] = np.maximum.reduceat(depth_t, starts)
    return np.r_[0, np.cumsum(top + 1)].astype(np.int64)


def _by_depth(row: np.ndarray, depth: np.ndarray, num_rows: int) -> np.ndarray:
    """The stable order by (row, depth) of positions sorted by row: a counting sort on
    one dense key per (row, depth), which ``np.lexsort((depth, row))`` equals."""
    if not len(row) or depth.min() < 0:
        return np.lexsort((depth, row))
    bounds = np.searchsorted(row, np.arange(num_rows + 1))
    base = _key_base(bounds, depth, num_rows)
    key = base[row] + depth
    return graph_passes.csr(key, np.arange(len(row), dtype=np.int64), int(base[-1]))[1]


def _segments(row: np.ndarray, depth: np.ndarray) -> tuple:
    starts = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (depth[1:] != depth[:-1])])
    if not len(row):
        starts = np.zeros(0, dtype=np.int64)
    bounds = np.r_[starts, len(row)].astype(np.int64)
    return row[starts].astype(np.int64), depth[starts].astype(np.int64), bounds


# --- what follows from the segments: per position, made where asked -------------------
def segment_of(seg_bounds: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The segment holding each position."""
    return np.searchsorted(seg_bounds, positions, side="right") - 1


def per_position(seg_bounds: np.ndarray, seg_values: np.ndarray) -> np.ndarray:
    """A per-segment value (row or depth) at every position, as int32."""
    return np.repeat(seg_values.astype(np.int32), np.diff(seg_bounds))


def break_keys_at(seg_bounds, positions: np.ndarray, times_at) -> np.ndarray:
    """max(gap before, own duration, previous duration) at ``positions``; NO_BREAK at the
    first position of a segment (no merging across segments). ``times_at``: int64
    (begins, durations) of the events at given positions."""
    positions = np.asarray(positions, dtype=np.int64)
    first = seg_bounds[segment_of(seg_bounds, positions)] == positions
    before = np.maximum(positions - 1, 0)
    (begin, dur), (begin_before, dur_before) = times_at(positions), times_at(before)
    gap = begin - (begin_before + dur_before)
    key = np.maximum(np.maximum(gap, dur), dur_before)
    key[first] = NO_BREAK
    return key


def break_keys(begin, dur, seg_bounds) -> np.ndarray:
    """The break key of every position (``break_keys_at`` of all); times per position."""
    key = np.full(len(begin), NO_BREAK, dtype=np.int64)
    if len(begin) > 1:
        gap = begin[1:] - (begin[:-1] + dur[:-1])
        key[1:] = np.maximum(np.maximum(gap, dur[1:]), dur[:-1])
    key[seg_bounds[:-1][seg_bounds[:-1] < seg_bounds[1:]]] = NO_BREAK
    return key


def cuts(
    begin, duration, source, seg_bounds, size: int, pure_python=None, threads=None
) -> np.ndarray:
    """Positions whose break key is >= ``size`` (int32 below 2**31 events), in order;
    ``begin`` and ``duration`` per event (``source`` numbers), read through ``source``.
    Compiled, ranges of positions are scanned on ``compiled.pass_threads`` threads."""
    n = len(source)
    begin, duration = passes._int64(begin), passes._int64(duration)
    int32 = source.dtype == np.int32
    if int32 and compiled.use_compiled(_layout, pure_python, n, MAX_COMPILED_EVENTS):
        threads = compiled.pass_threads(n, threads)
        found = _layout.break_cuts(begin, duration, source, seg_bounds, int(size), threads)
        return np.frombuffer(found, dtype=np.int32)
    at = np.flatnonzero(break_keys(begin[source], duration[source], seg_bounds) >= size)
    return at.astype(event_numbers(n))


def span(seg_bounds, times_at) -> tuple:
    """(first begin, last end) of the positions; (0, 0) without any. Inside a segment an
    event ends by the next one's begin, so a segment's last end is its last event's,
    unless that event ends before it begins (a damaged file: its segment is read whole)."""
    firsts, stops = seg_bounds[:-1], seg_bounds[1:]
    nonempty = firsts < stops
    if not nonempty.any():
        return (0, 0)
    firsts, lasts = firsts[nonempty], stops[nonempty] - 1
    last_begins, durations = times_at(lasts)
    ends = last_begins + durations
    for k in np.flatnonzero(ends < last_begins).tolist():
        begins, durations = times_at(np.arange(firsts[k], lasts[k] + 1))
        ends[k] = (begins + durations).max()
    return int(times_at(firsts)[0].min()), int(ends.max())


def marked_positions(
    source: np.ndarray, events: np.ndarray, pure_python=None, threads=None
) -> np.ndarray:
    """Positions p (in order) whose event ``source[p]`` is one of ``events``; compiled,
    ranges of positions are scanned on ``compiled.pass_threads`` threads."""
    events = passes._int64(events)
    int32 = source.dtype == np.int32
    if int32 and compiled.use_compiled(_layout, pure_python, len(source), MAX_COMPILED_EVENTS):
        threads = compiled.pass_threads(len(source), threads)
        found = _layout.marked_positions(source, events, threads)
        return np.frombuffer(found, dtype=np.int32).astype(np.int64)
    marked = np.zeros(len(source), dtype=bool)
    marked[events] = True
    return np.flatnonzero(marked[source])


def search_begins(begins_at, sample: np.ndarray, first, stop, value: int, side: str):
    """Per range [first, stop) of positions whose begins are sorted (inside a segment),
    ``first + np.searchsorted(begins, value, side)``. ``sample`` holds the begin at every
    SAMPLE_EVERY-th position: the samples inside a range narrow it to one block, then one
    binary search runs for all ranges at once, reading begins with ``begins_at``."""
    lo, hi = _sampled_bounds(sample, first, stop, value, side)
    while True:
        open_ = np.flatnonzero(lo < hi)
        if not len(open_):
            return lo
        mid = (lo[open_] + hi[open_]) // 2
        begins = begins_at(mid)
        right = begins < value if side == "left" else begins <= value
        lo[open_[right]] = mid[right] + 1
        hi[open_[~right]] = mid[~right]


def _sampled_bounds(sample: np.ndarray, first, stop, value: int, side: str) -> tuple:
    """Per range, a narrower [lo, hi) holding the answer: samples before the answer's
    block go right of ``value``, the first sample after it does not."""
    lo, hi = np.array(first, dtype=np.int64), np.array(stop, dtype=np.int64)
    a, b = -(-lo // SAMPLE_EVERY), -(-hi // SAMPLE_EVERY)  # samples inside each range
    which = cast(Literal["left", "right"], side)
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist())):
        at = i + int(np.searchsorted(sample[i:j], value, side=which))
        if at > i:
            lo[k] = (at - 1) * SAMPLE_EVERY + 1
        if at < j:
            hi[k] = at * SAMPLE_EVERY
    return lo, hi

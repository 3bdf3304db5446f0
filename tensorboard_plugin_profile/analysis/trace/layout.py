"""Where each event of a trace index goes: order by (row, depth, begin), compiled or numpy.

Two steps, each a stable counting sort when compiled (``_trace_passes.c``, GIL released,
every output column written once with no temporaries):

1. ``order_by_row``: events by row, keeping input order inside a row (each line's
   events come sorted by (begin, longest first) from preprocessing, which is checked;
   otherwise a full sort by (row, begin, longest first) is made);
2. ``lay_out``: with the depth of every event (``depths``), by (row, depth): the
   index's columns, the position of each source event, the segments and break keys.

The numpy fallback gives identical results (``tests/analysis/test_trace_layout.py``);
``TBPROF_PURE_PYTHON_PASSES=1`` forces it.

Usage::

    order, begin_t, end_t, bounds = order_by_row(line, line_row, begin, duration, num_rows)
    depth_t, relaid = depths.depths_in_rows(bounds, begin_t, end_t)
    lay = lay_out(order, bounds, begin_t, end_t, depth_t, name)
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Optional

import numpy as np

from .. import graph_passes, passes

_compiled: Optional[ModuleType]
try:
    from . import _trace_passes as _compiled
except ImportError:  # built without a C compiler: the numpy fallbacks below are used
    _compiled = None

NO_BREAK = np.iinfo(np.int64).max
INT32_EVENTS = 2**31  # event numbers are int32 below this many events, else int64


def _use_compiled(pure_python: Optional[bool], n: int) -> bool:
    return _compiled is not None and passes._use_compiled(pure_python) and n < INT32_EVENTS


def event_numbers(n: int) -> type:
    """The dtype of event numbers (order, source, positions) for ``n`` events."""
    return np.int32 if n < INT32_EVENTS else np.int64


def order_by_row(line, line_row, begin, duration, num_rows: int, pure_python=None) -> tuple:
    """(order, begin, end in that order, row bounds) of events sorted by (row, begin,
    longest first); ``line`` int32 per event, ``line_row`` the row of each line."""
    begin, duration = passes._int64(begin), passes._int64(duration)
    line_row = passes._int64(line_row)
    n = len(begin)
    if _use_compiled(pure_python, n):
        assert _compiled is not None
        order = np.empty(n, dtype=np.int32)
        begin_t, end_t = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        bounds = np.empty(num_rows + 1, dtype=np.int64)
        line = np.ascontiguousarray(line, dtype=np.int32)
        args = (line, line_row, begin, duration, num_rows, order, begin_t, end_t, bounds)
        if _compiled.row_order(*args):
            return order, begin_t, end_t, bounds
    row = line_row[line]
    end = begin + duration
    order = _time_order(row, begin, end).astype(event_numbers(n), copy=False)
    bounds = np.r_[0, np.cumsum(np.bincount(row, minlength=num_rows))].astype(np.int64)
    return order, begin[order], end[order], bounds


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
    positions: np.ndarray  # the same type: the position of each input event
    begin: np.ndarray  # int64
    end: np.ndarray  # int64
    row: np.ndarray  # int32
    depth: np.ndarray  # int32
    name: np.ndarray  # int32: name[source]
    break_key: np.ndarray  # int64
    seg_row: np.ndarray  # int64 per (row, depth) segment
    seg_depth: np.ndarray  # int64
    seg_bounds: np.ndarray  # int64, segment s = positions [bounds[s], bounds[s + 1])


def lay_out(order, bounds, begin_t, end_t, depth_t, name, pure_python=None) -> Layout:
    """Events sorted by (row, depth), keeping their order inside a (row, depth)."""
    num_rows = len(bounds) - 1
    compiled = _use_compiled(pure_python, len(order)) and order.dtype == np.int32
    if compiled and (not len(depth_t) or depth_t.min() >= 0):
        assert _compiled is not None
        return _lay_out_compiled(order, bounds, begin_t, end_t, depth_t, name, num_rows)
    row_t = np.repeat(np.arange(num_rows, dtype=np.int64), np.diff(bounds))
    by_depth = _by_depth(row_t, depth_t, num_rows)
    source = order[by_depth]
    row, depth = row_t[by_depth], depth_t[by_depth]
    begin, end = begin_t[by_depth], end_t[by_depth]
    seg_row, seg_depth, seg_bounds = _segments(row, depth)
    positions = np.empty(len(source), dtype=source.dtype)
    positions[source] = np.arange(len(source))
    key = _break_keys(begin, end, seg_bounds)
    return Layout(
        source, positions, begin, end, row.astype(np.int32), depth.astype(np.int32),
        np.asarray(name, dtype=np.int32)[source], key, seg_row, seg_depth, seg_bounds,
    )  # fmt: skip


def _lay_out_compiled(order, bounds, begin_t, end_t, depth_t, name, num_rows: int) -> Layout:
    n = len(order)
    base = _key_base(bounds, depth_t, num_rows)
    key_bounds = np.empty(int(base[-1]) + 1, dtype=np.int64)
    i64, i32 = (lambda: np.empty(n, np.int64)), (lambda: np.empty(n, np.int32))
    z = np.zeros(0, dtype=np.int64)  # the segments: made from key_bounds below
    lay = Layout(i32(), i32(), i64(), i64(), i32(), i32(), i32(), i64(), z, z, z)
    assert _compiled is not None
    _compiled.lay_out(
        order, bounds, base, begin_t, end_t, passes._int64(depth_t),
        np.ascontiguousarray(name, dtype=np.int32), lay.source, lay.begin, lay.end,
        lay.row, lay.depth, lay.name, lay.positions, lay.break_key, key_bounds,
    )  # fmt: skip
    keys = np.flatnonzero(key_bounds[1:] > key_bounds[:-1])
    lay.seg_bounds = np.r_[key_bounds[keys], n].astype(np.int64)
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


def _break_keys(begin: np.ndarray, end: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """max(gap before, own duration, previous duration); no break across segments."""
    dur = end - begin
    key = np.full(len(begin), NO_BREAK, dtype=np.int64)
    if len(begin) > 1:
        gap = begin[1:] - end[:-1]
        key[1:] = np.maximum(np.maximum(gap, dur[1:]), dur[:-1])
    key[bounds[:-1]] = NO_BREAK
    return key

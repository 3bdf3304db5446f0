"""Nesting depth of trace events per row (``trace_index``): compiled when built, else numpy.

Depth of an event = how many earlier events of its row are still open at its begin.
For well-nested rows that is the stack depth and events of one depth are disjoint; a
row where they are not (events overlapping without nesting) is re-laid by greedy
first-free lanes (``passes.first_free_levels``).

The trace index computes depths inside its compiled layout (``_row_depths.h``, the same
algorithm) and uses this module as its numpy fallback.

Compiled (``_depths.c``): one pass per row with a heap of open ends, which
also checks each depth's events are disjoint. The numpy fallback counts, per event,
the earlier events already ended (sorted ends), then checks disjointness with a
sort by depth. Both give identical results (``tests/analysis/test_trace_depths.py``);
``compiled.use_compiled`` chooses (``TBPROF_PURE_PYTHON=1`` forces the fallback).

Usage::

    depth, relaid_rows = row_depths(row, begin, end, num_rows)  # by (row, begin, -duration)
    depth, relaid_rows = depths_in_rows(bounds, begin, end)  # the same, rows as bounds
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...kernels import compiled, passes

_depths = compiled.load(__name__)


def row_depths(row, begin, end, num_rows: int, pure_python: Optional[bool] = None) -> tuple:
    """(depth per event, number of re-laid rows); events sorted by (row, begin, longest first)."""
    bounds = np.searchsorted(row, np.arange(num_rows + 1)).astype(np.int64)
    return depths_in_rows(bounds, begin, end, pure_python)


def depths_in_rows(bounds, begin, end, pure_python: Optional[bool] = None) -> tuple:
    """``row_depths`` of rows given by their bounds: row r = events [bounds[r], bounds[r + 1])."""
    begin, end = passes._int64(begin), passes._int64(end)
    bounds = passes._int64(bounds)
    # The compiled pass assumes every end >= its begin; the fallback takes anything.
    if compiled.use_compiled(_depths, pure_python) and not np.any(end < begin):
        depth = np.empty(len(begin), dtype=np.int64)
        relaid = _depths.row_depths(bounds, begin, end, depth)
        return depth, int(relaid)
    return _depths_numpy(bounds, begin, end)


def _depths_numpy(bounds: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple:
    depth = np.zeros(len(begin), dtype=np.int64)
    relaid = 0
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if hi - lo < 2:
            continue
        d = _nesting_depth(begin[lo:hi], end[lo:hi])
        if not _levels_disjoint(d, begin[lo:hi], end[lo:hi]):
            d = passes.first_free_levels(begin[lo:hi], end[lo:hi], pure_python=True)
            relaid += 1
        depth[lo:hi] = d
    return depth, relaid


def _nesting_depth(begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Events open at each begin: i − #{earlier events ended by then} (sorted by begin)."""
    n = len(begin)
    ended = np.searchsorted(np.sort(end), begin, side="right")
    # Instants at the same begin that sort after i are counted in ``ended`` but are
    # not earlier events; they sit at the end of their tie group (longest first).
    tie_start = np.flatnonzero(np.r_[True, begin[1:] != begin[:-1]])
    tie_end = np.r_[tie_start[1:], n]
    group = np.repeat(np.arange(len(tie_start)), tie_end - tie_start)
    zero = (end == begin).astype(np.int64)
    zeros_in_group = np.add.reduceat(zero, tie_start)
    later_zeros = np.minimum(zeros_in_group[group], tie_end[group] - np.arange(n))
    return np.arange(n) - (ended - later_zeros)


def _levels_disjoint(depth: np.ndarray, begin: np.ndarray, end: np.ndarray) -> bool:
    if depth.min() < 0:
        return False
    order = np.argsort(depth, kind="stable")
    d, b, e = depth[order], begin[order], end[order]
    same = d[1:] == d[:-1]
    return bool(np.all(b[1:][same] >= e[:-1][same]))

"""Nesting of intervals on a timeline line: who is whose parent, and self time.

Upstream walks each line's begin/end points (stable-sorted by time, ties in
insertion order) with a stack; an end pops entries until it finds an open
activity with the same key, and an end without one is dropped (docs/conversion.md §4.2).

We do the same without a Python loop per event. Walking the points, the depth
before each end and after each begin gives every point a *level*; within one
(line, level) begins and ends alternate, so pairing them in order is exactly
what a stack would do. When every pair is one activity's own begin and end (a
well-formed line, the normal case), the stack semantics and this pairing agree,
and parents fall out of a ``searchsorted`` on the level above. Lines where a pair
mixes two activities (partly overlapping events) are rare; only for those we
replay the stack over that line's points (``_replay_line``), which is the one
place that loops per point.

Usage::

    result = nest(line, begin_ps, end_ps, key)   # arrays in insertion order per line
    result.matched, result.time_ps, result.children_ps, result.parent
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Nesting:
    matched: np.ndarray  # bool: the activity produced an op record
    time_ps: np.ndarray  # int64: end - matched begin (0 where unmatched)
    children_ps: np.ndarray  # int64: sum of direct children's time
    parent: np.ndarray  # int64: index of the enclosing activity, -1 at top level
    replayed_lines: int = 0  # lines that needed the point-by-point fallback

    @property
    def self_ps(self) -> np.ndarray:
        return self.time_ps - self.children_ps


def nest(line: np.ndarray, begin: np.ndarray, end: np.ndarray, key: np.ndarray) -> Nesting:
    """Nests activities; arrays must be grouped by line in insertion order."""
    n = len(begin)
    line = np.asarray(line, dtype=np.int64)
    begin = np.asarray(begin, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    key = np.asarray(key, dtype=np.int64)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Nesting(np.zeros(0, dtype=bool), empty, empty.copy(), empty.copy())
    order, level, is_begin, activity = _sorted_points(line, begin, end)
    first, second = _pairs(order, level, is_begin, activity, n)
    parent = _parents(order, level, is_begin, activity, n)
    matched = np.ones(n, dtype=bool)
    time_ps = end - begin
    bad_lines = np.unique(line[first[first != second]])
    replayed = 0
    for bad in bad_lines.tolist():  # one iteration per malformed line, not per event
        rows = np.flatnonzero(line == bad)
        m, t, p = _replay_line(begin[rows], end[rows], key[rows])
        matched[rows], time_ps[rows], parent[rows] = m, t, np.where(p >= 0, rows[p], -1)
        replayed += 1
    time_ps = np.where(matched, time_ps, 0)
    has_parent = matched & (parent >= 0)
    children = np.bincount(parent[has_parent], weights=time_ps[has_parent], minlength=n)
    return Nesting(matched, time_ps, np.rint(children).astype(np.int64), parent, replayed)


def _sorted_points(line, begin, end):
    n = len(begin)
    ts = np.empty(2 * n, dtype=np.int64)
    ts[0::2], ts[1::2] = begin, end
    point_line = np.repeat(line, 2)
    # Stable by time within a line; insertion order (begin before its own end) breaks ties.
    order = np.lexsort((np.arange(2 * n), ts, point_line))
    is_begin = (order % 2) == 0
    depth_after = np.cumsum(np.where(is_begin, 1, -1))
    level = np.where(is_begin, depth_after, depth_after + 1)
    return order, level, is_begin, order // 2


def _pairs(order, level, is_begin, activity, n):
    """Per pair (k-th begin, k-th end) of a level: the two activities."""
    position = np.arange(len(order))
    by_level = np.lexsort((position, level))
    acts = activity[by_level]
    # Per level, begins and ends alternate (begin first), so pairs are consecutive.
    return acts[0::2], acts[1::2]


def _parents(order, level, is_begin, activity, n):
    """Parent = the last begin one level up before this activity's begin."""
    position = np.arange(len(order))
    begin_pos = position[is_begin]
    begin_level = level[is_begin]
    begin_act = activity[is_begin]
    # Sort begins by (level, position) and search for (level - 1, my position).
    sort = np.lexsort((begin_pos, begin_level))
    composite = begin_level[sort] * (len(order) + 1) + begin_pos[sort]
    target = (begin_level - 1) * (len(order) + 1) + begin_pos
    idx = np.searchsorted(composite, target) - 1
    parent = np.full(n, -1, dtype=np.int64)
    ok = (begin_level > 1) & (idx >= 0)
    found = np.zeros(len(begin_act), dtype=np.int64)
    found[ok] = begin_act[sort][idx[ok]]
    parent[begin_act[ok]] = found[ok]
    return parent


def _replay_line(begin, end, key):
    """The upstream stack over one line's points (pop until the same key)."""
    n = len(begin)
    ts = np.empty(2 * n, dtype=np.int64)
    ts[0::2], ts[1::2] = begin, end
    order = np.lexsort((np.arange(2 * n), ts)).tolist()
    matched = np.zeros(n, dtype=bool)
    time_ps = np.zeros(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    stack: list = []  # (activity, key, begin)
    keys, ts_list = key.tolist(), ts.tolist()
    for point in order:
        act = point // 2
        if point % 2 == 0:
            stack.append((act, keys[act], ts_list[point]))
            continue
        while stack:
            top, top_key, top_begin = stack.pop()
            if top_key == keys[act]:
                # The record belongs to the open entry (same key, so the same op).
                matched[top] = True
                time_ps[top] = ts_list[point] - top_begin
                if stack:
                    parent[top] = stack[-1][0]
                break
    return matched, time_ps, parent

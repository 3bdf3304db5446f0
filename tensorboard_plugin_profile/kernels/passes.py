"""Sequential passes over events: compiled (``_passes.c``) when built, else numpy/Python.

These passes carry state from one event to the next, which numpy cannot express
in one vectorised step:

- ``sweep_top``: the highest step-time type still open after each sorted span
  boundary (``analysis.steps.sweep``); the fallback runs one cumulative sum per type that
  occurs (a handful), not one over a (boundaries × types) matrix;
- ``previous_enclosing``: per event, the latest earlier event of its line run that
  ends at or after it (the intra-thread parent of step grouping, ``event_graph``);
  the fallback is pointer jumping (O(log n) rounds of gathers);
- ``pack_boundaries``: one sortable int64 key per span boundary (numpy fallback);
- ``step_breakdown``: the tracker of ``tracker_top`` over packed, sorted boundary keys,
  adding each piece to its step window as it goes (no piece table); compiled only,
  ``analysis.steps.sweep`` sums its pieces with numpy otherwise;
- ``first_free_levels``: greedy lanes for trace rows whose events overlap without
  nesting (``trace_index``); the fallback is the same heap loop in Python;
- ``dropping_stack``: torch-tb-profiler's stack over the host activities of each thread
  (``analysis/pytorch/operators.py``): parent = the innermost kept activity still open, and
  one that ends after it is dropped. The fallback nests well-formed lines with
  ``nesting.nest`` (vectorised) and replays the stack in Python on the others.

Both implementations give identical results (``tests/kernels/test_passes.py``,
with hypothesis); ``compiled.use_compiled`` chooses (``TBPROF_PURE_PYTHON=1`` forces the
fallbacks).

Usage::

    top = sweep_top(group, kind, start, num_types)   # int64 arrays in, int64 out
    parent = previous_enclosing(run, end)
    lanes = first_free_levels(begin, end)
    order = stable_order(key)                        # np.argsort(key, kind="stable")
    kept, parent = dropping_stack(line, begin, end)
"""

from __future__ import annotations

import heapq
from typing import Optional

import numpy as np
import pandas as pd

from . import compiled
from .nesting import nest

_passes = compiled.load(__name__)


def _int64(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


# --- sweep_top -------------------------------------------------------------------------
def sweep_top(group, kind, start, num_types: int, pure_python: Optional[bool] = None):
    """Per sorted boundary: the highest type with a positive open count after it, else 0.

    ``start`` is 1 where a span starts and 0 where one ends; counts run over the
    whole array (each group's spans start and end inside it, so they are balanced).
    """
    kind, start = _int64(kind), _int64(start)
    out = np.zeros(len(kind), dtype=np.int64)
    if not len(kind):
        return out
    if compiled.use_compiled(_passes, pure_python):
        _passes.sweep_top(_int64(group), kind, start, int(num_types), out)
        return out
    if kind.min() < 0 or kind.max() >= num_types:
        raise ValueError("sweep_top: kind out of range")
    step = np.where(start != 0, 1, -1).astype(np.int32)
    for t in np.unique(kind).tolist():  # ascending: higher types overwrite lower ones
        if t == 0:
            continue
        open_count = np.cumsum(np.where(kind == t, step, 0), dtype=np.int64)
        out[open_count > 0] = t
    return out


def tracker_top(
    group, kind, start, num_types: int, pure_python: Optional[bool] = None
) -> Optional[np.ndarray]:
    """Upstream's priority tracker after each sorted boundary, compiled only.

    None when the extension is not built (or is switched off): ``analysis.steps.sweep`` then
    reaches the same pieces with numpy (stretched instants + ``sweep_top``).
    """
    if not compiled.use_compiled(_passes, pure_python):
        return None
    kind = _int64(kind)
    out = np.zeros(len(kind), dtype=np.int64)
    if len(kind):
        _passes.tracker_top(_int64(group), kind, _int64(start), int(num_types), out)
    return out


MAX_TRACKED_TYPES = 62  # pack_boundaries / step_breakdown: 2 * num_types tail values


def pack_boundaries(group, begin, end, kind, num_types: int, pure_python: Optional[bool] = None):
    """(one int64 sort key per span boundary, layout), or None when they need > 62 bits.

    Key = group | time | tail, tail = is_start * num_types + (num_types - 1 - type), so
    ascending keys are ``analysis.steps.sweep``'s boundary order; span i's start at 2i, end at
    2i + 1. Times count from their group's earliest boundary (the bits grow with the
    longest step, not the profile). layout = [num_types, time_bits, tail_bits,
    group_min, groups, earliest time of each group...].
    """
    group, begin, end, kind = (_int64(c) for c in (group, begin, end, kind))
    if not len(group) or not 0 < num_types <= MAX_TRACKED_TYPES:
        return None
    group_min = int(group.min())
    groups = int(group.max()) - group_min + 1
    if groups > 4 * len(group) + 1024:  # sparse group ids: not worth a table
        return None
    layout = np.zeros(5 + groups, dtype=np.int64)
    layout[3:5] = group_min, groups
    key = np.empty(2 * len(group), dtype=np.int64)
    if compiled.use_compiled(_passes, pure_python):
        packed = _passes.pack_boundaries(group, begin, end, kind, num_types, key, layout)
        return (key, layout) if packed else None
    if kind.min() < 0 or kind.max() >= num_types:
        raise ValueError("step breakdown: type or group out of range")
    slot = group - group_min
    earliest = np.full(groups, np.iinfo(np.int64).max)
    latest = np.full(groups, np.iinfo(np.int64).min)
    np.minimum.at(earliest, slot, np.minimum(begin, end))
    np.maximum.at(latest, slot, np.maximum(begin, end))
    used = earliest <= latest
    width = latest[used].view(np.uint64) - earliest[used].view(np.uint64)  # exact, unsigned
    time_bits = int(width.max()).bit_length()
    tail_bits = (2 * num_types - 1).bit_length()
    if (groups - 1).bit_length() + time_bits + tail_bits > 62:
        return None
    layout[:3] = num_types, time_bits, tail_bits
    layout[5:] = np.where(used, earliest, 0)
    base = layout[5:][slot]
    high = slot << (time_bits + tail_bits)  # in place from here: few temporaries
    high |= num_types - 1 - kind
    part = np.subtract(begin, base)
    part <<= tail_bits
    part |= high
    part += num_types  # starts: tail in [num_types, 2 * num_types)
    key[0::2] = part
    np.subtract(end, base, out=part)
    part <<= tail_bits
    part |= high
    key[1::2] = part
    return key, layout


def step_breakdown(key, layout, windows, out, pure_python: Optional[bool] = None) -> bool:
    """The tracker over sorted packed boundary keys, summed per step window × type
    into the zeroed int64 outputs ``out`` = (per_type, present, total); ``windows`` =
    (group, begin, end). Compiled only: False when not run, and ``analysis.steps.sweep`` then
    gets the same sums from its piece table with numpy.
    """
    if not compiled.use_compiled(_passes, pure_python):
        return False
    group, begin, end = (_int64(w) for w in windows)
    _passes.step_breakdown(_int64(key), _int64(layout), group, begin, end, *out)
    return True


# --- stable_order ----------------------------------------------------------------------
def stable_order(key, pure_python: Optional[bool] = None) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` of an integer array, as int64 positions. numpy's
    stable argsort of 64-bit keys is a merge sort; compiled, this is an LSD radix sort of
    the keys relative to their least value (11 bits a pass, only the passes their range
    needs); else two value sorts (``_stable_order_by_value_sorts``)."""
    key = np.asarray(key)
    if key.dtype.kind not in "iub":
        return np.argsort(key, kind="stable").astype(np.int64, copy=False)
    if compiled.use_compiled(_passes, pure_python):
        return _radix_order(_eight_bytes(key), key.dtype.kind == "i")
    return _stable_order_by_value_sorts(key)


def _eight_bytes(key: np.ndarray) -> np.ndarray:
    """An integer key as the compiled passes read it: contiguous int64 (signed) or uint64."""
    return np.ascontiguousarray(key, dtype=np.int64 if key.dtype.kind == "i" else np.uint64)


def _radix_order(wide: np.ndarray, signed: bool) -> np.ndarray:
    assert _passes is not None
    out = np.empty(len(wide), dtype=np.int64)
    # numpy memory for the passes' buffers: inside blockpool.reusing() it reuses blocks
    # the conversion freed (pages never touched, for keys one pass sorts, cost nothing).
    scratch = np.empty(3 * len(wide), dtype=np.uint64)
    _passes.stable_order(wide, signed, out, scratch)
    return out


def lex_order(key, then: tuple = (), pure_python: Optional[bool] = None) -> np.ndarray:
    """The order ``np.lexsort((*reversed(then), key))`` gives, as int64 positions: by integer
    ``key``, ties by the integer arrays of ``then`` in turn, then by input position. A stable
    order by ``key`` alone (``stable_order``), then each run of equal keys put in order of
    ``then``: in C one pass over the runs (insertion sort; merge sort for a long run); else
    pairs by one vectorized comparison and longer runs by a lexsort of their members only."""
    key = np.asarray(key)
    if not then or len(key) < 2:
        return stable_order(key, pure_python)
    if compiled.use_compiled(_passes, pure_python) and key.dtype.kind in "iub":
        wide = _eight_bytes(key)  # once, for both passes
        order = _radix_order(wide, key.dtype.kind == "i")
        _passes.order_runs(order, wide, tuple(np.ascontiguousarray(t, np.int64) for t in then))
        return order
    return _order_runs_numpy(stable_order(key, pure_python), key, then)


def _order_runs_numpy(order: np.ndarray, key: np.ndarray, then: tuple) -> np.ndarray:
    ranked = key[order]
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        return order
    starts = np.flatnonzero(np.r_[True, ~same])
    lengths = np.diff(np.r_[starts, len(order)])
    a = starts[lengths == 2]
    left, right = order[a], order[a + 1]
    swap = np.zeros(len(a), dtype=bool)  # equal in every array: input order, as sorted
    for values in reversed(then):
        lv, rv = values[left], values[right]
        swap = (rv < lv) | ((rv == lv) & swap)
    order[a[swap]], order[a[swap] + 1] = right[swap], left[swap]
    longer = np.flatnonzero(np.repeat(lengths > 2, lengths))
    if len(longer):
        members = order[longer]
        keys = (members, *(values[members] for values in reversed(then)), ranked[longer])
        order[longer] = members[np.lexsort(keys)]
    return order


_LOW = np.uint64(0xFFFFFFFF)


def _stable_order_by_value_sorts(key: np.ndarray) -> np.ndarray:
    """The stable order from value sorts (``np.sort`` is several times faster than a 64-bit
    ``argsort``): the key made unsigned and relative to its least value, then one sort of
    (low 32 bits << 32 | input number) and, when the key is wider than 32 bits, one of
    (high 32 bits << 32 | rank) over that order (an LSD radix sort with two 32-bit digits;
    the number in the low half makes each pass stable)."""
    n = len(key)
    if n < 2 or n > 0xFFFFFFFF:
        return np.argsort(key, kind="stable").astype(np.int64, copy=False)
    u = key.astype(np.int64, copy=False).view(np.uint64) if key.dtype.kind == "i" else key
    if key.dtype.kind == "i":
        u = u ^ np.uint64(1 << 63)  # signed order as unsigned order
    u = u.astype(np.uint64, copy=False)
    u = u - u.min()
    number = np.arange(n, dtype=np.uint64)
    order = (np.sort((u << np.uint64(32)) | number) & _LOW).view(np.int64)
    high = u >> np.uint64(32)
    if high.any():
        rank = (np.sort((high[order] << np.uint64(32)) | number) & _LOW).view(np.int64)
        order = order[rank]
    return order


# --- previous_enclosing ----------------------------------------------------------------
def previous_enclosing(run, end, pure_python: Optional[bool] = None) -> np.ndarray:
    """Per position: the latest earlier position of its run with end >= its end, else -1."""
    run, end = _int64(run), _int64(end)
    if compiled.use_compiled(_passes, pure_python):
        out = np.empty(len(run), dtype=np.int64)
        _passes.previous_enclosing(run, end, out)
        return out
    return _previous_enclosing_jumps(run, end)


def _previous_enclosing_jumps(run: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Pointer jumping. Invariant: every position strictly between ``cand[i]`` and
    ``i`` ends before ``i``; a candidate that also ends before ``i`` can be skipped
    to its own candidate. Jumps double like list ranking, so rounds stay logarithmic.
    """
    m = len(run)
    if not m:
        return np.zeros(0, dtype=np.int64)
    positions = np.arange(m, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, m]))
    cand = positions - 1
    # Nothing earlier in the run ends at or after us: a top-level event, no search.
    latest_end = pd.Series(end).groupby(run, sort=False).cummax().to_numpy()
    top = np.r_[True, latest_end[:-1] < end[1:]] | (cand < run_start)
    cand[top] = run_start[top] - 1
    active = positions[~top]
    while len(active):
        c = cand[active]
        jump = end[c] < end[active]
        active, c = active[jump], c[jump]
        cand[active] = cand[c]
        active = active[cand[active] >= run_start[active]]
    return np.where(cand >= run_start, cand, -1)


# --- first_free_levels -----------------------------------------------------------------
def first_free_levels(begin, end, pure_python: Optional[bool] = None) -> np.ndarray:
    """Greedy lanes of events sorted by begin: the smallest lane free at each begin."""
    begin, end = _int64(begin), _int64(end)
    out = np.empty(len(begin), dtype=np.int64)
    if compiled.use_compiled(_passes, pure_python):
        _passes.first_free_levels(begin, end, out)
        return out
    free: list = []  # heap of free level numbers
    busy: list = []  # heap of (end, level)
    levels = 0
    for i, (b, e) in enumerate(zip(begin.tolist(), end.tolist())):
        while busy and busy[0][0] <= b:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            level = heapq.heappop(free)
        else:
            level, levels = levels, levels + 1
        out[i] = level
        heapq.heappush(busy, (e, level))
    return out


# --- dropping_stack ----------------------------------------------------------------------
def dropping_stack(line, begin, end, pure_python: Optional[bool] = None) -> tuple:
    """(kept, parent) of activities sorted by (line, begin, longest first).

    Per line, a stack of the kept activities still open: those that ended at or before an
    activity's begin are popped; the activity is dropped when it ends after the top (a
    partial overlap), else its parent is the top (-1 when none) and it is pushed.
    """
    line, begin, end = _int64(line), _int64(begin), _int64(end)
    if compiled.use_compiled(_passes, pure_python):
        kept = np.empty(len(line), dtype=bool)
        parent = np.empty(len(line), dtype=np.int64)
        _passes.dropping_stack(line, begin, end, kept, parent)
        return kept, parent
    return _dropping_stack_by_lines(line, begin, end)


def _dropping_stack_by_lines(line: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple:
    """Well-nested lines take the vectorised nesting (the stack gives the same answer there);
    a line where some activity ends after its enclosing one replays the stack in Python."""
    nesting = nest(line, begin, end, np.arange(len(begin)))
    kept, parent = nesting.matched.copy(), np.where(nesting.matched, nesting.parent, -1)
    for bad in np.unique(line[~nesting.matched]).tolist():  # one pass per malformed line
        rows = np.flatnonzero(line == bad)
        line_kept, local_parent = _replay_dropping_stack(begin[rows], end[rows])
        kept[rows] = line_kept
        parent[rows] = np.where(local_parent >= 0, rows[np.maximum(local_parent, 0)], -1)
    return kept, parent


def _replay_dropping_stack(begin: np.ndarray, end: np.ndarray) -> tuple:
    kept = np.zeros(len(begin), dtype=bool)
    parent = np.full(len(begin), -1, dtype=np.int64)
    stack: list = []
    for i, (b, e) in enumerate(zip(begin.tolist(), end.tolist())):
        while stack and b >= end[stack[-1]]:
            stack.pop()
        if stack and e > end[stack[-1]]:
            continue  # ends after its enclosing activity: dropped
        parent[i] = stack[-1] if stack else -1
        kept[i] = True
        stack.append(i)
    return kept, parent

"""Graph passes of step grouping: compiled (``_graph_passes.c``) when built, else numpy.

Step grouping (``preprocessing/event_graph``) makes every event a node of one
graph. Its passes are sequential by nature; numpy needs O(depth) rounds of
whole-array gathers for them, the compiled versions one linear pass in row order.

Compiled, the intra-thread edges are a forest stored as two int32 per row
(``line_forest``): upstream's stack parent, and ``stop``, the row where the event
left the stack, so its descendants are the rows of ``(i, stop[i])``. ``flood`` walks
those ranges in order and jumps over subtrees already labelled; the few other edges
are a small CSR by parent. Node ids are int32 there, so graphs of 2^31 - 1 rows or
more use the fallbacks.

The numpy fallbacks keep an explicit child adjacency:

- ``stack_parents``: the fallback finds the stack parents with
  ``passes.previous_enclosing`` on lines whose begins never go backwards and replays
  the stack on the others;
- ``csr``: a stable counting sort (adjacency lists; compiled, also used by the trace
  layout); the fallback is a stable argsort;
- ``child_lists``: the child adjacency of one-parent-per-node plus extra edges;
- ``rows_by_code``: the rows of wanted codes of a categorical column (the stat names of a
  stats table), grouped and in table order (compiled: a counting sort split across
  threads; the fallback: flags and a stable argsort);
- ``flood_numpy``: ``flood`` as ranks propagated by ``flood_min`` (the edges out of the
  nodes that changed relaxed round after round), then ``group_crossings``.

Both give identical results (``tests/kernels/test_graph_passes.py``, with
hypothesis); ``compiled.use_compiled`` chooses (``TBPROF_PURE_PYTHON=1`` forces the
fallbacks).

Usage::

    parent, stop = line_forest(line, begin, duration, skip)  # None: not compiled here
    label, flooded, (outer, inner) = flood(stop, extra, order, values, ...)
    ptr, child = csr(parent_of_edge, child_of_edge, n)  # children of k: child[ptr[k]:ptr[k+1]]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import compiled, passes

_graph_passes = compiled.load(__name__)

NO_LABEL = np.iinfo(np.int64).max
MAX_FOREST_ROWS = 2**31 - 2  # int32 row ids (and ``stop`` up to the row count)
_int64 = passes._int64


# --- the compiled forest ---------------------------------------------------------------
def line_forest(
    line, begin, duration, skip, pure_python: Optional[bool] = None, threads: Optional[int] = None
):
    """(parent, stop), int32 per row: upstream's stack parent (-1 for none) and the row
    where the event left the stack; ``skip`` rows (or None) take no part (stop = row).

    The stack empties whenever ``line`` (int32) changes from one row to the next.
    Compiled only: None when it does not run (not built, pure Python asked for, or more
    than ``MAX_FOREST_ROWS`` rows), and then ``stack_parents`` gives the parents.
    ``threads`` (default ``compiled.pass_threads``): the rows are split where the stack
    is empty, each part checked by the one before it, and run again on one thread when a
    check fails, so the result is the same for any count.
    """
    n = len(line)
    if not compiled.use_compiled(_graph_passes, pure_python, n, MAX_FOREST_ROWS):
        return None
    parent = np.empty(n, dtype=np.int32)
    stop = np.empty(n, dtype=np.int32)
    no_skip = np.zeros(0, dtype=np.uint8)
    skip = no_skip if skip is None else np.ascontiguousarray(skip, dtype=bool).view(np.uint8)
    line = np.ascontiguousarray(line, dtype=np.int32)
    threads = compiled.pass_threads(n, threads)
    _graph_passes.line_forest(line, _int64(begin), _int64(duration), skip, parent, stop, threads)
    return parent, stop


def extra_by_parent(parents, children, n: int) -> tuple:
    """The extra edges as ``flood`` reads them: (nodes with extra children (int32,
    sorted), ptr, their children (int32, in input order), bit mask of those nodes)."""
    nodes, ptr, by_parent = runs_by_key(parents, children, n)
    bits = np.zeros((n + 7) // 8, dtype=np.uint8)
    byte, starts = sorted_runs(nodes >> 3)  # distinct nodes: one bit each, so OR = sum
    bits[byte] = np.add.reduceat(1 << (nodes & 7), starts[:-1]) if len(nodes) else 0
    return nodes.astype(np.int32), ptr, by_parent.astype(np.int32), bits


# Edges per node above which a counting sort over every node beats sorting the edges.
COUNTING_SORT_EDGES_PER_NODE = 0.25


def runs_by_key(keys, values, n: int, pure_python: Optional[bool] = None) -> tuple:
    """(distinct keys, ptr, values stably sorted by key) for keys in [0, n): key
    ``keys_out[k]``'s values are ``values_out[ptr[k]:ptr[k + 1]]``; ptr is int64.

    Few keys (a few extra edges among millions of nodes): a stable argsort of them. Many
    (a context id shared by dozens of producers and consumers gives each consumer dozens
    of parents): ``csr``'s counting sort, O(edges + nodes) instead of O(edges log edges),
    and its per-node ptr cut down to the keys that occur. Both give the same arrays."""
    keys, values = _int64(keys), _int64(values)
    if len(keys) < COUNTING_SORT_EDGES_PER_NODE * n or not compiled.use_compiled(
        _graph_passes, pure_python
    ):
        order = np.argsort(keys, kind="stable")
        distinct, ptr = sorted_runs(keys[order])
        return distinct, ptr, values[order]
    node_ptr, by_key = csr(keys, values, n, pure_python)
    distinct = np.flatnonzero(node_ptr[1:] != node_ptr[:-1])
    return distinct, np.r_[node_ptr[distinct], len(keys)].astype(np.int64), by_key


def rows_by_code(
    codes, slot, slots: int, pure_python: Optional[bool] = None, threads: Optional[int] = None
) -> tuple:
    """(ptr, rows): the rows of a small-range code column (a categorical's codes, -1 for
    missing) grouped by slot, in table order within a slot; slot s's rows are
    ``rows[ptr[s]:ptr[s + 1]]`` (int64). ``slot`` (int32): per code, plus a last entry read
    by missing codes, the slot of its rows in [0, slots), or -1 to leave them out (codes
    sharing a slot are merged in table order).

    Compiled: a stable counting sort over parts of rows on ``threads`` (default
    ``compiled.pass_threads``) threads, the same arrays for any count, and no temporary per
    row; the numpy twin flags the wanted rows and sorts them by slot (a stable argsort)."""
    codes = np.ascontiguousarray(codes)
    slot = np.ascontiguousarray(slot, dtype=np.int32)
    ptr = np.empty(slots + 1, dtype=np.int64)
    if compiled.use_compiled(_graph_passes, pure_python) and codes.dtype.kind in "iu":
        threads = compiled.pass_threads(len(codes), threads)
        total = _graph_passes.rows_by_code(codes, slot, ptr, None, threads)
        rows = np.empty(total, dtype=np.int64)
        _graph_passes.rows_by_code(codes, slot, ptr, rows, threads)
        return ptr, rows
    if len(codes) and int(codes.max()) >= len(slot) - 1:
        raise ValueError("rows_by_code: a code has no slot")
    of_row = slot[np.where(codes < 0, len(slot) - 1, codes)]
    rows = np.flatnonzero(of_row >= 0)
    of_row = of_row[rows]
    order = np.argsort(of_row, kind="stable")
    rows = rows[order]
    ptr[0] = 0
    ptr[1:] = np.cumsum(np.bincount(of_row, minlength=slots)[:slots])
    return ptr, rows


def sorted_runs(keys: np.ndarray) -> tuple:
    """(distinct keys, ptr) of sorted ``keys``: key k's run is ``ptr[k]:ptr[k + 1]``."""
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else keys[:0]
    return keys[starts], np.r_[starts, len(keys)].astype(np.int64)


def flood(stop, extra, order, values, proper, unreached, out, crossings) -> tuple:
    """(label, flooded, (outer, inner)) over the compiled forest (``line_forest``'s
    ``stop``); see ``flood_numpy``."""
    assert _graph_passes is not None and not (proper and crossings)
    order = _int64(order)
    values = np.zeros(0, dtype=np.int64) if values is None else _int64(values)
    flooded = np.zeros(len(order), dtype=np.uint8)
    label = np.empty(len(stop), dtype=np.int64) if out is None else out
    pairs = _graph_passes.flood(
        stop, *extra, order, values, bool(proper), int(unreached), label, flooded, crossings
    )
    pairs = np.frombuffer(pairs, dtype=np.int64).reshape(-1, 2)
    return label, flooded.view(bool), (pairs[:, 0].copy(), pairs[:, 1].copy())


def flood_numpy(child_ptr, child_idx, order, values, proper, unreached, out, crossings):
    """(label, flooded, crossings) of seeds ``order`` over a child adjacency.

    label[x] = ``values[r]`` of the first seed ``order[r]`` with a path to x (of at least
    one edge when ``proper``), else ``unreached``; ``values`` None: dense, a seed's value
    is the number of seeds before it not reached by an earlier one (``flooded``).
    crossings (not with ``proper``): the (label, label) pairs of edges between two labels.
    """
    order = _int64(order)
    n = len(child_ptr) - 1
    rank = np.full(n, NO_LABEL, dtype=np.int64)
    seeds = np.arange(len(order), dtype=np.int64)
    if proper:
        source, child = edges_from(child_ptr, child_idx, order)
        source_rank = np.repeat(seeds, child_ptr[order + 1] - child_ptr[order])
        np.minimum.at(rank, child, source_rank)
    else:
        np.minimum.at(rank, order, seeds)
    rank = flood_min(child_ptr, child_idx, rank, in_place=True)
    flooded = rank[order] >= seeds  # not reached by an earlier seed
    if values is None:
        values = np.cumsum(flooded) - 1
    reached = rank != NO_LABEL
    label = np.empty(n, dtype=np.int64) if out is None else out
    label.fill(unreached)
    label[reached] = _int64(values)[rank[reached]]
    pairs = (np.zeros(0, dtype=np.int64),) * 2
    if crossings:
        pairs = group_crossings(child_ptr, child_idx, np.where(reached, label, -1))
    return label, flooded, pairs


# --- stack_parents ---------------------------------------------------------------------
def stack_parents(line, begin, end, skip) -> np.ndarray:
    """Per row: upstream's stack parent on its line (-1 for none; ``skip`` rows take no part).

    The stack empties whenever ``line`` changes from one row to the next.
    """
    line, begin, end = _int64(line), _int64(begin), _int64(end)
    skip = np.ascontiguousarray(skip, dtype=bool)
    n = len(line)
    parent = np.full(n, -1, dtype=np.int64)
    rows = np.flatnonzero(~skip)
    if not len(rows):
        return parent
    run = np.cumsum(np.r_[0, line[1:] != line[:-1]])
    r, b, e = run[rows], begin[rows], end[rows]
    backwards = (b[1:] < b[:-1]) & (r[1:] == r[:-1])
    bad_runs = np.unique(r[1:][backwards])
    sorted_rows = ~np.isin(r, bad_runs) if len(bad_runs) else np.ones(len(r), dtype=bool)
    # Begins in order: an entry that does not contain us ends before us.
    found = passes.previous_enclosing(r, e, pure_python=True)
    parent[rows[sorted_rows]] = np.where(found >= 0, rows[np.maximum(found, 0)], -1)[sorted_rows]
    for bad in bad_runs.tolist():  # one iteration per out-of-order line, not per event
        on_run = np.flatnonzero(r == bad)
        local = _replay_stack(b[on_run].tolist(), e[on_run].tolist())
        parent[rows[on_run]] = np.where(local >= 0, rows[on_run][np.maximum(local, 0)], -1)
    return parent


def _replay_stack(begin: list, end: list) -> np.ndarray:
    """Upstream's stack pass over one line (events in table order)."""
    parent = np.full(len(begin), -1, dtype=np.int64)
    stack: list = []
    for i, (b, e) in enumerate(zip(begin, end)):
        while stack:
            top = stack[-1]
            if begin[top] <= b and e <= end[top]:
                parent[i] = top
                break
            stack.pop()
        stack.append(i)
    return parent


# --- csr -------------------------------------------------------------------------------
def csr(keys, values, n: int, pure_python: Optional[bool] = None) -> tuple:
    """(ptr, values stably sorted by key): key k's values are ``out[ptr[k]:ptr[k + 1]]``."""
    keys, values = _int64(keys), _int64(values)
    if compiled.use_compiled(_graph_passes, pure_python):
        ptr = np.empty(n + 1, dtype=np.int64)
        out = np.empty(len(keys), dtype=np.int64)
        _graph_passes.csr(keys, values, int(n), ptr, out)
        return ptr, out
    if len(keys) and (keys.min() < 0 or keys.max() >= n):
        raise ValueError("csr: key out of range")
    ptr = np.r_[0, np.cumsum(np.bincount(keys, minlength=n))].astype(np.int64)
    return ptr, values[np.argsort(keys, kind="stable")]


def child_lists(parent_of, extra_parent, extra_child) -> tuple:
    """(ptr, children) of the edges ``parent_of[x] -> x`` (where >= 0) then the extra ones.

    Each node's children: the nodes naming it in ``parent_of`` (increasing), then its
    extra children in input order.
    """
    parent_of = _int64(parent_of)
    extra_parent, extra_child = _int64(extra_parent), _int64(extra_child)
    n = len(parent_of)
    if len(parent_of) and (parent_of.min() < -1 or parent_of.max() >= n):
        raise ValueError("child_lists: parent out of range")
    child = np.flatnonzero(parent_of >= 0)
    keys = np.concatenate([parent_of[child], extra_parent])
    if len(extra_child) and (extra_child.min() < 0 or extra_child.max() >= n):
        raise ValueError("child_lists: edge out of range")
    return csr(keys, np.concatenate([child, extra_child]), n, pure_python=True)


# --- flood_min -------------------------------------------------------------------------
def flood_min(child_ptr, child_idx, label, in_place: bool = False) -> np.ndarray:
    """Least fixed point of ``label[x] = min(label[x], label[parent])`` over child edges.

    Relaxes the edges out of the nodes that changed, round after round. ``in_place``:
    ``label`` (int64, contiguous) is overwritten instead of copied.
    """
    child_ptr, child_idx = _int64(child_ptr), _int64(child_idx)
    if not (in_place and label.dtype == np.int64 and label.flags.c_contiguous):
        label = np.array(label, dtype=np.int64)  # a copy: the input is not touched
    frontier = np.flatnonzero(label != NO_LABEL)
    while len(frontier):
        source, child = edges_from(child_ptr, child_idx, frontier)
        offered = label[source]
        better = offered < label[child]
        child, offered = child[better], offered[better]
        if not len(child):
            break
        np.minimum.at(label, child, offered)
        frontier = _distinct(child, len(label))
    return label


def group_crossings(child_ptr, child_idx, group) -> tuple:
    """(outer, inner) groups of every edge from a node of one group to another's node.

    Pairs may repeat (only their set is meant); nodes with group < 0 take no part.
    """
    child_ptr, child_idx, group = _int64(child_ptr), _int64(child_idx), _int64(group)
    outer = np.repeat(group, np.diff(child_ptr))
    inner = group[child_idx]
    crossing = (outer >= 0) & (inner >= 0) & (outer != inner)
    return outer[crossing], inner[crossing]


def edges_from(ptr: np.ndarray, idx: np.ndarray, nodes: np.ndarray) -> tuple:
    """(source, target) for every adjacency entry of ``nodes``."""
    start, stop = ptr[nodes], ptr[nodes + 1]
    fan = stop - start
    total = int(fan.sum())
    source = np.repeat(nodes, fan)
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(fan) - fan, fan)
    return source, idx[np.repeat(start, fan) + offset]


def _distinct(nodes: np.ndarray, n: int) -> np.ndarray:
    """The distinct nodes, sorted (a mask beats a hash on big frontiers)."""
    if len(nodes) * 32 < n:
        return np.unique(nodes)
    changed = np.zeros(n, dtype=bool)
    changed[nodes] = True
    return np.flatnonzero(changed)

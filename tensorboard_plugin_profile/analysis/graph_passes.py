"""Graph passes of step grouping: compiled (``_passes.c``) when built, else numpy.

Step grouping (``preprocessing/event_graph``) makes every event a node of one
graph. Three of its passes are sequential by nature; numpy needs O(depth) rounds
of whole-array gathers for them, the compiled versions one linear pass:

- ``stack_parents``: upstream's per-line nesting stack (the intra-thread parent);
  the fallback finds the same parents with ``passes.previous_enclosing`` on lines
  whose begins never go backwards and replays the stack on the others;
- ``csr``: a stable counting sort (adjacency lists); the fallback is a stable argsort;
- ``child_lists``: the child adjacency of one-parent-per-node plus extra edges, without
  materialising the edge list; the fallback concatenates the edges and uses ``csr``;
- ``group_crossings``: the (group, group) pairs of edges between two groups; the
  fallback gathers both ends of every edge;
- ``flood_min``: the least fixed point of min-label propagation along child edges;
  compiled, the labelled nodes flood their unvisited descendants in label order
  (each node is visited once); the fallback relaxes the edges out of the nodes that
  changed, round after round, until nothing changes.

Both implementations give identical results (``tests/analysis/test_graph_passes.py``,
with hypothesis); ``TBPROF_PURE_PYTHON_PASSES=1`` forces the fallbacks.

Usage::

    parent = stack_parents(line, begin, end, skip)      # -1 = no parent
    ptr, child = csr(parent_of_edge, child_of_edge, n)  # children of k: child[ptr[k]:ptr[k+1]]
    ptr, child = child_lists(parent_of_node, extra_parent, extra_child)
    label = flood_min(ptr, child, label)
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import passes

NO_LABEL = np.iinfo(np.int64).max
_int64 = passes._int64


def _compiled(pure_python: Optional[bool]):
    """The compiled module when it should be used, else None."""
    return passes._passes if passes._use_compiled(pure_python) else None


# --- stack_parents ---------------------------------------------------------------------
def stack_parents(line, begin, end, skip, pure_python: Optional[bool] = None) -> np.ndarray:
    """Per row: upstream's stack parent on its line (-1 for none; ``skip`` rows take no part).

    The stack empties whenever ``line`` changes from one row to the next.
    """
    line, begin, end = _int64(line), _int64(begin), _int64(end)
    skip = np.ascontiguousarray(skip, dtype=bool)
    compiled = _compiled(pure_python)
    if compiled is not None:
        out = np.empty(len(line), dtype=np.int64)
        compiled.stack_parents(line, begin, end, skip.view(np.uint8), out)
        return out
    return _stack_parents_numpy(line, begin, end, skip)


def _stack_parents_numpy(line, begin, end, skip) -> np.ndarray:
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
    compiled = _compiled(pure_python)
    if compiled is not None:
        ptr = np.empty(n + 1, dtype=np.int64)
        out = np.empty(len(keys), dtype=np.int64)
        compiled.csr(keys, values, int(n), ptr, out)
        return ptr, out
    if len(keys) and (keys.min() < 0 or keys.max() >= n):
        raise ValueError("csr: key out of range")
    ptr = np.r_[0, np.cumsum(np.bincount(keys, minlength=n))].astype(np.int64)
    return ptr, values[np.argsort(keys, kind="stable")]


def child_lists(parent_of, extra_parent, extra_child, pure_python: Optional[bool] = None):
    """(ptr, children) of the edges ``parent_of[x] -> x`` (where >= 0) then the extra ones.

    Each node's children: the nodes naming it in ``parent_of`` (increasing), then its
    extra children in input order.
    """
    parent_of = _int64(parent_of)
    extra_parent, extra_child = _int64(extra_parent), _int64(extra_child)
    n = len(parent_of)
    compiled = _compiled(pure_python)
    if compiled is not None:
        ptr = np.empty(n + 1, dtype=np.int64)
        out = np.empty(int(np.count_nonzero(parent_of >= 0)) + len(extra_parent), dtype=np.int64)
        compiled.child_lists(parent_of, extra_parent, extra_child, ptr, out)
        return ptr, out
    if len(parent_of) and (parent_of.min() < -1 or parent_of.max() >= n):
        raise ValueError("child_lists: parent out of range")
    child = np.flatnonzero(parent_of >= 0)
    keys = np.concatenate([parent_of[child], extra_parent])
    if len(extra_child) and (extra_child.min() < 0 or extra_child.max() >= n):
        raise ValueError("child_lists: edge out of range")
    return csr(keys, np.concatenate([child, extra_child]), n, pure_python=True)


# --- flood_min -------------------------------------------------------------------------
def flood_min(
    child_ptr, child_idx, label, pure_python: Optional[bool] = None, in_place: bool = False
) -> np.ndarray:
    """Least fixed point of ``label[x] = min(label[x], label[parent])`` over child edges.

    ``in_place``: ``label`` (int64, contiguous) is overwritten instead of copied.
    """
    child_ptr, child_idx = _int64(child_ptr), _int64(child_idx)
    if not (in_place and label.dtype == np.int64 and label.flags.c_contiguous):
        label = np.array(label, dtype=np.int64)  # a copy: the input is not touched
    compiled = _compiled(pure_python)
    if compiled is not None:
        labelled = np.flatnonzero(label != NO_LABEL)
        order = labelled[np.argsort(label[labelled], kind="stable")]
        compiled.flood_min(child_ptr, child_idx, order, label)
        return label
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


def group_crossings(child_ptr, child_idx, group, pure_python: Optional[bool] = None) -> tuple:
    """(outer, inner) groups of every edge from a node of one group to another's node.

    Pairs may repeat (only their set is meant); nodes with group < 0 take no part.
    """
    child_ptr, child_idx, group = _int64(child_ptr), _int64(child_idx), _int64(group)
    compiled = _compiled(pure_python)
    if compiled is not None:
        # Room for every edge: pages no pair is written to are never touched.
        outer = np.empty(len(child_idx), dtype=np.int64)
        inner = np.empty(len(child_idx), dtype=np.int64)
        count = compiled.group_crossings(child_ptr, child_idx, group, outer, inner)
        return outer[:count].copy(), inner[:count].copy()
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

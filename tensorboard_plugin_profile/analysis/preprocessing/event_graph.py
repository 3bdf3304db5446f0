"""The event graph of step grouping (docs/conversion.md §3.4) as integer arrays.

Upstream builds one node object per event and walks pointers; here a node is an
index (planes in order, each plane's events in table order) and the edges are
``(parent, child)`` arrays built with sorts and joins:

* **intra-thread**: upstream pops a per-line stack until the top contains the
  event. When begins never decrease along a line (the decoder's order, and every
  fixture's), the popped entries never contain a later event, so the parent is
  simply the latest earlier event whose end is not before ours — a "previous
  greater-or-equal" search done by pointer jumping (O(log n) rounds of gathers).
  Lines whose begins go backwards replay the stack, on those lines only.
* **inter-thread** and **producer/consumer** links are joins on stat keys.

Order matters in one place: ancestor searches are breadth first over each node's
parent list, whose upstream order is intra-thread parent, inter-thread parent,
context producers (by node), loop root. ``Graph`` keeps parents in that order.

Everything else (group floods, reachability) is a label propagation over the
child adjacency: ``propagate_min`` relaxes edges out of the nodes that changed
until nothing changes; the number of rounds is the depth of the graph.

Usage::

    parent = intra_thread_parents(run, begin, end, skip)
    graph = Graph.from_edges(n, [(parent_idx, child_idx, rank), ...])
    owner = propagate_min(graph, init)
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from .. import passes

NO_LABEL = np.iinfo(np.int64).max
# Producer/consumer contexts are connected unless both sides are this large.
MAX_CONTEXT_FANOUT = 64


def intra_thread_parents(run, begin, end, skip) -> np.ndarray:
    """Parent of each event on its line run (-1 for none; ``skip`` rows take no part)."""
    n = len(run)
    parent = np.full(n, -1, dtype=np.int64)
    rows = np.flatnonzero(~skip)
    if not len(rows):
        return parent
    r, b, e = run[rows], begin[rows], end[rows]
    backwards = (b[1:] < b[:-1]) & (r[1:] == r[:-1])
    bad_runs = np.unique(r[1:][backwards])
    sorted_rows = ~np.isin(r, bad_runs) if len(bad_runs) else np.ones(len(r), dtype=bool)
    found = passes.previous_enclosing(r, e)
    parent[rows[sorted_rows]] = np.where(found >= 0, rows[np.maximum(found, 0)], -1)[sorted_rows]
    for bad in bad_runs.tolist():  # one iteration per out-of-order line, not per event
        on_run = np.flatnonzero(r == bad)
        local = _stack_parents(b[on_run].tolist(), e[on_run].tolist())
        parent[rows[on_run]] = np.where(local >= 0, rows[on_run][np.maximum(local, 0)], -1)
    return parent


def _stack_parents(begin: list, end: list) -> np.ndarray:
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


def key_codes(columns: list) -> np.ndarray:
    """Dense codes of the rows of int64 key columns (equal rows, equal codes)."""
    if not len(columns[0]):
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(columns[::-1])
    differs = np.zeros(len(order), dtype=bool)
    for col in columns:
        ordered = col[order]
        differs[1:] |= ordered[1:] != ordered[:-1]
    codes = np.empty(len(order), dtype=np.int64)
    codes[order] = np.cumsum(differs)
    return codes


def first_seen(codes: np.ndarray) -> np.ndarray:
    """Codes renumbered in order of first appearance (like dict insertion order)."""
    first = np.full(int(codes.max()) + 1, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    remap = np.empty(len(first), dtype=np.int64)
    remap[np.argsort(first, kind="stable")] = np.arange(len(first))
    return remap[codes]


def link_by_keys(parents: tuple, children: tuple) -> tuple:
    """(parent, child) node pairs with equal keys; the last parent of a key wins.

    Each side is (nodes in increasing order, list of int64 key columns).
    """
    (p_nodes, p_keys), (c_nodes, c_keys) = parents, children
    if not len(p_nodes) or not len(c_nodes):
        return _no_edges()
    codes = key_codes([np.concatenate(pair) for pair in zip(p_keys, c_keys)])
    last = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
    np.maximum.at(last, codes[: len(p_nodes)], p_nodes)
    parent = last[codes[len(p_nodes) :]]
    linked = parent >= 0
    return parent[linked], c_nodes[linked].astype(np.int64)


def context_links(node, is_consumer, key_code) -> tuple:
    """Every producer → every consumer of a context, unless both sides reach the fan-out cap.

    ``node`` must be increasing within each side, so each consumer lists its
    producers in node order (the upstream parent order).
    """
    num_keys = int(key_code.max()) + 1 if len(key_code) else 0
    producers = ~is_consumer
    p_count = np.bincount(key_code[producers], minlength=num_keys)
    c_count = np.bincount(key_code[is_consumer], minlength=num_keys)
    linked = ~((p_count >= MAX_CONTEXT_FANOUT) & (c_count >= MAX_CONTEXT_FANOUT))
    order = np.lexsort((node[producers], key_code[producers]))
    prod_nodes = node[producers][order]
    prod_start = np.r_[0, np.cumsum(p_count)][:-1]
    consumers = is_consumer & linked[key_code]
    c_nodes, c_keys = node[consumers], key_code[consumers]
    fan = p_count[c_keys]
    child = np.repeat(c_nodes, fan)
    first = np.repeat(prod_start[c_keys], fan)
    offset = np.arange(len(child), dtype=np.int64) - np.repeat(np.cumsum(fan) - fan, fan)
    return prod_nodes[first + offset].astype(np.int64), child.astype(np.int64)


def _no_edges() -> tuple:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)


@dataclasses.dataclass
class Graph:
    """Parent lists (in upstream order) and child lists as CSR arrays."""

    n: int
    parent_ptr: np.ndarray
    parent_idx: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray

    @classmethod
    def from_edges(cls, n: int, edge_sets: list) -> Graph:
        """``edge_sets``: (parents, children) pairs, listed in parent-order rank."""
        parents = np.concatenate([p for p, _ in edge_sets] + [_no_edges()[0]])
        children = np.concatenate([c for _, c in edge_sets] + [_no_edges()[0]])
        rank = np.concatenate(
            [np.full(len(p), k, dtype=np.int8) for k, (p, _) in enumerate(edge_sets)]
            + [np.zeros(0, dtype=np.int8)]
        )
        # Stable within a rank: context producers arrive in node order per consumer.
        # (A composite key sorts faster than lexsort; edge sets come nearly sorted.)
        by_child = np.argsort(children * len(edge_sets) + rank, kind="stable")
        by_parent = np.argsort(parents, kind="stable")
        return cls(
            n=n,
            parent_ptr=_pointers(children, n),
            parent_idx=parents[by_child],
            child_ptr=_pointers(parents, n),
            child_idx=children[by_parent],
        )

    def parents_of(self, node: int) -> np.ndarray:
        return self.parent_idx[self.parent_ptr[node] : self.parent_ptr[node + 1]]

    def edges_from(self, nodes: np.ndarray) -> tuple:
        """(source, child) for every child edge out of ``nodes``."""
        start, stop = self.child_ptr[nodes], self.child_ptr[nodes + 1]
        fan = stop - start
        total = int(fan.sum())
        source = np.repeat(nodes, fan)
        offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(fan) - fan, fan)
        return source, self.child_idx[np.repeat(start, fan) + offset]

    def all_edges(self) -> tuple:
        """(parent, child) of every edge."""
        counts = np.diff(self.child_ptr)
        return np.repeat(np.arange(self.n, dtype=np.int64), counts), self.child_idx

    def first_ancestor(self, node: int, matches: np.ndarray, include_self: bool = True):
        """Upstream's breadth-first search over parents; the first match or None."""
        queue = deque([node] if include_self else self.parents_of(node).tolist())
        seen = {node, *queue}
        while queue:
            current = queue.popleft()
            if matches[current]:
                return current
            for parent in self.parents_of(current).tolist():
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return None


def _pointers(keys: np.ndarray, n: int) -> np.ndarray:
    return np.r_[0, np.cumsum(np.bincount(keys, minlength=n))].astype(np.int64)


def propagate_min(graph: Graph, label: np.ndarray) -> np.ndarray:
    """Least fixed point of ``label[x] = min(label[x], label[parent])`` over child edges."""
    label = label.copy()
    frontier = np.flatnonzero(label != NO_LABEL)
    while len(frontier):
        source, child = graph.edges_from(frontier)
        offered = label[source]
        better = offered < label[child]
        source, child, offered = source[better], child[better], offered[better]
        if not len(child):
            break
        np.minimum.at(label, child, offered)
        frontier = _distinct(child, graph.n)
    return label


def _distinct(nodes: np.ndarray, n: int) -> np.ndarray:
    """The distinct nodes, sorted (a mask beats a hash on big frontiers)."""
    if len(nodes) * 32 < n:
        return np.unique(nodes)
    changed = np.zeros(n, dtype=bool)
    changed[nodes] = True
    return np.flatnonzero(changed)


def reached_from(graph: Graph, sources: np.ndarray, proper: bool) -> np.ndarray:
    """Per node, the smallest source node with a path to it (NO_LABEL if none).

    ``proper``: paths of at least one edge (a source does not reach itself unless
    through a cycle).
    """
    label = np.full(graph.n, NO_LABEL, dtype=np.int64)
    nodes = np.flatnonzero(sources)
    if not proper:
        label[nodes] = nodes
        return propagate_min(graph, label)
    source, child = graph.edges_from(nodes)
    np.minimum.at(label, child, source)
    return propagate_min(graph, label)

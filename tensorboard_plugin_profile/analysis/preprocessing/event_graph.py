"""The event graph of step grouping (docs/conversion.md §3.4) as integer arrays.

Upstream builds one node object per event and walks pointers; here a node is an
index (planes in order, each plane's events in table order) and the edges are
``(parent, child)`` arrays built with sorts and joins:

* **intra-thread**: upstream pops a per-line stack until the top contains the
  event; ``graph_passes.stack_parents`` runs that stack in one compiled pass (the
  numpy fallback: when begins never decrease along a line, the parent is the latest
  earlier event whose end is not before ours, found by pointer jumping).
* **inter-thread** and **producer/consumer** links are joins on stat keys.

Order matters in one place: ancestor searches are breadth first over each node's
parent list, whose upstream order is intra-thread parent, inter-thread parent,
context producers (by node), loop root. ``Graph`` keeps parents in that order.

Everything else (group floods, reachability) is a min-label propagation over the
child adjacency (``propagate_min``): compiled, the labelled nodes flood their
unvisited descendants in label order, visiting each node once; the numpy fallback
relaxes edges out of the nodes that changed, one round per level of depth.

Usage::

    parent = intra_thread_parents(line, begin, end, skip)
    graph = Graph.build(parent, [(parent_idx, child_idx), ...])  # later ranks
    owner = propagate_min(graph, init)
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from .. import graph_passes
from ..graph_passes import NO_LABEL

# Producer/consumer contexts are connected unless both sides are this large.
MAX_CONTEXT_FANOUT = 64


def intra_thread_parents(line, begin, end, skip) -> np.ndarray:
    """Parent of each event on its line (-1 for none; ``skip`` rows take no part).

    ``line`` identifies the line of each row in node order; a stack starts empty
    wherever it changes from one row to the next.
    """
    return graph_passes.stack_parents(line, begin, end, skip)


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
    """Parent lists (in upstream order) and child lists as arrays.

    A node's parents are its intra-thread parent (``parent_of``, -1 for none), then
    its other parents, in edge-set rank order: the few nodes that have any are
    ``extra_nodes`` (sorted), ``extra_nodes[k]``'s are ``extra_idx[extra_ptr[k]:
    extra_ptr[k + 1]]`` (a CSR over those nodes only, not over every event);
    ``child_ptr``/``child_idx`` hold every node's children (CSR).
    """

    n: int
    parent_of: np.ndarray
    extra_nodes: np.ndarray
    extra_ptr: np.ndarray
    extra_idx: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray

    @classmethod
    def build(cls, parent_of: np.ndarray, edge_sets: list) -> Graph:
        """``edge_sets``: further (parents, children) pairs, listed in parent-order rank."""
        n = len(parent_of)
        parents = np.concatenate([p for p, _ in edge_sets] + [_no_edges()[0]])
        children = np.concatenate([c for _, c in edge_sets] + [_no_edges()[0]])
        # Edge sets arrive in rank order, so a stable sort by child keeps each
        # node's parents in upstream order (context producers in node order).
        order = np.argsort(children, kind="stable")
        extra_nodes, counts = np.unique(children[order], return_counts=True)
        extra_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        child_ptr, child_idx = graph_passes.child_lists(parent_of, parents, children)
        return cls(n, parent_of, extra_nodes, extra_ptr, parents[order], child_ptr, child_idx)

    def parents_of(self, node: int) -> list:
        first = int(self.parent_of[node])
        k = int(np.searchsorted(self.extra_nodes, node))
        extra: list = []
        if k < len(self.extra_nodes) and self.extra_nodes[k] == node:
            extra = self.extra_idx[self.extra_ptr[k] : self.extra_ptr[k + 1]].tolist()
        return [first, *extra] if first >= 0 else extra

    def _has_extra_parents(self, nodes: np.ndarray) -> np.ndarray:
        if not len(self.extra_nodes):
            return np.zeros(len(nodes), dtype=bool)
        k = np.minimum(np.searchsorted(self.extra_nodes, nodes), len(self.extra_nodes) - 1)
        return self.extra_nodes[k] == nodes

    def edges_from(self, nodes: np.ndarray) -> tuple:
        """(source, child) for every child edge out of ``nodes``."""
        return graph_passes.edges_from(self.child_ptr, self.child_idx, nodes)

    def first_ancestors(self, nodes: np.ndarray, matches: np.ndarray) -> np.ndarray:
        """``first_ancestor`` of each node (itself included), -1 for none."""
        found = np.where(matches[nodes], nodes, -1)
        has_parent = (self.parent_of[nodes] >= 0) | self._has_extra_parents(nodes)
        for k in np.flatnonzero((found < 0) & has_parent).tolist():  # searched one by one
            hit = self.first_ancestor(int(nodes[k]), matches)
            found[k] = -1 if hit is None else hit
        return found

    def first_ancestor(self, node: int, matches: np.ndarray, include_self: bool = True):
        """Upstream's breadth-first search over parents; the first match or None."""
        queue = deque([node] if include_self else self.parents_of(node))
        seen = {node, *queue}
        while queue:
            current = queue.popleft()
            if matches[current]:
                return current
            for parent in self.parents_of(current):
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return None


def propagate_min(graph: Graph, label: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Least fixed point of ``label[x] = min(label[x], label[parent])`` over child edges."""
    return graph_passes.flood_min(graph.child_ptr, graph.child_idx, label, in_place=in_place)


def reached_from(graph: Graph, sources: np.ndarray, proper: bool, out=None) -> np.ndarray:
    """Per node, the smallest source node with a path to it (NO_LABEL if none).

    ``proper``: paths of at least one edge (a source does not reach itself unless
    through a cycle). ``out``: an int64 array per node to write into (a fresh one costs
    its first touch of every page).
    """
    label = np.full(graph.n, NO_LABEL, dtype=np.int64) if out is None else out
    if out is not None:
        label.fill(NO_LABEL)
    nodes = np.flatnonzero(sources)
    if not proper:
        label[nodes] = nodes
        return propagate_min(graph, label, in_place=True)
    source, child = graph.edges_from(nodes)
    np.minimum.at(label, child, source)
    return propagate_min(graph, label, in_place=True)

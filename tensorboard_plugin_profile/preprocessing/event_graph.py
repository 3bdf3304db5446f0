"""The event graph of step grouping (docs/conversion.md §3.4) as integer arrays.

Upstream builds one node object per event and walks pointers; here a node is an
index (planes in order, each plane's events in table order) and the edges are
``(parent, child)`` arrays built with sorts and joins:

* **intra-thread**: upstream pops a per-line stack until the top contains the
  event; ``graph_passes.line_forest`` runs that stack in one compiled pass and also
  keeps where each event left the stack (its descendants are the rows up to there),
  the numpy fallback (``graph_passes.stack_parents``) finds the parents by pointer
  jumping when begins never decrease along a line;
* **inter-thread** and **producer/consumer** links are joins on stat keys.

Order matters in one place: ancestor searches are breadth first over each node's
parent list, whose upstream order is intra-thread parent, inter-thread parent,
context producers (by node), loop root. ``Graph`` keeps parents in that order.

Everything else (group floods, reachability) is ``Graph.flood``: seeds in turn label
what they reach first. Compiled, a flood walks each subtree's rows in order and jumps
over labelled subtrees (each node is visited once); the numpy fallback propagates seed
ranks over an explicit child adjacency, one round per level of depth.

Usage::

    intra = intra_thread_forest(line, begin, duration, skip)
    graph = Graph.build(intra, [(parent_idx, child_idx), ...])  # later ranks
    label, flooded, crossings = graph.flood(seeds)
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Optional

import numpy as np

from ..kernels import graph_passes
from ..kernels.graph_passes import NO_LABEL

# Producer/consumer contexts are connected unless both sides are this large.
MAX_CONTEXT_FANOUT = 64


def intra_thread_forest(line, begin, duration, skip) -> tuple:
    """(parent of each event on its line (-1 for none), stop or None): see ``Graph``.

    ``line`` identifies the line of each row in node order; a stack starts empty
    wherever it changes from one row to the next. ``skip`` rows (a bool mask, or None
    for none) take no part.
    """
    forest = graph_passes.line_forest(line, begin, duration, skip)
    if forest is not None:
        return forest
    end = np.add(begin, duration, dtype=np.int64)
    skip = np.zeros(len(line), dtype=bool) if skip is None else skip
    return graph_passes.stack_parents(line, begin, end, skip), None


def key_codes(columns: list) -> np.ndarray:
    """Dense codes of the rows of int64 key columns (equal rows, equal codes)."""
    if not len(columns[0]):
        return np.zeros(0, dtype=np.int64)
    # A column with one value throughout (one process, say) tells no rows apart.
    columns = [c for c in columns if c.min() != c.max()] or columns[:1]
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
    """Parent lists (in upstream order) and the way down, as arrays.

    A node's parents are its intra-thread parent (``parent_of``, -1 for none), then
    its other parents, in edge-set rank order: the few nodes that have any are
    ``extra_nodes`` (sorted), ``extra_nodes[k]``'s are ``extra_idx[extra_ptr[k]:
    extra_ptr[k + 1]]`` (a CSR over those nodes only, not over every event).

    The way down: compiled, ``stop`` (node x's intra-thread descendants are the rows of
    ``(x, stop[x])`` not skipped, ``stop[x] == x`` for a skipped row) and ``down`` =
    the extra edges by parent (``graph_passes.extra_by_parent``); else ``stop`` is None
    and ``down`` = (child_ptr, child_idx), every node's children (CSR).
    """

    n: int
    parent_of: np.ndarray
    extra_nodes: np.ndarray
    extra_ptr: np.ndarray
    extra_idx: np.ndarray
    stop: Optional[np.ndarray]
    down: tuple

    @classmethod
    def build(cls, intra: tuple, edge_sets: list) -> Graph:
        """``intra``: (parent_of, stop) of ``intra_thread_forest``; ``edge_sets``: further
        (parents, children) pairs, listed in parent-order rank."""
        parent_of, stop = intra
        n = len(parent_of)
        parents = np.concatenate([p for p, _ in edge_sets] + [_no_edges()[0]])
        children = np.concatenate([c for _, c in edge_sets] + [_no_edges()[0]])
        # Edge sets arrive in rank order, so a stable sort by child keeps each
        # node's parents in upstream order (context producers in node order).
        extra_nodes, extra_ptr, extra_idx = graph_passes.runs_by_key(children, parents, n)
        if stop is not None:
            down = graph_passes.extra_by_parent(parents, children, n)
        else:
            down = graph_passes.child_lists(parent_of, parents, children)
        return cls(n, parent_of, extra_nodes, extra_ptr, extra_idx, stop, down)

    def flood(
        self, order, values=None, proper=False, unreached=NO_LABEL, out=None, crossings=False
    ) -> tuple:
        """(label, flooded, (outer, inner)): seeds ``order`` label what they reach first.

        label[x] = ``values[r]`` of the first seed ``order[r]`` with a path to x (of at
        least one edge when ``proper``), else ``unreached``. ``values`` None: dense, the
        number of seeds before that flooded (were not reached by an earlier seed, see
        ``flooded``). ``crossings``: the label pairs of edges from a node into one labelled
        differently (not when proper; pairs may repeat). ``out``: an int64 array per node
        to write the labels into (a fresh one costs its first touch of every page); int32
        when the values and ``unreached`` fit in it.
        """
        args = (order, values, proper, unreached, out, crossings)
        if self.stop is not None:
            return graph_passes.flood(self.stop, self.down, *args)
        child_ptr, child_idx = self.down
        return graph_passes.flood_numpy(child_ptr, child_idx, *args)

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

    def has_parents(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of ``nodes``: whether it has any parent."""
        return (self.parent_of[nodes] >= 0) | self._has_extra_parents(nodes)

    def first_ancestors(self, nodes: np.ndarray, matches: np.ndarray) -> np.ndarray:
        """``first_ancestor`` of each node (itself included), -1 for none."""
        found = np.where(matches[nodes], nodes, -1)
        has_parent = self.has_parents(nodes)
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

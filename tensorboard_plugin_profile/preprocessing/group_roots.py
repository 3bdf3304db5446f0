"""The nodes, edges and roots of step grouping (docs/conversion.md §3.4), in columns.

``Nodes`` holds what grouping reads of every event of a space as flat arrays
(planes concatenated); ``edges`` returns the graph's edge sets in upstream parent
order (intra-thread, inter-thread, contexts); ``loop_roots`` and ``sorted_roots``
pick the roots. See ``grouping`` for how groups are made from them.

Usage::

    nodes = Nodes.of(space)
    intra, edge_sets = edges(nodes)
    graph = event_graph.Graph.build(intra, edge_sets)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..xspace import op_names, schema
from ..xspace.event_stats import int_stats
from ..xspace.model import Space
from . import event_graph

# Node types the grouping cares about (anything else is 0).
OTHER, TRACE_CONTEXT, IMPLICIT_ROOT, EXECUTOR, EAGER = 0, 1, 2, 3, 4
ITERATOR_GET_NEXT, TF_DATA_FUNCTION, TF_OP, KERNEL_LAUNCH, KERNEL_EXECUTE = 5, 6, 7, 8, 9
_NAMED_TYPES = {
    schema.TRACE_CONTEXT: TRACE_CONTEXT,
    schema.EAGER_EXECUTE: EAGER,
    schema.ITERATOR_GET_NEXT_OP: ITERATOR_GET_NEXT,
    schema.ITERATOR_GET_NEXT_AS_OPTIONAL_OP: ITERATOR_GET_NEXT,
    "TfOpRun": TF_OP,
    **{name: IMPLICIT_ROOT for name in schema.IMPLICIT_ROOT_EVENTS},
    schema.EXECUTOR_STATE_PROCESS: EXECUTOR,
    **{name: TF_DATA_FUNCTION for name in schema.TF_DATA_CAPTURED_FUNCTION_RUNS},
}
_COLUMNS = (
    schema.ROOT_LEVEL,
    schema.PRODUCER_TYPE,
    schema.PRODUCER_ID,
    schema.CONSUMER_TYPE,
    schema.CONSUMER_ID,
    schema.CONSUMER_PID,
    schema.IS_ASYNC,
    schema.STEP_ID,
    schema.ITER_NUM,
    schema.STEP_NUM,
    schema.CORRELATION_ID,
    schema.IS_FUNC,
)


@dataclasses.dataclass
class Stat:
    """One integer stat over all nodes, kept where present (most stats are rare).

    ``rows``: increasing node ids; ``values``: int64 (uint64 viewed as int64).
    """

    rows: np.ndarray
    values: np.ndarray
    n: int

    def mask(self, where=None) -> np.ndarray:
        """Per node: present (and ``where(values)`` holds, when given)."""
        out = np.zeros(self.n, dtype=bool)
        out[self.rows if where is None else self.rows[where(self.values)]] = True
        return out

    def at(self, nodes: np.ndarray) -> tuple:
        """(values, present) at ``nodes`` (0 where absent)."""
        if not len(self.rows):
            return np.zeros(len(nodes), dtype=np.int64), np.zeros(len(nodes), dtype=bool)
        if len(nodes) == len(self.rows) and np.array_equal(nodes, self.rows):
            # Stats that come together (``_p`` with ``_pt``, ...) share their rows.
            return self.values.copy(), np.ones(len(nodes), dtype=bool)
        pos = np.minimum(np.searchsorted(self.rows, nodes), len(self.rows) - 1)
        present = self.rows[pos] == nodes
        return np.where(present, self.values[pos], 0), present

    def rows_among(self, nodes: np.ndarray) -> np.ndarray:
        """The increasing ``nodes`` where the stat is present."""
        return nodes[self.at(nodes)[1]]


@dataclasses.dataclass
class Presence:
    """Indexed like a mask per node (by one node or an array of them) without one:
    binary searches in the stat's sorted rows."""

    stat: Stat

    def __getitem__(self, nodes):
        if np.ndim(nodes) == 0:
            rows = self.stat.rows
            k = int(np.searchsorted(rows, nodes))
            return k < len(rows) and rows[k] == nodes
        return self.stat.at(np.asarray(nodes))[1]


@dataclasses.dataclass
class Nodes:
    """Per-node arrays over all planes (node = plane offset + event row)."""

    planes: list
    offsets: np.ndarray
    begin: np.ndarray
    duration: np.ndarray
    line: np.ndarray  # int32 line of each node, unique over planes (a stack resets between)
    types: np.ndarray
    type_set: frozenset  # the types that may occur (a superset: scans of absent ones skipped)
    stats: dict  # stat name -> Stat
    root_level: Stat  # nodes with a root level above 0
    graph_type_present: np.ndarray

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    @classmethod
    def of(cls, space: Space) -> Nodes:
        planes = list(space.planes)
        offsets = np.cumsum([0] + [len(p.events) for p in planes]).astype(np.int64)
        n = int(offsets[-1])

        def cat(fn, dtype):
            parts = [np.asarray(fn(p), dtype=dtype) for p in planes if len(p.events)]
            if len(parts) == 1:  # the usual single host plane: no copy
                return parts[0]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        # Views of the event columns on the usual single plane (no end column: the
        # nesting pass adds the duration itself).
        begin = cat(lambda p: p.events["begin_ps"].to_numpy(), np.int64)
        duration = cat(lambda p: p.events["duration_ps"].to_numpy(), np.int64)
        bases = np.cumsum([0] + [len(p.lines) + 1 for p in planes]).astype(np.int32)
        line = cat(lambda p: p.events["line"].to_numpy(), np.int32)
        if sum(len(p.events) > 0 for p in planes) > 1:  # lines of two planes must differ
            line = line + np.repeat(bases[:-1], np.diff(offsets))  # (never the plane's own)
        stats = _stats(planes, offsets, list(_COLUMNS))
        by_plane = {id(p): _node_types(p) for p in planes if len(p.events)}
        types = cat(lambda p: by_plane[id(p)][0], np.int8)
        type_set = frozenset().union(*(names for _, names in by_plane.values()))
        type_set |= _mark_kernels(planes, offsets, types, stats[schema.CORRELATION_ID])
        level = stats[schema.ROOT_LEVEL]
        # A TraceContext without a root level is a level-1 root.
        contexts = np.flatnonzero(types == TRACE_CONTEXT if TRACE_CONTEXT in type_set else [])
        bare = contexts[~level.at(contexts)[1]]
        rows = np.concatenate([level.rows, bare])
        values = np.concatenate([level.values, np.ones(len(bare), dtype=np.int64)])
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
        root_level = Stat(rows[values > 0], values[values > 0], n)
        graph_type = cat(lambda p: _notnone(p.events, schema.GRAPH_TYPE), bool)
        return cls(
            planes, offsets, begin, duration, line, types, type_set, stats, root_level, graph_type
        )

    def rows_of_type(self, node_type: int) -> np.ndarray:
        """The nodes of one type, increasing (no scan when the type cannot occur)."""
        if node_type not in self.type_set:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.types == node_type)

    def end_at(self, rows: np.ndarray) -> np.ndarray:
        return self.begin[rows] + self.duration[rows]

    def locate(self, node: int) -> tuple:
        plane = int(np.searchsorted(self.offsets, node, side="right")) - 1
        return plane, node - int(self.offsets[plane])

    def graph_type(self, node: int):
        plane, row = self.locate(node)
        return self.planes[plane].events[schema.GRAPH_TYPE].iat[row]

    def names(self, nodes: np.ndarray) -> list:
        """Event names of ``nodes`` (increasing order not needed)."""
        plane_of = np.searchsorted(self.offsets, nodes, side="right") - 1
        out = [""] * len(nodes)
        for plane in np.flatnonzero(np.bincount(plane_of)).tolist():  # planes, not hashed
            codes, categories = self._names(plane)
            mine = np.flatnonzero(plane_of == plane)
            rows = nodes[mine] - self.offsets[plane]
            for k, name in zip(mine.tolist(), categories.take(codes[rows]).tolist()):
                out[k] = str(name)
        return out

    def _names(self, plane: int) -> tuple:
        """(codes, categories) of a plane's event names, read once (names are per group)."""
        cache = self.__dict__.setdefault("_name_cache", {})
        if plane not in cache:
            names = self.planes[plane].events["name"]
            cache[plane] = (names.array.codes, names.cat.categories)
        return cache[plane]

    def present(self, key: str) -> Presence:
        """``present(key)[nodes]``: whether stat ``key`` is present at the nodes."""
        return Presence(self.stats[key])

    def tf_data_step_ids(self) -> np.ndarray:
        rows = self.rows_of_type(TF_DATA_FUNCTION)
        values, present = self.stats[schema.STEP_ID].at(rows)
        return np.unique(values[present])


def _stats(planes: list, offsets: np.ndarray, names) -> dict:
    """Name -> a nullable int column of every plane's events, where present (only the rows
    that carry it are read; one pass over each plane's stats table for all names)."""
    per_plane = [int_stats(plane, names) for plane in planes]
    out = {}
    for name in names:
        rows, values = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for found, offset in zip(per_plane, offsets.tolist()):
            present, found_values = found[name]
            rows.append(present + offset)
            values.append(found_values)
        out[name] = Stat(np.concatenate(rows), np.concatenate(values), int(offsets[-1]))
    return out


def _notnone(events, name: str) -> np.ndarray:
    if name not in events.columns:
        return np.zeros(len(events), dtype=bool)
    column = events[name]
    if isinstance(column.dtype, pd.CategoricalDtype):  # one pass over the codes
        return column.array.codes != -1
    return column.notna().to_numpy()


def _node_types(plane) -> tuple:
    """(type per event by name, the types of its names); per name, not per event."""
    names = plane.events["name"]
    categories = [str(c) for c in names.cat.categories]
    # Any name parsing as a TensorFlow op ("name:Type") is a TfOpRun.
    is_tf_op = [op_names.is_tensorflow_op(c) for c in categories]
    by_category = np.array(
        [_NAMED_TYPES.get(c, TF_OP if tf else OTHER) for c, tf in zip(categories, is_tf_op)]
        + [OTHER],
        dtype=np.int8,
    )
    kinds = set(by_category.tolist())
    if kinds == {OTHER}:  # the usual JAX / PyTorch host: zero pages, never written
        return np.zeros(len(names), dtype=np.int8), kinds
    return by_category[names.array.codes], kinds


def _mark_kernels(planes: list, offsets: np.ndarray, types: np.ndarray, correlation) -> set:
    """Events with a correlation id and no other type are kernel launches (host) or
    kernels (device); ``types`` is updated in place. Returns the types added."""
    rows = correlation.rows[types[correlation.rows] == OTHER]
    if not len(rows):
        return set()
    plane_of = np.searchsorted(offsets, rows, side="right") - 1
    on_host = np.array([p.name == schema.HOST_PLANE for p in planes])[plane_of]
    types[rows] = np.where(on_host, KERNEL_LAUNCH, KERNEL_EXECUTE)
    return set(np.unique(types[rows]).tolist())


# --- edges -----------------------------------------------------------------------------
def edges(nodes: Nodes) -> tuple:
    """(intra-thread forest (``event_graph.intra_thread_forest``), [inter-thread edges,
    context edges]): the edge sets in upstream parent order."""
    is_async = nodes.stats[schema.IS_ASYNC]
    skip = is_async.mask(where=lambda value: value != 0) if len(is_async.rows) else None
    intra = event_graph.intra_thread_forest(nodes.line, nodes.begin, nodes.duration, skip)
    inter = [
        _link(nodes, EXECUTOR, ITERATOR_GET_NEXT, (schema.STEP_ID, schema.ITER_NUM)),
        _link(nodes, KERNEL_LAUNCH, KERNEL_EXECUTE, (schema.CORRELATION_ID,)),
    ]
    inter_edges = tuple(np.concatenate(side) for side in zip(*inter))
    return intra, [inter_edges, _contexts(nodes)]


def _link(nodes: Nodes, parent_type: int, child_type: int, keys: tuple) -> tuple:
    def side(node_type):
        rows = nodes.rows_of_type(node_type)
        for key in keys:
            rows = nodes.stats[key].rows_among(rows)
        return rows, [nodes.stats[k].at(rows)[0] for k in keys]

    return event_graph.link_by_keys(side(parent_type), side(child_type))


def _contexts(nodes: Nodes) -> tuple:
    """Producer → consumer edges of every (type, id, pid) context."""
    members = []
    for type_key, id_key, consumer_side in (
        (schema.PRODUCER_TYPE, schema.PRODUCER_ID, False),
        (schema.CONSUMER_TYPE, schema.CONSUMER_ID, True),
    ):
        rows = nodes.stats[id_key].rows_among(nodes.stats[type_key].rows)
        pid_kind, pid_value = _pids(nodes, rows)
        columns = [nodes.stats[type_key].at(rows)[0], nodes.stats[id_key].at(rows)[0]]
        columns += [pid_kind, pid_value]
        members.append((rows, np.full(len(rows), consumer_side), columns))
    node = np.concatenate([m[0] for m in members])
    is_consumer = np.concatenate([m[1] for m in members])
    # Only key columns that tell ends apart are joined (``key_codes`` drops the others:
    # the pid's kind and value, often the type), each side's copy freed before the keys
    # are coded (grouping's peak).
    sides = [m[2] for m in members]
    del members
    varying = [k for k in range(len(sides[0])) if _varies([side[k] for side in sides])]
    columns = [np.concatenate([side[k] for side in sides]) for k in varying or [0]]
    del sides
    if not len(node):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes = event_graph.key_codes(columns)
    del columns  # freed before the links are made
    return event_graph.context_links(node, is_consumer, codes)


def _varies(parts: list) -> bool:
    """Whether the parts, joined, hold two different values."""
    parts = [p for p in parts if len(p)]
    return bool(parts) and min(int(p.min()) for p in parts) != max(int(p.max()) for p in parts)


def _pids(nodes: Nodes, rows: np.ndarray) -> tuple:
    """(kind, value) of each row's process: 0 unknown, 1 an int, 2 another plane value."""
    kinds: list[int] = []
    values: list[int] = []
    others: dict = {}
    for pid in [p.plane_stats.get(schema.PROCESS_ID) for p in nodes.planes]:
        if pid is None:
            kinds.append(0)
            values.append(0)
        elif isinstance(pid, int) and -(2**63) <= pid < 2**63:
            kinds.append(1)
            values.append(pid)
        else:  # compared by equality with other planes' values only
            kinds.append(2)
            values.append(others.setdefault(pid, len(others)))
    plane = np.searchsorted(nodes.offsets, rows, side="right") - 1
    kind = np.asarray(kinds, dtype=np.int64)[plane] if len(rows) else np.zeros(0, np.int64)
    value = np.asarray(values, dtype=np.int64)[plane] if len(rows) else np.zeros(0, np.int64)
    # Any event naming a process (``_pid``) is keyed by it, producer or consumer.
    pid, override = nodes.stats[schema.CONSUMER_PID].at(rows)
    kind[override] = 1
    value[override] = pid[override]
    return kind, value


# --- roots -----------------------------------------------------------------------------
def loop_roots(nodes: Nodes, tf_data_ids: np.ndarray) -> tuple:
    """TF while-loop iterations: (roots in time order, edges root → rest of iteration)."""
    rows = nodes.rows_of_type(EXECUTOR)
    rows = nodes.stats[schema.ITER_NUM].rows_among(nodes.stats[schema.STEP_ID].rows_among(rows))
    rows = rows[~np.isin(nodes.stats[schema.STEP_ID].at(rows)[0], tf_data_ids)]
    none = np.zeros(0, dtype=np.int64)
    if not len(rows):
        return none, (none, none)
    step, iters = nodes.stats[schema.STEP_ID].at(rows)[0], nodes.stats[schema.ITER_NUM].at(rows)[0]
    loop = event_graph.first_seen(event_graph.key_codes([step]))  # like dict keys
    iteration = event_graph.first_seen(event_graph.key_codes([step, iters]))
    # A loop with only iteration 0 is a function or session run, not a loop.
    iterations_per_loop = np.bincount(loop[np.unique(iteration, return_index=True)[1]])
    single = (iterations_per_loop[loop] == 1) & (iters == 0)
    rows, loop, iteration = rows[~single], loop[~single], iteration[~single]
    if not len(rows):
        return none, (none, none)
    begin = nodes.begin[rows]
    # The earliest event of each iteration (first in node order on ties) is its root.
    by_time = np.lexsort((rows, begin, iteration))
    is_first = np.r_[True, iteration[by_time][1:] != iteration[by_time][:-1]]
    firsts = by_time[is_first]
    firsts = firsts[np.lexsort((iteration[firsts], loop[firsts], begin[firsts]))]
    root_of = np.zeros(int(iteration.max()) + 1, dtype=np.int64)
    root_of[iteration[firsts]] = rows[firsts]
    root = root_of[iteration]
    others = rows != root
    return rows[firsts], (root[others], rows[others])


def sorted_roots(nodes: Nodes, tf_data_ids: np.ndarray) -> np.ndarray:
    """Nodes with a root level (not tf.data ones), by level desc, begin, longest first."""
    roots, level = nodes.root_level.rows, nodes.root_level.values
    step_id, has_step_id = nodes.stats[schema.STEP_ID].at(roots)
    keep = ~(has_step_id & np.isin(step_id, tf_data_ids))
    roots, level = roots[keep], level[keep]
    begin, end = nodes.begin[roots], nodes.end_at(roots)
    return roots[np.lexsort((roots, begin - end, begin, -level))]

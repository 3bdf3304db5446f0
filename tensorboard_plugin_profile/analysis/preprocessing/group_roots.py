"""The nodes, edges and roots of step grouping (docs/conversion.md §3.4), in columns.

``Nodes`` holds what grouping reads of every event of a space as flat arrays
(planes concatenated); ``edges`` returns the graph's edge sets in upstream parent
order (intra-thread, inter-thread, contexts); ``loop_roots`` and ``sorted_roots``
pick the roots. See ``grouping`` for how groups are made from them.

Usage::

    nodes = Nodes.of(space)
    graph = event_graph.Graph.from_edges(nodes.n, edges(nodes))
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...xspace import schema
from ...xspace.model import Space
from .. import op_names
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
class Nodes:
    """Per-node arrays over all planes (node = plane offset + event row)."""

    planes: list
    offsets: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    line: np.ndarray  # line of each node, unique over planes (a stack resets between lines)
    types: np.ndarray
    cols: dict  # stat name -> int64 values (0 where absent; uint64 viewed as int64)
    present: dict  # stat name -> bool
    root_level: np.ndarray
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
            parts = [np.asarray(fn(p), dtype=dtype) for p in planes]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        begin = cat(lambda p: p.events["begin_ps"].to_numpy(), np.int64)
        end = begin + cat(lambda p: p.events["duration_ps"].to_numpy(), np.int64)
        bases = np.cumsum([0] + [len(p.lines) + 1 for p in planes])
        line = cat(lambda p: p.events["line"].to_numpy().astype(np.int64), np.int64)
        line += np.repeat(bases[:-1], np.diff(offsets))
        cols, present = {}, {}
        for key in _COLUMNS:
            pairs = [_int_values(p.events, key) for p in planes]
            if not any(m.any() for _, m in pairs):  # absent everywhere: untouched zero pages
                cols[key], present[key] = np.zeros(n, np.int64), np.zeros(n, bool)
                continue
            cols[key] = np.concatenate([v for v, _ in pairs] + [np.zeros(0, dtype=np.int64)])
            present[key] = np.concatenate([m for _, m in pairs] + [np.zeros(0, dtype=bool)])
        types = cat(_node_types, np.int8)
        root_level = np.where(present[schema.ROOT_LEVEL], cols[schema.ROOT_LEVEL], 0)
        root_level[(types == TRACE_CONTEXT) & ~present[schema.ROOT_LEVEL]] = 1
        graph_type = cat(lambda p: _notnone(p.events, schema.GRAPH_TYPE), bool)
        return cls(planes, offsets, begin, end, line, types, cols, present, root_level, graph_type)

    def locate(self, node: int) -> tuple:
        plane = int(np.searchsorted(self.offsets, node, side="right")) - 1
        return plane, node - int(self.offsets[plane])

    def graph_type(self, node: int):
        plane, row = self.locate(node)
        return self.planes[plane].events[schema.GRAPH_TYPE].iat[row]

    def name(self, node: int) -> str:
        plane, row = self.locate(node)
        codes, categories = self._names(plane)
        return str(categories[codes[row]])

    def _names(self, plane: int) -> tuple:
        """(codes, categories) of a plane's event names, read once (names are per group)."""
        cache = self.__dict__.setdefault("_name_cache", {})
        if plane not in cache:
            names = self.planes[plane].events["name"]
            cache[plane] = (names.cat.codes.to_numpy(), names.cat.categories)
        return cache[plane]

    def pids(self) -> np.ndarray:
        """Per node, the plane's ``process_id`` (object: None when unknown)."""
        values = [p.plane_stats.get(schema.PROCESS_ID) for p in self.planes]
        return np.repeat(np.array(values + [None], dtype=object)[:-1], np.diff(self.offsets))

    def tf_data_step_ids(self) -> np.ndarray:
        has = (self.types == TF_DATA_FUNCTION) & self.present[schema.STEP_ID]
        return np.unique(self.cols[schema.STEP_ID][has])


def _int_values(events, name: str) -> tuple:
    """(int64 values with 0 where absent, present mask) of a nullable int column."""
    if name not in events.columns:
        return np.zeros(len(events), dtype=np.int64), np.zeros(len(events), dtype=bool)
    # The array, not the Series: a fifth of the per-call cost on small planes.
    col = events[name].array
    present = ~np.asarray(col.isna(), dtype=bool)
    if not present.any():  # most stat columns of a profile are empty: skip the copy
        return np.zeros(len(events), dtype=np.int64), present
    dtype = np.uint64 if str(col.dtype).startswith("UInt") else np.int64
    return col.to_numpy(dtype=dtype, na_value=0).view(np.int64), present


def _notnone(events, name: str) -> np.ndarray:
    if name not in events.columns:
        return np.zeros(len(events), dtype=bool)
    return events[name].notna().to_numpy()


def _node_types(plane) -> np.ndarray:
    names = plane.events["name"]
    categories = [str(c) for c in names.cat.categories]
    # Any name parsing as a TensorFlow op ("name:Type") is a TfOpRun.
    is_tf_op = [op_names.is_tensorflow_op(c) for c in categories]
    by_category = np.array(
        [_NAMED_TYPES.get(c, TF_OP if tf else OTHER) for c, tf in zip(categories, is_tf_op)]
        + [OTHER],
        dtype=np.int8,
    )
    types = by_category[names.cat.codes.to_numpy()]
    # Events with a correlation id are kernel launches (host) or kernels (device).
    if "correlation_id" in plane.events.columns:
        kernel = (types == OTHER) & ~plane.events["correlation_id"].isna().to_numpy()
        types[kernel] = KERNEL_LAUNCH if plane.name == schema.HOST_PLANE else KERNEL_EXECUTE
    return types


# --- edges -----------------------------------------------------------------------------
def edges(nodes: Nodes) -> list:
    """Edge sets in upstream parent order: intra-thread, inter-thread, contexts."""
    is_async = nodes.present[schema.IS_ASYNC] & (nodes.cols[schema.IS_ASYNC] != 0)
    parent = event_graph.intra_thread_parents(nodes.line, nodes.begin, nodes.end, is_async)
    child = np.flatnonzero(parent >= 0)
    inter = [
        _link(nodes, EXECUTOR, ITERATOR_GET_NEXT, (schema.STEP_ID, schema.ITER_NUM)),
        _link(nodes, KERNEL_LAUNCH, KERNEL_EXECUTE, (schema.CORRELATION_ID,)),
    ]
    inter_edges = tuple(np.concatenate(side) for side in zip(*inter))
    return [(parent[child], child), inter_edges, _contexts(nodes)]


def _link(nodes: Nodes, parent_type: int, child_type: int, keys: tuple) -> tuple:
    def side(node_type):
        rows = nodes.types == node_type
        for key in keys:
            rows &= nodes.present[key]
        rows = np.flatnonzero(rows)
        return rows, [nodes.cols[k][rows] for k in keys]

    return event_graph.link_by_keys(side(parent_type), side(child_type))


def _contexts(nodes: Nodes) -> tuple:
    """Producer → consumer edges of every (type, id, pid) context."""
    members = []
    for type_key, id_key, consumer_side in (
        (schema.PRODUCER_TYPE, schema.PRODUCER_ID, False),
        (schema.CONSUMER_TYPE, schema.CONSUMER_ID, True),
    ):
        rows = np.flatnonzero(nodes.present[type_key] & nodes.present[id_key])
        pid_kind, pid_value = _pids(nodes, rows)
        columns = [nodes.cols[type_key][rows], nodes.cols[id_key][rows], pid_kind, pid_value]
        members.append((rows, np.full(len(rows), consumer_side), columns))
    node, is_consumer, columns = (
        np.concatenate([m[0] for m in members]),
        np.concatenate([m[1] for m in members]),
        [np.concatenate(c) for c in zip(*(m[2] for m in members))],
    )
    if not len(node):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return event_graph.context_links(node, is_consumer, event_graph.key_codes(columns))


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
    override = nodes.present[schema.CONSUMER_PID][rows]
    kind[override] = 1
    value[override] = nodes.cols[schema.CONSUMER_PID][rows][override]
    return kind, value


# --- roots -----------------------------------------------------------------------------
def loop_roots(nodes: Nodes, tf_data_ids: np.ndarray) -> tuple:
    """TF while-loop iterations: (roots in time order, edges root → rest of iteration)."""
    step, iters = nodes.cols[schema.STEP_ID], nodes.cols[schema.ITER_NUM]
    rows = np.flatnonzero(
        (nodes.types == EXECUTOR)
        & nodes.present[schema.STEP_ID]
        & nodes.present[schema.ITER_NUM]
        & ~np.isin(step, tf_data_ids)
    )
    none = np.zeros(0, dtype=np.int64)
    if not len(rows):
        return none, (none, none)
    step, iters = step[rows], iters[rows]
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
    level = nodes.root_level
    tf_data = nodes.present[schema.STEP_ID] & np.isin(nodes.cols[schema.STEP_ID], tf_data_ids)
    roots = np.flatnonzero((level > 0) & ~tf_data)
    begin, end = nodes.begin[roots], nodes.end[roots]
    return roots[np.lexsort((roots, begin - end, begin, -level[roots]))]

"""Test oracle: the previous per-node step grouping (``GroupTfEvents``, docs/conversion.md §3.4).

Kept verbatim (imports aside) so test_grouping_equivalence can check that the
vectorised ``preprocessing.grouping`` gives the same groups, names and eager flags.
Not used by the package.


Every event of every plane becomes a node of one graph. Edges come from nesting on
a thread (a stack pass per line), from inter-thread links (executor → iterator
ops on (``id``, ``iter_num``), kernel launch → kernel on ``correlation_id``) and
from TraceMe 2.0 producer/consumer contexts. Roots (``_r`` stats, legacy
``TraceContext``, or TF while-loop iterations) are sorted and each one floods its
descendants with a new group id; the root's name and step number make the group
name.

The graph walk is inherently sequential: it runs as tight Python loops over plain
lists built from the event columns (no per-event pandas access). Node order is
planes in order, each plane's events in table order (line by line).

Usage::

    result = group_events(space)
    result.group_ids[plane_index]    # int64 per event row, -1 = no group
    result.group_names               # {group id: "train 3"}
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from tensorboard_plugin_profile.xspace import op_names, schema
from tensorboard_plugin_profile.xspace.event_stats import typed_column
from tensorboard_plugin_profile.xspace.model import Space

# Node types the grouping cares about (anything else is 0).
_OTHER, _TRACE_CONTEXT, _IMPLICIT_ROOT, _EXECUTOR, _EAGER = 0, 1, 2, 3, 4
_ITERATOR_GET_NEXT, _TF_DATA_FUNCTION, _TF_OP, _KERNEL_LAUNCH, _KERNEL_EXECUTE = 5, 6, 7, 8, 9
_NAMED_TYPES = {
    schema.TRACE_CONTEXT: _TRACE_CONTEXT,
    schema.EAGER_EXECUTE: _EAGER,
    schema.ITERATOR_GET_NEXT_OP: _ITERATOR_GET_NEXT,
    schema.ITERATOR_GET_NEXT_AS_OPTIONAL_OP: _ITERATOR_GET_NEXT,
    "TfOpRun": _TF_OP,
    **{name: _IMPLICIT_ROOT for name in schema.IMPLICIT_ROOT_EVENTS},
    schema.EXECUTOR_STATE_PROCESS: _EXECUTOR,
    **{name: _TF_DATA_FUNCTION for name in schema.TF_DATA_CAPTURED_FUNCTION_RUNS},
}
# Both producers and consumers are connected unless both sides are this large.
_MAX_CONTEXT_FANOUT = 64


@dataclasses.dataclass
class Grouping:
    """What grouping adds, per plane (index in ``space.planes``)."""

    group_ids: list  # per plane: int64 array aligned with events, -1 = ungrouped
    step_names: list  # per plane: {event row: group name} for non-implicit roots
    is_eager: list  # per plane: {event row: 0/1} for TF ops and GPU kernels
    group_names: dict  # group id -> name
    group_parents: dict  # group id -> set of group ids that contain it
    group_children: dict


def has_loop_ops(space: Space) -> bool:
    """TF while/for loop ops disable grouping upstream (not supported there)."""
    loops = set(schema.LOOP_OPS)
    return any(
        not loops.isdisjoint(plane.event_metadata["name"].tolist()) for plane in space.planes
    )


def group_events(space: Space) -> Grouping:
    """Assigns step groups to the events of a space (see module docstring)."""
    graph = _Graph(space)
    result = Grouping(
        group_ids=[np.full(len(p.events), -1, dtype=np.int64) for p in space.planes],
        step_names=[{} for _ in space.planes],
        is_eager=[{} for _ in space.planes],
        group_names={},
        group_parents={},
        group_children={},
    )
    if graph.n == 0 or has_loop_ops(space):
        return result
    graph.connect()
    group = np.asarray(graph.create_groups(result), dtype=np.int64)
    graph.mark_eager(result)
    for p in range(len(space.planes)):
        result.group_ids[p] = group[graph.offsets[p] : graph.offsets[p + 1]]
    return result


def _int_column(plane, name: str) -> tuple:
    """(values as a Python list, present mask list) of a nullable int column."""
    col = typed_column(plane, name)
    present = ~col.isna().to_numpy()
    dtype = np.uint64 if str(col.dtype).startswith("UInt") else np.int64
    values = col.to_numpy(dtype=dtype, na_value=0)
    return values.tolist(), present.tolist()


def _node_types(plane) -> np.ndarray:
    names = plane.events["name"]
    categories = [str(c) for c in names.cat.categories]
    # Any name parsing as a TensorFlow op ("name:Type") is a TfOpRun.
    is_tf_op = (op_names.parse_op_names(categories)["category"] == op_names.TENSORFLOW).tolist()
    by_category = np.array(
        [_NAMED_TYPES.get(c, _TF_OP if tf else _OTHER) for c, tf in zip(categories, is_tf_op)]
        + [_OTHER],
        dtype=np.int8,
    )
    types = by_category[names.cat.codes.to_numpy()]
    # Events with a correlation id are kernel launches (host) or kernels (device).
    if "correlation_id" in plane.events.columns:
        kernel = (types == _OTHER) & ~plane.events["correlation_id"].isna().to_numpy()
        types[kernel] = _KERNEL_LAUNCH if plane.name == schema.HOST_PLANE else _KERNEL_EXECUTE
    return types


class _Graph:
    """The event forest: per-node lists plus parent/child adjacency."""

    def __init__(self, space: Space):
        self.space = space
        self.offsets = np.cumsum([0] + [len(p.events) for p in space.planes])
        self.n = int(self.offsets[-1])
        cols: dict = {k: [] for k in _COLUMNS}
        present: dict = {k: [] for k in _COLUMNS}
        begin, end, line, types, names, pids, graph_type = [], [], [], [], [], [], []
        line_base = 0
        for plane in space.planes:
            ev = plane.events
            b = ev["begin_ps"].to_numpy()
            begin += b.tolist()
            end += (b + ev["duration_ps"].to_numpy()).tolist()
            line += (ev["line"].to_numpy().astype(np.int64) + line_base).tolist()
            line_base += len(plane.lines) + 1
            types += _node_types(plane).tolist()
            names += ev["name"].astype(object).tolist()
            pid = plane.plane_stats.get(schema.PROCESS_ID)
            pids += [pid] * len(ev)
            graph_type += (
                ev[schema.GRAPH_TYPE].to_numpy(dtype=object, na_value=None).tolist()
                if schema.GRAPH_TYPE in ev
                else [None] * len(ev)
            )
            for key in _COLUMNS:
                values, mask = _int_column(plane, key)
                cols[key] += values
                present[key] += mask
        self.begin, self.end, self.line, self.types = begin, end, line, types
        self.names, self.pids, self.graph_type = names, pids, graph_type
        self.cols, self.present = cols, present
        self.parents: list = [[] for _ in range(self.n)]
        self.children: list = [[] for _ in range(self.n)]
        self.root_level = [
            v if p else 0 for v, p in zip(cols[schema.ROOT_LEVEL], present[schema.ROOT_LEVEL])
        ]
        for i, t in enumerate(types):
            if t == _TRACE_CONTEXT and not present[schema.ROOT_LEVEL][i]:
                self.root_level[i] = 1

    def locate(self, node: int) -> tuple:
        plane = int(np.searchsorted(self.offsets, node, side="right")) - 1
        return plane, node - int(self.offsets[plane])

    def stat(self, key: str, node: int):
        return self.cols[key][node] if self.present[key][node] else None

    def add_child(self, parent: int, child: int) -> None:
        self.children[parent].append(child)
        self.parents[child].append(parent)

    # --- edges ---------------------------------------------------------------------
    def connect(self) -> None:
        self._connect_intra_thread()
        self._connect_inter_thread()
        self._connect_contexts()

    def _connect_intra_thread(self) -> None:
        begin, end, line = self.begin, self.end, self.line
        is_async = self.present[schema.IS_ASYNC]
        async_values = self.cols[schema.IS_ASYNC]
        stack: list = []
        current_line = None
        for i in range(self.n):
            if line[i] != current_line:
                stack, current_line = [], line[i]
            if is_async[i] and async_values[i]:
                continue
            b, e = begin[i], end[i]
            while stack:
                top = stack[-1]
                if begin[top] <= b and e <= end[top]:
                    self.add_child(top, i)
                    break
                stack.pop()
            stack.append(i)

    def _connect_inter_thread(self) -> None:
        step_keys = (schema.STEP_ID, schema.ITER_NUM)
        self._link_by_stats(_EXECUTOR, _ITERATOR_GET_NEXT, step_keys)
        self._link_by_stats(_KERNEL_LAUNCH, _KERNEL_EXECUTE, (schema.CORRELATION_ID,))

    def _link_by_stats(self, parent_type: int, child_type: int, keys: tuple) -> None:
        by_stats: dict = {}
        types = self.types
        for i in range(self.n):
            if types[i] == parent_type:
                stats = self._stat_tuple(i, keys)
                if stats is not None:
                    by_stats[stats] = i  # the last parent with these stats wins
        if not by_stats:
            return
        for i in range(self.n):
            if types[i] == child_type:
                parent = by_stats.get(self._stat_tuple(i, keys))
                if parent is not None:
                    self.add_child(parent, i)

    def _stat_tuple(self, node: int, keys: tuple):
        values = tuple(self.stat(k, node) for k in keys)
        return None if any(v is None for v in values) else values

    def _connect_contexts(self) -> None:
        groups: dict = {}
        sides = (
            (schema.PRODUCER_TYPE, schema.PRODUCER_ID, 0),
            (schema.CONSUMER_TYPE, schema.CONSUMER_ID, 1),
        )
        pid_override = self.present[schema.CONSUMER_PID]
        for type_key, id_key, side in sides:
            has_type, has_id = self.present[type_key], self.present[id_key]
            types, ids = self.cols[type_key], self.cols[id_key]
            for i in range(self.n):
                if has_type[i] and has_id[i]:
                    # Only consumers may name another process (``_pid``).
                    pid = self.pids[i]
                    if pid_override[i]:
                        pid = self.cols[schema.CONSUMER_PID][i]
                    key = (types[i], ids[i] & 0xFFFFFFFFFFFFFFFF, pid)
                    groups.setdefault(key, ([], []))[side].append(i)
        for producers, consumers in groups.values():
            if len(producers) >= _MAX_CONTEXT_FANOUT and len(consumers) >= _MAX_CONTEXT_FANOUT:
                continue
            for parent in producers:
                for child in consumers:
                    self.add_child(parent, child)

    # --- ancestor searches (breadth first over parents) -------------------------------
    def find_ancestor(self, node: int, predicate, include_self: bool = True):
        queue = deque([node] if include_self else self.parents[node])
        seen = {node, *queue}
        while queue:
            current = queue.popleft()
            if predicate(current):
                return current
            for parent in self.parents[current]:
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return None

    def context_stat(self, node: int, key: str):
        if key == schema.GRAPH_TYPE:
            found = self.find_ancestor(node, lambda i: self.graph_type[i] is not None)
            return None if found is None else self.graph_type[found]
        found = self.find_ancestor(node, lambda i: self.present[key][i])
        return None if found is None else self.cols[key][found]

    # --- groups ---------------------------------------------------------------------
    def create_groups(self, result: Grouping) -> list:
        self.group = [-1] * self.n
        tf_data_ids = self._tf_data_step_ids()
        roots = self._loop_roots(tf_data_ids)
        needs_check = not roots
        if not roots:
            roots = self._sorted_roots(tf_data_ids)
        next_id = 0
        for root in roots:
            if needs_check and not self._root_needs_grouping(root):
                continue
            self._propagate(root, next_id, result)
            name = self._group_name(root, next_id)
            if self.types[root] not in (_IMPLICIT_ROOT, _EXECUTOR):
                plane, row = self.locate(root)
                result.step_names[plane][row] = name
            result.group_names[next_id] = name
            next_id += 1
        return self.group

    def _tf_data_step_ids(self) -> set:
        ids, present = self.cols[schema.STEP_ID], self.present[schema.STEP_ID]
        return {ids[i] for i, t in enumerate(self.types) if t == _TF_DATA_FUNCTION and present[i]}

    def _loop_roots(self, tf_data_ids: set) -> list:
        """TF while-loop iterations: the earliest executor event of each is a root."""
        loops: dict = {}
        for i, t in enumerate(self.types):
            if t != _EXECUTOR:
                continue
            step_id, iter_num = self.stat(schema.STEP_ID, i), self.stat(schema.ITER_NUM, i)
            if step_id is None or iter_num is None or step_id in tf_data_ids:
                continue
            loops.setdefault(step_id, {}).setdefault(iter_num, []).append(i)
        iterations = []
        for loop in loops.values():
            if len(loop) == 1 and 0 in loop:
                continue  # a function or session run without a loop
            for events in loop.values():
                first = min(events, key=lambda i: self.begin[i])
                iterations.append((self.begin[first], first, events))
        iterations.sort(key=lambda it: it[0])
        for _, first, events in iterations:
            for event in events:
                if event != first:
                    self.add_child(first, event)
        return [first for _, first, _ in iterations]

    def _sorted_roots(self, tf_data_ids: set) -> list:
        step_ids = self.cols[schema.STEP_ID]
        has_step_id = self.present[schema.STEP_ID]
        roots = [
            i
            for i, level in enumerate(self.root_level)
            if level > 0 and not (has_step_id[i] and step_ids[i] in tf_data_ids)
        ]
        roots.sort(
            key=lambda i: (-self.root_level[i], self.begin[i], self.begin[i] - self.end[i], i)
        )
        return roots

    def _root_needs_grouping(self, root: int) -> bool:
        if self.group[root] >= 0:
            return False
        level = self.root_level[root]
        same_level = self.find_ancestor(
            root, lambda i: self.root_level[i] == level, include_self=False
        )
        return same_level is None

    def _propagate(self, root: int, group_id: int, result: Grouping) -> None:
        group = self.group
        queue = deque([root])
        seen = {root}
        while queue:
            node = queue.popleft()
            other = group[node]
            if other >= 0:
                if other != group_id:
                    result.group_children.setdefault(group_id, set()).add(other)
                    result.group_parents.setdefault(other, set()).add(group_id)
                continue
            group[node] = group_id
            for child in self.children[node]:
                if child not in seen:
                    seen.add(child)
                    queue.append(child)

    def _group_name(self, root: int, group_id: int) -> str:
        graph_type = self.context_stat(root, schema.GRAPH_TYPE)
        if graph_type is not None:
            prefix = f"{graph_type} "
        elif self.types[root] not in (_IMPLICIT_ROOT, _EXECUTOR):
            prefix = f"{self.names[root]} "
        else:
            prefix = ""
        step = self.context_stat(root, schema.ITER_NUM)
        if step is None:
            step = self.context_stat(root, schema.STEP_NUM)
        return f"{prefix}{group_id if step is None else step}"

    # --- eager marking -----------------------------------------------------------------
    def mark_eager(self, result: Grouping) -> None:
        types = self.types
        is_func, has_is_func = self.cols[schema.IS_FUNC], self.present[schema.IS_FUNC]
        for i, t in enumerate(types):
            if t != _TF_OP and t != _KERNEL_EXECUTE:
                continue
            eager = self.find_ancestor(i, lambda j: types[j] == _EAGER)
            # Eager iff under EagerExecute of a single op (is_func present and 0).
            flag = int(eager is not None and has_is_func[eager] and is_func[eager] == 0)
            plane, row = self.locate(i)
            result.is_eager[plane][row] = flag


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

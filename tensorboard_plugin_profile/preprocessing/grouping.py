"""Step grouping (``GroupTfEvents``, docs/conversion.md §3.4): events → step groups.

Every event of every plane is a node of one graph (``event_graph``): nesting on a
thread, inter-thread links (executor → iterator ops on (``id``, ``iter_num``),
kernel launch → kernel on ``correlation_id``), TraceMe 2.0 producer/consumer
contexts and TF while-loop iterations. Roots (``_r`` stats, legacy
``TraceContext``, or loop iterations) are sorted, and upstream floods each one's
descendants in turn with a new group id, stopping at nodes an earlier root took.

That sequential flood has a closed form, used here: a node belongs to the
earliest-sorted flooding root with a path to it (an earlier root reaching any
node on the path would reach the node too). So the owner of every node is one
``Graph.flood`` of the roots in turn; a sorted root floods iff no earlier root
reached it and no other root of its level is its ancestor (one flood per level).
Group relations are the edges that cross from one group into an earlier one,
recorded by that flood.

Only two things stay per node in Python, both for a small subset: group names
(a breadth-first ancestor search per group, since upstream takes the *first*
``graph_type``/``iter_num``/``step_num`` in that order) and eager flags of the
rare ops that reach both a single-op and a function ``EagerExecute``.

Usage::

    result = group_events(space)
    result.group_ids[plane_index]    # int32 per event row (int64 past 2**31), -1 = no group
    result.group_names               # {group id: "train 3"}
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..xspace import schema
from ..xspace.model import Space
from . import event_graph, group_roots
from .group_roots import Nodes


@dataclasses.dataclass
class Grouping:
    """What grouping adds, per plane (index in ``space.planes``)."""

    group_ids: list  # per plane: int32 (or int64) array aligned with events, -1 = ungrouped
    step_names: list  # per plane: {event row: group name} for non-implicit roots
    is_eager: list  # per plane: (event rows, 0/1 flags) for TF ops and GPU kernels
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
    empty = np.zeros(0, dtype=np.int64)
    result = Grouping(
        group_ids=[],
        step_names=[{} for _ in space.planes],
        is_eager=[(empty, empty) for _ in space.planes],
        group_names={},
        group_parents={},
        group_children={},
    )
    nodes = Nodes.of(space)
    if nodes.n == 0 or has_loop_ops(space):
        result.group_ids = [np.full(len(p.events), -1, dtype=np.int64) for p in space.planes]
        return result
    intra, edge_sets = group_roots.edges(nodes)
    tf_data_ids = nodes.tf_data_step_ids()
    loop_roots, loop_edges = group_roots.loop_roots(nodes, tf_data_ids)
    graph = event_graph.Graph.build(intra, edge_sets + [loop_edges])
    group = _create_groups(nodes, graph, loop_roots, tf_data_ids, result)
    _mark_eager(nodes, graph, result)
    offsets, n = nodes.offsets, nodes.n
    del graph, intra, edge_sets, loop_edges, nodes  # freed before the narrowed copy is made
    if n < 2**31:  # ids are ranks of roots: kept through the plane edits at half the size
        group = group.astype(np.int32, copy=False)
    result.group_ids = [group[offsets[p] : offsets[p + 1]] for p in range(len(space.planes))]
    return result


def _create_groups(nodes: Nodes, graph, loop_roots, tf_data_ids, result: Grouping) -> np.ndarray:
    is_loop = len(loop_roots) > 0
    roots = loop_roots if is_loop else group_roots.sorted_roots(nodes, tf_data_ids)
    # Group ids are ranks of roots: int32 labels below 2**31 nodes (half the flood's memory).
    width = np.int32 if nodes.n < 2**31 else np.int64
    if is_loop:
        # Every loop root gets an id, its rank, even when an earlier iteration took it.
        ranks = np.arange(len(roots), dtype=np.int64)
        group = np.empty(nodes.n, dtype=width)
        group, _, crossings = graph.flood(roots, ranks, unreached=-1, out=group, crossings=True)
        grouped = roots
    else:
        # A root whose ancestors include a root of its level never floods; the others
        # get ids in turn when nobody earlier took them. The search's scratch (node ids:
        # int32 like the labels) is freed before the labels are made.
        scratch = np.empty(nodes.n, dtype=width)
        flooding = roots[~_has_same_level_ancestor(nodes, graph, roots, scratch)]
        del scratch
        group = np.empty(nodes.n, dtype=width)
        group, flooded, crossings = graph.flood(flooding, unreached=-1, out=group, crossings=True)
        grouped = flooding[flooded]
    _record_relations(crossings, group, grouped, result)
    names, named = _group_names(nodes, graph, grouped)
    result.group_names.update(enumerate(names))
    plane_of = np.searchsorted(nodes.offsets, grouped, side="right") - 1
    for k in np.flatnonzero(named).tolist():
        plane = int(plane_of[k])
        result.step_names[plane][int(grouped[k] - nodes.offsets[plane])] = names[k]
    return group


def _has_same_level_ancestor(nodes: Nodes, graph, roots: np.ndarray, scratch) -> np.ndarray:
    """Per root: whether another node of its root level is an ancestor (or it is its own parent).

    ``scratch``: an int32 (or int64) array per node that the search may overwrite.
    """
    out = np.zeros(len(roots), dtype=bool)
    root_level = nodes.root_level.at(roots)[0]
    # Only a root with a parent can have an ancestor (roots are mostly top-level events).
    with_parent = graph.has_parents(roots)
    for value in np.unique(root_level[with_parent]).tolist():
        mine = roots[with_parent & (root_level == value)]
        sources = nodes.root_level.rows[nodes.root_level.values == value]  # increasing
        smallest = graph.flood(sources, sources, proper=True, unreached=-1, out=scratch)[0][mine]
        found = (smallest >= 0) & (smallest != mine)
        itself = smallest == mine  # reached only through a cycle: look for another source
        if itself.any():
            # Seeds from the largest down: the largest source with a path to each node.
            largest = graph.flood(sources[::-1], sources[::-1], proper=True, unreached=-1)
            found |= itself & (largest[0][mine] != mine)
            found |= itself & np.array([r in graph.parents_of(r) for r in mine.tolist()])
        out[np.flatnonzero(with_parent & (root_level == value))] = found
    return out


def _record_relations(crossings: tuple, group: np.ndarray, grouped, result: Grouping) -> None:
    """A flood that meets a node of another (earlier) group nests that group in its own.

    ``crossings``: the (outer, inner) group pairs of the edges between two groups.
    """
    outer, inner = crossings
    pairs = set(zip(outer.tolist(), inner.tolist()))
    # A loop root already taken by an earlier iteration still starts (and names) a group.
    root_group = group[grouped]
    taken = root_group != np.arange(len(grouped))
    pairs.update(zip(np.flatnonzero(taken).tolist(), root_group[taken].tolist()))
    for outer_id, inner_id in sorted(pairs):
        result.group_children.setdefault(outer_id, set()).add(inner_id)
        result.group_parents.setdefault(inner_id, set()).add(outer_id)


def _group_names(nodes: Nodes, graph, grouped: np.ndarray) -> tuple:
    """(name per group, whether its root is user-annotated); group id = position.

    A name is the first ``graph_type`` found breadth first over the root's ancestors
    (else the annotated root's own name), then the first ``iter_num``, else the first
    ``step_num``, else the group id.
    """
    named = ~np.isin(nodes.types[grouped], (group_roots.IMPLICIT_ROOT, group_roots.EXECUTOR))
    with_type = graph.first_ancestors(grouped, nodes.graph_type_present)
    own_names = dict(zip(np.flatnonzero(named).tolist(), nodes.names(grouped[named])))
    step = np.arange(len(grouped), dtype=np.int64)
    todo = np.ones(len(grouped), dtype=bool)
    for key in (schema.ITER_NUM, schema.STEP_NUM):
        found = graph.first_ancestors(grouped[todo], nodes.present(key))
        hit = np.flatnonzero(todo)[found >= 0]
        step[hit] = nodes.stats[key].at(found[found >= 0])[0]
        todo[hit] = False
    names = []
    for k, (typed, number) in enumerate(zip(with_type.tolist(), step.tolist())):
        if typed >= 0:
            prefix = f"{nodes.graph_type(typed)} "
        else:
            prefix = f"{own_names[k]} " if k in own_names else ""
        names.append(f"{prefix}{number}")
    return names, named


def _mark_eager(nodes: Nodes, graph, result: Grouping) -> None:
    """``is_eager`` of TF ops and kernels: the nearest ``EagerExecute`` ran a single op.

    Upstream takes the first ``EagerExecute`` of a breadth-first ancestor search.
    When every reachable one agrees the order does not matter; only ops reaching
    both kinds repeat the search.
    """
    kinds = (group_roots.TF_OP, group_roots.KERNEL_EXECUTE)
    marked = np.union1d(*(nodes.rows_of_type(kind) for kind in kinds))
    if not len(marked):
        return
    eager = nodes.rows_of_type(group_roots.EAGER)
    is_func, present = nodes.stats[schema.IS_FUNC].at(eager)
    single_op = eager[present & (is_func == 0)]
    other = eager[~(present & (is_func == 0))]
    scratch = np.empty(nodes.n, dtype=np.int32 if nodes.n < 2**31 else np.int64)  # node ids
    reach_single = graph.flood(single_op, single_op, unreached=-1, out=scratch)[0][marked] >= 0
    reach_other = graph.flood(other, other, unreached=-1, out=scratch)[0][marked] >= 0
    flag = reach_single.astype(np.int64)
    conflicts = np.flatnonzero(reach_single & reach_other).tolist()
    if conflicts:
        is_eager = np.zeros(nodes.n, dtype=bool)
        is_eager[eager] = True
        single = set(single_op.tolist())
        for k in conflicts:
            flag[k] = int(graph.first_ancestor(int(marked[k]), is_eager) in single)
    plane_of = np.searchsorted(nodes.offsets, marked, side="right") - 1
    for p in np.flatnonzero(np.bincount(plane_of)).tolist():  # a few planes: no hashing
        mine = plane_of == p
        result.is_eager[p] = (marked[mine] - nodes.offsets[p], flag[mine])

"""Preprocessing of one host's XSpace (docs/conversion.md §3): what every tool reads.

``preprocess(space)`` returns a new ``Space`` (the cached input is not touched) in
which, unless the file was already grouped by its profiler:

1. TraceMe 2.0 mutators ran (§3.1): ``_r`` on batching events, producer/consumer
   stats on connected TPU runtime pairs, masked ``run_id``.
2. Events are grouped into steps (§3.4) — every plane's ``events`` table has:
   - ``group_id`` (nullable Int64): the step group, <NA> when ungrouped;
   - ``step_name`` (object): the group name, only on user-annotated roots
     (e.g. JAX ``StepTraceAnnotation("train", step_num=3)`` → ``"train 3"``);
   - ``is_eager`` (nullable Int64): 0/1 on TF ops (host) and GPU kernels.
   ``step_name`` and ``is_eager`` are also rows of the long ``stats`` table (kind str /
   int64); ``group_id`` only the column (``Plane.implicit_group`` says where it sits
   among an event's stats for the readers that list them, ``xspace.event_stats``).
3. ``flow`` stats (uint64, possibly several per event, only in the long ``stats``
   table) tie launches to kernels and producers to consumers (§3.3).
4. ``ThreadpoolListener::Region`` span events replace StartRegion/StopRegion
   pairs (added after grouping, like upstream: they carry no group or flow).
5. GPU planes get derived lines (§3.5, see ``derived_lines``): ``Steps``,
   per stream ``Framework Name Scope`` / ``Framework Ops`` / ``XLA Modules`` /
   ``XLA Ops`` / ``Source code``, and ``Launch Stats``.

``Space`` fields set: ``group_names`` ({group id: name}; GPU step tables use the id,
trace rows the name), ``group_children`` ({group id: nested group ids}) and
``preprocessed = True``. New events have new ``event_metadata`` rows, new lines new
``lines`` rows; each line's events stay sorted by (begin, longest first).

Usage::

    space = preprocess(read_xspace(path))
    host = space.plane("/host:CPU")
    steps = host.events.dropna(subset=["group_id"]).groupby("group_id").begin_ps.min()
"""

from __future__ import annotations

import dataclasses

from ..common.memo import memoized
from ..xspace import schema
from ..xspace.event_stats import set_rows, typed_column_at
from ..xspace.model import KIND_INT64, KIND_STR, Space
from . import derived_lines, flows, grouping, mutators
from .plane_edit import PlaneEdit


def is_grouped(space: Space) -> bool:
    """Whether the profiler already grouped this space (any plane knows group_id)."""
    return any(schema.GROUP_ID in plane.stat_names.values() for plane in space.planes)


def preprocess(space: Space) -> Space:
    """The preprocessed copy of one host's space (see the module docstring).

    Computed once per decoded Space and kept on it (the service caches Spaces, so
    every tool of a session shares one preprocessing); concurrent callers wait.
    """
    if space.preprocessed:
        return space
    return memoized([space], "preprocess", lambda: _preprocess(space))


def preprocess_decoded(space: Space, with_flows: bool = True) -> Space:
    """The preprocessed copy of a freshly decoded space that nothing else holds.

    Not memoised: the service keeps only this copy, and every tool reads it; ``preprocess``
    of it is itself. ``space`` is consumed: each plane's decoded columns are dropped while
    its edited copy is built (``PlaneEdit(consume=True)``), so the two never coexist whole.
    ``with_flows=False`` leaves out steps 3 and 4 (flows and threadpool regions, which carry
    no group and only the trace viewer reads): for a copy that is summarised and dropped
    (``analysis/host_summary.py``), never kept or shown.
    """
    return space if space.preprocessed else _preprocess(space, True, with_flows)


def _preprocess(space: Space, consume: bool = False, with_flows: bool = True) -> Space:
    if is_grouped(space):
        return dataclasses.replace(space, preprocessed=True, group_names=_step_names(space))
    planes = [_mutated(p, consume) for p in space.planes]
    stage = dataclasses.replace(space, planes=planes)
    result = grouping.group_events(stage)
    host_id = flows.host_fingerprint(space.hostnames)
    planes = [
        _grouped(i, p, result, host_id if with_flows else None, consume)
        for i, p in enumerate(planes)
    ]
    planes = derived_lines.derive(planes, result.group_names)
    return dataclasses.replace(
        space,
        planes=planes,
        group_names=dict(result.group_names),
        group_children={k: sorted(v) for k, v in result.group_children.items()},
        preprocessed=True,
    )


def _mutated(plane, consume: bool = False):
    edit = PlaneEdit(plane, consume)
    mutators.apply_stat_mutators(edit)
    return edit.build()


def _grouped(index: int, plane, result: grouping.Grouping, host_id, consume: bool = False):
    """The plane with its groups, step names, eager flags, and unless ``host_id`` is None
    (a copy only summarised) its flows and threadpool regions."""
    edit = PlaneEdit(plane, consume)
    edit.set_groups(result.group_ids[index])  # the events' column, no stats rows
    step_names = result.step_names[index]
    if step_names:
        edit.set_stat(list(step_names), schema.STEP_NAME, list(step_names.values()), KIND_STR)
    eager_rows, eager_flags = result.is_eager[index]
    edit.set_stat(eager_rows, schema.IS_EAGER, eager_flags, KIND_INT64)
    if host_id is not None:  # a copy for the trace viewer too: its flows and regions
        flows.add_flows(edit, host_id, is_host_plane=not schema.is_device_plane(plane.name))
        mutators.add_threadpool_regions(edit)
    return edit.build()


def _step_names(space: Space) -> dict:
    """Group names of an already-grouped space, from its ``step_name`` stats."""
    names: dict = {}
    for plane in space.planes:
        ev = plane.events
        if schema.GROUP_ID not in ev:
            continue
        named = set_rows(plane, schema.STEP_NAME)
        groups = ev[schema.GROUP_ID].iloc[named]
        rows = named[groups.notna().to_numpy()]
        names.update(
            zip(groups.dropna().astype(int), typed_column_at(plane, schema.STEP_NAME, rows))
        )
    return names

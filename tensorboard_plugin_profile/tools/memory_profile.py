"""memory_profile: one host's allocators as upstream's ``MemoryProfile`` proto-JSON (§5.8).

``memory_profile_json(space)`` is the data, shaped like upstream's JSON: fields in
field-number order, lowerCamelCase, int64 as strings, integral doubles without ``.0``,
map keys sorted. Each allocator's chart timeline holds at most ``MAX_TIMELINE_POINTS``
(1000) snapshots; the payload says so in ``maxTimelinePoints`` (our addition, beside
upstream's fields). A profile without allocator events gives upstream's empty profile;
``convert`` raises ``NotApplicable`` instead and says how to record them.

``view=tables`` returns DataTables instead (for CSV export through ``/data_csv``):
``[breakdown at peak, sampled timeline]`` of the allocator ``memory_id`` (default: the
first id).

Usage::

    profile = memory_profile_json(space)         # dict, json.dumps-able
    tables = convert([("host", space)], {"view": "tables", "memory_id": "GPU_0_bfc"})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.memory import allocator as memory
from ..common.errors import InvalidArgument, NotApplicable
from ..xspace import schema
from ..xspace.model import Space
from .datatable import Column, data_table, rows_from_columns

VERSION = 1
NO_ALLOCATOR_EVENTS = (
    "This profile has no memory allocator events (MemoryAllocation / MemoryDeallocation), "
    "so there is no memory profile to show. TensorFlow records them when the host tracer "
    "level is 2 or higher, e.g. tf.profiler.experimental.ProfilerOptions(host_tracer_level=2) "
    "(the TensorBoard callback and the capture dialog use 2 by default); JAX and TensorFlow "
    "CPU-only runs without the BFC allocator record none."
)
_TIMELINE_COLUMNS = (
    Column("time_ms", "Time (ms)", "number"),
    Column("stack_mib", "Stack (MiB)", "number"),
    Column("heap_mib", "Heap (MiB)", "number"),
    Column("free_mib", "Free (MiB)", "number"),
    Column("fragmentation", "Fragmentation", "number"),
    Column("activity", "Activity", "string"),
    Column("requested_bytes", "Requested bytes", "number"),
    Column("allocation_bytes", "Allocation bytes", "number"),
    Column("op_name", "Op name", "string"),
    Column("step_id", "Step", "number"),
    Column("region_type", "Region type", "string"),
    Column("data_type", "Data type", "string"),
    Column("shape", "Shape", "string"),
)
_BREAKDOWN_COLUMNS = (
    Column("op_name", "Op name", "string"),
    Column("allocation_mib", "Allocation size (MiB)", "number"),
    Column("requested_mib", "Requested size (MiB)", "number"),
    Column("occurrences", "Occurrences", "number"),
    Column("region_type", "Region type", "string"),
    Column("data_type", "Data type", "string"),
    Column("shape", "Shape", "string"),
)
MIB = float(1 << 20)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]):
    if len(hosts) != 1:
        raise InvalidArgument("memory_profile shows exactly one host; choose one.")
    space = hosts[0][1]
    if params.get("view") == "tables":
        return memory_tables(space, params.get("memory_id") or None)
    profiles = _profiles(space)
    if not profiles:
        raise NotApplicable(NO_ALLOCATOR_EVENTS)
    profile = _profile_json(space, profiles)
    profile["maxTimelinePoints"] = memory.MAX_TIMELINE_POINTS
    # Upstream's payload only holds a 1000-point sample, so its page counts that sample
    # (899 / 101 of 2551 events on tf_memory); these are the counts over every event.
    profile["allocatorEventCounts"] = {k: _event_counts(p) for k, p in profiles.items()}
    return profile


def memory_profile_json(space: Space) -> dict:
    """Upstream's ``MemoryProfile`` JSON for one host (empty profile without events)."""
    return _profile_json(space, _profiles(space))


def _profiles(space: Space) -> dict:
    return memory.memory_profiles(space) if memory.has_allocator_events(space) else {}


def _profile_json(space: Space, profiles: dict) -> dict:
    return {
        "memoryProfilePerAllocator": {k: _allocator_json(p) for k, p in profiles.items()},
        "numHosts": 1,
        "memoryIds": sorted(profiles),
        "version": VERSION,
        "hloModules": hlo_modules(space),
    }


def _event_counts(profile: memory.AllocatorProfile) -> dict:
    activity = profile.timeline["activity"].to_numpy()
    return {
        "allocations": int((activity == memory.ALLOCATION).sum()),
        "deallocations": int((activity == memory.DEALLOCATION).sum()),
    }


def _allocator_json(profile: memory.AllocatorProfile) -> dict:
    active = profile.active
    referenced = active["snapshot"].to_numpy(dtype=np.int64)
    kept = referenced[referenced >= 0]
    # Only snapshots the breakdown points at are sent, renumbered in breakdown order.
    renumbered = np.where(referenced >= 0, np.cumsum(referenced >= 0) - 1, referenced)
    special_index = np.where(referenced < 0, -referenced - 1, -1)
    summary = profile.summary
    return {
        "memoryProfileSnapshots": _snapshots(profile.timeline.iloc[kept]),
        "profileSummary": {
            "peakBytesUsageLifetime": str(summary.peak_bytes_usage_lifetime),
            "peakStats": _aggregation(
                {k: v if k == "fragmentation" else str(v) for k, v in summary.peak_stats.items()}
            ),
            "peakStatsTimePs": str(summary.peak_time_ps),
            "memoryCapacity": str(summary.capacity_bytes),
        },
        "activeAllocations": [
            {"snapshotIndex": str(s), "specialIndex": str(i), "numOccurrences": str(n)}
            for s, i, n in zip(
                renumbered.tolist(), special_index.tolist(), active["occurrences"].tolist()
            )
        ],
        "specialAllocations": [_metadata(row) for row in _records(profile.specials)],
        "sampledTimelineSnapshots": _snapshots(profile.timeline.iloc[profile.sampled_rows]),
    }


def _records(frame: pd.DataFrame) -> list:
    """Rows as dicts of JSON-ready values: int64 columns as strings, built per column."""
    columns = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        if name in _INT64_FIELDS:
            values = values.astype(np.int64)
            if name == "address":  # a uint64 field
                values = values.view(np.uint64)
            columns[name] = values.astype(str).tolist()
        else:
            columns[name] = values.tolist()
    return [dict(zip(columns, row)) for row in zip(*columns.values())]


_INT64_FIELDS = frozenset(
    (
        "time_offset_ps stack_bytes heap_bytes free_bytes peak_bytes_in_use requested_bytes "
        "allocation_bytes address step_id"
    ).split()
)


def _snapshots(frame: pd.DataFrame) -> list:
    return [
        {
            "timeOffsetPs": row["time_offset_ps"],
            "aggregationStats": _aggregation(row),
            "activityMetadata": _metadata(row),
        }
        for row in _records(frame)
    ]


def _aggregation(row: Mapping) -> dict:
    return {
        "stackReservedBytes": row["stack_bytes"],
        "heapAllocatedBytes": row["heap_bytes"],
        "freeMemoryBytes": row["free_bytes"],
        "fragmentation": _double(row["fragmentation"]),
        "peakBytesInUse": row["peak_bytes_in_use"],
    }


def _metadata(row: Mapping) -> dict:
    return {
        "memoryActivity": memory.ACTIVITY_NAMES.get(row["activity"], "UNKNOWN_ACTIVITY"),
        "requestedBytes": row["requested_bytes"],
        "allocationBytes": row["allocation_bytes"],
        "address": row["address"],
        "tfOpName": row["tf_op"],
        "stepId": row["step_id"],
        "regionType": row["region_type"],
        "dataType": row["data_type"],
        "tensorShape": row["shape"],
    }


def _double(x: float):
    """Protobuf JSON prints integral doubles without a fraction (``0``, ``470``)."""
    x = float(x)
    return int(x) if x.is_integer() else x


def hlo_modules(space: Space) -> list:
    """Every event of the TPU ``XLA Modules`` lines (none on CPU and GPU profiles)."""
    out: list = []
    for plane in space.planes:
        if not schema.is_tpu_core_plane(plane.name):
            continue
        lines = np.flatnonzero(plane.lines["name"].to_numpy() == schema.XLA_MODULES_LINE)
        ev = plane.events[plane.events["line"].isin(lines)]
        line_ps = (plane.lines["timestamp_ns"].to_numpy() - space.time_base_ns) * 1000
        start = ev["begin_ps"].to_numpy() - line_ps[ev["line"].to_numpy()]
        end = start + ev["duration_ps"].to_numpy()
        short_name = plane.name[len("/device:") :]
        for name, begin, finish in zip(
            ev["name"].astype(str).tolist(), start.tolist(), end.tolist()
        ):
            out.append(
                {
                    "name": name,
                    "startTimePs": str(begin),
                    "endTimePs": str(finish),
                    "id": str(len(out)),
                    "planeName": short_name,
                }
            )
    return out


# --- DataTables for CSV ---------------------------------------------------------------------
def memory_tables(space: Space, memory_id=None) -> list:
    """[breakdown at the peak, sampled timeline] of one allocator as DataTables."""
    if not memory.has_allocator_events(space):
        raise NotApplicable(NO_ALLOCATOR_EVENTS)
    profiles = memory.memory_profiles(space)
    memory_id = memory_id or next(iter(profiles))
    if memory_id not in profiles:
        raise InvalidArgument(
            f"No allocator {memory_id!r} in this profile; it has {', '.join(profiles)}."
        )
    profile = profiles[memory_id]
    return [_breakdown_table(profile), _timeline_table(profile)]


def _breakdown_table(profile: memory.AllocatorProfile) -> dict:
    a = profile.active
    rows = rows_from_columns(
        a["tf_op"],
        a["allocation_bytes"].to_numpy(dtype=np.float64) / MIB,
        a["requested_bytes"].to_numpy(dtype=np.float64) / MIB,
        a["occurrences"],
        a["region_type"],
        a["data_type"],
        a["shape"],
    )
    return data_table(_BREAKDOWN_COLUMNS, rows, {"memory_id": profile.memory_id})


def _timeline_table(profile: memory.AllocatorProfile) -> dict:
    t = profile.timeline.iloc[profile.sampled_rows]
    activity = t["activity"].map(memory.ACTIVITY_NAMES)
    rows = rows_from_columns(
        t["time_offset_ps"].to_numpy() / 1e9,
        t["stack_bytes"].to_numpy() / MIB,
        t["heap_bytes"].to_numpy() / MIB,
        t["free_bytes"].to_numpy() / MIB,
        t["fragmentation"],
        activity,
        t["requested_bytes"],
        t["allocation_bytes"],
        t["tf_op"],
        t["step_id"],
        t["region_type"],
        t["data_type"],
        t["shape"],
    )
    properties = {
        "memory_id": profile.memory_id,
        "max_timeline_points": memory.MAX_TIMELINE_POINTS,
        "num_events": len(profile.timeline),
    }
    return data_table(_TIMELINE_COLUMNS, rows, properties)

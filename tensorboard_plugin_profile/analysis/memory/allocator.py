"""Memory profile of one host (docs/conversion.md §5.8): allocator events → per allocator
a timeline, a summary at the peak, and the breakdown of what was allocated at the peak.

TensorFlow's BFC allocators write a ``MemoryAllocation`` / ``MemoryDeallocation`` event
on the host plane for every (de)allocation when the profiler runs with
``host_tracer_level >= 2``; each event carries the allocator's state after the call
(stack/heap/free bytes, fragmentation, peak) and what was (de)allocated (bytes,
address, op, region, dtype, shape). JAX records none.

Everything is computed in columns: the peak is an ``argmax``, step ids are a forward
fill, deallocations find their allocation by a sort on (address, time), the state of
each address at the peak is its last event before the peak. Only the allocators
(a handful per host) are iterated in Python.

Usage::

    profiles = memory_profiles(space)        # {memory id: AllocatorProfile}, sorted ids
    p = profiles["GPU_0_bfc"]
    p.timeline.heap_bytes.max(), p.summary.peak_time_ps, p.active.head()
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...xspace import schema
from ...xspace.model import KIND_DOUBLE, KIND_INT64, KIND_UINT64, Plane, Space

# At most this many points in the sampled timeline of each allocator (as upstream):
# above it, each of 1000 consecutive windows keeps its highest-usage snapshot.
MAX_TIMELINE_POINTS = 1000

ALLOCATION, DEALLOCATION = 1, 2
ACTIVITY_NAMES = {0: "UNKNOWN_ACTIVITY", 1: "ALLOCATION", 2: "DEALLOCATION"}
UNUSED_PREALLOCATED = "unused preallocated device memory"

# TensorFlow DataType enum → name (DataTypeString); 101+ are the `_ref` variants.
_DATA_TYPES = (
    "INVALID float double int32 uint8 int16 int8 string complex64 int64 bool qint8 quint8 "
    "qint32 bfloat16 qint16 quint16 uint16 complex128 half resource variant uint32 uint64 "
    "float8_e5m2 float8_e4m3fn float8_e4m3fnuz float8_e4m3b11fnuz float8_e5m2fnuz int4 uint4"
).split()
_REF_OFFSET = 100

_INT_STATS = {
    "stack_bytes": schema.BYTES_RESERVED,
    "heap_bytes": schema.BYTES_ALLOCATED,
    "free_bytes": schema.BYTES_AVAILABLE,
    "peak_bytes_in_use": schema.PEAK_BYTES_IN_USE,
    "requested_bytes": schema.REQUESTED_BYTES,
    "allocation_bytes": schema.ALLOCATION_BYTES,
    "address": schema.ADDRESS,
    "data_type_enum": schema.DATA_TYPE,
}
_STR_STATS = {
    "tf_op": schema.TF_OP,
    "region_type": schema.REGION_TYPE,
    "shape": schema.TENSOR_SHAPE,
}
_MEMORY_ID_STATS = (schema.ALLOCATOR_NAME, schema.INDEX_ON_HOST, schema.DEVICE_ORDINAL)
# What a deallocation inherits from the allocation it frees.
_ALLOCATION_DETAILS = ("tf_op", "region_type", "data_type", "shape")
# Breakdown order: biggest first, then by name (upstream's MetadataComparator).
_BREAKDOWN_KEY = ("allocation_bytes", "requested_bytes") + _ALLOCATION_DETAILS


@dataclasses.dataclass
class Summary:
    peak_bytes_usage_lifetime: int  # the allocator's own peak counter, at its last event
    peak_row: int  # row of the peak in the collection-order events of this allocator
    peak_stats: dict  # stack_bytes, heap_bytes, free_bytes, fragmentation, peak_bytes_in_use
    peak_time_ps: int
    capacity_bytes: int


@dataclasses.dataclass
class AllocatorProfile:
    memory_id: str
    timeline: pd.DataFrame  # every event, sorted by time; steps filled, deallocs named
    sampled_rows: np.ndarray  # rows of ``timeline`` in the (bounded) chart timeline
    summary: Summary
    peak_step: int
    # Breakdown at the peak, biggest first: ``snapshot`` (row of ``timeline``, or
    # -1, -2 for the special rows), ``occurrences`` and the allocation's metadata.
    active: pd.DataFrame
    specials: pd.DataFrame  # the unattributed heap and the stack, as allocation rows


def has_allocator_events(space: Space) -> bool:
    host = space.plane(schema.HOST_PLANE)
    if host is None:
        return False
    names = set(host.event_metadata["name"].tolist())
    return schema.MEMORY_ALLOCATION in names or schema.MEMORY_DEALLOCATION in names


def memory_profiles(space: Space) -> dict:
    """{memory id: AllocatorProfile} for every allocator with events, ids sorted."""
    events = allocator_events(space)
    out = {}
    for memory_id, rows in events.groupby("memory_id", sort=True):
        out[memory_id] = allocator_profile(memory_id, rows.reset_index(drop=True))
    return out


def allocator_profile(
    memory_id: str, events: pd.DataFrame, max_points: int = MAX_TIMELINE_POINTS
) -> AllocatorProfile:
    """One allocator's profile from its events in collection order."""
    summary = _summary(events)
    timeline = events.sort_values("time_offset_ps", kind="stable").reset_index(drop=True)
    timeline["step_id"] = _filled_steps(timeline["step_id"].to_numpy())
    _name_deallocations(timeline)
    total = timeline["stack_bytes"].to_numpy() + timeline["heap_bytes"].to_numpy()
    at_peak = np.flatnonzero(total == summary.peak_stats["peak_bytes_in_use"])
    peak_step = int(timeline["step_id"].iat[at_peak[-1]]) if len(at_peak) else 0
    active, specials = _breakdown(timeline, summary, peak_step)
    return AllocatorProfile(
        memory_id=memory_id,
        timeline=timeline,
        sampled_rows=sample_rows(total, max_points),
        summary=summary,
        peak_step=peak_step,
        active=active,
        specials=specials,
    )


# --- collection ----------------------------------------------------------------------
def allocator_events(space: Space) -> pd.DataFrame:
    """Every allocator event of the host plane, in collection (file) order, one row each."""
    host = _grouped_host_plane(space)
    if host is None:
        return _empty_events()
    ev = host.events
    rows = np.flatnonzero(
        ev["name"].isin([schema.MEMORY_ALLOCATION, schema.MEMORY_DEALLOCATION]).to_numpy()
    )
    if not len(rows):
        return _empty_events()
    stats = _last_stats(host, rows)
    line_ps = (host.lines["timestamp_ns"].to_numpy() - space.time_base_ns) * 1000
    out = pd.DataFrame(
        {
            "memory_id": _memory_ids(stats, len(rows)),
            # Upstream's snapshot time is the raw event offset (line timestamp not added).
            "time_offset_ps": ev["begin_ps"].to_numpy()[rows]
            - line_ps[ev["line"].to_numpy()[rows]],
            "activity": np.where(
                ev["name"].to_numpy()[rows] == schema.MEMORY_ALLOCATION, ALLOCATION, DEALLOCATION
            ),
        }
    )
    for column, stat in _INT_STATS.items():
        out[column] = _int_stat(stats, stat, len(rows))
    out["fragmentation"] = _double_stat(stats, schema.FRAGMENTATION, len(rows))
    for column, stat in _STR_STATS.items():
        out[column] = _str_stat(stats, stat, len(rows))
    group = ev[schema.GROUP_ID].to_numpy(dtype=float, na_value=np.nan)[rows]
    out["step_id"] = np.where(np.isnan(group), -1, np.nan_to_num(group)).astype(np.int64)
    out["data_type"] = data_type_names(out.pop("data_type_enum").to_numpy(), stats, len(rows))
    return out


def _empty_events() -> pd.DataFrame:
    columns = ["memory_id", "time_offset_ps", "activity"] + list(_INT_STATS)
    return pd.DataFrame({c: [] for c in columns + ["fragmentation", "step_id", "data_type"]})


def _last_stats(host: Plane, rows: np.ndarray) -> pd.DataFrame:
    """Stat rows of these events (position = index into ``rows``); the last one wins."""
    st = host.stats
    names = list(_INT_STATS.values()) + list(_STR_STATS.values())
    names += [schema.FRAGMENTATION, *_MEMORY_ID_STATS]
    wanted = np.zeros(len(host.events), dtype=bool)
    wanted[rows] = True
    keep = st["stat"].isin(names).to_numpy() & wanted[st["event"].to_numpy()]
    sel = st[keep].drop_duplicates(["event", "stat"], keep="last")
    return sel.assign(position=np.searchsorted(rows, sel["event"].to_numpy()))


def _rows_of(stats: pd.DataFrame, name: str) -> pd.DataFrame:
    return stats[(stats["stat"] == name).to_numpy()]


def _int_stat(stats: pd.DataFrame, name: str, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    sel = _rows_of(stats, name)
    ints = sel["kind"].isin([KIND_INT64, KIND_UINT64]).to_numpy()
    out[sel["position"].to_numpy()[ints]] = sel["int_value"].to_numpy()[ints]
    return out


def _double_stat(stats: pd.DataFrame, name: str, n: int) -> np.ndarray:
    # Upstream reads the double field only: an integer-typed value counts as 0.
    out = np.zeros(n, dtype=np.float64)
    sel = _rows_of(stats, name)
    doubles = (sel["kind"] == KIND_DOUBLE).to_numpy()
    out[sel["position"].to_numpy()[doubles]] = sel["float_value"].to_numpy()[doubles]
    return out


def _str_stat(stats: pd.DataFrame, name: str, n: int) -> np.ndarray:
    out = np.full(n, "", dtype=object)
    sel = _rows_of(stats, name)
    values = sel["str_value"].to_numpy(dtype=object)
    has = pd.notna(values)
    out[sel["position"].to_numpy()[has]] = values[has]
    return out


def _memory_ids(stats: pd.DataFrame, n: int) -> np.ndarray:
    """allocator_name, or the index_on_host / device_ordinal number; the last read wins."""
    sel = stats[stats["stat"].isin(_MEMORY_ID_STATS).to_numpy()]
    sel = sel.drop_duplicates("position", keep="last")
    is_name = (sel["stat"] == schema.ALLOCATOR_NAME).to_numpy()
    names = sel["str_value"].to_numpy(dtype=object).copy()
    names[~is_name] = sel["int_value"].to_numpy()[~is_name].astype(str)
    out = np.full(n, "", dtype=object)
    out[sel["position"].to_numpy()] = names
    return out


def data_type_names(enums: np.ndarray, stats: pd.DataFrame, n: int) -> np.ndarray:
    """TF DataType names; empty where the event has no ``data_type`` stat."""
    is_ref = enums > _REF_OFFSET
    base = np.where(is_ref, enums - _REF_OFFSET, enums)
    known = (base >= 0) & (base < len(_DATA_TYPES))
    names = np.empty(n, dtype=object)
    suffix = np.where(is_ref[known], "_ref", "")
    names[known] = np.char.add(np.array(_DATA_TYPES)[base[known]], suffix).astype(object)
    names[~known] = [f"unknown dtype enum ({e})" for e in enums[~known].tolist()]
    present = np.zeros(n, dtype=bool)
    present[_rows_of(stats, schema.DATA_TYPE)["position"].to_numpy()] = True
    names[~present] = ""
    return names


# --- per allocator -----------------------------------------------------------------------
def _summary(events: pd.DataFrame) -> Summary:
    """Peak = the *last* event (collection order) whose stack + heap is the maximum."""
    total = events["stack_bytes"].to_numpy() + events["heap_bytes"].to_numpy()
    at_max = np.flatnonzero(total == total.max())
    row = int(at_max[-1])
    peak = events.iloc[row]
    stats = {
        "stack_bytes": int(peak["stack_bytes"]),
        "heap_bytes": int(peak["heap_bytes"]),
        "free_bytes": int(peak["free_bytes"]),
        "fragmentation": float(peak["fragmentation"]),
        "peak_bytes_in_use": int(total[row]),
    }
    return Summary(
        peak_bytes_usage_lifetime=int(events["peak_bytes_in_use"].iat[-1]),
        peak_row=row,
        peak_stats=stats,
        peak_time_ps=int(peak["time_offset_ps"]),
        capacity_bytes=int(total[row] + peak["free_bytes"]),
    )


def _filled_steps(step: np.ndarray) -> np.ndarray:
    """Missing step ids (-1) become the last valid step id before them + 1 (0 at first)."""
    valid = step != -1
    last_valid = np.maximum.accumulate(np.where(valid, np.arange(len(step)), -1))
    previous = np.where(last_valid >= 0, step[np.maximum(last_valid, 0)], -1)
    return np.where(valid, step, previous + 1)


def _name_deallocations(timeline: pd.DataFrame) -> None:
    """A deallocation takes op/region/dtype/shape from the allocation it frees.

    Per address, the deallocations split time into segments; a deallocation frees the
    first allocation of its segment (a second allocation at a busy address is ignored,
    an unmatched deallocation leaves nothing to free).
    """
    address = timeline["address"].to_numpy()
    is_dealloc = timeline["activity"].to_numpy() == DEALLOCATION
    order = np.lexsort((np.arange(len(address)), address))
    addr_sorted, dealloc_sorted = address[order], is_dealloc[order]
    new_address = np.r_[True, addr_sorted[1:] != addr_sorted[:-1]]
    count = np.cumsum(dealloc_sorted)
    group_start = np.maximum.accumulate(np.where(new_address, np.arange(len(order)), 0))
    before = count - dealloc_sorted - (count[group_start] - dealloc_sorted[group_start])
    keys = pd.DataFrame({"address": addr_sorted, "segment": before, "row": order})
    allocs = keys[~dealloc_sorted].drop_duplicates(["address", "segment"], keep="first")
    deallocs = keys[dealloc_sorted]
    matched = deallocs.merge(allocs, on=["address", "segment"], suffixes=("", "_alloc"))
    target, source = matched["row"].to_numpy(), matched["row_alloc"].to_numpy()
    for column in _ALLOCATION_DETAILS:
        values = timeline[column].to_numpy(dtype=object).copy()
        values[target] = values[source]
        timeline[column] = values


def sample_rows(total: np.ndarray, max_points: int = MAX_TIMELINE_POINTS) -> np.ndarray:
    """Rows kept in the chart: all when few; else the first highest of each window.

    ``n`` points become ``max_points`` windows: the first ``c1`` of width ``w = n //
    max_points``, the rest of width ``w + 1``, with ``c1 = max_points * (w + 1) - n``.
    """
    n = len(total)
    if n <= max_points:
        return np.arange(n)
    width = n // max_points
    narrow = max_points * (width + 1) - n
    index = np.arange(n)
    split = width * narrow
    window = np.where(index < split, index // width, narrow + (index - split) // (width + 1))
    best = np.lexsort((index, -total, window))
    first_of_window = np.r_[True, window[best][1:] != window[best][:-1]]
    return best[first_of_window]


def _breakdown(timeline: pd.DataFrame, summary: Summary, peak_step: int) -> tuple:
    """Allocations alive at the peak, within the peak's step, merged when identical."""
    # Time-sorted, so "up to the peak" is a prefix, as upstream's walk that stops there.
    window = timeline[
        (timeline["time_offset_ps"].to_numpy() <= summary.peak_time_ps)
        & (timeline["step_id"].to_numpy() == peak_step)
    ]
    is_alloc = window["activity"].to_numpy() == ALLOCATION
    address = window["address"].to_numpy()
    order = np.lexsort((window.index.to_numpy(), address))
    same_as_prev = np.r_[False, address[order][1:] == address[order][:-1]]
    prev_is_alloc = np.r_[False, is_alloc[order][:-1]] & same_as_prev
    unmatched = np.zeros(len(window), dtype=bool)
    unmatched[order] = ~is_alloc[order] & ~prev_is_alloc
    last_of_address = np.r_[address[order][1:] != address[order][:-1], True]
    alive = np.zeros(len(window), dtype=bool)
    alive[order] = last_of_address & is_alloc[order]
    nbytes = window["allocation_bytes"].to_numpy()
    unmapped = (
        summary.peak_stats["heap_bytes"]
        - nbytes[is_alloc].sum()
        + nbytes[~is_alloc].sum()
        - nbytes[unmatched].sum()
    )
    specials = _special_rows(int(unmapped), summary.peak_stats["stack_bytes"], peak_step)
    live = window[alive].assign(snapshot=window.index.to_numpy()[alive])
    return _merged(pd.concat([live, specials], ignore_index=True)), specials


def _special_rows(unmapped: int, stack: int, step: int) -> pd.DataFrame:
    rows = []
    if unmapped > 0:
        rows.append((unmapped, UNUSED_PREALLOCATED, "persist/dynamic"))
    if stack > 0:
        rows.append((stack, "stack", "stack"))
    return pd.DataFrame(
        {
            "snapshot": -np.arange(1, len(rows) + 1, dtype=np.int64),
            "activity": ALLOCATION,
            "requested_bytes": [r[0] for r in rows],
            "allocation_bytes": [r[0] for r in rows],
            "address": 0,
            "tf_op": [r[1] for r in rows],
            "step_id": step,
            "region_type": [r[2] for r in rows],
            "data_type": _DATA_TYPES[0],
            "shape": "unknown",
        },
        index=pd.RangeIndex(len(rows)),
    )


def _merged(active: pd.DataFrame) -> pd.DataFrame:
    """Sorted biggest first; identical consecutive allocations become one row."""
    if not len(active):
        return active.assign(occurrences=np.zeros(0, dtype=np.int64))
    active = active.assign(_order=active["snapshot"].to_numpy()).sort_values(
        list(_BREAKDOWN_KEY) + ["_order"],
        ascending=[False, False, True, True, True, True, True],
        kind="stable",
    )
    key = active[list(_BREAKDOWN_KEY)]
    new_run = (key != key.shift()).any(axis=1).to_numpy()
    run = np.cumsum(new_run)
    first = active[new_run].drop(columns="_order").reset_index(drop=True)
    return first.assign(occurrences=np.bincount(run)[1:])


def _grouped_host_plane(space: Space):
    """The host plane after step grouping (for step ids); preprocessing is memoised per Space."""
    if not has_allocator_events(space):
        return None
    from ...preprocessing.preprocess import preprocess

    return preprocess(space).plane(schema.HOST_PLANE)

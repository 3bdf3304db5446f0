"""Tensor memory of a ProfilerHook timeline (``show_memory=True``).

Two sources, both read by the Chrome-trace reader into events: tensor objects (one event
per tensor, from creation to deletion, with ``requested_bytes`` and ``allocator_name``;
``chrome_trace/objects.py``) and the allocators' own counters (``C`` events, one line per
series with the sampled ``value``). Per allocator: live tensor bytes over time (a sweep
over allocation and free points; a free at the same time as an allocation counts first),
its peak and what was live then, and the counter's peak.

Usage::

    memory = tensor_memory(space)
    memory.summary          # one row per allocator
    memory.live_at_peak     # the tensors live at each allocator's peak
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...chrome_trace.collect import COUNTER_CATEGORY, COUNTER_VALUE
from ...chrome_trace.objects import ALLOCATOR_NAME, DTYPE, REQUESTED_BYTES, SHAPE
from ...xspace.model import Space
from ..chrome_events import events_of

TENSOR_CATEGORY = "Tensor"
MAX_TIMELINE_POINTS = 2000


@dataclasses.dataclass
class TensorMemory:
    summary: pd.DataFrame  # allocator, peak_bytes, peak_ps, live_tensors, counter_peak_bytes
    live_at_peak: pd.DataFrame  # allocator, tensor, bytes, dtype, shape, begin_ps, end_ps
    timeline: pd.DataFrame  # allocator, time_ps, live_bytes (sampled)
    start_ps: int


def has_tensor_memory(space: Space) -> bool:
    return any(
        (plane.metadata_stats["str_value"] == TENSOR_CATEGORY).any()
        or (plane.metadata_stats["str_value"] == COUNTER_CATEGORY).any()
        for plane in space.planes
    )


def tensor_memory(space: Space) -> TensorMemory:
    ev = events_of(
        space, numbers=(REQUESTED_BYTES, COUNTER_VALUE), strings=(ALLOCATOR_NAME, DTYPE, SHAPE)
    )
    start = int(ev["begin_ps"].min()) if len(ev) else 0
    tensors = ev[(ev["cat"] == TENSOR_CATEGORY) & ev[REQUESTED_BYTES].notna()]
    tensors = tensors.assign(allocator=tensors[ALLOCATOR_NAME].fillna("unknown"))
    counters = ev[ev["cat"] == COUNTER_CATEGORY]
    summaries, live, timelines = [], [], []
    for allocator, group in tensors.groupby("allocator", sort=True):
        peak_ps, peak_bytes, curve = _sweep(group)
        at_peak = group[(group["begin_ps"] <= peak_ps) & (group["end_ps"] > peak_ps)]
        at_peak = at_peak.sort_values(REQUESTED_BYTES, ascending=False, kind="stable")
        live.append(at_peak.assign(allocator=allocator))
        timelines.append(curve.assign(allocator=allocator))
        series = counters[counters["name"] == allocator][COUNTER_VALUE]
        summaries.append(
            (allocator, peak_bytes, peak_ps, len(at_peak), series.max() if len(series) else np.nan)
        )
    summary = pd.DataFrame(
        summaries,
        columns=["allocator", "peak_bytes", "peak_ps", "live_tensors", "counter_peak_bytes"],
    )
    summary = _counters_without_tensors(summary, counters)
    return TensorMemory(
        summary=summary,
        live_at_peak=_concat(live, tensors),
        timeline=_concat(timelines, pd.DataFrame(columns=["time_ps", "live_bytes", "allocator"])),
        start_ps=start,
    )


def _sweep(group: pd.DataFrame) -> tuple:
    """(peak time, peak live bytes, sampled curve) of one allocator's tensors."""
    size = group[REQUESTED_BYTES].to_numpy(dtype=np.float64)
    times = np.concatenate([group["end_ps"].to_numpy(), group["begin_ps"].to_numpy()])
    delta = np.concatenate([-size, size])
    kind = np.concatenate([np.zeros(len(size)), np.ones(len(size))])  # frees first at a tie
    order = np.lexsort((kind, times))
    live = np.cumsum(delta[order])
    at = int(np.argmax(live)) if len(live) else 0
    step = max(1, len(order) // MAX_TIMELINE_POINTS)
    curve = pd.DataFrame({"time_ps": times[order][::step], "live_bytes": live[::step]})
    return int(times[order][at]) if len(live) else 0, float(live[at]) if len(live) else 0.0, curve


def _counters_without_tensors(summary: pd.DataFrame, counters: pd.DataFrame) -> pd.DataFrame:
    """Allocators seen only in counters still get a row (their counter peak)."""
    extra = []
    for name, series in counters.groupby("name", sort=True):
        if name not in set(summary["allocator"]):
            extra.append((name, np.nan, np.nan, 0, series[COUNTER_VALUE].max()))
    if not extra:
        return summary
    return pd.concat([summary, pd.DataFrame(extra, columns=summary.columns)], ignore_index=True)


def _concat(frames: list, empty: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else empty.iloc[:0]

"""Allocator memory peaks of one PyTorch worker (``profile_memory=True``).

torch.profiler writes a ``[memory]`` instant at every allocation and free, with the
allocator's ``Total Allocated`` and ``Total Reserved`` bytes after it; the Chrome-trace
reader turns them into one counter line per device and series ("Memory (CPU) Allocated
(bytes)", "Memory (GPU 0) Reserved (bytes)", ``chrome_trace/memory.py``). Per device: the
peak of each series, when the allocated peak was reached, and how many samples there were.
The maxima are taken per line over the whole column at once (no work per sample here).

Usage::

    peaks = memory_peaks(space)   # device, peak_allocated_bytes, peak_reserved_bytes, ...
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...chrome_trace.collect import COUNTER_CATEGORY, COUNTER_VALUE
from ...chrome_trace.memory import SERIES
from ...common.memo import memoized
from ...xspace.model import Space
from ..chrome_events import events_of

_PREFIX = "Memory ("
ALLOCATED, RESERVED = SERIES["Total Allocated"], SERIES["Total Reserved"]
COLUMNS = ("device", "peak_allocated_bytes", "peak_reserved_bytes", "peak_ps", "samples")


def has_memory_events(space: Space) -> bool:
    """Whether the trace holds ``[memory]`` series (a counter line "Memory (...) ...")."""
    return any(
        plane.lines["name"].astype(str).str.startswith(_PREFIX).any() for plane in space.planes
    )


def memory_peaks(space: Space) -> pd.DataFrame:
    """One row per device (``COLUMNS``); empty when the trace has no ``[memory]`` events."""
    return memoized([space], "pytorch_memory_peaks", lambda: _peaks(space))


def _peaks(space: Space) -> pd.DataFrame:
    ev = events_of(space, numbers=(COUNTER_VALUE,))
    ev = ev[(ev["cat"] == COUNTER_CATEGORY).to_numpy()]
    names = {
        (plane.index, line): str(name)
        for plane in space.planes
        for line, name in enumerate(plane.lines["name"].tolist())
        if str(name).startswith(_PREFIX)
    }
    if ev.empty or not names:
        return pd.DataFrame({c: [] for c in COLUMNS})
    start = int(ev["begin_ps"].min())
    # One group per (plane, line): the series of one device; Python work per line only.
    at = ev.groupby(["plane", "line"], sort=False)[COUNTER_VALUE].idxmax().dropna()
    counts = ev.groupby(["plane", "line"], sort=False).size()
    rows: dict = {}
    for (plane, line), index in at.items():
        label = names.get((plane, line))
        if label is None:
            continue
        device, series = label[len(_PREFIX) :].split(") ", 1)
        row = rows.setdefault(device, {"device": device, "samples": 0})
        value = float(ev.at[index, COUNTER_VALUE])
        if series == ALLOCATED:
            row["peak_allocated_bytes"] = value
            row["peak_ps"] = int(ev.at[index, "begin_ps"]) - start
            row["samples"] = int(counts[(plane, line)])
        elif series == RESERVED:
            row["peak_reserved_bytes"] = value
    out = pd.DataFrame(list(rows.values()), columns=list(COLUMNS))
    out["peak_allocated_bytes"] = out["peak_allocated_bytes"].astype(np.float64)
    out["peak_reserved_bytes"] = out["peak_reserved_bytes"].astype(np.float64)
    return out.sort_values("device", kind="stable", ignore_index=True)

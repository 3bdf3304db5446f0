"""PyTorch allocator memory over time: ``[memory]`` events → counter series.

With ``profile_memory=True`` torch.profiler writes an instant ``[memory]`` event at every
allocation and free, whose args hold the allocator's state after it: ``Total Allocated``
and ``Total Reserved`` bytes, on ``Device Type`` (0 CPU, 1 CUDA) ``Device Id``. Each
device becomes a counter of its process, "Memory (CPU)" or "Memory (GPU 0)", with an
"Allocated (bytes)" and a "Reserved (bytes)" series, drawn by the trace viewer like any
Chrome ``C`` counter. Read from the collected columns at once (no work per event here);
the ``[memory]`` events stay, with their args, for details and search.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np
import pandas as pd

MEMORY_EVENT = "[memory]"
SERIES = {"Total Allocated": "Allocated (bytes)", "Total Reserved": "Reserved (bytes)"}
_DEVICE_TYPE, _DEVICE_ID = "Device Type", "Device Id"
_KIND_DOUBLE = 0


def add_memory_counters(c: Any) -> None:
    """Adds the allocator series of every device to ``c.counters`` (before they finish)."""
    name_id = c.strings.ids.get(MEMORY_EVENT)
    if name_id is None:
        return
    names = np.frombuffer(c.ev_name, dtype=np.int64)
    rows = np.flatnonzero(names == name_id)
    if not len(rows):
        return
    owners = np.frombuffer(c.st_event, dtype=np.int64)
    keys = np.frombuffer(c.st_key, dtype=np.int64)
    mine = np.isin(owners, rows)

    def arg(key: str) -> np.ndarray:
        """The arg per [memory] event (NaN where absent)."""
        key_id = c.stat_keys.ids.get(key)
        sel = mine & (keys == key_id) if key_id is not None else np.zeros(len(keys), bool)
        kinds = np.frombuffer(c.st_kind, dtype=np.int8)[sel]
        ints = np.frombuffer(c.st_int, dtype=np.int64)[sel].astype(np.float64)
        floats = np.frombuffer(c.st_float, dtype=np.float64)[sel]
        values = np.where(kinds == _KIND_DOUBLE, floats, ints)
        return pd.Series(values, index=owners[sel]).groupby(level=0).last().reindex(rows).to_numpy()

    lines = np.frombuffer(c.ev_line, dtype=np.int64)[rows]
    frame = pd.DataFrame(
        {
            "pid": [c.lines.values[line][0] for line in lines.tolist()],
            "type": arg(_DEVICE_TYPE),
            "id": arg(_DEVICE_ID),
            "time": np.frombuffer(c.ev_begin, dtype=np.int64)[rows],
            **{key: arg(key) for key in SERIES},
        }
    )
    frame = frame.sort_values("time", kind="stable")
    for (pid, kind, device), group in frame.groupby(["pid", "type", "id"], dropna=False, sort=True):
        counter = f"Memory ({_device(kind, device)})"
        for key, series in SERIES.items():
            values = group[key].to_numpy()
            ok = ~np.isnan(values)
            if ok.any():
                times = array("q", group["time"].to_numpy()[ok].tolist())
                c.counters[(pid, counter, series)] = (times, array("d", values[ok].tolist()))


def _device(kind: float, device: float) -> str:
    if kind == 0 or np.isnan(kind):
        return "CPU"
    label = "GPU" if kind == 1 else f"device type {int(kind)}"
    return label if np.isnan(device) else f"{label} {int(device)}"

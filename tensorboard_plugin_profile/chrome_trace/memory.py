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

    # The process of each event, through its line: Python work per distinct line only.
    used, line_index = np.unique(
        np.frombuffer(c.ev_line, dtype=np.int64)[rows], return_inverse=True
    )
    used_pids = [c.lines.values[line][0] for line in used.tolist()]
    pids = sorted(set(used_pids), key=lambda pid: (isinstance(pid, str), pid))
    pid_code = {pid: code for code, pid in enumerate(pids)}
    line_code = np.asarray([pid_code[pid] for pid in used_pids], dtype=np.int64)
    frame = pd.DataFrame(
        {
            "pid": line_code[line_index],
            "type": arg(_DEVICE_TYPE),
            "id": arg(_DEVICE_ID),
            "time": np.frombuffer(c.ev_begin, dtype=np.int64)[rows],
            **{key: arg(key) for key in SERIES},
        }
    )
    frame = frame.sort_values("time", kind="stable")
    for (code, kind, device), group in frame.groupby(
        ["pid", "type", "id"], dropna=False, sort=True
    ):
        counter = f"Memory ({_device(kind, device)})"
        for key, series in SERIES.items():
            values = group[key].to_numpy()
            ok = ~np.isnan(values)
            if ok.any():
                times = _array("q", group["time"].to_numpy(dtype=np.int64)[ok])
                series_key = (pids[int(code)], counter, series)
                c.counters[series_key] = (times, _array("d", values[ok].astype(np.float64)))


def _array(typecode: str, values: np.ndarray) -> array:
    """A stdlib array of a whole numpy column at once (no Python number per sample)."""
    out = array(typecode)
    out.frombytes(np.ascontiguousarray(values).tobytes())
    return out


def _device(kind: float, device: float) -> str:
    if kind == 0 or np.isnan(kind):
        return "CPU"
    label = "GPU" if kind == 1 else f"device type {int(kind)}"
    return label if np.isnan(device) else f"{label} {int(device)}"

"""Chrome-trace objects (``N`` created, ``O`` snapshot, ``D`` destroyed) → one event each.

TensorFlow's ProfilerHook (``show_memory=True``) writes one object per tensor: created
when produced, a snapshot whose ``tensor_description`` (protobuf text) holds the dtype,
shape, allocator and requested bytes, destroyed when freed. Each object becomes an event
spanning its lifetime on the line of its creation, with those fields as stats
(``requested_bytes``, ``allocator_name``, ``dtype``, ``shape``), which is what the
memory analysis reads. Objects never destroyed live until the end of the trace.
"""

from __future__ import annotations

import re
from typing import Any

REQUESTED_BYTES = "requested_bytes"
# The object's id, on its event: marks it as an object (the trace export writes it back as
# N/O/D, tools/trace_viewer.py); internal, so not shown among the event's stats.
OBJECT_ID = "_object"
ALLOCATOR_NAME = "allocator_name"
DTYPE = "dtype"
SHAPE = "shape"

_FIELD = re.compile(r"(requested_bytes|allocated_bytes|allocator_name|dtype):\s*\"?([^\s\"]+)")
_DIM = re.compile(r"dim\s*\{\s*size:\s*(-?\d+)")


class ObjectTable:
    def __init__(self) -> None:
        # (pid, cat, name, id) -> [line, begin_ps, end_ps or None, snapshot]
        self._live: dict = {}
        self._order: list = []

    def add(self, ph: str, ev: dict, line: int, ts_ps: int, strings: Any) -> None:
        key = (ev.get("pid"), ev.get("cat"), ev.get("name"), str(ev.get("id")))
        entry = self._live.get(key)
        if entry is None or (ph == "N" and entry[2] is not None):
            entry = [line, ts_ps, None, None]
            self._live[key] = entry
            self._order.append((key, entry))
        if ph == "O":
            entry[3] = (ev.get("args") or {}).get("snapshot")
        elif ph == "D":
            entry[2] = ts_ps

    def finish(self, collector: Any) -> None:
        for (_, cat, name, object_id), (line, begin, end, snapshot) in self._order:
            stop = collector.end_ps if end is None else end
            row = collector.add_event(
                line, str(name or ""), str(cat or ""), begin, max(stop - begin, 0)
            )
            collector.add_stat(row, OBJECT_ID, object_id)
            for key, value in snapshot_stats(snapshot).items():
                collector.add_stat(row, key, value)
        self._live.clear()
        self._order.clear()


def snapshot_stats(snapshot: Any) -> dict:
    """Stats of one snapshot: tensor fields parsed from its description, else its scalars."""
    if not isinstance(snapshot, dict):
        return {} if snapshot is None else {"snapshot": snapshot}
    text = snapshot.get("tensor_description")
    if not isinstance(text, str):
        return {k: v for k, v in snapshot.items() if isinstance(v, (int, float, str))}
    out: dict = {}
    for field, value in _FIELD.findall(text):
        out[field] = int(value) if field.endswith("_bytes") and value.isdigit() else value
    if DTYPE in out:
        out[DTYPE] = out[DTYPE].replace("DT_", "").lower()
    out[SHAPE] = "(" + ",".join(_DIM.findall(text)) + ")"
    return out

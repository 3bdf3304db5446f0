"""The readers' raw form, and its final event layout.

Both readers first see the events as the wire holds them: ``events`` = (line,
metadata_id, offset_ps, duration_ps, occurrences) per plane (``wire.py`` documents the
rest). The tables keep other columns: absolute begin times, and the event names as codes
into the plane's distinct names. The compiled reader writes that final layout directly
while it walks the events; ``finish`` turns the wire layout (the pure-Python reader, the
Chrome-trace reader) into the same, so ``decode.space_from_raw`` has one input:

- ``raw["time_base_ns"]``: the time base (non-zero only for absolute epoch times);
- per plane ``events`` = (line int32, metadata_id int32 (int64 where an id needs it),
  begin_ps int64, duration_ps int64, occurrences int64 or None when every event has none);
- per plane ``names`` = (name codes, display-name codes, names, display names): codes
  into the distinct names of the event metadata in id order, plus ``""`` (an unknown id)
  where no metadata has it; codes in the width pandas gives categorical codes.

Columns are numpy arrays, or byte buffers from the compiled reader: ``bytearray``, or numpy
bytes (uint8) when ``decode.py`` gives it its allocator (``decode._raw_bytes``).
"""

from __future__ import annotations

import numpy as np

from .columns import code_dtype
from .wire import first_seen_codes

# Line timestamps above this (ns) are absolute epoch times: rebase them.
ABSOLUTE_TIME_NS = 1 << 50


def is_final(raw: dict) -> bool:
    return "time_base_ns" in raw


def finish(raw: dict) -> dict:
    """The final layout of a raw form in the wire layout (its columns are reused)."""
    time_base_ns = _time_base_ns(raw["planes"])
    for plane in raw["planes"]:
        _finish_plane(plane, time_base_ns)
    _narrow_ids(raw["planes"])
    raw["time_base_ns"] = time_base_ns
    return raw


def _narrow_ids(planes: list) -> None:
    """Metadata ids as int32 when every event's id in the space fits (as the compiled
    reader writes them: int64 for every plane otherwise)."""
    mids = [plane["events"][1] for plane in planes if len(plane["events"][1])]
    if any(m.min() < -(2**31) or m.max() >= 2**31 for m in mids):
        return
    for plane in planes:
        events = plane["events"]
        plane["events"] = (events[0], events[1].astype(np.int32)) + events[2:]


def _time_base_ns(planes: list) -> int:
    stamps = [line[4] for plane in planes for line in plane["lines"]]
    if stamps and max(stamps) > ABSOLUTE_TIME_NS:
        return min(stamps)
    return 0


def _finish_plane(plane: dict, time_base_ns: int) -> None:
    line, mids, offsets, durations, occurrences = (
        np.asarray(column, dtype=dtype)
        for column, dtype in zip(
            plane["events"], (np.int32, np.int64, np.int64, np.int64, np.int64)
        )
    )
    stamps = np.asarray([row[4] for row in plane["lines"]], dtype=np.int64)
    begin_ps = offsets if offsets.flags.writeable else offsets.copy()
    if len(begin_ps):
        begin_ps += ((stamps - time_base_ns) * 1000)[line]
    used = not len(occurrences) or occurrences.any()
    plane["names"] = name_codes(mids, plane["event_metadata"])
    plane["events"] = (line, mids, begin_ps, durations, occurrences if used else None)


def name_codes(metadata_ids: np.ndarray, metadata_rows: list) -> tuple:
    """(name codes, display codes, names, display names) of events by metadata id; the
    metadata rows are (id, name, display_name) sorted by id, an unknown id is named ""."""
    ids = np.asarray([row[0] for row in metadata_rows], dtype=np.int64)
    pos = np.minimum(np.searchsorted(ids, metadata_ids), max(len(ids) - 1, 0))
    found = ids[pos] == metadata_ids if len(ids) else np.zeros(len(metadata_ids), dtype=bool)
    rows = np.where(found, pos, len(ids))
    codes, names = [], []
    for field in (1, 2):
        inverse, uniques = first_seen_codes([row[field] or "" for row in metadata_rows] + [""])
        codes.append(inverse.astype(code_dtype(len(uniques)))[rows])
        names.append(uniques)
    return (*codes, *names)

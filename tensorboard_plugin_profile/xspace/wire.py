"""The pure-Python reader: XSpace bytes → the raw form that ``decode`` builds tables from.

The raw form here is the wire layout; ``rawform.finish`` turns it into the final layout
that the optional compiled reader (``_decode.c``) returns directly, so the two are
interchangeable. A dict with ``planes``, ``hostnames``,
``errors``, ``warnings``; per plane ``id``, ``name``, ``lines`` (tuples),
``events`` (line, metadata_id, offset_ps, duration_ps, occurrences columns),
``stats`` / ``metadata_stats`` / ``plane_stats`` (owner, metadata_id, kind,
int64, float64, string id, distinct strings in first-seen order),
``event_metadata`` rows in id order and ``stat_metadata`` names.
This path walks the protobuf objects; it is the slower of the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..protobuf import xplane_pb2
from .model import KIND_BYTES, KIND_DOUBLE, KIND_INT64, KIND_REF, KIND_STR, KIND_UINT64

_KINDS = {
    "double_value": KIND_DOUBLE,
    "uint64_value": KIND_UINT64,
    "int64_value": KIND_INT64,
    "str_value": KIND_STR,
    "bytes_value": KIND_BYTES,
    "ref_value": KIND_REF,
}


def read(data: bytes, max_events: int = -1) -> dict:
    """Raises protobuf's DecodeError (or ValueError) on malformed bytes.

    More than ``max_events`` events (when >= 0) raises OverflowError("N events").
    """
    proto = xplane_pb2.XSpace.FromString(data)
    events = sum(len(line.events) for plane in proto.planes for line in plane.lines)
    if 0 <= max_events < events:
        raise OverflowError(f"{events} events")
    return {
        "planes": [_plane(p) for p in proto.planes],
        "hostnames": list(proto.hostnames),
        "errors": list(proto.errors),
        "warnings": list(proto.warnings),
    }


def _plane(plane: Any) -> dict:
    lines: list[tuple] = []
    columns: tuple = ([], [], [], [], [])
    stats: tuple = ([], [], [], [])
    row = 0
    line_col, meta_col, offset_col, dur_col, occ_col = columns
    for index, line in enumerate(plane.lines):
        lines.append(
            (
                line.id,
                line.display_id,
                line.name,
                line.display_name,
                line.timestamp_ns,
                line.duration_ps,
            )
        )
        for ev in line.events:
            line_col.append(index)
            meta_col.append(ev.metadata_id)
            offset_col.append(ev.offset_ps)
            dur_col.append(ev.duration_ps)
            occ_col.append(ev.num_occurrences)
            if ev.stats:
                _stats(ev.stats, row, stats)
            row += 1
    meta_rows: list[tuple] = []
    meta_stats: tuple = ([], [], [], [])
    for mid, md in sorted(plane.event_metadata.items(), key=lambda item: item[0]):
        meta_rows.append((mid, md.name, md.display_name))
        if md.stats:
            _stats(md.stats, mid, meta_stats)
    plane_stats: tuple = ([], [], [], [])
    _stats(plane.stats, 0, plane_stats)
    events = (
        np.asarray(line_col, dtype=np.int32),
        np.asarray(meta_col, dtype=np.int64),
        np.asarray(offset_col, dtype=np.int64),
        np.asarray(dur_col, dtype=np.int64),
        np.asarray(occ_col, dtype=np.int64),
    )
    return {
        "id": plane.id,
        "name": plane.name,
        "lines": lines,
        "events": events,
        "stats": _typed(stats),
        "event_metadata": meta_rows,
        "metadata_stats": _typed(meta_stats),
        "stat_metadata": {k: v.name for k, v in plane.stat_metadata.items()},
        "plane_stats": _typed(plane_stats),
    }


def _stats(stats: Any, owner: int, out: tuple) -> None:
    owners, mids, whiches, values = out
    for st in stats:
        which = st.WhichOneof("value")
        if which is not None:
            owners.append(owner)
            mids.append(st.metadata_id)
            whiches.append(which)
            values.append(getattr(st, which))


def _typed(raw: tuple) -> tuple:
    """(owner, metadata_id, kind, int64, float64, string id, strings) from the lists."""
    owners, mids, whiches, values = raw
    kinds = np.asarray([_KINDS[w] for w in whiches], dtype=np.int8)
    objects = np.empty(len(values), dtype=object)
    objects[:] = values
    ints = np.zeros(len(values), dtype=np.int64)
    floats = np.zeros(len(values), dtype=np.float64)
    signed = kinds == KIND_INT64
    ints[signed] = objects[signed].astype(np.int64)
    unsigned = (kinds == KIND_UINT64) | (kinds == KIND_REF)
    ints[unsigned] = objects[unsigned].astype(np.uint64).view(np.int64)
    doubles = kinds == KIND_DOUBLE
    floats[doubles] = objects[doubles].astype(np.float64)
    # Strings and bytes are interned in first-seen order, as the compiled reader does.
    has_string = (kinds == KIND_STR) | (kinds == KIND_BYTES)
    string_ids = np.full(len(values), -1, dtype=np.int32)
    codes, strings = first_seen_codes(objects[has_string].tolist())
    string_ids[has_string] = codes
    return (
        np.asarray(owners, dtype=np.int64),
        np.asarray(mids, dtype=np.int64),
        kinds,
        ints,
        floats,
        string_ids,
        list(strings),
    )


def first_seen_codes(values: list) -> tuple:
    """(int64 codes, distinct values in first-seen order). Not ``pd.factorize``: pandas 2
    takes "\\x00" for "" (C-string comparison); the compiled reader compares whole strings."""
    position: dict = {}
    codes = [position.setdefault(value, len(position)) for value in values]
    return np.asarray(codes, dtype=np.int64), list(position)

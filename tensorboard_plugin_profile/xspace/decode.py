"""Bytes of an ``.xplane.pb`` → a columnar ``Space`` (see ``model.py``).

Reading the wire format is the only per-event loop in the program, and it
sits behind ``decode_xspace``. Two readers give the same raw form: the
compiled ``_fastdecode`` extension when it was built, else the pure-Python
``wire.read`` (set ``TBPROF_PURE_PYTHON_DECODER=1`` to force it); a test checks
that both give identical tables. Everything after the raw form is vectorised.

Usage::

    space = read_xspace(path)           # raises CorruptProfile naming the file
    space = decode_xspace(data, "name")
"""

from __future__ import annotations

import gzip
import os
import zlib
from typing import Optional

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ..errors import CorruptProfile, NotFound
from . import schema, wire
from .model import KIND_REF, Plane, Space, stat_values

try:
    from . import _fastdecode
except ImportError:  # built without a C compiler: the pure-Python reader is used
    _fastdecode = None

# Line timestamps above this (ns) are absolute epoch times: rebase them.
_ABSOLUTE_TIME_NS = 1 << 50


def fast_reader_available() -> bool:
    return _fastdecode is not None


def read_xspace(path: str) -> Space:
    """Reads and decodes one file; every failure names the file."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFound(f"Profile file {name} does not exist.") from None
    except OSError as e:
        raise CorruptProfile(f"Profile file {name} cannot be read: {e.strerror}.") from None
    return decode_xspace(data, name)


def decode_xspace(
    data: bytes, source: str = "<bytes>", pure_python: Optional[bool] = None
) -> Space:
    """Decodes serialized XSpace bytes (optionally gzip-compressed)."""
    raw = _read(_unzip(data, source), source, pure_python)
    if not raw["planes"] and not raw["hostnames"]:
        raise CorruptProfile(f"Profile file {source} holds no profiler planes (not an XSpace).")
    time_base_ns = _time_base_ns(raw["planes"])
    planes = [_build_plane(i, p, time_base_ns) for i, p in enumerate(raw["planes"])]
    space = Space(
        source=source,
        planes=planes,
        hostnames=raw["hostnames"],
        errors=raw["errors"],
        warnings=raw["warnings"],
        time_base_ns=time_base_ns,
    )
    space.nbytes = _estimate_nbytes(space)
    return space


def _unzip(data: bytes, source: str) -> bytes:
    if not data:
        raise CorruptProfile(f"Profile file {source} is empty.")
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        raise CorruptProfile(f"Profile file {source} is a damaged gzip file.") from None


def _read(data: bytes, source: str, pure_python: Optional[bool]) -> dict:
    if pure_python is None:
        pure_python = bool(os.environ.get("TBPROF_PURE_PYTHON_DECODER"))
    try:
        if _fastdecode is not None and not pure_python:
            return _fastdecode.decode(data)
        return wire.read(data)
    except (DecodeError, RuntimeError, ValueError):
        raise CorruptProfile(
            f"Profile file {source} is truncated or is not an XSpace protobuf."
        ) from None


def _time_base_ns(planes: list) -> int:
    stamps = [line[4] for plane in planes for line in plane["lines"]]
    if stamps and max(stamps) > _ABSOLUTE_TIME_NS:
        return min(stamps)
    return 0


def _columns(raw: tuple, dtypes: tuple) -> list:
    """Raw columns (numpy arrays, or bytes from the compiled reader) as numpy arrays."""
    return [
        np.frombuffer(col, dtype=dtype) if isinstance(col, bytes) else np.asarray(col, dtype=dtype)
        for col, dtype in zip(raw, dtypes)
    ]


def _long_table(owner_col: str, raw: tuple, stat_names: dict) -> pd.DataFrame:
    owners, mids, kinds, ints, floats = _columns(
        raw[:5], (np.int64, np.int64, np.int8, np.int64, np.float64)
    )
    objects = np.empty(len(kinds), dtype=object)
    objects[:] = list(raw[5])
    refs = np.flatnonzero(kinds == KIND_REF)
    if len(refs):
        objects[refs] = [stat_names.get(int(v), "") for v in ints[refs].view(np.uint64)]
    unique_mids, codes = np.unique(mids, return_inverse=True)
    names = np.asarray([stat_names.get(int(m), "") for m in unique_mids], dtype=object)
    return pd.DataFrame(
        {
            owner_col: owners,
            "stat": pd.Categorical(names[codes.reshape(-1)] if len(mids) else []),
            "kind": kinds,
            "int_value": ints,
            "float_value": floats,
            "str_value": pd.Series(objects, dtype=object),
        }
    )


def _build_plane(index: int, raw: dict, time_base_ns: int) -> Plane:
    stat_names = {int(k): v for k, v in raw["stat_metadata"].items()}
    lines = _line_table(raw["lines"])
    line_of_event, metadata_ids, offsets, durations, occurrences = _columns(
        raw["events"], (np.int32, np.int64, np.int64, np.int64, np.int64)
    )
    line_base_ps = (lines["timestamp_ns"].to_numpy() - time_base_ns) * 1000
    events = pd.DataFrame(
        {
            "line": line_of_event,
            "metadata_id": metadata_ids,
            "begin_ps": line_base_ps[line_of_event] + offsets if len(offsets) else offsets,
            "duration_ps": durations,
            "occurrences": occurrences,
        }
    )
    event_metadata = pd.DataFrame(
        [(mid, name or "", display or "") for mid, name, display in raw["event_metadata"]],
        columns=["id", "name", "display_name"],
    )
    # Sorted by id: map order on the wire is not meaningful (and differs by reader).
    event_metadata["id"] = event_metadata["id"].astype(np.int64)
    event_metadata = event_metadata.sort_values("id", kind="stable", ignore_index=True)
    _add_names(events, event_metadata)
    stats = _long_table("event", raw["stats"], stat_names)
    _add_well_known_columns(events, stats)
    plane_stats = _long_table("owner", raw["plane_stats"], stat_names)
    return Plane(
        index=index,
        id=int(raw["id"]),
        name=raw["name"] or "",
        lines=lines,
        events=events,
        stats=stats,
        event_metadata=event_metadata,
        metadata_stats=_long_table("metadata_id", raw["metadata_stats"], stat_names).sort_values(
            "metadata_id", kind="stable", ignore_index=True
        ),
        stat_names=stat_names,
        plane_stats=dict(zip(plane_stats["stat"].astype(str), stat_values(plane_stats))),
    )


def _line_table(rows: list) -> pd.DataFrame:
    columns = ["id", "display_id", "name", "display_name", "timestamp_ns", "duration_ps"]
    table = pd.DataFrame(rows, columns=columns)
    for col in ("id", "display_id", "timestamp_ns", "duration_ps"):
        table[col] = table[col].astype(np.int64)
    for col in ("name", "display_name"):
        table[col] = pd.Series(table[col].fillna("").tolist(), dtype=object)
    row_ids = np.where(table["display_id"] != 0, table["display_id"], table["id"])
    table["tid"] = (row_ids & 0xFFFFFFFF).astype(np.int64)
    labels = np.where(table["display_name"] != "", table["display_name"], table["name"])
    table["label"] = pd.Series(labels, dtype=object)
    return table


def _add_names(events: pd.DataFrame, event_metadata: pd.DataFrame) -> None:
    """Event names via the metadata table, as categoricals (unknown id → empty name)."""
    ids = event_metadata["id"].to_numpy(dtype=np.int64)
    metadata_ids = events["metadata_id"].to_numpy()
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    pos = np.minimum(np.searchsorted(sorted_ids, metadata_ids), max(len(ids) - 1, 0))
    found = sorted_ids[pos] == metadata_ids if len(ids) else np.zeros(len(events), dtype=bool)
    codes = np.where(found, order[pos] if len(ids) else 0, len(ids))
    for column in ("name", "display_name"):
        lookup = np.asarray(event_metadata[column].tolist() + [""], dtype=object)
        events[column] = pd.Categorical(lookup[codes])


def _add_well_known_columns(events: pd.DataFrame, stats: pd.DataFrame) -> None:
    """Typed columns for the well-known stats (nullable ints, str or None)."""
    n = len(events)
    rows_by_stat = stats.groupby("stat", observed=True).indices if len(stats) else {}
    empty = np.zeros(0, dtype=np.int64)
    for name in schema.WELL_KNOWN_STATS:
        positions = rows_by_stat.get(name, empty)
        where = stats["event"].to_numpy()[positions]
        if name in schema.STR_STATS:
            column = np.full(n, None, dtype=object)
            if len(positions):
                column[where] = stat_values(stats.iloc[positions])
            events[name] = pd.Series(column, dtype=object)
            continue
        # Integers keep their 64 bits: uint64 stats are bit-cast into the column.
        values = np.zeros(n, dtype=np.int64)
        mask = np.ones(n, dtype=bool)
        values[where] = stats["int_value"].to_numpy()[positions]
        mask[where] = False
        if name in schema.UINT_STATS:
            events[name] = pd.arrays.IntegerArray(values.view(np.uint64), mask)
        else:
            events[name] = pd.arrays.IntegerArray(values, mask)


def _estimate_nbytes(space: Space) -> int:
    total = 0
    for plane in space.planes:
        for table in (plane.events, plane.stats, plane.metadata_stats, plane.event_metadata):
            total += int(table.memory_usage(index=True, deep=False).sum())
        # Object columns: count their Python strings roughly.
        total += 64 * (len(plane.stats) + len(plane.metadata_stats) + len(plane.event_metadata))
    return total

"""Bytes of an ``.xplane.pb`` → a columnar ``Space`` (see ``model.py``).

This is the only code in the program that walks events one by one; everything
above it works on the columns it returns. Keep it behind ``decode_xspace`` so
it can become a compiled extension without touching its callers.

Usage::

    space = read_xspace(path)           # raises CorruptProfile naming the file
    space = decode_xspace(data, "name")
"""

from __future__ import annotations

import gzip
import os
import zlib
from typing import Any

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ..errors import CorruptProfile, NotFound
from ..protobuf import xplane_pb2
from . import schema
from .model import (
    KIND_BYTES,
    KIND_DOUBLE,
    KIND_INT64,
    KIND_REF,
    KIND_STR,
    KIND_UINT64,
    Plane,
    Space,
    stat_values,
)

_KINDS = {
    "double_value": KIND_DOUBLE,
    "uint64_value": KIND_UINT64,
    "int64_value": KIND_INT64,
    "str_value": KIND_STR,
    "bytes_value": KIND_BYTES,
    "ref_value": KIND_REF,
}
# Line timestamps above this (ns) are absolute epoch times: rebase them.
_ABSOLUTE_TIME_NS = 1 << 50


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


def decode_xspace(data: bytes, source: str = "<bytes>") -> Space:
    """Decodes serialized XSpace bytes (optionally gzip-compressed)."""
    proto = _parse(data, source)
    time_base_ns = _time_base_ns(proto)
    planes = [_decode_plane(i, p, time_base_ns) for i, p in enumerate(proto.planes)]
    space = Space(
        source=source,
        planes=planes,
        hostnames=list(proto.hostnames),
        errors=list(proto.errors),
        warnings=list(proto.warnings),
        time_base_ns=time_base_ns,
    )
    space.nbytes = _estimate_nbytes(space)
    return space


def _parse(data: bytes, source: str) -> Any:
    if not data:
        raise CorruptProfile(f"Profile file {source} is empty.")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise CorruptProfile(f"Profile file {source} is a damaged gzip file.") from None
    try:
        proto = xplane_pb2.XSpace.FromString(data)
    except (DecodeError, RuntimeError, ValueError):
        raise CorruptProfile(
            f"Profile file {source} is truncated or is not an XSpace protobuf."
        ) from None
    if not proto.planes and not proto.hostnames:
        raise CorruptProfile(f"Profile file {source} holds no profiler planes (not an XSpace).")
    return proto


def _time_base_ns(proto: Any) -> int:
    stamps = [line.timestamp_ns for plane in proto.planes for line in plane.lines]
    if stamps and max(stamps) > _ABSOLUTE_TIME_NS:
        return min(stamps)
    return 0


def _read_stats(stats: Any, owners: list, owner: int, cols: tuple) -> None:
    """Appends one XStat list to the raw long-form column lists."""
    mids, whiches, values = cols
    for st in stats:
        which = st.WhichOneof("value")
        if which is not None:
            owners.append(owner)
            mids.append(st.metadata_id)
            whiches.append(which)
            values.append(getattr(st, which))


def _long_table(owner_col: str, owners: list, cols: tuple, stat_names: dict) -> pd.DataFrame:
    """Turns the raw lists into the typed long table, by value kind."""
    mids, whiches, values = cols
    kinds = np.asarray([_KINDS[w] for w in whiches], dtype=np.int8)
    raw = np.empty(len(values), dtype=object)
    raw[:] = values
    ints = np.zeros(len(raw), dtype=np.int64)
    floats = np.zeros(len(raw), dtype=np.float64)
    strs = np.full(len(raw), None, dtype=object)
    signed = kinds == KIND_INT64
    ints[signed] = raw[signed].astype(np.int64)
    unsigned = kinds == KIND_UINT64
    ints[unsigned] = raw[unsigned].astype(np.uint64).view(np.int64)
    doubles = kinds == KIND_DOUBLE
    floats[doubles] = raw[doubles].astype(np.float64)
    texts = (kinds == KIND_STR) | (kinds == KIND_BYTES)
    strs[texts] = raw[texts]
    refs = np.flatnonzero(kinds == KIND_REF)
    strs[refs] = [stat_names.get(v, "") for v in raw[refs]]
    names = [stat_names.get(m, "") for m in mids]
    return pd.DataFrame(
        {
            owner_col: np.asarray(owners, dtype=np.int64),
            "stat": pd.Categorical(names),
            "kind": kinds,
            "int_value": ints,
            "float_value": floats,
            "str_value": pd.Series(strs, dtype=object),
        }
    )


def _decode_plane(index: int, plane: Any, time_base_ns: int) -> Plane:
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    line_rows, line_col, meta_col, begin_col, dur_col, occ_col = [], [], [], [], [], []
    owners: list = []
    cols: tuple = ([], [], [])
    row = 0
    for line_index, line in enumerate(plane.lines):
        base_ps = (line.timestamp_ns - time_base_ns) * 1000
        line_rows.append(_line_row(line))
        for ev in line.events:
            line_col.append(line_index)
            meta_col.append(ev.metadata_id)
            begin_col.append(base_ps + ev.offset_ps)
            dur_col.append(ev.duration_ps)
            occ_col.append(ev.num_occurrences)
            if ev.stats:
                _read_stats(ev.stats, owners, row, cols)
            row += 1
    stats = _long_table("event", owners, cols, stat_names)
    meta_owners: list = []
    meta_cols: tuple = ([], [], [])
    meta_rows = []
    for mid, md in plane.event_metadata.items():
        meta_rows.append((mid, md.name, md.display_name))
        if md.stats:
            _read_stats(md.stats, meta_owners, mid, meta_cols)
    plane_owners: list = []
    plane_cols: tuple = ([], [], [])
    _read_stats(plane.stats, plane_owners, 0, plane_cols)
    plane_stats_table = _long_table("owner", plane_owners, plane_cols, stat_names)
    event_metadata = pd.DataFrame(meta_rows, columns=["id", "name", "display_name"])
    events = _event_table(line_col, meta_col, begin_col, dur_col, occ_col, event_metadata)
    _add_well_known_columns(events, stats)
    return Plane(
        index=index,
        id=plane.id,
        name=plane.name,
        lines=_line_table(line_rows),
        events=events,
        stats=stats,
        event_metadata=event_metadata,
        metadata_stats=_long_table("metadata_id", meta_owners, meta_cols, stat_names),
        stat_names=stat_names,
        plane_stats=dict(
            zip(plane_stats_table["stat"].astype(str), stat_values(plane_stats_table))
        ),
    )


def _line_row(line: Any) -> tuple:
    row_id = line.display_id or line.id
    label = line.display_name or line.name
    return (
        line.id,
        line.display_id,
        line.name,
        line.display_name,
        line.timestamp_ns,
        line.duration_ps,
        row_id & 0xFFFFFFFF,
        label,
    )


def _line_table(rows: list) -> pd.DataFrame:
    columns = [
        "id",
        "display_id",
        "name",
        "display_name",
        "timestamp_ns",
        "duration_ps",
        "tid",
        "label",
    ]
    table = pd.DataFrame(rows, columns=columns)
    for col in ("id", "display_id", "timestamp_ns", "duration_ps", "tid"):
        table[col] = table[col].astype(np.int64)
    return table


def _event_table(
    line_col: list,
    meta_col: list,
    begin_col: list,
    dur_col: list,
    occ_col: list,
    event_metadata: pd.DataFrame,
) -> pd.DataFrame:
    metadata_ids = np.asarray(meta_col, dtype=np.int64)
    events = pd.DataFrame(
        {
            "line": np.asarray(line_col, dtype=np.int32),
            "metadata_id": metadata_ids,
            "begin_ps": np.asarray(begin_col, dtype=np.int64),
            "duration_ps": np.asarray(dur_col, dtype=np.int64),
            "occurrences": np.asarray(occ_col, dtype=np.int64),
        }
    )
    # Names via the metadata table (unknown metadata id → empty name).
    ids = event_metadata["id"].to_numpy(dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    pos = np.minimum(np.searchsorted(sorted_ids, metadata_ids), max(len(ids) - 1, 0))
    found = sorted_ids[pos] == metadata_ids if len(ids) else np.zeros(len(events), dtype=bool)
    codes = np.where(found, order[pos] if len(ids) else 0, len(ids))
    for column in ("name", "display_name"):
        lookup = np.asarray(event_metadata[column].tolist() + [""], dtype=object)
        events[column] = pd.Categorical(lookup[codes])
    return events


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

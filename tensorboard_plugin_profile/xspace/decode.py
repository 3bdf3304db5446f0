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
from types import ModuleType
from typing import Optional

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ..errors import CorruptProfile, NotFound
from . import schema, wire
from .model import KIND_REF, Plane, Space, stat_values

_fastdecode: Optional[ModuleType]
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
    return space_from_raw(raw, source)


def space_from_raw(raw: dict, source: str) -> Space:
    """The tables of a raw form (``wire.py`` documents it); other input formats call this too."""
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
    codes, unique_mids = pd.factorize(mids)
    names = _object_column([stat_names.get(int(m), "") for m in unique_mids])
    return pd.DataFrame(
        {
            owner_col: owners,
            "stat": pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))
            if len(mids)
            else pd.Categorical([]),
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
    event_metadata = _metadata_table(raw["event_metadata"])
    stats = _long_table("event", raw["stats"], stat_names)
    columns = {
        "line": line_of_event,
        "metadata_id": metadata_ids,
        "begin_ps": line_base_ps[line_of_event] + offsets if len(offsets) else offsets,
        "duration_ps": durations,
        "occurrences": occurrences,
    }
    columns.update(_name_columns(metadata_ids, event_metadata))
    columns.update(_well_known_columns(len(metadata_ids), stats))
    plane_stats = _long_table("owner", raw["plane_stats"], stat_names)
    metadata_stats = _long_table("metadata_id", raw["metadata_stats"], stat_names)
    return Plane(
        index=index,
        id=int(raw["id"]),
        name=raw["name"] or "",
        lines=lines,
        events=pd.DataFrame(columns, copy=False),
        stats=stats,
        event_metadata=event_metadata,
        metadata_stats=metadata_stats.sort_values("metadata_id", kind="stable", ignore_index=True),
        stat_names=stat_names,
        plane_stats=dict(zip(plane_stats["stat"].astype(str), stat_values(plane_stats))),
    )


def _object_column(values: list) -> pd.Series:
    """Strings kept as Python objects (pandas 3 would otherwise infer its str dtype)."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return pd.Series(column, dtype=object, copy=False)


def _metadata_table(rows: list) -> pd.DataFrame:
    """Event metadata sorted by id (map order on the wire means nothing, and differs by reader)."""
    rows = sorted(rows, key=lambda row: row[0])
    return pd.DataFrame(
        {
            "id": np.asarray([r[0] for r in rows], dtype=np.int64),
            "name": _object_column([r[1] or "" for r in rows]),
            "display_name": _object_column([r[2] or "" for r in rows]),
        },
        copy=False,
    )


def _line_table(rows: list) -> pd.DataFrame:
    ids = np.asarray([r[0] for r in rows], dtype=np.int64)
    display_ids = np.asarray([r[1] for r in rows], dtype=np.int64)
    names = [r[2] or "" for r in rows]
    display_names = [r[3] or "" for r in rows]
    row_ids = np.where(display_ids != 0, display_ids, ids)
    return pd.DataFrame(
        {
            "id": ids,
            "display_id": display_ids,
            "name": _object_column(names),
            "display_name": _object_column(display_names),
            "timestamp_ns": np.asarray([r[4] for r in rows], dtype=np.int64),
            "duration_ps": np.asarray([r[5] for r in rows], dtype=np.int64),
            "tid": row_ids & 0xFFFFFFFF,
            "label": _object_column([d or n for n, d in zip(names, display_names)]),
        },
        copy=False,
    )


def _name_columns(metadata_ids: np.ndarray, event_metadata: pd.DataFrame) -> dict:
    """Event names via the (id-sorted) metadata table, as categoricals; unknown id → ""."""
    ids = event_metadata["id"].to_numpy()
    pos = np.minimum(np.searchsorted(ids, metadata_ids), max(len(ids) - 1, 0))
    found = ids[pos] == metadata_ids if len(ids) else np.zeros(len(metadata_ids), dtype=bool)
    codes = np.where(found, pos, len(ids))
    columns = {}
    for column in ("name", "display_name"):
        lookup = _object_column(event_metadata[column].tolist() + [""]).to_numpy()
        # Names may repeat across ids: factorise the strings once per metadata row.
        inverse, uniques = pd.factorize(lookup)
        columns[column] = pd.Categorical.from_codes(
            inverse[codes], categories=pd.Index(uniques, dtype=object)
        )
    return columns


def _well_known_columns(n: int, stats: pd.DataFrame) -> dict:
    """Typed columns for the well-known stats (nullable ints, str or None)."""
    rows_by_stat = stats.groupby("stat", observed=True).indices if len(stats) else {}
    owners = stats["event"].to_numpy()
    ints = stats["int_value"].to_numpy()
    columns = {}
    for name in schema.WELL_KNOWN_STATS:
        positions = rows_by_stat.get(name)
        where = owners[positions] if positions is not None else owners[:0]
        if name in schema.STR_STATS:
            column = np.full(n, None, dtype=object)
            if positions is not None:
                column[where] = stat_values(stats.iloc[positions])
            columns[name] = pd.Series(column, dtype=object, copy=False)
            continue
        # Integers keep their 64 bits: uint64 stats are bit-cast into the column.
        values = np.zeros(n, dtype=np.int64)
        mask = np.ones(n, dtype=bool)
        if positions is not None:
            values[where] = ints[positions]
            mask[where] = False
        if name in schema.UINT_STATS:
            columns[name] = pd.arrays.IntegerArray(values.view(np.uint64), mask)
        else:
            columns[name] = pd.arrays.IntegerArray(values, mask)
    return columns


def _estimate_nbytes(space: Space) -> int:
    """A cheap size estimate for the cache budget: 8 bytes a cell, ~64 a string."""
    total = 0
    for plane in space.planes:
        for table in (plane.events, plane.stats, plane.metadata_stats, plane.event_metadata):
            total += 8 * table.shape[0] * table.shape[1]
        total += 64 * (len(plane.stats) + len(plane.metadata_stats) + len(plane.event_metadata))
    return total

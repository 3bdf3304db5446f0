"""Bytes of an ``.xplane.pb`` → a columnar ``Space`` (see ``model.py``).

Reading the wire format is the only per-event loop in the program, and it
sits behind ``decode_xspace``. Two readers give the same raw form: the
compiled ``_decode`` extension when it was built, else the pure-Python
``wire.read`` (``compiled.use_compiled`` chooses; set ``TBPROF_PURE_PYTHON=1`` to force
it); a test checks that both give identical tables. Everything after the raw form is
vectorised.

Usage::

    space = read_xspace(path)           # raises CorruptProfile naming the file
    space = decode_xspace(data, "name")
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Optional, Union

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

from ..common.errors import CorruptProfile, NotFound
from ..common.memsize import sparse_values
from ..kernels import compiled
from . import rawform, schema, wire
from .columns import (
    code_categorical,
    code_dtype,
    event_dtype,
    object_index,
    str_categorical,
    well_known_columns,
    zeros_view,
)
from .filebytes import FileBytes
from .limits import Limits, gunzip
from .model import KIND_REF, Plane, Space, stat_values

_decode = compiled.load(__name__)


def read_xspace(path: str) -> Space:
    """Reads and decodes one file; every failure names the file."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            data = FileBytes(f)
    except FileNotFoundError:
        raise NotFound(f"Profile file {name} does not exist.") from None
    except OSError as e:
        raise CorruptProfile(f"Profile file {name} cannot be read: {e.strerror}.") from None
    return decode_xspace(data, name)


def decode_xspace(
    data: Union[bytes, bytearray, FileBytes],
    source: str = "<bytes>",
    pure_python: Optional[bool] = None,
    limits: Optional[Limits] = None,
) -> Space:
    """Decodes serialized XSpace bytes (optionally gzip-compressed).

    ``FileBytes`` are taken: their memory goes back to the OS as soon as the walk no longer
    needs it (page by page during the compiled walk), before the tables are built. Bytes
    still arriving (``FileBytes.arriving``) are walked as they come; the tables are built
    only once all have come, and a download that fails raises its own error.
    Raises ``CorruptProfile`` on bad bytes and ``ProfileTooLarge`` past a limit.
    """
    limits = limits or Limits.from_env()
    arrival = data.arrival if isinstance(data, FileBytes) else None
    discard = isinstance(data, FileBytes) and data.discardable
    buffer = data.take() if isinstance(data, FileBytes) else data
    del data  # a FileBytes' bytes are now only ours
    try:
        raw, serialized = _walk(buffer, source, pure_python, limits, discard, arrival)
    except BaseException:
        if arrival is not None:
            arrival.finish()  # a failed download's own error comes first
        raise
    del buffer
    if arrival is not None:
        arrival.finish()
    if not raw["planes"] and not raw["hostnames"]:
        raise CorruptProfile(f"Profile file {source} holds no profiler planes (not an XSpace).")
    limits.check_decoded(
        source,
        sum(_length(p["events"][1], 8) for p in raw["planes"]),
        sum(_length(p["stats"][2], 1) for p in raw["planes"]),
        serialized,
    )
    return space_from_raw(raw, source)


def _walk(buffer, source: str, pure_python, limits: Limits, discard: bool, arrival) -> tuple:
    """(raw form, serialized bytes); ``arrival``: the bytes are still coming, in order."""
    if not len(buffer):
        raise CorruptProfile(f"Profile file {source} is empty.")
    streamed = arrival is not None and _can_stream(pure_python)
    if arrival is not None and not streamed:
        arrival.finish()  # the pure-Python reader takes whole files only
    if arrival is not None:
        arrival.wait_for(2)
    if buffer[:2] == b"\x1f\x8b":
        if streamed:
            arrival.finish()  # inflated whole
            streamed = False
        # The inflated bytearray is ours alone: its pages can go during the walk too.
        buffer, discard = gunzip(buffer, source, limits), True
    progress = arrival.progress if streamed else None
    return _read(buffer, source, pure_python, limits, discard, progress), len(buffer)


def _can_stream(pure_python: Optional[bool]) -> bool:
    return compiled.use_compiled(_decode, pure_python) and hasattr(_decode, "arrive")


def space_from_raw(raw: dict, source: str) -> Space:
    """The tables of a raw form (``rawform.py`` documents it); other input formats call this
    too."""
    if not rawform.is_final(raw):
        raw = rawform.finish(raw)
    time_base_ns = raw["time_base_ns"]
    planes = []
    for i in range(len(raw["planes"])):
        # Each plane's raw columns are dropped as soon as its tables exist.
        planes.append(_build_plane(i, raw["planes"][i]))
        raw["planes"][i] = None
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


def _read(
    data: Union[bytes, bytearray, memoryview],
    source: str,
    pure_python: Optional[bool],
    limits: Limits,
    discard: bool = False,
    arrived=None,
) -> dict:
    try:
        if compiled.use_compiled(_decode, pure_python):
            return compiled_raw(
                _decode, data, limits.max_events, _threads(), discard, arrived, _raw_bytes
            )
        return wire.read(bytes(data), limits.max_events)
    except OverflowError as e:
        raise limits.too_many_events(source, int(str(e).split()[0])) from None
    except (DecodeError, RuntimeError, ValueError):
        raise CorruptProfile(
            f"Profile file {source} is truncated or is not an XSpace protobuf."
        ) from None


def compiled_raw(
    module: ModuleType,
    data,
    max_events: int = -1,
    threads: int = 0,
    discard: bool = False,
    arrived=None,
    alloc=None,
) -> dict:
    """The compiled reader's raw form (metadata ids int32, or int64 when some id needs it).
    ``discard``: ``data`` is anonymous memory that nothing reads again (``FileBytes``), and
    its pages go back to the OS as the walk passes them. ``arrived``: ``data`` is still
    being written in order (``Arrival.progress``); the walk follows it. ``alloc(nbytes)``:
    the memory of the columns (``_raw_bytes``; bytearrays without it)."""
    return module.decode(data, max_events, threads, discard, arrived, alloc)


def _raw_bytes(nbytes: int) -> np.ndarray:
    """A column's memory for the compiled reader: numpy bytes, which inside
    ``blockpool.reusing()`` (as the service decodes) are the pool's blocks, so the decoded
    columns, once freed, become later passes' arrays instead of pages handed back to the OS
    and faulted in again (docs/decoder.md, "Memory")."""
    return np.empty(nbytes, dtype=np.uint8)


def _is_raw_bytes(column) -> bool:
    """A column of the compiled reader: bytes (``_raw_bytes``, or a bytearray) to view in
    its dtype; the pure-Python reader's columns are arrays of theirs (never uint8)."""
    if isinstance(column, np.ndarray):
        return column.dtype == np.uint8
    return isinstance(column, (bytes, bytearray))


def _view(column, dtype) -> np.ndarray:
    """A compiled reader's byte column as values of ``dtype`` (no copy)."""
    if isinstance(column, np.ndarray):
        return column.view(dtype)
    return np.frombuffer(column, dtype=dtype)


def _length(column, itemsize: int) -> int:
    """Rows of a raw column (a byte buffer from the compiled reader, else an array)."""
    return len(column) // itemsize if _is_raw_bytes(column) else len(column)


def _threads() -> int:
    """Worker threads of the compiled reader (0: one per core)."""
    value = os.environ.get(compiled.DECODE_THREADS_ENV, "")
    return int(value) if value.isdigit() else 0


def _columns(raw: tuple, dtypes: tuple) -> list:
    """Raw columns (numpy arrays, or byte buffers from the compiled reader) as numpy arrays."""
    return [
        _view(col, dtype) if _is_raw_bytes(col) else np.asarray(col, dtype=dtype)
        for col, dtype in zip(raw, dtypes)
    ]


def _id_column(column, n: int) -> np.ndarray:
    """The events' metadata ids: int32 where every id fits (both readers narrow them
    then: 4 bytes an event less), else int64; int32 in a plane without events."""
    if not n:
        return np.zeros(0, dtype=np.int32)
    if _is_raw_bytes(column):
        return _view(column, np.int32 if len(column) == 4 * n else np.int64)
    return np.asarray(column)


def _long_table(owner_col: str, raw: dict, key: str, stat_names: dict, events: int = -1):
    """The long stats table of ``raw[key]`` (taken out of ``raw``: each raw column is freed
    once its final column exists); ``str_value`` holds codes into the distinct strings. With
    ``events`` (the plane's event count) the owners are event rows, as narrow as they fit."""
    table = raw.pop(key)
    owners, mids, kinds, ints, string_ids = _columns(
        table[:4] + table[5:6], (np.int64, np.int64, np.int8, np.int64, np.int32)
    )
    floats = None if table[4] is None else _columns(table[4:5], (np.float64,))[0]
    strings = list(table[6])
    del table
    if events >= 0:
        owners = owners.astype(event_dtype(events), copy=False)
    stat = _stat_column(mids, stat_names)
    del mids
    refs = np.flatnonzero(kinds == KIND_REF)
    if len(refs):
        # A ref value names a stat: its name joins the string table.
        ref_ids, inverse = _sorted_factorize(ints[refs])
        strings, ref_codes = _with_names(
            strings, [stat_names.get(int(v), "") for v in ref_ids.view(np.uint64)]
        )
        if not string_ids.flags.writeable:  # the compiled reader's buffers are ours to edit
            string_ids = string_ids.copy()
        string_ids[refs] = ref_codes[inverse]
    columns = {owner_col: owners, "stat": stat, "kind": kinds, "int_value": ints}
    columns["float_value"] = _sparse_floats(floats, len(owners))
    del floats
    columns["str_value"] = str_categorical(string_ids, strings)
    del string_ids
    return pd.DataFrame(columns, copy=False)


def _stat_column(mids: np.ndarray, stat_names: dict) -> pd.Categorical:
    """Stat names by metadata id; two ids may share a name (or have none): the category is
    the name. Codes are gathered in their final width (no int64 column of them)."""
    codes, unique_mids = pd.factorize(mids)
    name_codes, names = pd.factorize(
        object_index([stat_names.get(int(m), "") for m in unique_mids]), sort=False
    )
    return code_categorical(
        name_codes.astype(code_dtype(len(names)))[codes], object_index(list(names))
    )


def _sparse_floats(floats: Optional[np.ndarray], n: int) -> np.ndarray:
    """The float column with only the pages of its double rows resident (both readers write
    0.0 on every other row; real profiles have few or no doubles: the compiled reader then
    gives None)."""
    if floats is None:
        return sparse_values(n, np.float64, np.zeros(0, np.intp), np.zeros(0, np.float64))
    rows = np.flatnonzero(floats.view(np.int64))  # -0.0 is a value too
    return sparse_values(len(floats), np.float64, rows, floats[rows])


def _sorted_factorize(values: np.ndarray) -> tuple:
    """``np.unique(values, return_inverse=True)`` by hashing: no sort of every row."""
    codes, uniques = pd.factorize(values)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return uniques[order], rank[codes]


def _with_names(strings: list, names: list) -> tuple:
    """The string table extended by these names, and each name's code in it."""
    position = {s: i for i, s in enumerate(strings) if isinstance(s, str)}
    added: list = []
    codes = []
    for name in names:
        code = position.get(name)
        if code is None:
            code = position[name] = len(strings) + len(added)
            added.append(name)
        codes.append(code)
    return strings + added, np.asarray(codes, dtype=np.int32)


def _build_plane(index: int, raw: dict) -> Plane:
    stat_names = {int(k): v for k, v in raw["stat_metadata"].items()}
    line_of_event, begin_ps, durations = _columns(
        raw["events"][:1] + raw["events"][2:4], (np.int32, np.int64, np.int64)
    )
    metadata_ids = _id_column(raw["events"][1], len(line_of_event))
    occurrences = raw["events"][4]
    stats = _long_table("event", raw, "stats", stat_names, len(line_of_event))
    columns = {
        "line": line_of_event,
        "metadata_id": metadata_ids,
        "begin_ps": begin_ps,
        "duration_ps": durations,
        # zero on nearly every profile: then a view that costs no memory
        "occurrences": zeros_view(len(metadata_ids))
        if occurrences is None
        else _columns((occurrences,), (np.int64,))[0],
    }
    columns.update(_name_columns(raw.pop("names")))  # unused raw codes freed here
    columns.update(well_known_columns(len(metadata_ids), stats, schema.COLUMN_STATS))
    plane_stats = _long_table("owner", raw, "plane_stats", stat_names)
    metadata_stats = _long_table("metadata_id", raw, "metadata_stats", stat_names)
    return Plane(
        index=index,
        id=int(raw["id"]),
        name=raw["name"] or "",
        lines=_line_table(raw["lines"]),
        events=pd.DataFrame(columns, copy=False),
        stats=stats,
        event_metadata=_metadata_table(raw["event_metadata"]),
        metadata_stats=metadata_stats.sort_values("metadata_id", kind="stable", ignore_index=True),
        stat_names=stat_names,
        plane_stats=dict(zip(plane_stats["stat"].astype(str), stat_values(plane_stats))),
    )


def _object_column(values: list) -> pd.Series:
    """Strings kept as Python objects (pandas 3 would otherwise infer its str dtype)."""
    return pd.Series(object_index(values), dtype=object, copy=False)


def _metadata_table(rows: list) -> pd.DataFrame:
    """Event metadata rows, already in id order (both readers sort the map)."""
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


def _name_columns(names: tuple) -> dict:
    """Event names and display names as categoricals (codes from the reader's layout). The
    display names of a plane are usually all "" (one category): their codes are then a
    read-only view of one 0 that costs no memory per event."""
    name_codes, display_codes, name_strings, display_strings = names
    columns = {}
    for column, codes, strings in (
        ("name", name_codes, name_strings),
        ("display_name", display_codes, display_strings),
    ):
        dtype = code_dtype(len(strings))
        codes = _view(codes, dtype) if _is_raw_bytes(codes) else codes
        if column == "display_name" and len(strings) == 1 and len(codes) > 1:
            codes = np.broadcast_to(dtype(0), (len(codes),))
        columns[column] = code_categorical(codes, object_index(strings))
    return columns


def _estimate_nbytes(space: Space) -> int:
    """Bytes held by the decoded tables (broadcast columns count nothing, a mask shared by
    several columns once)."""
    total = 0
    seen: set = set()
    for plane in space.planes:
        for table in (plane.events, plane.stats, plane.metadata_stats, plane.event_metadata):
            total += sum(_column_nbytes(table[c].array, seen) for c in table.columns)
        for table in (plane.stats, plane.metadata_stats):
            total += sum(sys.getsizeof(s) for s in table["str_value"].cat.categories)
        total += 100 * len(plane.event_metadata)
    return total


def _column_nbytes(array, seen: set) -> int:
    parts = [array.codes] if isinstance(array, pd.Categorical) else []
    if hasattr(array, "_data") and hasattr(array, "_mask"):
        mask = array._mask  # kept by the column (unlike a temporary view): its id is stable
        parts = [array._data] + ([] if id(mask) in seen else [mask])
        seen.add(id(mask))
    if not parts:
        return int(np.asarray(array).nbytes)
    # A broadcast view (stride 0) holds one value, not one per row.
    return sum(p.nbytes for p in parts if not (p.ndim and p.strides[0] == 0))

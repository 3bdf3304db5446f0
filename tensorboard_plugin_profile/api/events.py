"""Trace events as DataFrames, built from the decoded event columns in batches.

Each batch is a slice of one plane's event table: the host, plane and line as
categoricals (one code per event, the names stored once), the event name as the plane's
own categorical, ``start_ps`` and ``duration_ps`` as int64, and each well-known stat that
some event of the plane carries (``xspace.schema.COLUMN_STATS``: ``group_id``, ``tf_op``,
``correlation_id``...). Nothing here makes a Python object per event: filters run on
whole columns, and a name filter runs once per distinct name, then reaches the events
through their codes.

Times are the decoder's: picoseconds on the host's clock (``Space.time_base_ns`` is
subtracted only where a file's absolute times would overflow int64).

Usage::

    for batch in event_batches([("vm", space)], names="conv", batch_rows=100_000):
        total += batch.duration_ps.sum()
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..common.errors import InvalidArgument
from ..xspace import schema
from ..xspace.columns import stat_rows
from ..xspace.event_stats import typed_column
from ..xspace.model import KIND_DOUBLE, KIND_INT64, KIND_UINT64

BATCH_ROWS = 1_000_000
CORE_COLUMNS = ("host", "plane", "line", "name", "start_ps", "duration_ps")
Names = Union[None, str, Sequence[str]]


def event_batches(
    hosts: Iterable[tuple],
    start_ps: Optional[int] = None,
    end_ps: Optional[int] = None,
    names: Names = None,
    batch_rows: int = BATCH_ROWS,
    stats: Sequence[str] = (),
) -> Iterator[pd.DataFrame]:
    """DataFrames of at most ``batch_rows`` events, host by host and plane by plane.

    ``hosts`` yields (host name, Space); it is read lazily, so a caller may decode one
    host at a time. An event is kept when it overlaps [start_ps, end_ps) and its name
    matches ``names``: a regular expression (searched, as the trace viewer does) or a
    list of exact names. Beside the well-known stats, ``stats`` names other stats to read
    as columns (a Chrome trace's ``args``: PyTorch's ``correlation``, ``stream``...).
    """
    if batch_rows < 1:
        raise InvalidArgument(f"batch_rows must be at least 1, not {batch_rows}.")
    matcher = _name_matcher(names)
    for host, space in hosts:
        for plane in space.planes:
            if not len(plane.events):
                continue
            rows = _kept_rows(plane, start_ps, end_ps, matcher)  # None: every event
            count = len(plane.events) if rows is None else len(rows)
            columns = _stat_columns(plane, stats) if count else {}
            for first in range(0, count, batch_rows):
                last = min(first + batch_rows, count)
                part = slice(first, last) if rows is None else rows[first:last]
                yield _batch(host, plane, part, columns)


def concat_batches(batches: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One DataFrame of all batches; categoricals stay categoricals (their names unioned)."""
    batches = list(batches)
    if not batches:
        return empty_events()
    present = list(dict.fromkeys(c for b in batches for c in b.columns))
    order = CORE_COLUMNS + schema.WELL_KNOWN_STATS
    columns = [c for c in order if c in present] + [c for c in present if c not in order]
    data = {}
    for column in columns:
        parts = [
            b[column] if column in b else _missing_like(batches, column, len(b)) for b in batches
        ]
        if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
            data[column] = pd.Series(union_categoricals(parts, ignore_order=True))
        else:
            data[column] = pd.concat(parts, ignore_index=True)
    return pd.DataFrame(data)


def empty_events() -> pd.DataFrame:
    """The columns of ``event_batches`` for no events."""
    empty = pd.Categorical([], categories=pd.Index([], dtype=object))
    return pd.DataFrame(
        {
            "host": empty,
            "plane": empty,
            "line": empty,
            "name": empty,
            "start_ps": np.zeros(0, np.int64),
            "duration_ps": np.zeros(0, np.int64),
        }
    )


def _name_matcher(names: Names) -> Any:
    """A function from a categorical's categories to a boolean per category."""
    if names is None:
        return None
    if isinstance(names, str):
        try:
            pattern = re.compile(names)
        except re.error as e:
            raise InvalidArgument(
                f"names={names!r} is not a valid regular expression: {e}."
            ) from None
        return lambda categories: np.fromiter(
            (pattern.search(str(c)) is not None for c in categories), bool, len(categories)
        )
    wanted = set(names)
    return lambda categories: np.asarray(categories.isin(wanted), dtype=bool)


def _kept_rows(plane: Any, start_ps: Optional[int], end_ps: Optional[int], matcher: Any) -> Any:
    events = plane.events
    keep = np.ones(len(events), dtype=bool)
    if start_ps is not None or end_ps is not None:
        begin = events["begin_ps"].to_numpy()
        if end_ps is not None:
            keep &= begin < end_ps
        if start_ps is not None:
            keep &= begin + events["duration_ps"].to_numpy() >= start_ps
    if matcher is not None:
        names = events["name"].array
        hit = np.append(matcher(names.categories), False)  # code -1 (no name) -> False
        keep &= hit[names.codes]
    return None if keep.all() else np.flatnonzero(keep)


def _batch(host: str, plane: Any, rows: Any, stat_columns: dict) -> pd.DataFrame:
    events = plane.events.iloc[rows]
    n = len(events)
    line_names, line_codes = _line_codes(plane)
    data = {
        "host": _constant(host, n),
        "plane": _constant(plane.name, n),
        "line": pd.Categorical.from_codes(line_codes[events["line"].to_numpy()], line_names),
        "name": events["name"].array,
        "start_ps": events["begin_ps"].to_numpy(),
        "duration_ps": events["duration_ps"].to_numpy(),
    }
    for stat, column in stat_columns.items():
        data[stat] = column[rows]
    return pd.DataFrame(data, index=pd.RangeIndex(n))


def _stat_columns(plane: Any, extra: Sequence[str]) -> dict:
    """Name -> column over the plane's events, of each stat some event of it carries."""
    out = {}
    kept_as_rows = stat_rows(plane.stats, schema.ROW_STATS) if _has_stat_rows(plane) else {}
    for stat in schema.WELL_KNOWN_STATS:
        if stat in plane.events:
            column = plane.events[stat].array
        elif stat in kept_as_rows:
            column = typed_column(plane, stat).array
        else:
            continue
        if column.isna().all():
            continue  # no event has it: no column of missing values in every batch
        out[stat] = column
    for stat in extra:
        if stat not in out and _has_stat_rows(plane):
            rows = stat_rows(plane.stats, [stat]).get(stat)
            if rows is not None:
                out[stat] = _any_stat(plane, rows)
    return out


def _has_stat_rows(plane: Any) -> bool:
    return bool(len(plane.stats)) and isinstance(plane.stats["stat"].dtype, pd.CategoricalDtype)


def _any_stat(plane: Any, rows: np.ndarray) -> Any:
    """One stat's column over the events from its long-form rows (the last value wins):
    categorical when every value is text, else float64 or nullable Int64."""
    stats = plane.stats
    n = plane.num_events
    events = stats["event"].to_numpy()[rows]
    kinds = stats["kind"].to_numpy()[rows]
    ints = np.isin(kinds, (KIND_INT64, KIND_UINT64))
    doubles = kinds == KIND_DOUBLE
    if not (ints | doubles).any():  # text: the table's own string codes
        text = stats["str_value"].array
        codes = np.full(n, -1, dtype=np.int32)
        codes[events] = text.codes[rows]
        return pd.Categorical.from_codes(codes, text.categories)
    numeric = ints | doubles
    events, kinds, rows = events[numeric], kinds[numeric], rows[numeric]
    if doubles[numeric].any():
        values = np.full(n, np.nan)
        as_float = stats["float_value"].to_numpy()[rows]
        as_int = stats["int_value"].to_numpy()[rows].astype(np.float64)
        values[events] = np.where(kinds == KIND_DOUBLE, as_float, as_int)
        return values
    values = np.zeros(n, dtype=np.int64)
    missing = np.ones(n, dtype=bool)
    values[events] = stats["int_value"].to_numpy()[rows]
    missing[events] = False
    return pd.arrays.IntegerArray(values, missing)


def _line_codes(plane: Any) -> tuple:
    """(distinct line names, the code of each line row): names a line by its display name."""
    lines = plane.lines
    names = lines["display_name"].fillna("").astype(str).to_numpy(dtype=object)
    fallback = lines["name"].fillna("").astype(str).to_numpy(dtype=object)
    names = np.where(names == "", fallback, names)
    codes, distinct = pd.factorize(names)
    return pd.Index(distinct, dtype=object), codes.astype(np.int32)


def _constant(value: str, n: int) -> pd.Categorical:
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), pd.Index([value], dtype=object))


def _missing_like(batches: list, column: str, n: int) -> pd.Series:
    """An all-missing column of ``column``'s dtype in the batches that have it."""
    dtype = next(b[column].dtype for b in batches if column in b)
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.full(n, -1, dtype=np.int8)
        return pd.Series(pd.Categorical.from_codes(codes, dtype.categories))
    missing = None if dtype == np.dtype(object) else pd.NA
    return pd.Series(missing, index=pd.RangeIndex(n), dtype=dtype)

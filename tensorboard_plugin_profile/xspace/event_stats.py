"""An event's stats in table order, ``group_id`` included wherever it is kept; and the
typed column of a well-known stat, wherever it is kept.

Sparse well-known stats (``schema.ROW_STATS``: step markers, producer/consumer ends, XLA
launches) stay rows of ``Plane.stats`` and are no event column: ``typed_column`` makes
one for a read, ``typed_column_at`` one at given rows, ``set_rows`` the rows where a stat
is set, ``int_stat`` the rows that carry an integer one and their values.

Preprocessing keeps ``group_id`` only as the events' column (``Plane.implicit_group``):
millions of grouped events would otherwise repeat it as rows of the long stats table.
Readers that list an event's stats as arguments (trace details, the trace viewer's
JSON) read them here, and get the rows they would get if ``group_id`` were a row: in
its place among the event's other stats (``ImplicitGroups``), kind int64.

Usage::

    table = stats_in_order(plane, event=12)   # long-form rows of event 12
    table = stats_in_order(plane)              # every event's, sorted by event
    steps = typed_column(plane, "step_num")    # a stat kept only as rows, as a column
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from . import schema
from .columns import (
    code_categorical,
    empty_int_column,
    empty_str_column,
    object_index,
    stat_rows,
    well_known_columns,
)
from .model import KIND_INT64, Plane


def typed_column(plane: Plane, name: str) -> pd.Series:
    """A well-known stat's typed column aligned with the events (missing where absent).

    The events' own column if they have it; a stat kept only as stats rows
    (``schema.ROW_STATS``) gets one made for this read, as the decoder would make it:
    an integer stat's values take pages only near its rows, a string stat is coded.
    Callers keep it only as long as they read it."""
    if name in plane.events:
        return plane.events[name]
    n, stats = plane.num_events, plane.stats
    if _has_rows(stats):
        column = well_known_columns(n, stats, [name])[name]
    else:
        column = _empty_column(name, n)
    return pd.Series(column, index=plane.events.index, name=name, copy=False)


def _empty_column(name: str, n: int):
    return empty_str_column(n) if name in schema.STR_STATS else empty_int_column(n)


def typed_column_at(plane: Plane, name: str, rows: np.ndarray) -> pd.Series:
    """``typed_column(plane, name)`` at the increasing event ``rows`` only (index 0..), made
    from the stats rows of those events: no code or mask per event of the plane. A string
    stat's categories are the values at those rows."""
    rows = np.asarray(rows, dtype=np.int64)
    if name in plane.events:
        return plane.events[name].iloc[rows].reset_index(drop=True)
    found = _table_rows(plane, name)
    if found is None:
        return pd.Series(_empty_column(name, len(rows)), name=name)
    events = plane.stats["event"].to_numpy()[found]
    at = np.minimum(np.searchsorted(rows, events), max(len(rows) - 1, 0))
    hit = (rows[at] == events) if len(rows) else np.zeros(len(events), dtype=bool)
    subset = plane.stats.iloc[found[hit]].reset_index(drop=True)
    subset["event"] = at[hit]
    return pd.Series(well_known_columns(len(rows), subset, [name])[name], name=name)


def stat_events(plane: Plane, name: str) -> np.ndarray:
    """Increasing event rows with the stat: where its column is set, or (a stat kept as
    rows) every event with a row of it (a value that is no string under a string stat's
    name included; ``typed_column_at`` tells which are set)."""
    if name in plane.events:
        return np.flatnonzero(plane.events[name].notna().to_numpy())
    found = _table_rows(plane, name)
    if found is None:
        return _NO_ROWS
    return np.unique(plane.stats["event"].to_numpy()[found]).astype(np.int64)


def set_rows(plane: Plane, name: str) -> np.ndarray:
    """Increasing event rows where the stat is set (``typed_column``'s present rows), read
    at the events that have a row of it only."""
    rows = stat_events(plane, name)
    return rows[typed_column_at(plane, name, rows).notna().to_numpy()]


def table_rows(plane: Plane, names) -> dict:
    """Stat name -> rows of the plane's stats table that hold it, in table order (names
    without rows left out): one pass over the table for all of them."""
    return stat_rows(plane.stats, names) if _has_rows(plane.stats) else {}


def _table_rows(plane: Plane, name: str) -> Optional[np.ndarray]:
    """Rows of the plane's stats table that hold ``name`` (None if none)."""
    return stat_rows(plane.stats, [name]).get(name) if _has_rows(plane.stats) else None


def _has_rows(stats: pd.DataFrame) -> bool:
    """Whether a stats table has rows to read (a table of categorical stat names)."""
    return bool(len(stats)) and isinstance(stats["stat"].dtype, pd.CategoricalDtype)


def int_stat(plane: Plane, name: str) -> tuple:
    """(increasing event rows, int64 values) of an integer well-known stat where it is set,
    uint64 values bit-cast; from the events' column or the stats rows (the last value of an
    event wins, as in a column), without a column: only the rows that carry it are read."""
    return int_stats(plane, [name])[name]


def int_stats(plane: Plane, names) -> dict:
    """``int_stat`` of each name; the stats kept as rows are found in one pass over the
    stats table, not one pass each."""
    out = {}
    as_rows = [name for name in names if name not in plane.events]
    found_rows = stat_rows(plane.stats, as_rows) if as_rows and _has_rows(plane.stats) else {}
    for name in names:
        if name in plane.events:
            out[name] = _column_values(plane.events[name].array)
        else:
            out[name] = _row_values(plane.stats, found_rows.get(name))
    return out


def _column_values(array) -> tuple:
    absent = np.asarray(array.isna(), dtype=bool)
    if not len(absent) or absent.all():  # no search for the usual absent stat
        return _NO_ROWS, _NO_ROWS
    rows = np.flatnonzero(np.logical_not(absent, out=absent))
    dtype = np.uint64 if str(array.dtype).startswith("UInt") else np.int64
    return rows, np.asarray(array[rows].to_numpy(dtype=dtype)).view(np.int64)


def _row_values(stats: pd.DataFrame, found: Optional[np.ndarray]) -> tuple:
    if found is None:
        return _NO_ROWS, _NO_ROWS
    events = stats["event"].to_numpy()[found]  # int32 in an edited table: widened at the end
    values = stats["int_value"].to_numpy()[found]
    # Decoded and merged tables are sorted by event: one comparison instead of a sort and
    # two gathers; a table in any other order is sorted (stably: the last value wins).
    if len(events) > 1 and (events[1:] < events[:-1]).any():
        order = np.argsort(events, kind="stable")
        events, values = events[order], values[order]
    last = np.ones(len(events), dtype=bool)
    last[:-1] = events[1:] != events[:-1]
    return events[last].astype(np.int64), values[last].astype(np.int64, copy=False)


_NO_ROWS = np.zeros(0, dtype=np.int64)


def int_stat_at(plane: Plane, name: str, at: np.ndarray, missing: int = 0) -> np.ndarray:
    """int64 values of an integer well-known stat at the event rows ``at`` (``int_stat``'s,
    ``missing`` where an event does not carry it)."""
    rows, values = int_stat(plane, name)
    at = np.asarray(at, dtype=np.int64)
    if not len(rows):
        return np.full(len(at), missing, dtype=np.int64)
    k = np.minimum(np.searchsorted(rows, at), len(rows) - 1)
    return np.where(rows[k] == at, values[k], np.int64(missing))


def stats_in_order(plane: Plane, event: Optional[int] = None) -> pd.DataFrame:
    """The long stats rows of one event (``event``) or of all (None), in table order."""
    stats = plane.stats
    if event is not None:
        stats = stats[(stats["event"] == event).to_numpy()]
    if plane.implicit_group is None or schema.GROUP_ID not in plane.events:
        return stats
    group = plane.events[schema.GROUP_ID]
    if event is None:
        grouped = np.flatnonzero(group.notna().to_numpy())
    else:
        grouped = np.array([event] if pd.notna(group.iloc[event]) else [], dtype=np.int64)
    if not len(grouped):
        return stats
    values = group.to_numpy(dtype=np.int64, na_value=-1)[grouped]
    at = _insert_positions(plane, stats["event"].to_numpy(), grouped)
    return _with_group_rows(stats, at, grouped, values)


def _insert_positions(plane: Plane, owners: np.ndarray, grouped: np.ndarray) -> np.ndarray:
    """Row of ``owners`` (sorted) before which each grouped event's ``group_id`` goes."""
    first = np.searchsorted(owners, grouped, side="left")
    count = np.searchsorted(owners, grouped, side="right") - first
    implicit = plane.implicit_group
    assert implicit is not None
    if len(implicit.events):
        found = np.searchsorted(implicit.events, grouped)
        found = np.minimum(found, len(implicit.events) - 1)
        hit = implicit.events[found] == grouped
        count[hit] = np.minimum(count[hit], implicit.ranks[found[hit]])
    return first + count


def _with_group_rows(stats: pd.DataFrame, at, events, values) -> pd.DataFrame:
    """``stats`` with one int64 ``group_id`` row per event inserted before rows ``at``."""
    names = stats["stat"].array
    categories = list(names.categories)
    if schema.GROUP_ID not in categories:
        categories.append(schema.GROUP_ID)
    code = categories.index(schema.GROUP_ID)
    strings = stats["str_value"].array
    width = np.int32 if len(categories) < 2**31 else np.int64

    def insert(column, value):
        return np.insert(np.asarray(column), at, value)

    return pd.DataFrame(
        {
            "event": insert(stats["event"].to_numpy(), events),
            "stat": code_categorical(
                insert(names.codes.astype(width), code), object_index(categories)
            ),
            "kind": insert(stats["kind"].to_numpy(), KIND_INT64),
            "int_value": insert(stats["int_value"].to_numpy(), values),
            "float_value": insert(stats["float_value"].to_numpy(), 0.0),
            "str_value": code_categorical(
                insert(strings.codes.astype(np.int32), -1), strings.categories
            ),
        }
    )

"""Columns of Chrome-trace events that the ProfilerHook and PyTorch analyses read.

The Chrome-trace reader keeps each event's category as a ``cat`` stat of its event
metadata and its ``args`` as event stats. ``events_of`` gathers, for every plane, one
frame of events with ``plane``, ``line``, ``tid``, ``name``, ``cat``, ``begin_ps``,
``end_ps``, ``duration_ps`` and the requested numeric / string args as columns
(NaN / None where absent). String work happens once per distinct metadata row.

Usage::

    ev = events_of(space, numbers=("correlation",), strings=("Input Dims",))
    kernels = ev[ev["cat"] == "kernel"]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..xspace.model import KIND_DOUBLE, KIND_STR, Plane, Space

CATEGORY = "cat"


def plane_categories(plane: Plane) -> np.ndarray:
    """Per event: its category (from the metadata's ``cat`` stat), '' when absent."""
    ms = plane.metadata_stats
    rows = ms[ms["stat"] == CATEGORY]
    ids = plane.event_metadata["id"].to_numpy()
    lookup = pd.Series(rows["str_value"].to_numpy(dtype=object), index=rows["metadata_id"])
    cat_of_meta = lookup.reindex(ids).fillna("").to_numpy(dtype=object)
    pos = np.searchsorted(ids, plane.events["metadata_id"].to_numpy())
    pos = np.minimum(pos, max(len(ids) - 1, 0))
    return cat_of_meta[pos] if len(ids) else np.full(len(plane.events), "", dtype=object)


def numeric_stat(plane: Plane, name: str) -> np.ndarray:
    """One numeric arg per event as float64 (NaN where absent; last value wins)."""
    rows = _stat_rows(plane.stats, name)
    out = np.full(len(plane.events), np.nan)
    if len(rows):
        st = plane.stats
        kinds = st["kind"].to_numpy()[rows]
        values = np.where(
            kinds == KIND_DOUBLE,
            st["float_value"].to_numpy()[rows],
            st["int_value"].to_numpy()[rows].astype(np.float64),
        )
        numeric = kinds != KIND_STR
        out[st["event"].to_numpy()[rows][numeric]] = values[numeric]
    return out


def string_stat(plane: Plane, name: str) -> np.ndarray:
    """One string arg per event (None where absent)."""
    st = plane.stats
    rows = _stat_rows(st, name)
    out = np.full(len(plane.events), None, dtype=object)
    if len(rows):
        rows = rows[st["kind"].to_numpy()[rows] == KIND_STR]
        out[st["event"].to_numpy()[rows]] = _take_strings(st["str_value"], rows)
    return out


def _stat_rows(st: pd.DataFrame, name: str) -> np.ndarray:
    """Positions of the stat rows named ``name``: one comparison of the column's codes, and
    no copy of the whole table (``st[st["stat"] == name]`` copied every column)."""
    column = st["stat"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        code = column.cat.categories.get_indexer([name])[0]
        if code < 0:
            return np.zeros(0, dtype=np.intp)
        return np.flatnonzero(column.array.codes == code)
    return np.flatnonzero((column == name).to_numpy())


def _take_strings(column: pd.Series, rows: np.ndarray) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.array.codes[rows]
        table = column.cat.categories.to_numpy(dtype=object)
        if not len(table):
            return np.full(len(rows), np.nan, dtype=object)
        # NaN where a row has no string, as the categorical's own object copy gave.
        return np.where(codes >= 0, table[codes], np.nan)
    return column.to_numpy(dtype=object)[rows]


def events_of(
    space: Space, numbers: Sequence[str] = (), strings: Sequence[str] = ()
) -> pd.DataFrame:
    frames = []
    for plane in space.planes:
        ev = plane.events
        if not len(ev):
            continue
        begin = ev["begin_ps"].to_numpy()
        duration = ev["duration_ps"].to_numpy()
        columns = {
            "plane": np.full(len(ev), plane.index),
            "line": ev["line"].to_numpy(),
            "tid": plane.lines["tid"].to_numpy()[ev["line"].to_numpy()],
            "name": ev["name"].astype(object).to_numpy(),
            CATEGORY: plane_categories(plane),
            "begin_ps": begin,
            "end_ps": begin + duration,
            "duration_ps": duration,
        }
        for stat in numbers:
            columns[stat] = numeric_stat(plane, stat)
        for stat in strings:
            columns[stat] = string_stat(plane, stat)
        frames.append(pd.DataFrame(columns))
    if not frames:
        names = ("plane", "line", "tid", "name", CATEGORY, "begin_ps", "end_ps", "duration_ps")
        empty: dict = {c: [] for c in (*names, *numbers, *strings)}
        return pd.DataFrame(empty)
    return pd.concat(frames, ignore_index=True)

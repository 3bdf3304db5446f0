"""The events one plane shows in the trace index: which rows, their lines, times and names.

A plane shows every event except those of the async XLA ops line and internal events;
when nothing is hidden (the usual case) no row list is made and the plane's own columns
are used as they are (views, no copies). Names are the display name, else the name,
a ``step_name`` stat winning; they are worked out once per metadata entry or distinct
step name, then given to the events asked for (a window's items; every event for search)
through one table lookup (``PlaneNames``): the index stores no name per event.

Usage::

    events = [plane_events(tp.plane) for tp in shown]
    strings, tables = name_tables(events)   # one string table; names looked up when asked
    tables[0].names_of(np.array([0, 5]))    # int32 string numbers of two shown events
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...xspace import schema
from ...xspace.event_stats import typed_column
from ...xspace.model import Plane


@dataclasses.dataclass
class PlaneEvents:
    plane: Plane
    rows: Optional[np.ndarray]  # shown event rows (sorted), None = every event
    line: np.ndarray  # int32 line per shown event
    begin: np.ndarray  # int64 begin_ps per shown event
    duration: np.ndarray  # int64 duration_ps per shown event
    used_lines: np.ndarray  # bool per line: it has a shown event
    labels: list  # name strings: one per metadata row, "", then step names
    step_events: np.ndarray  # positions (among shown events) with a step name
    step_label: np.ndarray  # their label numbers

    def __len__(self) -> int:
        return len(self.begin)

    def take(self, column: np.ndarray) -> np.ndarray:
        """A per-event plane column at the shown events (itself when all are shown)."""
        return column if self.rows is None else column[self.rows]


def plane_events(plane: Plane) -> PlaneEvents:
    ev, lines = plane.events, plane.lines
    shown_lines = (lines["label"] != schema.ASYNC_XLA_OPS_LINE).to_numpy()
    line_no = ev["line"].to_numpy()
    hidden = _internal(ev["name"])
    rows = None
    if hidden is not None or not shown_lines.all():
        keep = shown_lines[line_no]
        if hidden is not None:
            keep &= ~hidden
        rows = np.flatnonzero(keep)
    line = line_no if rows is None else line_no[rows]
    used = _used_lines(line, len(lines))
    events = PlaneEvents(
        plane, rows, line.astype(np.int32, copy=False), ev["begin_ps"].to_numpy(),
        ev["duration_ps"].to_numpy(), used, [], np.zeros(0, np.int64), np.zeros(0, np.int64),
    )  # fmt: skip
    events.begin, events.duration = events.take(events.begin), events.take(events.duration)
    _step_labels(events)
    return events


def _used_lines(line: np.ndarray, num_lines: int) -> np.ndarray:
    """bool per line: it has an event. Each line's events are contiguous (as decoded), so
    the line at each change is enough: a compare over the events, not a count (which
    would first widen them to int64); right in any order, only slower."""
    used = np.zeros(num_lines, dtype=bool)
    if len(line):
        at_changes = line[np.r_[0, np.flatnonzero(line[1:] != line[:-1]) + 1]]
        used[at_changes[at_changes < num_lines]] = True
    return used


def _internal(names: pd.Series) -> Optional[np.ndarray]:
    """bool per event: an internal event (None when there is none): per distinct name."""
    if isinstance(names.dtype, pd.CategoricalDtype):
        internal = np.flatnonzero(names.cat.categories.isin(schema.INTERNAL_EVENTS))
        if not len(internal):
            return None
        return np.isin(names.cat.codes.to_numpy(), internal)
    hidden = names.isin(schema.INTERNAL_EVENTS).to_numpy()
    return hidden if hidden.any() else None


def _step_labels(events: PlaneEvents) -> None:
    """Labels of the plane's metadata, then its step names in order of first use."""
    plane = events.plane
    meta = plane.event_metadata
    ids = meta["id"].to_numpy()
    names = meta["name"].astype(object).fillna("").to_numpy()
    displays = meta["display_name"].astype(object).fillna("").to_numpy()
    label = np.where(displays != "", displays, names)
    for mid, step in plane.metadata_stat(schema.STEP_NAME).items():
        label[ids == mid] = str(step)
    events.labels = list(label) + [""]  # the last label: an id no metadata declares
    codes, uniques, named = _step_names(typed_column(plane, schema.STEP_NAME), events.rows)
    if len(named):
        events.step_events = named
        events.step_label = len(events.labels) + codes
        events.labels += uniques


def _step_names(column: pd.Series, rows: Optional[np.ndarray]) -> tuple:
    """(code per named event, distinct names in order of first use, named positions)."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # names per category, not per event
        codes = column.cat.codes.to_numpy()
        codes = codes if rows is None else codes[rows]
        named = np.flatnonzero(codes >= 0)
        first, used = pd.factorize(codes[named])
        names = np.asarray(column.cat.categories, dtype=object)[used]
        if all(isinstance(n, str) for n in names):
            return first, list(names), named
        steps = names[first]
    else:
        steps = column.to_numpy(dtype=object)
        steps = steps if rows is None else steps[rows]
        named = np.flatnonzero(pd.notna(steps))
        steps = steps[named]
    first, uniques = pd.factorize(pd.Series(steps.astype(str)))
    return first, list(uniques), named


@dataclasses.dataclass
class PlaneNames:
    """The string number of any shown event of one plane, looked up when asked: through
    its metadata id, a step name winning (no per-event array is made for the index)."""

    ids: np.ndarray  # the metadata table's ids
    label_of_row: np.ndarray  # int32 string number per metadata row, then the missing one
    metadata_id: np.ndarray  # the plane's metadata_id column (every event row)
    rows: Optional[np.ndarray]  # shown event rows, None = every event
    step_events: np.ndarray  # shown events with a step name (sorted)
    step_names: np.ndarray  # int32 string number of each

    def names_of(self, events: Optional[np.ndarray] = None) -> np.ndarray:
        """int32 string number of each shown event number of this plane (None: all)."""
        if events is None:  # every shown event: no search for the step events
            mid = self.metadata_id if self.rows is None else self.metadata_id[self.rows]
            names = _metadata_names(self.ids, self.label_of_row, mid)
            names[self.step_events] = self.step_names
            return names
        events = np.asarray(events)
        mid = self.metadata_id[events if self.rows is None else self.rows[events]]
        names = _metadata_names(self.ids, self.label_of_row, mid)
        if len(self.step_events) and len(events):
            at = np.minimum(np.searchsorted(self.step_events, events), len(self.step_events) - 1)
            named = self.step_events[at] == events
            names[named] = self.step_names[at[named]]
        return names


def name_tables(parts: list) -> tuple:
    """(strings, ``PlaneNames`` per part): one string table for all ``parts``."""
    every = [s for p in parts for s in p.labels]
    codes, uniques = pd.factorize(pd.Series(every, dtype=object))
    tables, start = [], 0
    for p in parts:
        mapping = codes[start : start + len(p.labels)].astype(np.int32)
        start += len(p.labels)
        ids = p.plane.event_metadata["id"].to_numpy()
        mid = p.plane.events["metadata_id"].to_numpy()
        names = PlaneNames(
            ids, mapping[: len(ids) + 1], mid, p.rows, p.step_events, mapping[p.step_label]
        )
        tables.append(names)
    return [str(s) for s in uniques], tables


def event_names(parts: list) -> tuple:
    """(strings, int32 string number per shown event of all ``parts`` in turn)."""
    strings, tables = name_tables(parts)
    out = [t.names_of() for t in tables]
    if len(out) == 1:
        return strings, out[0]
    names = np.concatenate(out) if out else np.zeros(0, dtype=np.int32)
    return strings, names.astype(np.int32, copy=False)


def _metadata_names(ids: np.ndarray, label_of_row: np.ndarray, event_mid) -> np.ndarray:
    """``label_of_row`` of each event's metadata row (the first row declaring its id);
    ``label_of_row[len(ids)]`` where no metadata has the id."""
    missing = label_of_row[len(ids)]
    if not len(ids) or not len(event_mid):
        return np.full(len(event_mid), missing, dtype=np.int32)
    if 0 <= ids.min() and ids.max() < 4 * len(ids) + 4096:  # dense ids: one table lookup
        unique, first = np.unique(ids, return_index=True)  # duplicates: the first row
        table = np.full(int(ids.max()) + 2, missing, dtype=np.int32)
        table[unique] = label_of_row[first]
        mid = np.asarray(event_mid)
        if mid.min() >= 0 and mid.max() < len(table):
            return table[mid]
        return table[np.clip(mid.astype(np.int64), -1, len(table) - 1)]  # no row: the last
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    pos = np.minimum(np.searchsorted(sorted_ids, event_mid), len(ids) - 1)
    return label_of_row[np.where(sorted_ids[pos] == event_mid, order[pos], len(ids))]

"""The ``group_id`` of an edited plane: the events' column, never rows of the stats table.

Nearly every event of a grouped profile has a group: as a stats row each would cost an
event, stat, kind and value (16 B), and building those rows was the largest transient
of preprocessing. The column is the only place; ``Plane.implicit_group`` records where
``group_id`` sits among an event's stats, for the readers that list them as arguments
(``xspace.event_stats``): after the rows the event had before the edit that set its
group, before the rows that edit added after setting it. Only events with rows after
it are listed (grouped events that got ``step_name``, ``is_eager`` or ``flow``).

Usage (by ``PlaneEdit``)::

    sets = [GroupSet(None, group_ids, parts_before=0)]
    column = group_column(old_column, sets, num_old, num_events, placed)
    implicit = implicit_groups(plane, sets, stat_rows, replaced, placed)
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.columns import empty_int_column
from ..xspace.model import ImplicitGroups, Plane
from .placement import Placement
from .stat_table import kept_old_rows


@dataclasses.dataclass
class GroupSet:
    """One ``PlaneEdit.set_groups`` call."""

    rows: Optional[np.ndarray]  # int64 event rows (new events too); None = every old event
    values: np.ndarray  # int64 (or grouping's int32) group per row, -1 = left as it was
    parts_before: int  # stat additions the edit had collected before this call


def group_column(
    old: Optional[pd.Series], sets: list, num_old: int, num_events: int, placed
) -> pd.api.extensions.ExtensionArray:
    """The edited ``group_id`` column: nullable int32 (int64 if an id needs it)."""
    first = sets[0]
    if _all_missing(old) and not any((s.values >= 0).any() for s in sets):
        return empty_int_column(num_events)  # nothing grouped: all missing, and free
    if first.rows is None and len(first.values) == num_old and _all_missing(old):
        on_old, rest = first.values, sets[1:]  # grouping's own array, read not written
    elif old is not None:
        on_old, rest = old.to_numpy(dtype=np.int64, na_value=-1), sets
    else:
        on_old, rest = np.full(num_old, -1, dtype=np.int64), sets
    on_new = np.full(num_events - num_old, -1, dtype=np.int64)
    if rest and on_old is first.values:
        on_old = on_old.astype(np.int64)  # a copy other sets may write any id into
    for s in rest:
        rows = np.arange(len(s.values)) if s.rows is None else s.rows
        keep = s.values >= 0
        inside = rows < num_old
        on_old[rows[keep & inside]] = s.values[keep & inside]
        on_new[rows[keep & ~inside] - num_old] = s.values[keep & ~inside]
    # The narrowest width first, so the placed copy is made in it.
    width = np.int32 if max(_max(on_old), _max(on_new)) < 2**31 else np.int64
    on_old, on_new = on_old.astype(width, copy=False), on_new.astype(width)
    data = on_old if placed is None else placed.place(on_old, on_new)
    return pd.arrays.IntegerArray(data, data < 0)


def _max(values: np.ndarray) -> int:
    return int(values.max()) if len(values) else -1


def _all_missing(column: Optional[pd.Series]) -> bool:
    if column is None:
        return True
    mask = getattr(column.array, "_mask", None)
    if isinstance(mask, np.ndarray) and len(mask) > 1 and not mask.strides[0]:
        return bool(mask[0])  # the decoder's all-missing view
    return not column.notna().any()


def implicit_groups(
    plane: Plane, sets: list, stat_rows: list, replaced: dict, placed: Optional[Placement]
) -> Optional[ImplicitGroups]:
    """Where each event's ``group_id`` sits after the edit (None: the plane keeps it as
    stats rows, no group was set). Reads the old stats table: call before it is freed."""
    old = plane.implicit_group
    if old is None and not sets:
        return None
    if old is None:
        old = ImplicitGroups.none()
    elif not stat_rows and not replaced and not sets:
        return _moved(old.events, old.ranks, placed)
    owners = plane.stats["event"].to_numpy()
    dropped = np.flatnonzero(~kept_old_rows(plane.stats, replaced))  # few: replaced rows
    added = _Added.of(stat_rows)
    set_at = _set_calls(sets, added.events)
    rows_before, rows_after = added.split(set_at)
    # Events with rows added in this edit: those whose group was set here go after their
    # kept old rows and this edit's rows made before the call; those grouped by an earlier
    # edit keep their place among their old rows (the added ones come after).
    now = (set_at >= 0) & (rows_after > 0)
    earlier = (set_at < 0) & _present(plane.events, added.events)
    ranks = [
        _kept_before(owners, dropped, added.events[now], None) + rows_before[now],
        _kept_before(owners, dropped, added.events[earlier], old),
    ]
    # Earlier places of events this edit leaves alone, less the old rows dropped before.
    alone = ~added.holds(old.events) & (_set_calls(sets, old.events) < 0)
    ranks.append(_kept_before(owners, dropped, old.events[alone], old))
    events = np.concatenate([added.events[now], added.events[earlier], old.events[alone]])
    return _moved(events, np.concatenate(ranks), placed)


@dataclasses.dataclass
class _Added:
    """Distinct events with stat rows added in the edit, and per event its rows by part.

    Event rows are dense integers below the edited plane's size, so the distinct events
    come from a flag per row and their indices from one scatter: O(rows + events),
    no hashing or sorting of the added rows (a hash-based ``np.unique`` of them cost 0.5 s
    at 11 M events), and no concatenated copy of every part's rows."""

    events: np.ndarray  # sorted, distinct
    seen: np.ndarray  # bool per event row below its length: has an added row
    index: np.ndarray  # event row -> its index in ``events`` (set where ``seen`` only)
    parts: list  # (index of the StatRows in the edit, its events)

    @classmethod
    def of(cls, stat_rows: list) -> _Added:
        parts = [(k, r.events) for k, r in enumerate(stat_rows) if len(r.events)]
        size = max((int(rows.max()) + 1 for _, rows in parts), default=0)
        seen = np.zeros(size, dtype=bool)
        for _, rows in parts:
            seen[rows] = True
        events = np.flatnonzero(seen)
        # Written at the added events only (a running count of ``seen`` wrote every row).
        index = np.empty(size, dtype=np.int32 if len(events) < 2**31 else np.int64)
        index[events] = np.arange(len(events), dtype=index.dtype)
        return cls(events, seen, index, parts)

    def split(self, set_at: np.ndarray) -> tuple:
        """Per event: its added rows made before its group was set, and after (all after
        when it was not set in this edit)."""
        n = len(self.events)
        count_before = np.zeros(n, dtype=np.int64)
        count_all = np.zeros(n, dtype=np.int64)
        for k, rows in self.parts:
            at = self.index[rows]
            count_all += np.bincount(at, minlength=n)
            count_before += np.bincount(at[k < set_at[at]], minlength=n)
        return count_before, count_all - count_before

    def holds(self, events: np.ndarray) -> np.ndarray:
        """Whether each of these event rows has added rows."""
        out = np.zeros(len(events), dtype=bool)
        inside = events < len(self.seen)
        out[inside] = self.seen[events[inside]]
        return out


def _set_calls(sets: list, events: np.ndarray) -> np.ndarray:
    """Per event: additions made before the last call that set its group (-1: not set)."""
    out = np.full(len(events), -1, dtype=np.int64)
    for s in sets:
        if s.rows is None:
            inside = events < len(s.values)
            hit = np.zeros(len(events), dtype=bool)
            hit[inside] = s.values[events[inside]] >= 0
        else:
            hit = _member(events, s.rows[s.values >= 0])
        out[hit] = s.parts_before
    return out


def _member(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``np.isin(values, rows)`` for event rows (dense, non-negative): a flag per row
    instead of a hash or a sort of both sides."""
    if not len(values) or not len(rows):
        return np.zeros(len(values), dtype=bool)
    flags = np.zeros(max(int(values.max()), int(rows.max())) + 1, dtype=bool)
    flags[rows] = True
    return flags[values]


def _present(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Whether these rows (new events too) had a group before the edit."""
    out = np.zeros(len(rows), dtype=bool)
    if schema.GROUP_ID in events:
        old = rows < len(events)
        out[old] = ~np.asarray(pd.isna(events[schema.GROUP_ID].array[rows[old]]), dtype=bool)
    return out


def _kept_before(owners, dropped, events, old: Optional[ImplicitGroups]) -> np.ndarray:
    """Per event, its old rows kept by the edit that come before its ``group_id``: all of
    them, or (``old``) the first ones where an earlier edit placed it among them.
    ``dropped``: the sorted old rows the edit replaces (a search among them, not a running
    count of kept rows over the whole table)."""
    events = _searched_for(owners, events)
    first = np.searchsorted(owners, events, side="left")
    count = np.searchsorted(owners, events, side="right") - first
    if old is not None and len(old.events) and len(events):
        found = np.minimum(np.searchsorted(old.events, events), len(old.events) - 1)
        hit = old.events[found] == events
        count[hit] = np.minimum(count[hit], old.ranks[found[hit]])
    if len(dropped):
        count -= np.searchsorted(dropped, first + count) - np.searchsorted(dropped, first)
    return count


def _searched_for(owners: np.ndarray, events: np.ndarray) -> np.ndarray:
    """``events`` in the dtype of the table's int32 ``owners`` when they fit: a search with
    int64 keys would first copy the whole column to int64 (8 B per stats row, the largest
    transient of the edit that sets groups)."""
    if owners.dtype != np.int32 or events.dtype == np.int32:
        return events
    if len(events) and not (int(events.min()) >= -(2**31) and int(events.max()) < 2**31):
        return events
    return events.astype(np.int32)  # (an empty int64 key array would copy it too)


def _moved(events: np.ndarray, ranks: np.ndarray, placed: Optional[Placement]) -> ImplicitGroups:
    """In the edited plane's rows, sorted."""
    events = np.asarray(events, dtype=np.int64)
    if placed is not None:
        events = placed.new_row[events].astype(np.int64)
    order = np.argsort(events, kind="stable")
    return ImplicitGroups(events[order], np.asarray(ranks, dtype=np.int32)[order])

"""Copy-on-write edits of a decoded ``Plane``: new stats, events, lines, metadata.

Preprocessing must not touch the cached ``Space`` it was given, and it makes many
small additions (a ``group_id`` per event, a few derived lines). ``PlaneEdit``
collects those additions in columns and builds one new ``Plane`` at the end, so
each table is copied once however many edits were made: new events are put in place
by ``placement`` (inserted among the old rows, which keep their order), the stats
table is merged by ``stat_table``, and groups go to the ``group_id`` column only
(``group_column``).

Usage::

    edit = PlaneEdit(plane)
    meta = edit.metadata_id("ThreadpoolListener::Region")
    line = edit.add_line(line_id=-559038737, name="Steps")
    rows = edit.add_events(line, np.full(2, meta), begin_ps, duration_ps)
    edit.set_groups(np.array([0, 1]), rows)
    edit.set_stat(rows, "step_name", ["train 0", "train 1"], KIND_STR)
    new_plane = edit.build()
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.columns import is_zeros_view, share_equal_masks, well_known_columns, zeros_view
from ..xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR, KIND_UINT64, Plane
from .group_column import GroupSet, group_column, implicit_groups
from .placement import Placement, name_column
from .stat_table import StatRows, merged_stats

_COLUMNS = frozenset(schema.COLUMN_STATS)  # typed event columns (the rest stay rows)


class PlaneEdit:
    """Collects additions to one plane; ``build()`` returns the edited copy."""

    def __init__(self, plane: Plane, consume: bool = False):
        """``consume``: drop each old column of ``plane`` once its edited copy is built (a
        plane nothing else reads, freshly decoded: the old and new tables never coexist
        whole). The original plane is then unusable, and ``build`` runs once."""
        self.plane = plane
        self._consume = consume
        self._events = plane.events
        self.num_events = self._num_old = len(plane.events)
        self._new_events: list = []  # (line, metadata_id, begin_ps, duration_ps)
        self._new_lines: list = []
        self._new_metadata: list = []
        self._meta_by_name = dict(
            zip(plane.event_metadata["name"].tolist(), plane.event_metadata["id"].tolist())
        )
        self._next_meta_id = (
            int(plane.event_metadata["id"].max()) + 1 if len(plane.event_metadata) else 1
        )
        self._stat_rows: list = []  # StatRows to append
        self._replaced: dict = {}  # stat name -> events whose old rows are dropped
        self._groups: list = []  # GroupSet per set_groups call
        self.num_lines = len(plane.lines)
        self._display_ids: Optional[np.ndarray] = None

    # --- metadata and lines --------------------------------------------------
    def metadata_id(self, name: str, display_name: str = "") -> int:
        """The id of the event metadata with this name, created if missing.

        Names are unique keys here, like ``GetOrCreateEventMetadata(name)``.
        """
        found = self._meta_by_name.get(name)
        if found is not None:
            return found
        mid = self._next_meta_id
        self._next_meta_id += 1
        self._new_metadata.append((mid, name, display_name))
        self._meta_by_name[name] = mid
        return mid

    def add_line(self, line_id: int, name: str, display_id: int = 0, timestamp_ns: int = 0) -> int:
        """Appends a line; returns its row in ``lines`` (the events' ``line``)."""
        self._new_lines.append((line_id, display_id, name, "", timestamp_ns, 0))
        self.num_lines += 1
        return self.num_lines - 1

    def set_line_display_ids(self, display_ids) -> None:
        """New ``display_id`` of the plane's existing lines (their tid follows)."""
        self._display_ids = np.asarray(display_ids, dtype=np.int64)

    # --- events ---------------------------------------------------------------
    def add_events(self, line, metadata_ids, begin_ps, duration_ps) -> np.ndarray:
        """Appends events to a line (or one line per event); returns their future rows."""
        begin = np.asarray(begin_ps, dtype=np.int64)
        first = self.num_events
        self.num_events += len(begin)
        self._new_events.append(
            (
                np.broadcast_to(np.asarray(line, dtype=np.int32), begin.shape).copy(),
                np.asarray(metadata_ids, dtype=np.int64),
                begin,
                np.asarray(duration_ps, dtype=np.int64),
            )
        )
        return np.arange(first, self.num_events, dtype=np.int64)

    # --- stats ------------------------------------------------------------------
    def set_groups(self, values, events=None) -> None:
        """Sets ``group_id`` (``values`` >= 0; -1 leaves an event as it was) on ``events``
        (None: ``values`` has one entry per old event). Only the events' column holds it;
        an event lists it among its stats before those this edit adds to it after this
        call (``group_column``). ``values`` is kept, not copied."""
        plane = self.plane
        if plane.implicit_group is None and schema.GROUP_ID in plane.stat_names.values():
            raise ValueError("this plane's groups are rows of its stats table (read grouped)")
        rows = None if events is None else np.asarray(events, dtype=np.int64)
        values = np.asarray(values)
        if values.dtype != np.int32:  # grouping's int32 ids are kept as they are
            values = values.astype(np.int64)
        self._groups.append(GroupSet(rows, values, len(self._stat_rows)))

    def set_stat(self, events, name: str, values, kind: int = KIND_INT64) -> None:
        """Sets (replacing any old value) one stat on the given events."""
        events = np.asarray(events, dtype=np.int64)
        if not len(events):
            return
        old = self._replaced.get(name)
        self._replaced[name] = events if old is None else np.concatenate([old, events])
        self.add_stat(events, name, values, kind)

    def add_stat(self, events, name: str, values, kind: int = KIND_INT64) -> None:
        """Adds one more value of a stat (an event may carry several ``flow``).

        ``events`` and ``values`` arrays are kept, not copied: do not change them after.
        """
        events = np.asarray(events, dtype=np.int64)
        if not len(events):
            return
        n = len(events)
        rows = StatRows(events, name, kind)
        if kind == KIND_DOUBLE:
            rows.floats = np.broadcast_to(np.asarray(values, dtype=np.float64), (n,))
        elif kind == KIND_STR:  # only string stats carry Python objects
            rows.strs = np.full(n, None, dtype=object)
            rows.strs[:] = values if not isinstance(values, str) else [values] * n
        elif kind == KIND_UINT64:
            rows.ints = np.broadcast_to(np.asarray(values, dtype=np.uint64).view(np.int64), (n,))
        else:
            rows.ints = np.broadcast_to(np.asarray(values, dtype=np.int64), (n,))
        self._stat_rows.append(rows)

    # --- build --------------------------------------------------------------------
    def build(self) -> Plane:
        """The edited plane (returned as is if unedited; the original is left untouched unless
        ``consume``)."""
        plane = self.plane
        edits = self._stat_rows or self._new_events or self._new_lines or self._new_metadata
        if not (edits or self._groups):
            if self._display_ids is None:
                return plane
        metadata = _append_rows(
            plane.event_metadata, self._new_metadata, ["id", "name", "display_name"]
        )
        lines = _append_lines(plane.lines, self._new_lines)
        if self._display_ids is not None and len(self._display_ids):
            old = len(self._display_ids)
            lines.loc[: old - 1, "display_id"] = self._display_ids
            row_id = lines["display_id"].where(lines["display_id"] != 0, lines["id"])
            lines["tid"] = (row_id & 0xFFFFFFFF).astype(np.int64)
        order = list(plane.events.columns)  # before consume drops them
        placed = self._placement()
        if placed is not None:
            columns = self._placed_base_columns(placed, metadata)
        else:
            columns = {name: plane.events[name] for name in plane.events.columns}
        implicit, group = self._groups_after(placed)  # before the old stats are freed
        stats, typed = self._stats_and_typed_columns(placed, self.num_events)
        columns.update((name, typed[name]) for name in schema.COLUMN_STATS if name in typed)
        if group is not None:
            columns[schema.GROUP_ID] = group
        order += [c for c in columns if c not in order]
        events = pd.DataFrame({c: columns[c] for c in order}, copy=False)
        return dataclasses.replace(
            plane,
            lines=lines,
            events=events,
            stats=stats,
            event_metadata=metadata,
            stat_names=self._stat_names(),
            implicit_group=implicit,
        )

    def _groups_after(self, placed: Optional[Placement]) -> tuple:
        """(the plane's ``implicit_group``, its new ``group_id`` column or None)."""
        implicit = implicit_groups(
            self.plane, self._groups, self._stat_rows, self._replaced, placed
        )
        if not self._groups:
            return implicit, None
        old = self._events[schema.GROUP_ID] if schema.GROUP_ID in self._events else None
        group = group_column(old, self._groups, self._num_old, self.num_events, placed)
        self._drop(schema.GROUP_ID)
        return implicit, group

    def _stats_and_typed_columns(self, placed: Optional[Placement], num_events: int) -> tuple:
        """The merged stats table, and the typed event columns that changed: touched stats'
        (integer ones straight from the merge, strings from the table) and, when events
        moved, every other one (carried to its events' new rows)."""
        plane, touched = self.plane, self._touched_names()
        int_names = [n for n in touched if n in _COLUMNS and n not in schema.STR_STATS]
        if self._groups:  # its column is made by group_column
            touched[schema.GROUP_ID] = None
            int_names = [n for n in int_names if n != schema.GROUP_ID]
        refresh = [n for n in touched if n in _COLUMNS and n in schema.STR_STATS]
        carried: dict = {}
        masks: list = []  # the edit's read-only missing masks, each shared (columns.shared_mask)
        if placed is not None:  # carried first: their old columns are dropped before the merge
            for name in [n for n in schema.COLUMN_STATS if n not in touched]:
                if name in plane.events:
                    carried[name] = placed.carried(plane.events[name], masks)
                    self._drop(name)
                else:
                    refresh.append(name)
        self._drop(*touched)
        new_row = placed.new_row if placed is not None else None
        if placed is not None and self._consume:
            self._move_stat_events(placed)  # the row map is freed before the merge's peak
            new_row = None
        stats, typed = merged_stats(
            plane.stats, self._stat_rows, self._replaced, new_row, int_names, num_events
        )
        if self._consume:
            for column in list(plane.stats.columns):
                del plane.stats[column]
        typed.update(carried)
        typed.update(well_known_columns(num_events, stats, refresh, masks))
        return stats, share_equal_masks(typed, masks)

    def _move_stat_events(self, placed: Placement) -> None:
        """Puts every stats row's event (old table, additions, replaced rows) on its edited
        row, then drops the placement's row map (``consume`` only: the old table is this
        edit's to change). The merge then reads rows that did not move: the same table."""
        new_row = placed.new_row
        stats = self.plane.stats
        stats["event"] = new_row[stats["event"].to_numpy()]
        for rows in self._stat_rows:
            rows.events = new_row[rows.events]
        self._replaced = {name: new_row[events] for name, events in self._replaced.items()}
        placed.new_row = None  # type: ignore[assignment]  # nothing reads it after this

    def _drop(self, *names: str) -> None:
        """Frees these old event columns (``consume``), once their edited copies exist."""
        if self._consume:
            for name in names:
                if name in self._events:
                    del self._events[name]

    def _touched_names(self) -> dict:
        """Edited stat names in first-edit order (a dict used as an ordered set)."""
        names = dict.fromkeys(rows.name for rows in self._stat_rows)
        if any((s.values >= 0).any() for s in self._groups):  # a stat name, first set
            names = {schema.GROUP_ID: None, **names}
        return names

    def _stat_names(self) -> dict:
        names = dict(self.plane.stat_names)
        known = set(names.values())
        next_id = max(names, default=0) + 1
        for name in self._touched_names():
            if name not in known:
                names[next_id] = name
                next_id += 1
        return names

    def _placement(self) -> Optional[Placement]:
        if not self._new_events:
            return None
        line, _, begin, duration = self._new_columns()
        return Placement.of(self._events, line, begin, duration)

    def _new_columns(self) -> tuple:
        """(line, metadata_id, begin_ps, duration_ps) of the new events, in add order."""
        return tuple(np.concatenate(c) for c in zip(*self._new_events))

    def _placed_base_columns(self, placed: Placement, metadata: pd.DataFrame) -> dict:
        """Base event columns with the new events in place."""
        events = self._events
        line, meta, begin, dur = self._new_columns()
        out = {}
        for name, new in (("line", line), ("metadata_id", meta), ("begin_ps", begin)):
            old = events[name].to_numpy()
            if name == "metadata_id" and len(meta) and meta.max() >= 2**31:  # int32 ids
                old = old.astype(np.int64)  # a new id beyond them (never in real profiles)
            out[name] = placed.place(old, new)
            self._drop(name)
            del old  # freed before the next column is placed (consume)
        out["duration_ps"] = placed.place(events["duration_ps"].to_numpy(), dur)
        occurrences = events["occurrences"].to_numpy()
        if is_zeros_view(occurrences):  # new events keep it all zero, and free
            out["occurrences"] = zeros_view(len(out["line"]))
        else:
            out["occurrences"] = placed.place(occurrences, np.zeros(len(line), dtype=np.int64))
        self._drop("duration_ps", "occurrences")
        ids = metadata["id"].to_numpy()
        distinct, inverse = np.unique(meta, return_inverse=True)  # names once per id
        for col in ("name", "display_name"):
            new_names = dict(zip(ids.tolist(), metadata[col].tolist()))
            added = [new_names.get(m, "") for m in distinct.tolist()]
            out[col] = name_column(events[col], added, inverse, placed)
            self._drop(col)
        for name in list(events.columns):
            if name not in out and name not in schema.WELL_KNOWN_STATS:
                out[name] = placed.padded(events[name])  # an extra column
                self._drop(name)
        return out


def _append_rows(table: pd.DataFrame, rows: list, columns: list) -> pd.DataFrame:
    if not rows:
        return table.copy()
    # Column by column in the table's dtypes (object stays object on pandas 3).
    out = {}
    for k, col in enumerate(columns):
        values = [row[k] for row in rows]
        dtype = table[col].dtype
        if pd.api.types.is_object_dtype(dtype):
            out[col] = pd.Series(
                np.concatenate([table[col].to_numpy(dtype=object), np.array(values, dtype=object)]),
                dtype=object,
            )
        else:
            out[col] = np.concatenate([table[col].to_numpy(), np.asarray(values, dtype=dtype)])
    return pd.DataFrame(out, columns=list(table.columns))


def _append_lines(lines: pd.DataFrame, rows: list) -> pd.DataFrame:
    if not rows:
        return lines.copy()
    added = pd.DataFrame(
        rows, columns=["id", "display_id", "name", "display_name", "timestamp_ns", "duration_ps"]
    )
    added["tid"] = (added["display_id"].where(added["display_id"] != 0, added["id"])) & 0xFFFFFFFF
    added["label"] = added["name"]
    out = pd.concat([lines, added[lines.columns]], ignore_index=True)
    for col in ("id", "display_id", "timestamp_ns", "duration_ps", "tid"):
        out[col] = out[col].astype(np.int64)
    return out

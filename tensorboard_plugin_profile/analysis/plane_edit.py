"""Copy-on-write edits of a decoded ``Plane``: new stats, events, lines, metadata.

Preprocessing must not touch the cached ``Space`` it was given, and it makes many
small additions (a ``group_id`` per event, a few derived lines). ``PlaneEdit``
collects those additions in columns and builds one new ``Plane`` at the end, so
each table is copied once however many edits were made.

Usage::

    edit = PlaneEdit(plane)
    meta = edit.metadata_id("ThreadpoolListener::Region")
    line = edit.add_line(line_id=-559038737, name="Steps")
    rows = edit.add_events(line, np.full(2, meta), begin_ps, duration_ps)
    edit.set_stat(rows, "group_id", np.array([0, 1]))
    new_plane = edit.build()
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR, KIND_UINT64, Plane

_STAT_COLUMNS = ("event", "stat", "kind", "int_value", "float_value", "str_value")


class PlaneEdit:
    """Collects additions to one plane; ``build()`` returns the edited copy."""

    def __init__(self, plane: Plane):
        self.plane = plane
        self._events = plane.events
        self.num_events = len(plane.events)
        self._new_events: list = []  # (line, metadata_id, begin_ps, duration_ps)
        self._new_lines: list = []
        self._new_metadata: list = []
        self._meta_by_name = dict(
            zip(plane.event_metadata["name"].tolist(), plane.event_metadata["id"].tolist())
        )
        self._next_meta_id = (
            int(plane.event_metadata["id"].max()) + 1 if len(plane.event_metadata) else 1
        )
        self._stat_rows: list = []  # DataFrames of long rows to append
        self._replaced: dict = {}  # stat name -> events whose old rows are dropped
        self.num_lines = len(plane.lines)
        self._display_ids = None

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
    def add_events(self, line: int, metadata_ids, begin_ps, duration_ps) -> np.ndarray:
        """Appends events to a line; returns their future rows in ``events``."""
        begin = np.asarray(begin_ps, dtype=np.int64)
        first = self.num_events
        self.num_events += len(begin)
        self._new_events.append(
            (
                np.full(len(begin), line, dtype=np.int32),
                np.asarray(metadata_ids, dtype=np.int64),
                begin,
                np.asarray(duration_ps, dtype=np.int64),
            )
        )
        return np.arange(first, self.num_events, dtype=np.int64)

    # --- stats ------------------------------------------------------------------
    def set_stat(self, events, name: str, values, kind: int = KIND_INT64) -> None:
        """Sets (replacing any old value) one stat on the given events."""
        events = np.asarray(events, dtype=np.int64)
        if not len(events):
            return
        old = self._replaced.get(name)
        self._replaced[name] = events if old is None else np.concatenate([old, events])
        self.add_stat(events, name, values, kind)

    def add_stat(self, events, name: str, values, kind: int = KIND_INT64) -> None:
        """Adds one more value of a stat (an event may carry several ``flow``)."""
        events = np.asarray(events, dtype=np.int64)
        if not len(events):
            return
        n = len(events)
        ints = np.zeros(n, dtype=np.int64)
        floats = np.zeros(n, dtype=np.float64)
        strs = np.full(n, None, dtype=object)
        if kind == KIND_DOUBLE:
            floats[:] = np.asarray(values, dtype=np.float64)
        elif kind == KIND_STR:
            strs[:] = values if not isinstance(values, str) else [values] * n
        elif kind == KIND_UINT64:
            ints[:] = np.asarray(values, dtype=np.uint64).view(np.int64)
        else:
            ints[:] = np.asarray(values, dtype=np.int64)
        self._stat_rows.append(
            pd.DataFrame(
                {
                    "event": events,
                    "stat": np.full(n, name, dtype=object),
                    "kind": np.full(n, kind, dtype=np.int8),
                    "int_value": ints,
                    "float_value": floats,
                    "str_value": pd.Series(strs, dtype=object),
                }
            )
        )

    # --- build --------------------------------------------------------------------
    def build(self) -> Plane:
        """The edited plane (the original is left untouched)."""
        plane = self.plane
        metadata = _append_rows(
            plane.event_metadata, self._new_metadata, ["id", "name", "display_name"]
        )
        lines = _append_lines(plane.lines, self._new_lines)
        if self._display_ids is not None and len(self._display_ids):
            old = len(self._display_ids)
            lines.loc[: old - 1, "display_id"] = self._display_ids
            row_id = lines["display_id"].where(lines["display_id"] != 0, lines["id"])
            lines["tid"] = (row_id & 0xFFFFFFFF).astype(np.int64)
        stats = self._build_stats()
        events = self._build_events(metadata)
        order = None
        if self._new_events:
            # New events go to their place in their line: by begin, longer first.
            order = np.lexsort(
                (
                    -events["duration_ps"].to_numpy(),
                    events["begin_ps"].to_numpy(),
                    events["line"].to_numpy(),
                )
            )
            events = events.iloc[order].reset_index(drop=True)
            new_row = np.empty(len(order), dtype=np.int64)
            new_row[order] = np.arange(len(order))
            stats["event"] = new_row[stats["event"].to_numpy()]
            stats = stats.sort_values("event", kind="stable").reset_index(drop=True)
        # Row order changed: every typed column is rebuilt, else only edited ones.
        refresh = set(schema.WELL_KNOWN_STATS) if order is not None else self._touched_names()
        _refresh_well_known(events, stats, refresh)
        names = dict(plane.stat_names)
        known = set(names.values())
        next_id = max(names, default=0) + 1
        for name in self._touched_names():
            if name not in known:
                names[next_id] = name
                next_id += 1
        return dataclasses.replace(
            plane,
            lines=lines,
            events=events,
            stats=stats,
            event_metadata=metadata,
            stat_names=names,
        )

    def _touched_names(self) -> set:
        return {str(rows["stat"].iloc[0]) for rows in self._stat_rows}

    def _build_stats(self) -> pd.DataFrame:
        old = self.plane.stats
        if self._replaced:
            drop = np.zeros(len(old), dtype=bool)
            stat_col = old["stat"].astype(object).to_numpy()
            event_col = old["event"].to_numpy()
            for name, events in self._replaced.items():
                drop |= (stat_col == name) & np.isin(event_col, events)
            old = old[~drop]
        parts = [old.assign(stat=old["stat"].astype(object))] + self._stat_rows
        parts = [p for p in parts if len(p)]
        if not parts:
            return self.plane.stats.copy()
        stats = pd.concat(parts, ignore_index=True)
        stats = stats.sort_values("event", kind="stable").reset_index(drop=True)
        stats["stat"] = pd.Categorical(stats["stat"])
        return stats[list(_STAT_COLUMNS)]

    def _build_events(self, metadata: pd.DataFrame) -> pd.DataFrame:
        events = self._events
        if not self._new_events:
            return events.copy()
        line, meta, begin, dur = (np.concatenate(c) for c in zip(*self._new_events))
        names = dict(zip(metadata["id"].tolist(), metadata["name"].tolist()))
        displays = dict(zip(metadata["id"].tolist(), metadata["display_name"].tolist()))
        added = pd.DataFrame(
            {
                "line": line,
                "metadata_id": meta,
                "begin_ps": begin,
                "duration_ps": dur,
                "occurrences": np.zeros(len(line), dtype=np.int64),
                "name": [names.get(m, "") for m in meta.tolist()],
                "display_name": [displays.get(m, "") for m in meta.tolist()],
            }
        )
        base = events.assign(
            name=events["name"].astype(object), display_name=events["display_name"].astype(object)
        )
        out = pd.concat([base, added], ignore_index=True)
        for col in ("name", "display_name"):
            out[col] = pd.Categorical(out[col].astype(object))
        return out


def _append_rows(table: pd.DataFrame, rows: list, columns: list) -> pd.DataFrame:
    if not rows:
        return table.copy()
    added = pd.DataFrame(rows, columns=columns)
    return pd.concat([table, added], ignore_index=True).astype(table.dtypes.to_dict())


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


def _refresh_well_known(events: pd.DataFrame, stats: pd.DataFrame, names: set) -> None:
    """Rebuilds the typed columns of the stats that were edited."""
    n = len(events)
    stat_col = stats["stat"].astype(object).to_numpy()
    for name in schema.WELL_KNOWN_STATS:
        if name not in names:
            continue
        rows = stats[stat_col == name]
        where = rows["event"].to_numpy()
        if name in schema.STR_STATS:
            column = np.full(n, None, dtype=object)
            column[where] = rows["str_value"].to_numpy(dtype=object)
            events[name] = pd.Series(column, dtype=object)
            continue
        values = np.zeros(n, dtype=np.int64)
        mask = np.ones(n, dtype=bool)
        values[where] = rows["int_value"].to_numpy()
        mask[where] = False
        if name in schema.UINT_STATS:
            events[name] = pd.arrays.IntegerArray(values.view(np.uint64), mask)
        else:
            events[name] = pd.arrays.IntegerArray(values, mask)

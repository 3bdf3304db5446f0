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
from typing import Optional, Union

import numpy as np
import pandas as pd

from ...memsize import sparse_values
from ...xspace import schema
from ...xspace.columns import is_zeros_view, str_categorical, well_known_columns, zeros_view
from ...xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR, KIND_UINT64, Plane

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
        self._stat_rows: list = []  # (events, name, kind, ints, floats, strs) to append
        self._replaced: dict = {}  # stat name -> events whose old rows are dropped
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
        strs = None  # only string stats carry Python objects (group ids are millions of rows)
        if kind == KIND_DOUBLE:
            floats[:] = np.asarray(values, dtype=np.float64)
        elif kind == KIND_STR:
            strs = np.full(n, None, dtype=object)
            strs[:] = values if not isinstance(values, str) else [values] * n
        elif kind == KIND_UINT64:
            ints[:] = np.asarray(values, dtype=np.uint64).view(np.int64)
        else:
            ints[:] = np.asarray(values, dtype=np.int64)
        self._stat_rows.append((events, name, kind, ints, floats, strs))

    # --- build --------------------------------------------------------------------
    def build(self) -> Plane:
        """The edited plane (the original is left untouched; returned as is if unedited)."""
        plane = self.plane
        if not (self._stat_rows or self._new_events or self._new_lines or self._new_metadata):
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
        if self._new_events:
            columns, new_row = self._reordered_base_columns(metadata)
            stats = self._build_stats(new_row)
            # Row order changed: every typed column is rebuilt from the stats. (Taking the
            # untouched ones into the new order instead measured no faster and kept
            # ~280 MB more resident on a 2.8 M-event profile.)
            refresh = list(schema.WELL_KNOWN_STATS)
        else:
            columns = {name: plane.events[name] for name in plane.events.columns}
            stats = self._build_stats(None)
            refresh = [n for n in schema.WELL_KNOWN_STATS if n in self._touched_names()]
        columns.update(well_known_columns(len(columns["begin_ps"]), stats, refresh))
        order = list(plane.events.columns) + [c for c in columns if c not in plane.events]
        events = pd.DataFrame({c: columns[c] for c in order}, copy=False)
        return dataclasses.replace(
            plane,
            lines=lines,
            events=events,
            stats=stats,
            event_metadata=metadata,
            stat_names=self._stat_names(),
        )

    def _touched_names(self) -> dict:
        """Edited stat names in first-edit order (a dict used as an ordered set)."""
        return dict.fromkeys(name for _, name, *_ in self._stat_rows)

    def _stat_names(self) -> dict:
        names = dict(self.plane.stat_names)
        known = set(names.values())
        next_id = max(names, default=0) + 1
        for name in self._touched_names():
            if name not in known:
                names[next_id] = name
                next_id += 1
        return names

    def _build_stats(self, new_row) -> pd.DataFrame:
        """Old rows (minus replaced ones) and new rows, stably sorted by event.

        ``new_row``: old event row -> row after new events were put in place.
        """
        old = self.plane.stats
        categories = [str(c) for c in old["stat"].cat.categories.tolist()]
        code_of = {name: i for i, name in enumerate(categories)}
        codes = old["stat"].cat.codes.to_numpy().astype(np.int64)
        kept = self._kept_rows(old["event"].to_numpy(), codes, code_of)
        if not kept.any() and not self._stat_rows:
            return old.copy()
        # Nothing replaced: skip copying every column through a mask.
        keep: Union[np.ndarray, slice] = slice(None) if kept.all() else kept
        for _, name, *_ in self._stat_rows:
            code_of.setdefault(name, len(code_of))
        strings = list(old["str_value"].cat.categories)
        string_of = {s: i for i, s in enumerate(strings)}
        parts = [
            (
                old["event"].to_numpy()[keep],
                codes[keep],
                old["kind"].to_numpy()[keep],
                old["int_value"].to_numpy()[keep],
                old["float_value"].to_numpy()[keep],
                old["str_value"].cat.codes.to_numpy().astype(np.int32)[keep],
            )
        ]
        for events, name, kind, ints, floats, strs in self._stat_rows:
            code = np.full(len(events), code_of[name], dtype=np.int64)
            str_codes = np.full(len(events), -1, dtype=np.int32)
            if strs is not None:  # new string values join the table once per distinct value
                str_codes[:] = [
                    -1 if v is None else string_of.setdefault(v, len(string_of)) for v in strs
                ]
            parts.append(
                (events, code, np.full(len(events), kind, dtype=np.int8), ints, floats, str_codes)
            )
        event, code, kind, ints, floats, strs = (np.concatenate(c) for c in zip(*parts))
        if new_row is not None:
            event = new_row[event]
        order = np.argsort(event, kind="stable")
        return pd.DataFrame(
            {
                "event": event[order],
                "stat": _sorted_categorical(code[order], list(code_of)),
                "kind": kind[order].astype(np.int8, copy=False),
                "int_value": ints[order].astype(np.int64, copy=False),
                "float_value": _sparse_floats(floats[order]),
                "str_value": str_categorical(strs[order], list(string_of)),
            },
            copy=False,
        )

    def _kept_rows(self, event_col: np.ndarray, codes: np.ndarray, code_of: dict) -> np.ndarray:
        """Old stat rows that no ``set_stat`` replaced."""
        keep = np.ones(len(event_col), dtype=bool)
        for name, events in self._replaced.items():
            rows = np.flatnonzero(codes == code_of.get(name, -2))
            keep[rows[np.isin(event_col[rows], events)]] = False
        return keep

    def _reordered_base_columns(self, metadata: pd.DataFrame) -> tuple:
        """Base event columns with the new events in place; old row -> new row."""
        events = self._events
        line, meta, begin, dur = (np.concatenate(c) for c in zip(*self._new_events))
        columns = {
            "line": np.concatenate([events["line"].to_numpy(), line.astype(events["line"].dtype)]),
            "metadata_id": np.concatenate([events["metadata_id"].to_numpy(), meta]),
            "begin_ps": np.concatenate([events["begin_ps"].to_numpy(), begin]),
            "duration_ps": np.concatenate([events["duration_ps"].to_numpy(), dur]),
        }
        occurrences = events["occurrences"].to_numpy()
        if not is_zeros_view(occurrences):  # else new events keep it all zero, and free
            added = np.zeros(len(line), dtype=np.int64)
            columns["occurrences"] = np.concatenate([occurrences, added])
        # New events go to their place in their line: by begin, longer first.
        order = line_order(
            columns["line"], columns["begin_ps"], columns["duration_ps"], len(events)
        )
        out = {name: values[order] for name, values in columns.items()}
        out.setdefault("occurrences", zeros_view(len(order)))
        ids = metadata["id"].to_numpy()
        for col in ("name", "display_name"):
            new_names = dict(zip(ids.tolist(), metadata[col].tolist()))
            out[col] = _categorical_with_new(
                events[col], [new_names.get(m, "") for m in meta.tolist()]
            )[order]
        new_row = np.empty(len(order), dtype=np.int64)
        new_row[order] = np.arange(len(order))
        for name in events.columns:
            if name not in out and name not in schema.WELL_KNOWN_STATS:
                # An extra column: new events have no value in it.
                padded = pd.concat([events[name], pd.Series([None] * len(line))], ignore_index=True)
                out[name] = padded.take(order).reset_index(drop=True)
        return out, new_row


def _sparse_floats(values: np.ndarray) -> np.ndarray:
    """``float_value``: zero except on double stats (every bit pattern kept, -0.0 too), so
    only the pages holding those rows are resident."""
    values = values.astype(np.float64, copy=False)
    rows = np.flatnonzero(values.view(np.int64))
    return sparse_values(len(values), np.float64, rows, values[rows])


def _sorted_categorical(codes: np.ndarray, names: list) -> pd.Categorical:
    """Like ``pd.Categorical(object values)``: only used names, sorted, object dtype."""
    used = np.flatnonzero(np.bincount(codes, minlength=len(names)))
    ordered = sorted(used.tolist(), key=lambda c: names[c])
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[ordered] = np.arange(len(ordered))
    categories = pd.Index([names[c] for c in ordered], dtype=object)
    return pd.Categorical.from_codes(remap[codes], categories=categories)


def _categorical_with_new(column: pd.Series, added: list) -> pd.Categorical:
    """Old categorical values followed by new strings, re-categorised like object values."""
    names = [str(c) for c in column.cat.categories.tolist()]
    code_of = {name: i for i, name in enumerate(names)}
    for name in added:
        code_of.setdefault(name, len(code_of))
    codes = np.concatenate(
        [
            column.cat.codes.to_numpy().astype(np.int64),
            np.array([code_of[a] for a in added], dtype=np.int64),
        ]
    )
    return _sorted_categorical(codes, list(code_of))


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


def line_order(line, begin, duration, num_old: int) -> np.ndarray:
    """``np.lexsort((-duration, begin, line))``. The first ``num_old`` rows are usually in
    that order already (each line by begin, longer first): then only the new rows are
    sorted and merged in, after old rows with equal keys (where a stable sort puts them).
    """
    line = np.asarray(line, dtype=np.int64)
    begin = np.asarray(begin, dtype=np.int64)
    minus = -np.asarray(duration, dtype=np.int64)
    if 2 <= num_old < len(line):
        merged = _merged_order(line, begin, minus, num_old)
        if merged is not None:
            return merged
    return np.lexsort((minus, begin, line))


_MAX_TIE = 64  # old rows sharing one (line, begin) beyond which the merge gives up


def _merged_order(line, begin, minus, num_old: int):
    lo = begin.min()
    span_bits = int(begin.max() - lo).bit_length()
    if line.min() < 0 or int(line.max()).bit_length() + span_bits > 62:
        return None
    key = (line << span_bits) | (begin - lo)  # (line, begin) as one ordered int64
    old_key, old_minus = key[:num_old], minus[:num_old]
    same = old_key[1:] == old_key[:-1]
    if not np.all((old_key[1:] > old_key[:-1]) | (same & (old_minus[1:] >= old_minus[:-1]))):
        return None
    new = num_old + np.lexsort((minus[num_old:], key[num_old:]))
    first = np.searchsorted(old_key, key[new], side="left")
    ties = np.searchsorted(old_key, key[new], side="right") - first
    if len(ties) and ties.max() > _MAX_TIE:
        return None
    at = first.copy()
    for k in range(int(ties.max()) if len(ties) else 0):  # old rows of the same (line, begin)
        probe = np.minimum(first + k, num_old - 1)
        at += (k < ties) & (old_minus[probe] <= minus[new])
    return np.insert(np.arange(num_old, dtype=np.int64), at, new)

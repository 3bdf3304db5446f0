"""A columnar index of a trace, built once per host set, for windowed queries.

The trace viewer asks for one time window at a time; answering must cost what is
visible, not what the trace holds. So every shown event gets a *position* in flat
arrays sorted by (row, depth, begin), where a row is one (pid, tid) and depth is the
nesting level inside it. Inside one (row, depth) *segment* events never overlap, so
both ``begin_ps`` and ``end_ps`` are sorted there and two ``searchsorted`` calls find
exactly the events overlapping a window (an event that started long before the window
and still runs is found too: its end is what is searched).

Depth of an event = how many earlier events of its row are still open at its begin
(computed per row inside the compiled layout, or by ``depths`` without it). For
well-nested rows that is the stack depth and same-depth events are disjoint; a row where
they are not (events overlapping without nesting) is re-laid by first-free levels.

``break_key`` serves merging (see ``trace_window``): at pixel size p, a run of narrow
events is cut before position i iff ``break_key[i] >= p``. ``level_for`` keeps, for pixel
sizes 1 ns·4^k, the positions where that holds, so a zoomed-out query visits the cuts
instead of every event; each size is made when a window first needs it.

The layout (a sort by row, then depths and a sort by (row, depth) per row) is
``layout.py``, compiled when built. Per event only source, begin and end are
stored; row, depth and break key follow from the segments and times, the name from the
event's metadata (``rows_at``, ``names_at``..., whole columns on first use), as do the
columns only search, details and the envelope read.

Usage::

    index = build_index([TracePlane(pid=1701, process="vm /host:CPU", plane=host)])
    index.row_pid, index.seg_bounds, index.begin_ps[index.seg_bounds[0]:index.seg_bounds[1]]
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...xspace import schema
from ...xspace.model import Plane
from . import counters, layout, trace_flows
from .levels import LEVEL_FACTOR, pixel_sizes
from .plane_events import PlaneEvents, name_tables, plane_events


@dataclasses.dataclass(frozen=True)
class TracePlane:
    """One plane shown as a process: its pid and process name."""

    pid: int
    process: str
    plane: Plane


@dataclasses.dataclass
class TraceIndex:
    strings: list  # interned event names; name_id indexes it
    processes: list  # [(pid, name)] sorted by pid
    threads: list  # [(pid, tid, name)] sorted by (pid, tid)
    planes: list  # TracePlane per plane_no
    row_pid: np.ndarray  # int64 per row, rows sorted by (pid, tid)
    row_tid: np.ndarray
    seg_row: np.ndarray  # int64 per (row, depth) segment
    seg_depth: np.ndarray
    seg_bounds: np.ndarray  # int64, segment s = positions [bounds[s], bounds[s+1])
    begin_ps: np.ndarray  # int64 per position
    end_ps: np.ndarray
    names: list  # PlaneNames per plane: the string number of a shown event (``names_at``)
    source: np.ndarray  # int32 (int64 past 2**31 events): shown event number (each
    # plane's shown events in turn)
    shown_rows: list  # per plane: its shown event rows, None = all of them
    flows: trace_flows.FlowTable
    value: Optional[np.ndarray]  # float64 per position: a counter sample's value, NaN
    # elsewhere; None when no event has a value
    row_counter: np.ndarray  # bool per row: a counter series (every event has a value)
    span_ps: tuple  # (first begin, last end); (0, 0) without events
    relaid_rows: int = 0
    # Columns and levels made on first use (``group_id``, ``level_for``...).
    lazy: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def num_events(self) -> int:
        return len(self.begin_ps)

    # Row, depth and break key per position follow from the segments and times: made
    # whole only where asked (search, the envelope, tests); windows read them at their
    # items (``rows_at``, ``depths_at``, ``break_keys_at``).
    @property
    def row(self) -> np.ndarray:
        """int32 per position: the row (index into ``row_pid``)."""
        return self._lazy_column("row", lambda: layout.per_position(self.seg_bounds, self.seg_row))

    @property
    def depth(self) -> np.ndarray:
        """int32 per position: the nesting level in its row."""
        make = lambda: layout.per_position(self.seg_bounds, self.seg_depth)  # noqa: E731
        return self._lazy_column("depth", make)

    @property
    def break_key(self) -> np.ndarray:
        """int64 per position: see the module docstring (``layout.break_keys``)."""
        make = lambda: layout.break_keys(self.begin_ps, self.end_ps, self.seg_bounds)  # noqa: E731
        return self._lazy_column("break_key", make)

    @property
    def name_id(self) -> np.ndarray:
        """int32 per position: the event's string number (``strings``)."""

        def make() -> np.ndarray:  # every event's name in input order, then by position
            every = [names.names_of() for names in self.names]
            return _concat(every).astype(np.int32, copy=False)[self.source]

        return self._lazy_column("name_id", make)

    def names_at(self, positions: np.ndarray) -> np.ndarray:
        """int32 string number of each position (``name_id[positions]``)."""
        if "name_id" in self.lazy:
            return self.lazy["name_id"][positions]
        return self._names_of_shown(self.source[positions])

    def _names_of_shown(self, shown: np.ndarray) -> np.ndarray:
        """int32 string number of shown event numbers (each plane's shown events in turn)."""
        if len(self.names) == 1:
            return self.names[0].names_of(shown)
        out = np.zeros(len(shown), dtype=np.int32)
        starts = self._starts()
        plane = np.searchsorted(starts, shown, side="right") - 1
        for k, names in enumerate(self.names):
            mine = np.flatnonzero(plane == k)
            out[mine] = names.names_of(shown[mine] - starts[k])
        return out

    def rows_at(self, positions: np.ndarray) -> np.ndarray:
        """int32 row of each position (``row[positions]``)."""
        if "row" in self.lazy:
            return self.lazy["row"][positions]
        return self.seg_row[layout.segment_of(self.seg_bounds, positions)].astype(np.int32)

    def depths_at(self, positions: np.ndarray) -> np.ndarray:
        """int32 depth of each position (``depth[positions]``)."""
        if "depth" in self.lazy:
            return self.lazy["depth"][positions]
        return self.seg_depth[layout.segment_of(self.seg_bounds, positions)].astype(np.int32)

    def break_keys_at(self, positions: np.ndarray) -> np.ndarray:
        """int64 break key of each position (``break_key[positions]``)."""
        if "break_key" in self.lazy:
            return self.lazy["break_key"][positions]
        return layout.break_keys_at(self.begin_ps, self.end_ps, self.seg_bounds, positions)

    @property
    def plane_no(self) -> np.ndarray:
        """int16 per position: which TracePlane."""
        return self._lazy_column("plane_no", self._plane_no)

    @property
    def event_row(self) -> np.ndarray:
        """Per position: row of plane.events (int32 below 2**31 events, else int64)."""
        return self._lazy_column("event_row", self._event_row)

    @property
    def group_id(self) -> np.ndarray:
        """int64 per position, -1 = none."""
        return self._lazy_column("group_id", self._group_id)

    @property
    def memory_version(self) -> int:
        """Grows with each column or level made on first use (the space store re-measures
        a profile's memory when it changes)."""
        return len(self.lazy) + len(self.lazy.get("levels", ()))

    def _lazy_column(self, name: str, make) -> np.ndarray:
        if name not in self.lazy:
            self.lazy[name] = make()
        return self.lazy[name]

    def _starts(self) -> np.ndarray:
        counts = [_shown_count(tp.plane, rows) for tp, rows in zip(self.planes, self.shown_rows)]
        return np.r_[0, np.cumsum(counts, dtype=np.int64)]

    def _plane_no(self) -> np.ndarray:
        if len(self.planes) == 1:
            return np.zeros(self.num_events, dtype=np.int16)
        starts = self._starts()
        return (np.searchsorted(starts, self.source, side="right") - 1).astype(np.int16)

    def _event_row(self) -> np.ndarray:
        if len(self.planes) == 1 and self.shown_rows[0] is None:
            return self.source  # every event shown: the shown event number is the row
        rows = [_every(tp.plane, r) for tp, r in zip(self.planes, self.shown_rows)]
        return np.concatenate(rows).astype(layout.event_numbers(len(self.source)))[self.source]

    def _group_id(self) -> np.ndarray:
        groups = []
        for tp, rows in zip(self.planes, self.shown_rows):
            events = tp.plane.events
            column = events[schema.GROUP_ID] if schema.GROUP_ID in events else None
            groups.append(_group_ids(column, rows, _shown_count(tp.plane, rows)))
        if not groups:
            return np.zeros(0, dtype=np.int64)
        return (groups[0] if len(groups) == 1 else np.concatenate(groups))[self.source]

    def level_for(self, pixel_ps: float) -> Optional[np.ndarray]:
        """Cut positions (break_key >= size) of the largest pixel size 1 ns·4^k not above
        ``pixel_ps``; None when no size is, or when its cuts skip under half the events."""
        if not self.num_events:
            return None
        lo, hi = self.span_ps
        size = None
        for pixel in pixel_sizes(max(hi - lo, 1) * LEVEL_FACTOR):
            if pixel > pixel_ps:
                break
            size = pixel
        if size is None:
            return None
        made = self.lazy.setdefault("levels", {})
        if size not in made:  # made once per size, when a window first needs it
            cuts = layout.cuts(self.begin_ps, self.end_ps, self.seg_bounds, size)
            made[size] = cuts if 2 * len(cuts) <= self.num_events else None
        return made[size]

    @property
    def levels(self) -> list:
        """[(pixel size, cut positions)] of every size that skips half the events at least."""
        if not self.num_events:
            return []
        lo, hi = self.span_ps
        sizes = pixel_sizes(max(hi - lo, 1) * LEVEL_FACTOR)
        pairs = [(size, self.level_for(size)) for size in sizes]
        return [(size, cuts) for size, cuts in pairs if cuts is not None]

    def positions_of(self, plane_no: int) -> np.ndarray:
        """Position of each event row of one plane (-1 where not shown)."""
        plane = self.planes[plane_no].plane
        out = np.full(len(plane.events), -1, dtype=np.int64)
        mine = np.flatnonzero(self.plane_no == plane_no)
        out[self.event_row[mine]] = mine
        return out


def _shown_count(plane: Plane, rows: Optional[np.ndarray]) -> int:
    return len(plane.events) if rows is None else len(rows)


def _every(plane: Plane, rows: Optional[np.ndarray]) -> np.ndarray:
    return np.arange(len(plane.events), dtype=np.int64) if rows is None else rows


def build_index(shown: list) -> TraceIndex:
    """The index of the events of ``shown`` planes (list of ``TracePlane``)."""
    parts = [plane_events(tp.plane) for tp in shown]
    strings, names = name_tables(parts)
    threads = sorted({t for tp, p in zip(shown, parts) for t in _threads(tp, p)})
    shown_pids = {pid for pid, _, _ in threads}  # planes without events are not shown
    row_keys = np.array([(pid, tid) for pid, tid, _ in threads], dtype=np.int64).reshape(-1, 2)
    line, line_row = _lines(shown, parts, row_keys)
    begin, duration = (_concat([getattr(p, k) for p in parts]) for k in ("begin", "duration"))
    lay = layout.lay_out_events(line, line_row, begin, duration, len(row_keys))
    del line, begin, duration
    value, row_counter = _values(shown, parts, lay, len(row_keys))
    index = TraceIndex(
        strings=strings,
        processes=sorted({(tp.pid, tp.process) for tp in shown if tp.pid in shown_pids}),
        threads=threads,
        planes=list(shown),
        row_pid=row_keys[:, 0].copy(),
        row_tid=row_keys[:, 1].copy(),
        seg_row=lay.seg_row,
        seg_depth=lay.seg_depth,
        seg_bounds=lay.seg_bounds,
        begin_ps=lay.begin,
        end_ps=lay.end,
        names=names,
        source=lay.source,
        shown_rows=[p.rows for p in parts],
        flows=trace_flows.FlowTable.empty(),
        value=value,
        row_counter=row_counter,
        span_ps=(int(lay.begin.min()), int(lay.end.max())) if len(lay.begin) else (0, 0),
        relaid_rows=lay.relaid_rows,
    )
    index.flows = trace_flows.build_flows(index, index.shown_rows)
    return index


def _concat(arrays: list) -> np.ndarray:
    if len(arrays) == 1:  # one shown plane: no copy
        return arrays[0]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _threads(tp: TracePlane, part: PlaneEvents) -> set:
    lines = tp.plane.lines
    tids = lines["tid"].to_numpy().astype(np.int64)[part.used_lines]
    labels = lines["label"].to_numpy()[part.used_lines]
    return {(tp.pid, int(t), str(n) if isinstance(n, str) else "") for t, n in zip(tids, labels)}


def _lines(shown: list, parts: list, row_keys: np.ndarray) -> tuple:
    """(int32 line number per event across planes, int64 row of each such line)."""
    rows_of_lines = [
        _row_of(tp.pid, tp.plane.lines["tid"].to_numpy().astype(np.int64), row_keys) for tp in shown
    ]
    if len(parts) == 1:
        return parts[0].line, rows_of_lines[0]
    offsets = np.r_[0, np.cumsum([len(r) for r in rows_of_lines])].astype(np.int32)
    line = [p.line + offsets[i] for i, p in enumerate(parts)]
    return _concat(line).astype(np.int32, copy=False), _concat(rows_of_lines).astype(np.int64)


def _values(shown: list, parts: list, lay: layout.Layout, num_rows: int) -> tuple:
    """(value per position or None, counter flag per row): see ``counters``."""
    per_plane = [counters.event_values(tp.plane, p.rows) for tp, p in zip(shown, parts)]
    if all(v is None for v in per_plane):
        return None, np.zeros(num_rows, dtype=bool)
    filled = [np.full(len(p), np.nan) if v is None else v for v, p in zip(per_plane, parts)]
    value = _concat(filled)[lay.source]
    return value, counters.counter_rows(lay.seg_row, lay.seg_bounds, value, num_rows)


def _group_ids(group: Optional[pd.Series], rows: Optional[np.ndarray], count: int) -> np.ndarray:
    if group is None:
        return np.full(count, -1, dtype=np.int64)
    if str(group.dtype) in ("Int64", "Int32"):  # preprocessed columns: no float round trip
        values = group.to_numpy(dtype=np.int64, na_value=-1)
        return values if rows is None else values[rows]
    values = group.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values if rows is None else values[rows]
    return np.where(np.isnan(values), -1, values).astype(np.int64)


def _row_of(pid: int, tid: np.ndarray, row_keys: np.ndarray) -> np.ndarray:
    """Row number of each tid of one pid, rows being sorted (pid, tid) pairs."""
    # tids are taken mod 2**32 and pids are small, so one int64 orders pairs the same way.
    keys = (row_keys[:, 0] << 32) | row_keys[:, 1]
    return np.searchsorted(keys, (np.int64(pid) << 32) | tid)

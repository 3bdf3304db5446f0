"""A columnar index of a trace, built once per host set, for windowed queries.

The trace viewer asks for one time window at a time; answering must cost what is
visible, not what the trace holds. So every shown event gets a *position* in flat
arrays sorted by (row, depth, begin), where a row is one (pid, tid) and depth is the
nesting level inside it. Inside one (row, depth) *segment* events never overlap (each
begins at or after the previous one's end), so begins are sorted there and every end
before an event's is at most its begin: a binary search of the window's start among
the begins (``search_begins``), and one look at the end of the event just before (it
may still run) find exactly the events overlapping a window.

Depth of an event = how many earlier events of its row are still open at its begin
(computed per row inside the compiled layout, or by ``depths`` without it). For
well-nested rows that is the stack depth and same-depth events are disjoint; a row where
they are not (events overlapping without nesting) is re-laid by first-free levels.

``break_key`` serves merging (see ``trace_window``): at pixel size p, a run of narrow
events is cut before position i iff ``break_key[i] >= p``. ``level_for`` keeps, for pixel
sizes 1 ns·4^k, the positions where that holds, so a zoomed-out query visits the cuts
instead of every event; each size is made when a window first needs it.

The layout (a sort by row, then depths and a sort by (row, depth) per row) is
``layout.py``, compiled when built. Per event only ``source`` is stored (4 bytes: the
shown event at each position); row and depth follow from the segments, begin and end
from the event's ``begin_ps`` and ``duration_ps`` in its plane (the profile keeps
them anyway), the break key from those times, the name from the event's metadata
(``rows_at``, ``begins_at``, ``ends_at``, ``names_at``...; whole columns are made on
first use only for search, the envelope and tests).

Usage::

    index = build_index([TracePlane(pid=1701, process="vm /host:CPU", plane=host)])
    index.row_pid, index.seg_bounds, index.begins_at(np.arange(index.num_events))
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...kernels import passes
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
    names: list  # PlaneNames per plane: the string number of a shown event (``names_at``)
    source: np.ndarray  # int32 (int64 past 2**31 events): shown event number (each
    # plane's shown events in turn)
    shown_rows: list  # per plane: its shown event rows, None = all of them
    times: list  # per plane: (begin_ps, duration_ps) int64, the plane's columns (views)
    flows: trace_flows.FlowTable
    value: Optional[np.ndarray]  # float64 per position: a counter sample's value, NaN
    # elsewhere; None when no event has a value
    row_counter: np.ndarray  # bool per row: a counter series (every event has a value)
    span_ps: tuple  # (first begin, last end); (0, 0) without events
    relaid_rows: int = 0
    # The begin at every layout.SAMPLE_EVERY-th position (``search_begins``).
    begin_sample: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    # Columns and levels made on first use (``group_id``, ``level_for``...).
    lazy: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def num_events(self) -> int:
        return len(self.source)

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
    def begin_ps(self) -> np.ndarray:
        """int64 per position: the begin (``begins_at`` of all; the index keeps none)."""
        return self._lazy_column("begin_ps", lambda: self.begins_at(np.arange(self.num_events)))

    @property
    def break_key(self) -> np.ndarray:
        """int64 per position: see the module docstring (``layout.break_keys``)."""

        def make() -> np.ndarray:
            every = np.arange(self.num_events)
            return layout.break_keys(
                self.begins_at(every), self.durations_at(every), self.seg_bounds
            )

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
        return self._per_plane(shown, np.int32, lambda k, events: self.names[k].names_of(events))

    def begins_at(self, positions: np.ndarray) -> np.ndarray:
        """int64 begin of each position's event (its plane's ``begin_ps``)."""
        return self._times_of(self.source[positions], 0)

    def durations_at(self, positions: np.ndarray) -> np.ndarray:
        """int64 duration of each position's event (its plane's ``duration_ps``)."""
        return self._times_of(self.source[positions], 1)

    def times_at(self, positions: np.ndarray) -> tuple:
        """(begins, durations) of the positions' events: ``begins_at`` and ``durations_at``
        with one lookup of the events."""
        shown = self.source[positions]
        return self._times_of(shown, 0), self._times_of(shown, 1)

    def ends_at(self, positions: np.ndarray) -> np.ndarray:
        """int64 end of each position's event: begin + duration (wrapping as numpy does)."""
        begins, durations = self.times_at(positions)
        return begins + durations

    def _times_of(self, shown: np.ndarray, column: int) -> np.ndarray:
        def of_plane(k: int, events: np.ndarray) -> np.ndarray:
            rows = self.shown_rows[k]
            return self.times[k][column][events if rows is None else rows[events]]

        return self._per_plane(shown, np.int64, of_plane)

    def shown_times(self, column: int) -> np.ndarray:
        """int64 begin (column 0) or duration (1) per shown event number (``source``
        values): the plane's own column when one plane shows every event, else a copy
        made for the caller's pass."""
        parts = [
            t[column] if rows is None else t[column][rows]
            for t, rows in zip(self.times, self.shown_rows)
        ]
        return _concat(parts)

    def search_begins(self, first: np.ndarray, stop: np.ndarray, value: int, side: str):
        """Per range [first, stop) of positions inside a segment, ``first +
        np.searchsorted(begins, value, side)`` (``layout.search_begins``)."""
        return layout.search_begins(self.begins_at, self.begin_sample, first, stop, value, side)

    def _per_plane(self, shown: np.ndarray, dtype: type, of_plane) -> np.ndarray:
        """``of_plane(k, event numbers in plane k)`` at shown event numbers of any planes."""
        if len(self.planes) == 1:
            return of_plane(0, shown).astype(dtype, copy=False)
        out: np.ndarray = np.zeros(len(shown), dtype=dtype)
        starts = self._starts()
        plane = np.searchsorted(starts, shown, side="right") - 1
        for k in range(len(self.planes)):
            mine = np.flatnonzero(plane == k)
            out[mine] = of_plane(k, shown[mine] - starts[k])
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
        return layout.break_keys_at(self.seg_bounds, positions, self.times_at)

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
            times = self.shown_times(0), self.shown_times(1)
            cuts = layout.cuts(*times, self.source, self.seg_bounds, size)
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


def _times(plane: Plane) -> tuple:
    """(begin_ps, duration_ps) of a plane as int64 arrays: views of its columns."""
    return tuple(passes._int64(plane.events[k].to_numpy()) for k in ("begin_ps", "duration_ps"))


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
        names=names,
        source=lay.source,
        shown_rows=[p.rows for p in parts],
        times=[_times(tp.plane) for tp in shown],
        flows=trace_flows.FlowTable.empty(),
        value=value,
        row_counter=row_counter,
        span_ps=(0, 0),
        relaid_rows=lay.relaid_rows,
    )
    index.span_ps = layout.span(index.seg_bounds, index.times_at)
    index.begin_sample = index.begins_at(np.arange(0, index.num_events, layout.SAMPLE_EVERY))
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

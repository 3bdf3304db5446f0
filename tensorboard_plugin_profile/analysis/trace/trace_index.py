"""A columnar index of a trace, built once per host set, for windowed queries.

The trace viewer asks for one time window at a time; answering must cost what is
visible, not what the trace holds. So every shown event gets a *position* in flat
arrays sorted by (row, depth, begin), where a row is one (pid, tid) and depth is the
nesting level inside it. Inside one (row, depth) *segment* events never overlap, so
both ``begin_ps`` and ``end_ps`` are sorted there and two ``searchsorted`` calls find
exactly the events overlapping a window (an event that started long before the window
and still runs is found too: its end is what is searched).

Depth of an event = how many earlier events of its row are still open at its begin
(``depths.row_depths``: one compiled pass, or sorted ends without the extension). For
well-nested rows that is the stack depth and same-depth events are disjoint; a row where
they are not (events overlapping without nesting) is re-laid by first-free levels.

``break_key`` serves merging (see ``trace_window``): at pixel size p, a run of narrow
events is cut before position i iff ``break_key[i] >= p``. ``levels`` keep, for pixel
sizes 1 ns·4^k, the positions where that holds, so a zoomed-out query visits the cuts
instead of every event.

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
from .. import graph_passes
from . import counters, depths, trace_flows
from .levels import LEVEL_FACTOR, pixel_sizes

_NO_BREAK = np.iinfo(np.int64).max


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
    name_id: np.ndarray  # int32
    depth: np.ndarray  # int32
    row: np.ndarray  # int32
    group_id: np.ndarray  # int64, -1 = none
    plane_no: np.ndarray  # int16: which TracePlane
    event_row: np.ndarray  # int64: row of plane.events
    break_key: np.ndarray  # int64
    levels: list  # [(pixel_ps, positions with break_key >= pixel_ps)]
    flows: trace_flows.FlowTable
    value: np.ndarray  # float64 per position: a counter sample's value, NaN elsewhere
    row_counter: np.ndarray  # bool per row: a counter series (every event has a value)
    relaid_rows: int = 0

    @property
    def num_events(self) -> int:
        return len(self.begin_ps)

    @property
    def span_ps(self) -> tuple:
        if not self.num_events:
            return (0, 0)
        return int(self.begin_ps.min()), int(self.end_ps.max())

    def positions_of(self, plane_no: int) -> np.ndarray:
        """Position of each event row of one plane (-1 where not shown)."""
        plane = self.planes[plane_no].plane
        out = np.full(len(plane.events), -1, dtype=np.int64)
        mine = np.flatnonzero(self.plane_no == plane_no)
        out[self.event_row[mine]] = mine
        return out


def build_index(shown: list) -> TraceIndex:
    """The index of the events of ``shown`` planes (list of ``TracePlane``)."""
    parts = [_plane_columns(i, tp) for i, tp in enumerate(shown)]
    strings, parts = _intern(parts)
    cols = {k: _concat([p[k] for p in parts], k) for k in _COLUMNS}
    threads = sorted({t for p in parts for t in p["threads"]})
    shown_pids = {pid for pid, _, _ in threads}  # planes without events are not shown
    row_keys = np.array([(pid, tid) for pid, tid, _ in threads], dtype=np.int64).reshape(-1, 2)
    # Row of each event through its line (one lookup per line, not per event).
    row = _concat([_row_of(p["pid"], p["line_tid"], row_keys)[p["line"]] for p in parts], "row")
    order = _time_order(row, cols["begin"], cols["end"])
    row, begin, end = row[order], cols["begin"][order], cols["end"][order]
    depth, relaid = depths.row_depths(row, begin, end, len(row_keys))
    by_depth = _by_depth(row, depth, len(row_keys))  # stable: begin order inside a segment
    order = order[by_depth]
    row, depth, begin, end = row[by_depth], depth[by_depth], begin[by_depth], end[by_depth]
    seg_row, seg_depth, bounds = _segments(row, depth)
    key = _break_keys(begin, end, bounds)
    positions = np.empty(len(order), dtype=np.int64)
    positions[order] = np.arange(len(order))
    index = TraceIndex(
        strings=strings,
        processes=sorted({(tp.pid, tp.process) for tp in shown if tp.pid in shown_pids}),
        threads=threads,
        planes=list(shown),
        row_pid=row_keys[:, 0].copy(),
        row_tid=row_keys[:, 1].copy(),
        seg_row=seg_row,
        seg_depth=seg_depth,
        seg_bounds=bounds,
        begin_ps=begin,
        end_ps=end,
        name_id=cols["name"][order],
        depth=depth.astype(np.int32),
        row=row.astype(np.int32),
        group_id=cols["group"][order],
        plane_no=cols["plane"][order],
        event_row=cols["event"][order],
        break_key=key,
        levels=_levels(key, begin, end),
        flows=trace_flows.FlowTable.empty(),
        value=cols["value"][order],
        row_counter=counters.counter_rows(row, cols["value"][order], len(row_keys)),
        relaid_rows=relaid,
    )
    index.flows = trace_flows.build_flows(index, positions, [p["event"] for p in parts])
    return index


_COLUMNS = ("begin", "end", "name", "group", "plane", "event", "value")
_DTYPES = {"name": np.int32, "plane": np.int16, "value": np.float64}


def _concat(arrays: list, key: str) -> np.ndarray:
    dtype = _DTYPES.get(key, np.int64)
    if len(arrays) == 1:  # one shown plane: no copy
        return arrays[0].astype(dtype, copy=False)
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype)


def _plane_columns(plane_no: int, tp: TracePlane) -> dict:
    """Per shown event of one plane: pid, tid, times, local name id, group, source row."""
    plane, ev = tp.plane, tp.plane.events
    lines = plane.lines
    shown_lines = (lines["label"] != schema.ASYNC_XLA_OPS_LINE).to_numpy()
    line_no = ev["line"].to_numpy()
    keep = shown_lines[line_no] & ~ev["name"].isin(schema.INTERNAL_EVENTS).to_numpy()
    rows = np.flatnonzero(keep)
    tids = lines["tid"].to_numpy().astype(np.int64)
    labels, local_name = _event_labels(plane, rows)
    used = np.zeros(len(lines), dtype=bool)
    used[line_no[rows]] = True
    begin = ev["begin_ps"].to_numpy()[rows]
    group = ev[schema.GROUP_ID] if schema.GROUP_ID in ev else None
    return {
        "pid": tp.pid,
        "line_tid": tids,
        "line": line_no[rows],
        "begin": begin,
        "end": begin + ev["duration_ps"].to_numpy()[rows],
        "labels": labels,
        "name": local_name,
        "group": _group_ids(group, rows),
        "plane": np.full(len(rows), plane_no, dtype=np.int16),
        "event": rows.astype(np.int64),
        "value": counters.event_values(plane, rows),
        "threads": _threads(tp.pid, tids[used], lines["label"].to_numpy()[used]),
    }


def _threads(pid: int, tids: np.ndarray, labels: np.ndarray) -> set:
    return {(pid, int(t), str(n) if isinstance(n, str) else "") for t, n in zip(tids, labels)}


def _group_ids(group: Optional[pd.Series], rows: np.ndarray) -> np.ndarray:
    if group is None:
        return np.full(len(rows), -1, dtype=np.int64)
    if str(group.dtype) == "Int64":  # the preprocessed column: no float round trip
        values = group.to_numpy(dtype=np.int64, na_value=-1)
        return values if len(rows) == len(values) else values[rows]
    values = group.to_numpy(dtype=np.float64, na_value=np.nan)[rows]
    return np.where(np.isnan(values), -1, values).astype(np.int64)


def _event_labels(plane: Plane, rows: np.ndarray) -> tuple:
    """(label strings, label id per shown event): display name, else name; step_name wins."""
    meta = plane.event_metadata
    ids = meta["id"].to_numpy()
    order = np.argsort(ids, kind="stable")
    names = meta["name"].astype(object).fillna("").to_numpy()
    displays = meta["display_name"].astype(object).fillna("").to_numpy()
    label = np.where(displays != "", displays, names)
    for mid, step in plane.metadata_stat(schema.STEP_NAME).items():
        label[ids == mid] = str(step)
    event_mid = plane.events["metadata_id"].to_numpy()[rows]
    meta_row = _metadata_rows(ids, order, event_mid)
    labels = list(label) + [""]  # the last label: an id no metadata declares
    local = meta_row.astype(np.int64)
    if schema.STEP_NAME in plane.events:
        steps, named = _step_names(plane.events[schema.STEP_NAME], rows)
        if len(named):
            codes, uniques = pd.factorize(pd.Series(steps.astype(str)))
            local[named] = len(labels) + codes
            labels += list(uniques)
    return labels, local


def _step_names(column: pd.Series, rows: np.ndarray) -> tuple:
    """(step names, their positions in ``rows``) of the rows that have one."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # names per category, not per event
        codes = column.cat.codes.to_numpy()[rows]
        named = np.flatnonzero(codes >= 0)
        return np.asarray(column.cat.categories, dtype=object)[codes[named]], named
    steps = column.to_numpy(dtype=object)[rows]
    named = np.flatnonzero(pd.notna(steps))
    return steps[named], named


def _metadata_rows(ids: np.ndarray, order: np.ndarray, event_mid: np.ndarray) -> np.ndarray:
    """Row of each event's metadata in ``ids``; ``len(ids)`` where no metadata has the id."""
    if not len(ids):
        return np.zeros(len(event_mid), dtype=np.int64)
    if 0 <= ids.min() and ids.max() < 4 * len(ids) + 4096:  # dense ids: one table lookup
        unique, first = np.unique(ids, return_index=True)  # duplicates: the first row
        table = np.full(int(ids.max()) + 2, len(ids), dtype=np.int64)
        table[unique] = first
        mid = np.asarray(event_mid).astype(np.int64, copy=False)
        return table[np.clip(mid, -1, len(table) - 1)]  # negative, past the end: no row
    sorted_ids = ids[order]
    pos = np.minimum(np.searchsorted(sorted_ids, event_mid), len(ids) - 1)
    return np.where(sorted_ids[pos] == event_mid, order[pos], len(ids))


def _intern(parts: list) -> tuple:
    """One string table for all planes; local name ids become global ones."""
    every = [s for p in parts for s in p["labels"]]
    codes, uniques = pd.factorize(pd.Series(every, dtype=object))
    start = 0
    for p in parts:
        mapping = codes[start : start + len(p["labels"])].astype(np.int32)
        start += len(p["labels"])
        p["name"] = mapping[p["name"]] if len(p["name"]) else p["name"]
    return [str(s) for s in uniques], parts


def _row_of(pid: int, tid: np.ndarray, row_keys: np.ndarray) -> np.ndarray:
    """Row number of each tid of one pid, rows being sorted (pid, tid) pairs."""
    # tids are taken mod 2**32 and pids are small, so one int64 orders pairs the same way.
    keys = (row_keys[:, 0] << 32) | row_keys[:, 1]
    return np.searchsorted(keys, (np.int64(pid) << 32) | tid)


def _time_order(row: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Positions sorted by (row, begin, longest first): parents before children.

    Each line's events already come in that order (preprocessing keeps it), so a
    stable sort by row alone usually suffices; it is checked, else a full lexsort
    (both keep equal keys in input order, so the result is the same).
    """
    small = row.astype(np.int16) if len(row) and row.max() < 2**15 else row
    order = np.argsort(small, kind="stable")  # radix sort for 16-bit keys
    r, b = row[order], begin[order]
    minus = b - end[order]
    same_row, same_begin = r[1:] == r[:-1], b[1:] == b[:-1]
    ordered = ~same_row | (b[1:] > b[:-1]) | (same_begin & (minus[1:] >= minus[:-1]))
    if ordered.all():
        return order
    return np.lexsort((begin - end, begin, row))


def _by_depth(row: np.ndarray, depth: np.ndarray, num_rows: int) -> np.ndarray:
    """The stable order by (row, depth) of positions sorted by row: a counting sort on
    one dense key per (row, depth), which ``np.lexsort((depth, row))`` equals."""
    if not len(row) or depth.min() < 0:
        return np.lexsort((depth, row))
    bounds = np.searchsorted(row, np.arange(num_rows + 1))
    starts = bounds[:-1][bounds[:-1] < bounds[1:]]
    top = np.zeros(num_rows, dtype=np.int64)
    top[row[starts]] = np.maximum.reduceat(depth, starts)
    base = np.r_[0, np.cumsum(top + 1)]
    key = base[row] + depth
    return graph_passes.csr(key, np.arange(len(row), dtype=np.int64), int(base[-1]))[1]


def _segments(row: np.ndarray, depth: np.ndarray) -> tuple:
    starts = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (depth[1:] != depth[:-1])])
    if not len(row):
        starts = np.zeros(0, dtype=np.int64)
    bounds = np.r_[starts, len(row)].astype(np.int64)
    return row[starts].astype(np.int64), depth[starts].astype(np.int64), bounds


def _break_keys(begin: np.ndarray, end: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """max(gap before, own duration, previous duration); no break across segments."""
    dur = end - begin
    key = np.full(len(begin), _NO_BREAK, dtype=np.int64)
    if len(begin) > 1:
        gap = begin[1:] - end[:-1]
        key[1:] = np.maximum(np.maximum(gap, dur[1:]), dur[:-1])
    key[bounds[:-1]] = _NO_BREAK
    return key


def _levels(key: np.ndarray, begin: np.ndarray, end: np.ndarray) -> list:
    """Cut positions per pixel size; only sizes that skip at least half the events."""
    if not len(key):
        return []
    span = int(end.max() - begin.min())
    out = []
    cuts = None
    for pixel in pixel_sizes(max(span, 1) * LEVEL_FACTOR):
        # Sizes grow, so each level's cuts are a subset of the previous level's.
        cuts = np.flatnonzero(key >= pixel) if cuts is None else cuts[key[cuts] >= pixel]
        if 2 * len(cuts) <= len(key):
            out.append((pixel, cuts.astype(np.int32 if len(key) < 2**31 else np.int64)))
    return out

"""Flow arrows of a trace index: which events each flow ties, in time order.

Preprocessing leaves ``flow`` stats (uint64: direction bits 0-1, id bits 2-57, category
bits 58-63; several per event possible). Here every (event, flow) pair becomes a flow
*end*; ends of one flow sorted by time give *arrows* between consecutive ends. Arrows
are kept sorted by the time of their first end, plus an order by the time of their
second end, so a window finds the arrows touching it with ``searchsorted``.

Flow ids are salted per host upstream and only meaningful inside one host, so a flow is
keyed by (host, id), the host being ``pid // 1000`` (the trace's host offset).

Usage::

    flows = build_flows(index, event_rows_per_plane)
    flows.arrow_from, flows.arrow_to        # positions in the index
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...kernels import passes
from ...xspace import schema
from . import layout
from .levels import pixel_sizes

# Flow categories by context type (docs/conversion.md §3.2); Generic/Legacy have none.
CATEGORY_NAMES = (
    "", "", "tf_exec", "tfrt_exec", "batch_sched", "PjRt", "as_batch_sched", "tfrt_rt",
    "tpu_embed", "gpu_launch", "batcher", "tpu_stream", "tpu_launch", "pathways_exec",
    "pjrt_library_call", "threadpool_event", "jax_serving", "sparsecore_offload",
)  # fmt: skip
DIRECTIONS = ("", "in", "out", "inout")
_ID_MASK = np.uint64((1 << 56) - 1)


@dataclasses.dataclass
class FlowTable:
    # Ends sorted by (flow, time): one row per (event, flow stat). Positions, flow numbers
    # and arrow numbers are int32 below 2**31 events and ends (``layout.event_numbers``).
    end_pos: np.ndarray  # position in the index
    end_flow: np.ndarray  # dense flow number
    end_direction: np.ndarray  # int8: 1 in, 2 out, 3 in and out
    end_category: np.ndarray  # int16 context type
    # Arrows between consecutive ends of a flow, sorted by their first end's time.
    arrow_from: np.ndarray
    arrow_to: np.ndarray
    arrow_flow: np.ndarray
    arrow_category: np.ndarray
    from_ps: np.ndarray  # begin of the first end's event, sorted
    to_order: np.ndarray  # arrows ordered by their second end's time
    to_ps: np.ndarray  # sorted second-end times
    # Level of detail: an arrow is drawn at pixel size p when one of its events is at
    # least p long (``arrow_key``). Per pixel size 1 ns·4^k, the arrows that qualify, as
    # (pixel, from-side arrows, their from times, to-side arrows, their to times).
    arrow_key: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    levels: list = dataclasses.field(default_factory=list)

    @classmethod
    def empty(cls) -> FlowTable:
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z.astype(np.int8), z.astype(np.int16), z, z, z, z, z, z, z, z, [])

    @property
    def begin_of_to(self) -> np.ndarray:
        """Time of each arrow's second end, by arrow."""
        out = np.empty(len(self.to_order), dtype=np.int64)
        out[self.to_order] = self.to_ps
        return out

    def arrows_at(self, pixel_ps: float) -> tuple:
        """(from-side arrows, from times, to-side arrows, to times) that may show at a pixel."""
        chosen = None
        for level in self.levels:
            if level[0] <= pixel_ps:
                chosen = level
        if chosen is not None:
            return chosen[1:]
        return np.arange(len(self.from_ps)), self.from_ps, self.to_order, self.to_ps

    def __len__(self) -> int:
        return len(self.arrow_from)

    def ends_of(self, flow: int) -> slice:
        lo, hi = np.searchsorted(self.end_flow, [flow, flow + 1])
        return slice(int(lo), int(hi))


def build_flows(index, event_rows: list) -> FlowTable:
    """Flows of an index (``event_rows``: per plane, its shown rows; None = every row)."""
    pos, values, hosts, begin, duration = _flow_stats(index, event_rows)
    if not len(pos):
        return FlowTable.empty()
    number_type = layout.event_numbers(max(len(index.source), len(pos)))
    ids = (values >> np.uint64(2)) & _ID_MASK
    keyed = (hosts.astype(np.uint64) << np.uint64(56)) | ids
    del ids, hosts  # read no more: freed before the sort's buffers are taken
    # Ends by (flow key, time, position), the dense flow number being the key's rank: one
    # unstable sort of the key, then each flow's few ends put in order (``passes.lex_order``).
    order = passes.lex_order(keyed, (begin, pos))
    pos, keyed, values = pos[order].astype(number_type), keyed[order], values[order]
    begin, duration = begin[order], duration[order]
    del order
    flow: np.ndarray = np.cumsum(np.r_[False, keyed[1:] != keyed[:-1]], dtype=np.int64)
    flow = flow.astype(number_type)
    direction = (values & np.uint64(3)).astype(np.int8)
    category = (values >> np.uint64(58)).astype(np.int16)
    pair = np.flatnonzero((flow[1:] == flow[:-1]) & (pos[1:] != pos[:-1]))
    by_from = passes.stable_order(begin[pair])
    first, second = pair[by_from], pair[by_from] + 1  # ends of each arrow, by from time
    to_order: np.ndarray = passes.stable_order(begin[second]).astype(number_type)
    key = np.maximum(duration[first], duration[second])
    table = FlowTable(
        end_pos=pos,
        end_flow=flow,
        end_direction=direction,
        end_category=category,
        arrow_from=pos[first],
        arrow_to=pos[second],
        arrow_flow=flow[first],
        arrow_category=category[first],
        from_ps=begin[first],
        to_order=to_order,
        to_ps=begin[second][to_order],
        arrow_key=key,
    )
    table.levels = _levels(table, int(key.max(initial=0)))
    return table


def _levels(table: FlowTable, longest: int) -> list:
    out = []
    begin_of_to = None  # made once, on the first level kept
    key_by_to = table.arrow_key[table.to_order]
    for pixel in pixel_sizes(longest):
        starting = np.flatnonzero(table.arrow_key >= pixel).astype(table.to_order.dtype)
        if 2 * len(starting) <= len(table.arrow_key):
            ending = table.to_order[key_by_to >= pixel]
            begin_of_to = table.begin_of_to if begin_of_to is None else begin_of_to
            out.append((pixel, starting, table.from_ps[starting], ending, begin_of_to[ending]))
    return out


def _flow_stats(index, event_rows: list) -> tuple:
    """(position, flow value, host, begin, duration) of every flow stat on a shown event.
    Times come from the planes' columns, read in event order (stats are sorted by event),
    not gathered from the index at scattered positions."""
    out: tuple = ([], [], [], [], [])
    offset = 0
    for plane_no, rows in enumerate(event_rows):
        shown = index.planes[plane_no]
        plane = shown.plane
        count = len(plane.events) if rows is None else len(rows)
        stats = plane.stats
        flows = np.flatnonzero((stats["stat"] == schema.FLOW_STAT).to_numpy())
        if len(flows):  # the two columns below are read at the flow stats only
            events = stats["event"].to_numpy()[flows]
            numbers = _shown_numbers(events, rows)
            keep = numbers >= 0
            events = events[keep]
            out[0].append(numbers[keep] + offset)
            out[1].append(stats["int_value"].to_numpy()[flows].view(np.uint64)[keep])
            out[2].append(np.full(len(events), shown.pid // 1000, dtype=np.int64))
            for at, column in ((3, "begin_ps"), (4, "duration_ps")):  # gathered: no 2nd copy
                out[at].append(plane.events[column].to_numpy()[events].astype(np.int64, copy=False))
        offset += count
    if not out[0]:
        z = np.zeros(0, dtype=np.int64)
        return z, z.view(np.uint64), z, z, z
    # One plane (the usual host): its arrays as they are, not copied beside themselves.
    shown_numbers, values, hosts, begin, duration = (
        o[0] if len(o) == 1 else np.concatenate(o) for o in out
    )
    del out
    return _positions_of(index.source, shown_numbers), values, hosts, begin, duration


def _shown_numbers(event_rows: np.ndarray, shown_rows) -> np.ndarray:
    """int64 number among the plane's shown events of each event row (-1: not shown)."""
    event_rows = event_rows.astype(np.int64, copy=False)
    if shown_rows is None:
        return event_rows
    at = np.minimum(np.searchsorted(shown_rows, event_rows), max(len(shown_rows) - 1, 0))
    found = (shown_rows[at] == event_rows) if len(shown_rows) else np.zeros(len(at), bool)
    return np.where(found, at, -1)


def _positions_of(source: np.ndarray, events: np.ndarray) -> np.ndarray:
    """int64 position of each shown event number (``source`` inverted at ``events`` only:
    a bit per event and one pass over ``source``, not a whole inverse permutation)."""
    at = layout.marked_positions(source, events)
    found = source[at]
    order = np.argsort(found, kind="stable")
    if len(events) and bool((events[1:] >= events[:-1]).all()):
        # Stats are sorted by event, planes follow each other: ``events`` ascends, so the
        # n-th distinct one is the n-th found (no binary search).
        nth = np.cumsum(np.r_[False, events[1:] != events[:-1]])
        return at[order][nth].astype(np.int64, copy=False)
    return at[order][np.searchsorted(found[order], events)].astype(np.int64, copy=False)

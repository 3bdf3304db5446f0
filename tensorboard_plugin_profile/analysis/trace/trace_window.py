"""What a time window of a trace shows at a given pixel size, from a ``TraceIndex``.

Per (row, depth) segment two ``searchsorted`` calls among the begins and a look at the
end of the event just before the window give the events overlapping it (closed
intervals; the index keeps no ends, see ``trace_index``). Events at least one pixel
wide come back as themselves; consecutive narrower ones whose gaps are under a pixel
are merged into boxes that keep their count and span, so nothing disappears silently.
The cut before position ``i`` of a segment falls exactly where ``break_key[i] >=
pixel`` (a gap of a pixel or more, or a wide event on either side), so items are runs
between cuts. Zoomed out, the cut positions come from the precomputed level of the
next smaller pixel size: the work follows the number of items returned, not the
number of events in the window.

Usage::

    items = query_window(index, start_ps, end_ps, pixel_ps=(end_ps - start_ps) / 2000)
    items.first, items.count, items.begin_ps, items.end_ps, items.row, items.depth
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from .trace_index import TraceIndex

DEFAULT_MAX_EVENTS = 200_000
DEFAULT_MAX_FLOWS = 20_000


@dataclasses.dataclass
class WindowItems:
    start_ps: int
    end_ps: int
    pixel_ps: float
    first: np.ndarray  # position of the item's first event
    count: np.ndarray  # events in the item (1 = a real event)
    begin_ps: np.ndarray
    end_ps_: np.ndarray
    row: np.ndarray
    depth: np.ndarray
    name_id: np.ndarray
    events: int  # events of the selected rows in the whole trace
    visible: int  # events overlapping the window
    truncated: bool
    arrows: np.ndarray  # indices into index.flows arrows
    flows_truncated: bool

    @property
    def merged(self) -> int:
        """Events folded into boxes of two or more."""
        return int(self.count[self.count > 1].sum())


def query_window(
    index: TraceIndex,
    start_ps: int,
    end_ps: int,
    pixel_ps: float = 0.0,
    rows: Optional[np.ndarray] = None,
    max_events: int = DEFAULT_MAX_EVENTS,
    max_flows: int = DEFAULT_MAX_FLOWS,
) -> WindowItems:
    """Items of the window [start_ps, end_ps] (see the module docstring)."""
    segs = _selected_segments(index, rows)
    lo, hi = _visible_ranges(index, segs, start_ps, end_ps)
    first = _cuts(index, lo, hi, pixel_ps)
    last = _item_ends(first, lo, hi)
    count = last - first + 1
    truncated = len(first) > max_events
    if truncated:
        keep = _fair_cap(index, first, last, max_events)
        first, last, count = first[keep], last[keep], count[keep]
    bounds = index.seg_bounds
    row_selected = _row_mask(index, rows)
    arrows, flows_truncated = window_arrows(
        index, start_ps, end_ps, row_selected, max_flows, pixel_ps
    )
    return WindowItems(
        start_ps=start_ps,
        end_ps=end_ps,
        pixel_ps=pixel_ps,
        first=first,
        count=count,
        begin_ps=index.begins_at(first),
        end_ps_=index.ends_at(last),
        row=index.rows_at(first),
        depth=index.depths_at(first),
        name_id=index.names_at(first),
        events=int((bounds[segs + 1] - bounds[segs]).sum()),
        visible=int((hi - lo).sum()),
        truncated=truncated,
        arrows=arrows,
        flows_truncated=flows_truncated,
    )


def _row_mask(index: TraceIndex, rows: Optional[np.ndarray]) -> np.ndarray:
    mask = np.zeros(len(index.row_pid), dtype=bool)
    if rows is None:
        mask[:] = True
    else:
        mask[rows] = True
    return mask


def _selected_segments(index: TraceIndex, rows: Optional[np.ndarray]) -> np.ndarray:
    if rows is None:
        return np.arange(len(index.seg_row))
    return np.flatnonzero(_row_mask(index, rows)[index.seg_row])


def _visible_ranges(index: TraceIndex, segs: np.ndarray, start_ps: int, end_ps: int) -> tuple:
    """Per segment, positions [lo, hi) of the events overlapping the window."""
    first, stop = index.seg_bounds[segs], index.seg_bounds[segs + 1]
    # Binary searches of every (row, depth) at once: work per segment, not per event.
    lo = index.search_begins(first, stop, start_ps, "left")
    hi = index.search_begins(first, stop, end_ps, "right")
    # Events before lo began before the window; of those only the last can still run
    # at its start (each ended by the next one's begin).
    before = np.flatnonzero(lo > first)
    lo[before[index.ends_at(lo[before] - 1) >= start_ps]] -= 1
    nonempty = lo < hi
    return lo[nonempty], hi[nonempty]


def concat_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)]) without the loop."""
    lengths = np.maximum(stops - starts, 0)
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def _cuts(index: TraceIndex, lo: np.ndarray, hi: np.ndarray, pixel_ps: float) -> np.ndarray:
    """First positions of the items: each range start, then every cut inside it."""
    if pixel_ps <= 0:
        return concat_ranges(lo, hi)
    level = _level_for(index, pixel_ps)
    if level is None:
        inside = concat_ranges(lo + 1, hi)
    else:
        a = np.searchsorted(level, lo + 1, side="left")
        b = np.searchsorted(level, hi, side="left")
        inside = level[concat_ranges(a, b)].astype(np.int64)
    inside = inside[index.break_keys_at(inside) >= pixel_ps]
    return np.sort(np.concatenate([lo, inside]))


def _level_for(index: TraceIndex, pixel_ps: float) -> Optional[np.ndarray]:
    """Cut positions of the largest level pixel size not above ``pixel_ps`` (or None)."""
    return index.level_for(pixel_ps)


def _item_ends(first: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Last position of each item: before the next item of its range, else range end."""
    if not len(first):
        return first
    seg = np.searchsorted(lo, first, side="right") - 1
    nxt = np.r_[first[1:], 0]
    same = np.r_[seg[1:] == seg[:-1], False]
    return np.where(same, nxt, hi[seg]) - 1


def fair_shares(counts: np.ndarray, cap: int) -> np.ndarray:
    """Water-filling: small counts kept whole, the rest share what is left equally."""
    order = np.argsort(counts, kind="stable")
    c = counts[order]
    n = len(c)
    if not n:
        return counts.copy()
    spent = np.r_[0, np.cumsum(c)[:-1]]
    share = (cap - spent) // (n - np.arange(n))
    over = np.flatnonzero(c > share)
    quota = c.copy()
    if len(over):
        k = over[0]
        quota[k:] = max(int(share[k]), 0)
    out = np.empty_like(quota)
    out[order] = quota
    return out


def _fair_cap(index: TraceIndex, first: np.ndarray, last: np.ndarray, cap: int) -> np.ndarray:
    """Mask of items kept under the cap: fair per row, shallow then long ones first."""
    row = index.rows_at(first).astype(np.int64)
    rows, row_of = np.unique(row, return_inverse=True)
    quota = fair_shares(np.bincount(row_of, minlength=len(rows)), cap)
    dur = index.ends_at(last) - index.begins_at(first)
    order = np.lexsort((-dur, index.depths_at(first), row_of))
    starts = np.searchsorted(row_of[order], np.arange(len(rows)))
    rank = np.arange(len(order)) - starts[row_of[order]]
    keep = np.zeros(len(first), dtype=bool)
    keep[order] = rank < quota[row_of[order]]
    return keep


def window_arrows(
    index: TraceIndex,
    start_ps: int,
    end_ps: int,
    row_selected: np.ndarray,
    max_flows: int,
    pixel_ps: float = 0.0,
) -> tuple:
    """Arrows with an end in the window, both rows selected, and one event at least a
    pixel long; evenly sampled in time when more than ``max_flows``."""
    flows = index.flows
    if not len(flows):
        return np.zeros(0, dtype=np.int64), False
    from_ids, from_ps, to_ids, to_ps = flows.arrows_at(pixel_ps)
    a = np.searchsorted(from_ps, start_ps, side="left")
    b = np.searchsorted(from_ps, end_ps, side="right")
    c = np.searchsorted(to_ps, start_ps, side="left")
    d = np.searchsorted(to_ps, end_ps, side="right")
    starting = from_ids[a:b]
    ending = to_ids[c:d]
    # Arrows counted by their first end are those that start inside the window.
    ending = ending[flows.from_ps[ending] < start_ps]
    arrows = np.concatenate([starting, ending])
    if pixel_ps > 0:
        arrows = arrows[flows.arrow_key[arrows] >= pixel_ps]
    arrows = arrows[row_selected[index.rows_at(flows.arrow_from[arrows])]]
    arrows = arrows[row_selected[index.rows_at(flows.arrow_to[arrows])]]
    if len(arrows) <= max_flows:
        return arrows, False
    step = -(-len(arrows) // max(max_flows, 1))
    return np.sort(arrows)[::step][:max_flows], True

"""Counter rows of the trace viewer: the sample values behind a row's events.

A counter series (Chrome-trace ``C`` events, PyTorch allocator memory, docs/chrome_trace.md)
is a line whose every event carries a numeric ``value`` stat (one event per sample, lasting
to the next). The index keeps that value per position (NaN elsewhere) so a window can send
it with the row and the page can draw the series as a chart, not as slices.

    values = event_values(plane, rows)          # per shown event of a plane
    is_counter = counter_rows(index.seg_row, index.seg_bounds, values, num_rows)
    peaks = item_peaks(values, first, count)    # max over each merged box
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...xspace.model import KIND_DOUBLE, KIND_INT64, KIND_UINT64, Plane

VALUE_STAT = "value"


def event_values(plane: Plane, rows: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """float64 ``value`` stat of each event in ``rows`` (None = all) of the plane; NaN when
    it has none. None when no event of the plane has one (no column of NaN to carry)."""
    stats = plane.stats
    if not len(stats):
        return None
    pick = (stats["stat"] == VALUE_STAT).to_numpy()  # stat names are categorical
    if not pick.any():
        return None
    kind = stats["kind"].to_numpy()
    pick = pick & np.isin(kind, (KIND_DOUBLE, KIND_INT64, KIND_UINT64))
    whole = kind[pick] != KIND_DOUBLE
    raw = stats["int_value"].to_numpy()[pick]
    ints = np.where(kind[pick] == KIND_UINT64, raw.view(np.uint64), raw).astype(np.float64)
    floats = stats["float_value"].to_numpy()[pick].astype(np.float64)
    out = np.full(len(plane.events), np.nan)
    out[stats["event"].to_numpy()[pick]] = np.where(whole, ints, floats)
    return out if rows is None else out[rows]


def counter_rows(seg_row, seg_bounds, values: np.ndarray, num_rows: int) -> np.ndarray:
    """bool per row: it has events and every one of them has a finite value (``values``
    per position; the rows are the (row, depth) segments')."""
    valued_before = np.r_[0, np.cumsum(np.isfinite(values))]
    valued = valued_before[seg_bounds[1:]] - valued_before[seg_bounds[:-1]]
    events = np.bincount(seg_row, weights=np.diff(seg_bounds), minlength=num_rows)
    return (events > 0) & (np.bincount(seg_row, weights=valued, minlength=num_rows) == events)


def item_peaks(values: np.ndarray, first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Largest value of each item (positions first .. first + count - 1): a box of
    samples narrower than a pixel shows its peak, so a short spike never disappears."""
    if len(first) == 0:
        return np.zeros(0)
    bounds = np.empty(2 * len(first), dtype=np.int64)
    bounds[0::2], bounds[1::2] = first, first + count
    padded = np.append(values, np.nan)  # an item may end at the last position
    return np.maximum.reduceat(padded, bounds)[0::2]

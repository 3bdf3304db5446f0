"""Typed spans → non-overlapping pieces, as upstream's priority tracker cuts them.

See docs/conversion.md §4.4.

Per step group, span boundaries are sorted by time (ends before starts at equal
times, then higher types first) and every interval between two boundaries goes
to the highest type still open.

Upstream's tracker has one quirk that matters on real profiles: it keeps the
current type as state and only lowers it when an *end* of that type brings its
count to zero. An instant span (zero duration, e.g. a ``ThreadpoolListener``
``Record``/``StartRegion`` marker) at a moment when nothing of its type or
higher is open therefore leaves its type "stuck" on until the next start of
that type or a higher one — its end was sorted before its start, so the
lowering already happened. On JAX CPU profiles this makes the time a host
thread waits for asynchronously dispatched XLA work count as host compute. We
reproduce it with the tracker itself in compiled code (``passes.tracker_top``),
or, without the extension, by stretching such instants to that next start and
sweeping exactly.

Most callers only need the pieces' sums per step window and type: ``breakdown``
gets them without a piece table. Compiled, it packs each boundary into one int64
key (group | time | end-before-start | higher type first), sorts the keys and runs
the tracker over them adding up as it goes (``passes.step_breakdown``); otherwise
it cuts the pieces as below and sums them with numpy, in pieces of whole groups on a
large profile (``PIECE_SPANS``). Both give the same sums.

Usage::

    pieces = non_overlapping(spans)   # spans: group, begin, end, type → same columns
    per_type, total, present = breakdown(spans, (group, begin, end), num_types)
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ...kernels import compiled, passes


def non_overlapping(
    spans: pd.DataFrame, num_types: int, pure_python: Optional[bool] = None
) -> pd.DataFrame:
    """Per group, cuts typed spans into pieces each owned by the highest active type.

    Compiled: one sort and upstream's tracker in one pass. Fallback: the exact
    sweep, then again with stuck instants stretched. Both give the same pieces
    (boundary times are the same set; ``tests/kernels/test_passes.py``).
    """
    if spans.empty:
        return spans.iloc[:0][["group", "begin", "end", "type"]]
    sweep = _Sweep(spans, num_types)
    tracked = passes.tracker_top(sweep.group, sweep.kind, sweep.start, num_types, pure_python)
    if tracked is not None:
        sweep.top = tracked
        return sweep.pieces()
    sweep.sweep_exactly()
    stretched = sweep.stretched_instants()
    if stretched is not None:
        sweep = _Sweep(stretched, num_types)
        sweep.sweep_exactly()
    return sweep.pieces()


# The numpy sweep holds about 250 B per span (boundary arrays, their sorted copies, the
# piece table); above this many spans it runs on pieces of whole groups instead.
PIECE_SPANS = 1 << 20


def breakdown(
    spans: pd.DataFrame,
    windows: tuple,
    num_types: int,
    pure_python: Optional[bool] = None,
    piece_spans: int = PIECE_SPANS,
) -> tuple:
    """Per step window × type: (ps inside the window, ps in all, whether any piece).

    ``windows`` is (group, begin, end) arrays, groups sorted and unique; pieces of
    groups without a window are left out. Three (len(windows), num_types) arrays:
    int64 sums, int64 sums, bool.

    Compiled, the spans' boundaries are packed into one sort key each; where they do not
    fit in 62 bits together (a group spanning the profile), they are packed in pieces of
    consecutive groups that do, as ``keys.PackedSpans`` runs are. Without the extension
    (or for one group too wide alone) the numpy sweep runs, above ``piece_spans`` spans in
    pieces of whole groups of about that many, so its working memory follows the piece,
    not the profile (a larger group is a piece alone). Groups are swept independently,
    so the sums are those of one sweep.
    """
    group = np.ascontiguousarray(windows[0], dtype=np.int64)
    use_compiled = compiled.use_compiled(compiled.load(passes.__name__), pure_python)
    # Only where the compiled tracker sums them: else the keys would go unused.
    if len(spans) and use_compiled:
        packed = _packed(spans, num_types, pure_python)
        if packed is not None:
            return packed_breakdown(packed[0], [(len(packed[0]), packed[1])], windows, num_types)
    shape = (len(group), num_types)
    if len(spans) <= piece_spans and not (len(spans) and use_compiled):
        return _summed_pieces(non_overlapping(spans, num_types, pure_python), windows, shape)
    out = (np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, bool))
    tail_bits = (2 * num_types - 1).bit_length() if use_compiled else None
    for rows in _group_pieces(spans, piece_spans, tail_bits):
        part = spans.iloc[rows]
        packed = _packed(part, num_types, pure_python) if use_compiled else None
        if packed is not None:
            sums = packed_breakdown(packed[0], [(len(packed[0]), packed[1])], windows, num_types)
        else:
            sums = _summed_pieces(non_overlapping(part, num_types, pure_python), windows, shape)
        out[0][...] += sums[0]
        out[1][...] += sums[1]
        out[2][...] |= sums[2]
    return out


def _packed(spans: pd.DataFrame, num_types: int, pure_python: Optional[bool]):
    g, b, e, k = (spans[c].to_numpy(dtype=np.int64) for c in ("group", "begin", "end", "type"))
    return passes.pack_boundaries(g, b, e, k, num_types, pure_python)


def _group_pieces(spans: pd.DataFrame, piece_spans: int, tail_bits: Optional[int]):
    """Row index arrays, each of whole groups in group order: about ``piece_spans`` rows
    (a larger group alone); with ``tail_bits``, also groups whose keys fit in 62 bits
    together (``pack_boundaries``' fields; a group too wide alone is a piece alone)."""
    group = spans["group"].to_numpy(dtype=np.int64)
    order = np.argsort(group, kind="stable")
    group = group[order]
    starts = np.r_[0, np.flatnonzero(np.diff(group)) + 1]  # where each group begins
    if tail_bits is None:
        targets = np.arange(piece_spans, len(group), piece_spans)
        at = np.searchsorted(starts, targets, side="right") - 1  # the start at or before each
        cuts = np.unique(np.r_[0, starts[at], len(group)]).tolist()
    else:
        cuts = _fitting_cuts(spans, order, group[starts], starts, piece_spans, tail_bits)
    del group, starts
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        yield order[lo:hi]


def _fitting_cuts(spans, order, ids, starts, piece_spans: int, tail_bits: int) -> list:
    """Greedy cuts (row positions in ``order``) between groups: each piece as long as its
    keys fit in 62 bits and it holds fewer than ``piece_spans`` rows before its last group.
    One step per group (steps, not events)."""
    times = [spans[c].to_numpy(dtype=np.int64)[order] for c in ("begin", "end")]
    earliest = np.minimum(*(np.minimum.reduceat(t, starts) for t in times))
    latest = np.maximum(*(np.maximum.reduceat(t, starts) for t in times))
    del times
    widths = (latest.view(np.uint64) - earliest.view(np.uint64)).tolist()  # exact, unsigned
    cuts, first_id, first_row, widest = [0], None, 0, 0
    for gid, width, row in zip(ids.tolist(), widths, starts.tolist()):
        wide = max(widest, width)
        fits = first_id is not None and (
            (gid - first_id).bit_length() + wide.bit_length() + tail_bits <= 62
            and row - first_row < piece_spans
        )
        if first_id is not None and not fits:
            cuts.append(row)
            first_id, first_row, wide = gid, row, width
        first_id = gid if first_id is None else first_id
        widest = wide
    return cuts + [len(order)]


def packed_breakdown(key: np.ndarray, runs: list, windows: tuple, num_types: int) -> tuple:
    """``breakdown`` of spans already packed (``passes.pack_boundaries`` keys, sorted
    here in place), compiled only. ``runs``: (stop, layout) per run of whole groups, as
    ``keys.PackedSpans`` holds them; each run is sorted and tracked on its own and adds
    to its own groups' windows, so the sums are those of one sort over all."""
    group, begin, end = (np.ascontiguousarray(w, dtype=np.int64) for w in windows)
    out = [np.zeros((len(group), num_types), dtype=np.int64) for _ in range(3)]
    start = 0
    for stop, layout in runs:
        part = key[start:stop]
        part.sort(kind="stable")  # values only: equal keys are equal boundaries
        if not passes.step_breakdown(part, layout, (group, begin, end), out, False):
            raise RuntimeError("packed spans need the compiled step breakdown")
        start = stop
    return out[0], out[2], out[1].astype(bool)


def _summed_pieces(pieces: pd.DataFrame, windows: tuple, shape: tuple) -> tuple:
    """``breakdown`` from a piece table, with numpy."""
    groups, window_begin, window_end = (np.asarray(w, dtype=np.int64) for w in windows)
    g = pieces["group"].to_numpy(dtype=np.int64)
    slot = np.minimum(np.searchsorted(groups, g), max(len(groups) - 1, 0))
    mine = np.flatnonzero(groups[slot] == g) if len(groups) else np.zeros(0, dtype=np.int64)
    slot = slot[mine]
    piece_begin = pieces["begin"].to_numpy(dtype=np.int64)[mine]
    piece_end = pieces["end"].to_numpy(dtype=np.int64)[mine]
    lo = np.maximum(piece_begin, window_begin[slot])
    overlap = np.maximum(np.minimum(piece_end, window_end[slot]) - lo, 0)
    cell = slot * shape[1] + pieces["type"].to_numpy(dtype=np.int64)[mine]
    size = shape[0] * shape[1]
    per_type = np.zeros(size, dtype=np.int64)
    total = np.zeros(size, dtype=np.int64)
    np.add.at(per_type, cell, overlap)
    np.add.at(total, cell, piece_end - piece_begin)
    present = np.zeros(size, dtype=bool)
    present[cell] = True
    return per_type.reshape(shape), total.reshape(shape), present.reshape(shape)


class _Sweep:
    """Sorted boundaries of one set of spans and the highest open type after each."""

    def __init__(self, spans: pd.DataFrame, num_types: int):
        self.spans = spans
        n = len(spans)
        group = np.repeat(spans["group"].to_numpy(dtype=np.int64), 2)
        time = np.empty(2 * n, dtype=np.int64)
        time[0::2], time[1::2] = spans["begin"].to_numpy(), spans["end"].to_numpy()
        kind = np.repeat(spans["type"].to_numpy(dtype=np.int64), 2)
        start = np.tile(np.array([1, 0], dtype=np.int64), n)
        self.order = _boundary_order(group, time, start, kind, num_types)
        self.group, self.time = group[self.order], time[self.order]
        self.kind, self.start = kind[self.order], start[self.order]
        self.num_types = num_types
        self.top = np.zeros(0, dtype=np.int64)

    def sweep_exactly(self) -> None:
        """The highest open type after each boundary, one pass with a running count
        per type (groups are balanced, so counts are back at zero where a group ends)."""
        self.top = passes.sweep_top(self.group, self.kind, self.start, self.num_types)

    def pieces(self) -> pd.DataFrame:
        group, time, top = self.group, self.time, self.top
        # Non-empty gaps between consecutive boundaries of one group, selected
        # before any table is built (one frame, no filtered copies).
        at = np.flatnonzero((group[:-1] == group[1:]) & (time[1:] > time[:-1]))
        return pd.DataFrame(
            {"group": group[at], "begin": time[at], "end": time[at + 1], "type": top[at]}
        )

    def stretched_instants(self):
        """The spans with stuck instants stretched (see module docstring), or None."""
        spans = self.spans
        instant = np.flatnonzero((spans["end"] == spans["begin"]).to_numpy())
        if not len(instant):
            return None
        # Sorted position of each instant's start boundary (span i has boundaries 2i, 2i+1).
        position = np.empty(len(self.order), dtype=np.int64)
        position[self.order] = np.arange(len(self.order))
        rows = _last_row_of_moment(self.group, self.time)[position[2 * instant]]
        kinds = spans["type"].to_numpy()[instant]
        stuck = kinds > self.top[rows]
        if not stuck.any():
            return None
        ends = spans["end"].to_numpy().copy()
        for kind in np.unique(kinds[stuck]):  # a handful of event types
            chosen = stuck & (kinds == kind)
            ends[instant[chosen]] = self._next_start_time(rows[chosen], kind)
        return spans.assign(end=ends)

    def _next_start_time(self, rows: np.ndarray, kind: int) -> np.ndarray:
        """Time of the first start of ``kind`` or higher after each row, in its group
        (the group's last boundary when there is none)."""
        starts = np.flatnonzero((self.start == 1) & (self.kind >= kind))
        group_last = np.r_[np.flatnonzero(self.group[1:] != self.group[:-1]), len(self.group) - 1]
        fallback = group_last[np.searchsorted(group_last, rows)]
        i = np.searchsorted(starts, rows, side="right")
        found = np.where(i < len(starts), starts[np.minimum(i, len(starts) - 1)], fallback)
        found = np.where(found <= fallback, found, fallback)  # stay in the row's group
        return self.time[found]


def _boundary_order(group, time, start, kind, num_types: int) -> np.ndarray:
    """Time order per group; at equal times ends before starts, then higher types first.

    One stable argsort of a packed int64 key when (group, time, start, type) fit in
    63 bits (always, for real profiles: ~10 bits of group, ~46 of time), else a
    lexsort; both keep equal boundaries in input order, so the orders are the same.
    """
    if not len(group):
        return np.zeros(0, dtype=np.int64)
    g, t = group - group.min(), time - time.min()
    tail = start * num_types + (num_types - 1 - kind)  # in [0, 2 * num_types)
    tail_bits = (2 * num_types - 1).bit_length()
    time_bits = int(t.max()).bit_length()
    if int(g.max()).bit_length() + time_bits + tail_bits > 63:
        return np.lexsort((-kind, start, time, group))
    key = (g << (time_bits + tail_bits)) | (t << tail_bits) | tail
    return np.argsort(key, kind="stable")


def _last_row_of_moment(group: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Per sorted boundary, the last row with the same group and time."""
    same_as_next = (group[1:] == group[:-1]) & (time[1:] == time[:-1])
    run_last = np.r_[np.flatnonzero(~same_as_next), len(group) - 1]
    run_id = np.cumsum(np.r_[True, ~same_as_next]) - 1
    return run_last[run_id]

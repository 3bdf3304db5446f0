"""Search over a whole trace index: names and string arguments.

A pattern is tried once per distinct string (the interned names and the distinct string
stat values of every plane, gathered into one list), never once per event; matching
strings then select events with array lookups. User regexes run bounded, in a worker
with a deadline (``safe_regex``).

Usage::

    positions = search_positions(index, substring_matcher("thunk"))
    index.begins_at(positions)
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
import pandas as pd

from ...xspace.model import KIND_STR
from . import safe_regex
from .trace_index import TraceIndex

# Distinct strings -> mask of those that match.
Matcher = Callable[[Sequence[str]], np.ndarray]


def substring_matcher(text: str) -> Matcher:
    needle = text.casefold()
    return lambda strings: np.fromiter(
        (needle in s.casefold() for s in strings), bool, len(strings)
    )


def regex_matcher(pattern: str) -> Matcher:
    """Raises ``InvalidArgument`` at once for a refused pattern, later past the deadline."""
    safe_regex.check_pattern(pattern)
    return lambda strings: safe_regex.match_strings(pattern, strings)


def search_positions(
    index: TraceIndex, matches: Matcher, rows: Optional[np.ndarray] = None
) -> np.ndarray:
    """Positions of matching events in the selected rows, earliest first."""
    hit = np.zeros(index.num_events, dtype=bool)
    if index.num_events:
        columns = [np.asarray(index.strings, dtype=object)]
        for plane_no in range(len(index.planes)):
            columns.extend(_string_columns(index, plane_no))
        # Hashing, not np.unique: a fixed-width string array as wide as the longest value
        # could be far larger than the values themselves.
        codes, distinct = pd.factorize(np.concatenate(columns), use_na_sentinel=False)
        ok = np.asarray(matches([str(s) for s in distinct]), dtype=bool)[codes]
        bounds = np.cumsum([0] + [len(c) for c in columns])
        masks = [ok[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        hit = masks[0][index.name_id]
        for plane_no in range(len(index.planes)):
            _mark_string_args(index, plane_no, masks[1 + 2 * plane_no : 3 + 2 * plane_no], hit)
    if rows is not None:
        selected = np.zeros(len(index.row_pid), dtype=bool)
        selected[rows] = True
        hit &= np.repeat(selected[index.seg_row], np.diff(index.seg_bounds))
    positions = np.flatnonzero(hit)
    return positions[np.argsort(index.begins_at(positions), kind="stable")]


def _string_stats(plane) -> tuple:
    stats, meta = plane.stats, plane.metadata_stats
    return stats[(stats["kind"] == KIND_STR).to_numpy()], meta[
        (meta["kind"] == KIND_STR).to_numpy()
    ]


def _string_columns(index: TraceIndex, plane_no: int) -> list:
    """The string values of a plane's event stats and of its metadata stats."""
    strs, meta_strs = _string_stats(index.planes[plane_no].plane)
    return [strs["str_value"].to_numpy(dtype=object), meta_strs["str_value"].to_numpy(dtype=object)]


def _mark_string_args(index: TraceIndex, plane_no: int, masks: list, hit: np.ndarray):
    plane = index.planes[plane_no].plane
    strs, meta_strs = _string_stats(plane)
    rows = strs["event"].to_numpy()[masks[0]]
    if len(rows):
        pos = index.positions_of(plane_no)[rows]
        hit[pos[pos >= 0]] = True
    ids = np.unique(meta_strs["metadata_id"].to_numpy()[masks[1]])
    if len(ids):
        mine = index.plane_no == plane_no
        event_ids = plane.events["metadata_id"].to_numpy()[index.event_row[mine]]
        hit[np.flatnonzero(mine)[np.isin(event_ids, ids)]] = True

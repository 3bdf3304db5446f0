"""Search over a whole trace index: names and string arguments.

A pattern is tried once per distinct string (the interned names, the distinct string
stat values of each plane), never once per event; matching strings then select events
with array lookups.

Usage::

    positions = search_positions(index, substring_matcher("thunk"))
    index.begin_ps[positions]
"""

from __future__ import annotations

import re
from typing import Callable, Optional

import numpy as np

from ..xspace.model import KIND_STR
from .trace_index import TraceIndex

Matcher = Callable[[str], bool]


def substring_matcher(text: str) -> Matcher:
    needle = text.casefold()
    return lambda s: needle in s.casefold()


def regex_matcher(pattern: str) -> Matcher:
    """Raises ``re.error`` on a bad pattern (the caller reports it)."""
    compiled = re.compile(pattern)
    return lambda s: compiled.search(s) is not None


def search_positions(
    index: TraceIndex, matches: Matcher, rows: Optional[np.ndarray] = None
) -> np.ndarray:
    """Positions of matching events in the selected rows, earliest first."""
    hit = np.zeros(index.num_events, dtype=bool)
    if index.num_events:
        name_hit = np.fromiter((matches(s) for s in index.strings), bool, len(index.strings))
        hit = name_hit[index.name_id]
        for plane_no in range(len(index.planes)):
            _mark_string_args(index, plane_no, matches, hit)
    if rows is not None:
        selected = np.zeros(len(index.row_pid), dtype=bool)
        selected[rows] = True
        hit &= selected[index.row]
    positions = np.flatnonzero(hit)
    return positions[np.argsort(index.begin_ps[positions], kind="stable")]


def _matching_values(values: np.ndarray, matches: Matcher) -> np.ndarray:
    """Mask of ``values`` (strings) that match, testing each distinct value once."""
    uniques, inverse = np.unique(values.astype(str), return_inverse=True)
    ok = np.fromiter((matches(str(u)) for u in uniques), bool, len(uniques))
    return ok[inverse.reshape(-1)]


def _mark_string_args(index: TraceIndex, plane_no: int, matches: Matcher, hit: np.ndarray):
    plane = index.planes[plane_no].plane
    mine = index.plane_no == plane_no
    stats = plane.stats
    strs = stats[(stats["kind"] == KIND_STR).to_numpy()]
    if len(strs):
        rows = strs["event"].to_numpy()[_matching_values(strs["str_value"].to_numpy(), matches)]
        if len(rows):
            pos = index.positions_of(plane_no)[rows]
            hit[pos[pos >= 0]] = True
    meta = plane.metadata_stats
    strs = meta[(meta["kind"] == KIND_STR).to_numpy()]
    if len(strs):
        ok = _matching_values(strs["str_value"].to_numpy(), matches)
        ids = np.unique(strs["metadata_id"].to_numpy()[ok])
        if len(ids):
            event_ids = plane.events["metadata_id"].to_numpy()[index.event_row[mine]]
            hit[np.flatnonzero(mine)[np.isin(event_ids, ids)]] = True

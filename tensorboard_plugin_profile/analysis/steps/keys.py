"""A host plane's step markers and packed span keys in one compiled pass (``_keys.c``).

``events.host_step_events`` with numpy selects marker and work rows with masks,
gathers four span columns and ``sweep`` packs their boundaries into sort keys:
about ten whole-length temporaries. Compiled, one walk over the event columns in
memory order does all of it with the per-name tables of ``events`` and leaves
out spans that a span of the same step and type covers (they change no sum of the
step breakdown, see ``_keys.c``), so the sort and the tracker see fewer keys.
Without the extension (or with ``TBPROF_PURE_PYTHON=1``) callers use the numpy path;
``tests/analysis/test_step_keys.py`` checks both give the same step database.

Usage::

    if compiled.use_compiled(compiled.load(keys.__name__), pure_python):  # else numpy
        codes, names = per_name.distinct_native(plane.events["name"])
        found = host_step_keys(plane, codes, span_type, stage_type, stage_rows, num_types)
        if found is not None:
            marker_rows, spans = found      # spans: PackedSpans (or an empty span frame)
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...kernels import compiled
from ...xspace import schema
from ...xspace.event_stats import set_rows
from ...xspace.model import Plane

_keys = compiled.load(__name__)

MARKER = -1  # span_type value: a step marker by name
NOT_STEP_WORK = -2  # span_type value: not step work (eager/function wrappers)


@dataclasses.dataclass
class PackedSpans:
    """Typed spans as ``passes.pack_boundaries`` keys (unsorted), run by run.

    ``runs``: (stop, layout) per run of consecutive step groups whose keys fit in 62 bits;
    run r's keys are ``key[previous stop:stop]``, packed with its own layout (its groups'
    widest time sets the time bits). Nearly always one run, with pack_boundaries' keys
    and layout; a group spanning the whole profile widens only its own run.
    """

    key: np.ndarray
    runs: list
    count: int  # spans before covered ones were left out

    @property
    def empty(self) -> bool:
        return self.count == 0

    def __len__(self) -> int:
        return self.count


def host_step_keys(
    plane: Plane,
    name_codes: np.ndarray,
    span_type: np.ndarray,
    stage_type: np.ndarray,
    stage_rows: np.ndarray,
    num_types: int,
    windows: Optional[tuple] = None,
    skip_rows: Optional[np.ndarray] = None,
) -> Optional[tuple]:
    """(marker rows, PackedSpans) of a host plane, or None where the numpy path must
    decide (sparse group ids, or one group wider than 2^56 ps: ``sweep`` then cuts pieces
    instead). Compiled
    only: callers ask ``compiled.use_compiled`` first, as in the usage above.

    ``span_type`` / ``stage_type``: int8 per distinct name of ``per_name.distinct_native``
    (``name_codes`` are its codes) plus one for a missing name: a type, ``MARKER``
    or ``NOT_STEP_WORK``; stage_type applies to the events of ``stage_rows`` (sorted
    event indices). Steps are the events' ``group_id`` and markers are also the events
    with a step name; or, with ``windows`` = (begin, end) sorted by begin, the window an
    event starts in (events outside every window are no span; no step names). Events of
    ``skip_rows`` (sorted) are neither markers nor spans.
    """
    assert _keys is not None
    ev = plane.events
    tables = (span_type, stage_type)
    found = _keys.host_step_keys(
        *_plane_columns(plane, windows is None),
        name_codes,
        _step_name_codes(plane) if windows is None else None,
        ev["begin_ps"].to_numpy(dtype=np.int64),
        ev["duration_ps"].to_numpy(dtype=np.int64),
        *(np.ascontiguousarray(t, dtype=np.int8) for t in tables),
        np.ascontiguousarray(stage_rows, dtype=np.int64),
        np.ascontiguousarray(np.zeros(0) if skip_rows is None else skip_rows, dtype=np.int64),
        None if windows is None else tuple(np.ascontiguousarray(w, np.int64) for w in windows),
        num_types,
    )
    if found is None:  # group ids too sparse to pack
        return None
    work, markers, key, runs = found
    if work and key is None:  # a group alone wider than 2^56 ps (20 hours)
        return None
    marker_rows = np.frombuffer(markers, dtype=np.int64)
    if not work:
        return marker_rows, None
    runs = [(stop, np.frombuffer(layout, np.int64)) for stop, layout in runs]
    return marker_rows, PackedSpans(np.frombuffer(key, np.int64), runs, work)


def _plane_columns(plane: Plane, grouped: bool) -> tuple:
    """line rows, real line flags, and (when ``grouped``) group ids and their null mask."""
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    real = ~((ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX))
    lines = (_line_rows(plane.events["line"], len(ids)), real.astype(np.uint8))
    if not grouped:
        return lines + (None, None)
    return lines + _values_and_mask(plane.events[schema.GROUP_ID])


def _step_name_codes(plane: Plane) -> np.ndarray:
    """int8 per event: 0 where a step name is set, -1 where not (the walk reads the sign)."""
    codes = np.full(plane.num_events, -1, dtype=np.int8)
    codes[set_rows(plane, schema.STEP_NAME)] = 0
    return codes


def _line_rows(values: pd.Series, lines: int) -> np.ndarray:
    """int32 line rows (-1 where out of range: the walk rejects them)."""
    array = values.to_numpy()
    if array.dtype != np.int32:
        array = np.where((array >= 0) & (array < lines), array, -1).astype(np.int32)
    return np.ascontiguousarray(array)


def _values_and_mask(values: pd.Series) -> tuple:
    """(int64 or int32 values, bool mask of missing ones or None), without copies for a
    nullable integer column."""
    array = values.array
    data, mask = getattr(array, "_data", None), getattr(array, "_mask", None)
    if isinstance(data, np.ndarray) and isinstance(mask, np.ndarray):
        if data.dtype in (np.int64, np.int32):  # the walk reads either (preprocessed: int32)
            return np.ascontiguousarray(data), np.ascontiguousarray(mask)
    missing = np.asarray(pd.isna(array), dtype=bool)
    return values.to_numpy(dtype=np.int64, na_value=0), missing

"""Step markers and typed spans of a host's events, the input of ``steps``.

See docs/conversion.md §4.4.

Markers are the events whose span is a step (host ``train``/``TraceContext``
annotations, or the GPU ``Steps`` line); spans are the events whose time a step
breaks down (host compute, waiting for input, device compute, memcpy, ...).

Everything here selects events by *row index arrays* and decides by *name*: each
string test (marker prefixes, op types, ``half`` in a shape) runs once per distinct
name or stat value (``per_name``) and reaches events through codes, so the cost per
event is a few integer gathers, never a Python string or a copy of the event table.

Usage::

    markers, spans = host_step_events(space.plane("/host:CPU"))
    markers[["group", "begin", "end", "step_name"]], spans[["group", "begin", "end", "type"]]
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...kernels import compiled, per_name
from ...xspace import op_names, schema
from ...xspace.event_stats import set_rows, typed_column_at
from ...xspace.model import Plane
from . import keys as step_keys

EVENT_TYPES = (
    "UNKNOWN_TIME",
    "HOST_COMPUTE",
    "HOST_PREPROCESS",
    "HOST_POSTPROCESS",
    "HOST_BATCH_FORMATION",
    "HOST_RUNTIME",
    "HOST_COMPILE",
    "HOST_TO_HOST",
    "HOST_TO_DEVICE",
    "HOST_PREPARE",
    "DEVICE_COLLECTIVES",
    "HOST_WAIT_INPUT",
    "DEVICE_TO_DEVICE",
    "DEVICE_TO_HOST",
    "DEVICE_COMPUTE_32",
    "DEVICE_COMPUTE_16",
    "DEVICE_WAIT_DEVICE",
    "DEVICE_WAIT_HOST",
)  # index = priority (upstream value / 10): later entries win where spans overlap
TYPE = {name: i for i, name in enumerate(EVENT_TYPES)}
_MARKER_PREFIXES = ("train", "test", "TraceContext")
NOT_STEP_WORK = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")
_DEVICE_MEMCPY = (
    ("MemcpyHToD", "HOST_TO_DEVICE"),
    ("MemcpyDToH", "DEVICE_TO_HOST"),
    ("MemcpyDToD", "DEVICE_TO_DEVICE"),
)


def real_rows(plane: Plane) -> np.ndarray:
    """Rows of events on real (not derived) lines."""
    return np.flatnonzero(_on_real_lines(plane))


def on_real_lines(plane: Plane, rows: np.ndarray) -> np.ndarray:
    """The rows (event indices) that are on real lines."""
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    real = ~((ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX))
    return rows[real[plane.events["line"].to_numpy()[rows]]] if len(rows) else rows


def _on_real_lines(plane: Plane) -> np.ndarray:
    """Per event: on a real (not derived) line."""
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    derived = (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)
    return ~derived[plane.events["line"].to_numpy()]


def span_frame(events: pd.DataFrame, rows: np.ndarray, types) -> pd.DataFrame:
    """group / begin / end / type of the given (grouped) event rows."""
    begin = events["begin_ps"].to_numpy(dtype=np.int64)[rows]
    group = events[schema.GROUP_ID].array[rows]
    columns = {
        "group": np.asarray(group.to_numpy(dtype=np.int64), dtype=np.int64),
        "begin": begin,
        "end": begin + events["duration_ps"].to_numpy(dtype=np.int64)[rows],
        "type": np.asarray(types, dtype=np.int64),
    }
    return pd.DataFrame(columns, copy=False)  # fresh arrays: no consolidating copy


def no_spans() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in ("group", "begin", "end", "type")})


def no_markers() -> pd.DataFrame:
    frame = no_spans()
    frame["step_name"] = pd.Series(dtype=object)
    return frame


def not_step_work(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per row: an eager/function wrapper, whose time is not step work."""
    return per_name.per_value(events["name"], _not_step_work, rows)


# Per distinct name (str), with plain str methods: hundreds of names, where each pandas
# string call costs more in setup than the test itself.
def _not_step_work(names: pd.Series) -> np.ndarray:
    return np.array([n.startswith(NOT_STEP_WORK) for n in names.tolist()], dtype=bool)


def _explicit_marker(names: pd.Series) -> np.ndarray:
    listed = names.tolist()
    return np.array([n.startswith(_MARKER_PREFIXES) and "/" not in n for n in listed], dtype=bool)


def _per_name(test, names: pd.Series, missing) -> np.ndarray:
    """``test`` per distinct name, plus a last entry for missing names (code -1)."""
    answer = np.asarray(test(names), dtype=bool) if len(names) else np.zeros(0, dtype=bool)
    return np.append(answer, missing)


# --- host -------------------------------------------------------------------------
def host_step_events(plane: Optional[Plane], pure_python: Optional[bool] = None) -> tuple:
    """(markers, typed spans) of grouped host events (CPU-only profiles).

    Compiled, one walk over the events gives the marker rows and the spans already
    packed for the step breakdown (``step_keys.PackedSpans``); otherwise (or where
    the spans do not pack) the numpy path gives a span frame. Same step database.
    """
    if plane is None or plane.events.empty:
        if plane is None:
            return no_markers(), no_spans()
        return no_markers(), span_frame(plane.events, np.zeros(0, dtype=np.int64), [])
    ev = plane.events
    if compiled.use_compiled(compiled.load(step_keys.__name__), pure_python):
        codes, names = per_name.distinct_native(ev["name"])
        span_type, stage_type = _host_name_tables(names)
        stages = _root_input_stages(ev, None)
        found = step_keys.host_step_keys(plane, codes, span_type, stage_type, stages, len(TYPE))
        if found is not None:
            marker_rows, spans = found
            if spans is None:
                spans = span_frame(ev, np.zeros(0, dtype=np.int64), [])
            return _marker_frame(plane, marker_rows), spans
    return _host_step_events_numpy(plane)


def host_window_spans(
    plane: Plane, windows: tuple, skip_rows: np.ndarray, pure_python: Optional[bool] = None
) -> Optional[object]:
    """Typed spans of the host events on real lines that start inside a step window
    (windows = (begin, end) sorted by begin; the step is the window's index), leaving out
    ``skip_rows`` and eager wrappers: ``PackedSpans``, an empty span frame, or None when
    only the numpy path can tell (no extension, or spans that do not pack)."""
    if not compiled.use_compiled(compiled.load(step_keys.__name__), pure_python):
        return None
    ev = plane.events
    codes, names = per_name.distinct_native(ev["name"])
    span_type, stage_type = _host_name_tables(names, markers=False)
    stages = _root_input_stages(ev, None)
    found = step_keys.host_step_keys(
        plane, codes, span_type, stage_type, stages, len(TYPE), windows, skip_rows
    )
    if found is None:
        return None
    spans = found[1]
    return span_frame(ev, np.zeros(0, dtype=np.int64), []) if spans is None else spans


def _host_step_events_numpy(plane: Plane) -> tuple:
    """Boolean masks over all events and per-name tables reached through the name
    codes, one gather each; rows are taken once at the end."""
    ev = plane.events
    codes, names = per_name.distinct(ev["name"])
    selected = _on_real_lines(plane) & per_name.present(ev[schema.GROUP_ID])
    marker = _per_name(_explicit_marker, names, False)[codes]
    marker[set_rows(plane, schema.STEP_NAME)] = True
    marker &= selected
    markers = _marker_frame(plane, np.flatnonzero(marker))
    selected &= ~marker
    selected &= ~_per_name(_not_step_work, names, False)[codes]
    work = np.flatnonzero(selected)
    types = _host_types_of(ev, work, codes[work], names)
    return markers, span_frame(ev, work, types)


def _marker_frame(plane: Plane, rows: np.ndarray) -> pd.DataFrame:
    """``rows``: increasing (both paths give them in event order)."""
    markers = span_frame(plane.events, rows, np.zeros(len(rows), dtype=np.int64))
    names = typed_column_at(plane, schema.STEP_NAME, rows)  # read at those rows only
    markers["step_name"] = names.to_numpy(dtype=object)
    return markers


def _host_name_tables(names: pd.Series, markers: bool = True) -> tuple:
    """Per distinct name (and a last entry for a missing one), int8: the span type of an
    event of that name, ``step_keys.MARKER`` (only with ``markers``) or ``NOT_STEP_WORK``;
    and the same for a root input-pipeline stage event (waiting for input unless its name
    is a copy)."""
    by_name, copy = _host_type_table(names)
    stage = np.where(copy, by_name, TYPE["HOST_WAIT_INPUT"])
    marker = _per_name(_explicit_marker, names, False) if markers else np.zeros(len(stage), bool)
    excluded = np.where(
        marker,
        step_keys.MARKER,
        np.where(_per_name(_not_step_work, names, False), step_keys.NOT_STEP_WORK, 0),
    )
    return (
        np.where(excluded < 0, excluded, by_name).astype(np.int8),
        np.where(excluded < 0, excluded, stage).astype(np.int8),
    )


def host_types(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Step-time type of each host event row (compute, waiting for input, copies)."""
    codes, names = per_name.distinct(events["name"], rows)
    return _host_types_of(events, rows, codes, names)


def _host_types_of(
    events: pd.DataFrame, rows: np.ndarray, codes: np.ndarray, names: pd.Series
) -> np.ndarray:
    """``host_types`` with the rows' name codes into ``names`` (-1 = missing): the
    type of each name, and for root input-pipeline stages waiting for input, unless
    the name is a copy."""
    by_name, copy = _host_type_table(names)
    types = by_name[codes]
    stages = _root_input_stages(events, rows)
    if len(stages):
        stages = stages[~copy[codes[stages]]]
        types[stages] = TYPE["HOST_WAIT_INPUT"]
    return types


def _host_type_table(names: pd.Series) -> tuple:
    """(type, is a copy) per distinct name and a last entry for a missing name.

    Waiting for input (``IteratorGetNext``), else compute, unless its op type is a
    host or host-to-device copy, which wins over everything (as later assignments
    would). Only names that can have such a type (they contain it, in any case) are
    parsed as op names.
    """
    listed = names.tolist()
    wait = [n.lower().startswith("iteratorgetnext") for n in listed] + [False]
    by_name = np.where(wait, TYPE["HOST_WAIT_INPUT"], TYPE["HOST_COMPUTE"]).astype(np.int64)
    copy = np.zeros(len(by_name), dtype=bool)
    maybe = [i for i, n in enumerate(listed) if "MEMCPYHTO" in n.upper() or "InfeedEnqueue" in n]
    if not maybe:
        return by_name, copy
    op_type = op_names.parse_op_names([listed[i] for i in maybe])["type"]
    for rule, kind in (
        (op_type == "MemcpyHToH", "HOST_TO_HOST"),
        (op_type.str.startswith("InfeedEnqueue") | (op_type == "MemcpyHToD"), "HOST_TO_DEVICE"),
    ):
        chosen = np.asarray(maybe)[np.asarray(rule, dtype=bool)]
        by_name[chosen] = TYPE[kind]
        copy[chosen] = True
    return by_name, copy


def _root_input_stages(events: pd.DataFrame, rows: Optional[np.ndarray]) -> np.ndarray:
    """Positions in ``rows`` (None: all events) of input-pipeline stage events not
    nested in another stage (approximation: stages whose ``parent_id`` is absent).
    Most profiles have no stage at all: then nothing per event is gathered."""
    names = events["_ipl_stage_name"]
    if isinstance(names.dtype, pd.CategoricalDtype) and not len(names.cat.categories):
        return np.zeros(0, dtype=np.int64)
    if rows is None:
        stage = per_name.present_rows(names)
        return stage[~per_name.present(events["parent_id"], stage)]
    stage = np.flatnonzero(per_name.present(names, rows))
    return stage[~per_name.present(events["parent_id"], rows[stage])]


# --- device (GPU) -------------------------------------------------------------------
def device_step_events(planes: Sequence[Plane]) -> tuple:
    markers, spans = [], []
    for plane in planes:
        ev = plane.events
        steps_line = plane.lines.index[plane.lines["name"] == schema.STEPS_LINE]
        grouped_all = per_name.present(ev[schema.GROUP_ID])
        step_rows = np.flatnonzero(np.isin(ev["line"].to_numpy(), steps_line) & grouped_all)
        rows = real_rows(plane)
        rows = rows[per_name.present(ev["correlation_id"], rows) & grouped_all[rows]]
        group = ev[schema.GROUP_ID].array
        rows = rows[group[rows].to_numpy(dtype=np.int64) >= 0]
        # Keep the groups that have both device events and a step marker.
        both = np.intersect1d(
            group[step_rows].to_numpy(dtype=np.int64), group[rows].to_numpy(dtype=np.int64)
        )
        m = span_frame(ev, step_rows, np.zeros(len(step_rows), dtype=np.int64))
        m["step_name"] = None
        markers.append(m[m["group"].isin(both)])
        s = span_frame(ev, rows, device_types(ev, rows))
        spans.append(s[s["group"].isin(both)])
    return pd.concat(markers, ignore_index=True), pd.concat(spans, ignore_index=True)


def device_types(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Step-time type of each GPU event row (16/32-bit compute, collectives, copies)."""
    name_codes, names = per_name.distinct(events["name"], rows)
    shape_codes, shapes = per_name.distinct(events["shape"], rows)
    name_half = per_name.lookup(names.str.contains("half|fp16", regex=True), name_codes, False)
    shape_set = per_name.lookup((shapes != "").to_numpy(), shape_codes, False)
    shape_half = per_name.lookup(shapes.str.contains("half", regex=False), shape_codes, False)
    half = np.where(shape_set, shape_half, name_half)
    types = np.where(half, TYPE["DEVICE_COMPUTE_16"], TYPE["DEVICE_COMPUTE_32"])
    nccl = names.str.lower().str.startswith("nccl").to_numpy(dtype=bool)
    types[per_name.lookup(nccl, name_codes, False)] = TYPE["DEVICE_COLLECTIVES"]
    codes, table = op_names.parse_codes(events["name"], rows)
    for memcpy, kind in _DEVICE_MEMCPY:
        types[(table["type"] == memcpy).to_numpy()[codes]] = TYPE[kind]
    return types

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

from ..xspace import schema
from ..xspace.model import Plane
from . import op_names, per_name

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
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    derived = (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)
    return np.flatnonzero(~derived[plane.events["line"].to_numpy()])


def span_frame(events: pd.DataFrame, rows: np.ndarray, types) -> pd.DataFrame:
    """group / begin / end / type of the given (grouped) event rows."""
    begin = events["begin_ps"].to_numpy(dtype=np.int64)[rows]
    group = events[schema.GROUP_ID].array[rows]
    return pd.DataFrame(
        {
            "group": np.asarray(group.to_numpy(dtype=np.int64), dtype=np.int64),
            "begin": begin,
            "end": begin + events["duration_ps"].to_numpy(dtype=np.int64)[rows],
            "type": np.asarray(types, dtype=np.int64),
        }
    )


def no_spans() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in ("group", "begin", "end", "type")})


def no_markers() -> pd.DataFrame:
    frame = no_spans()
    frame["step_name"] = pd.Series(dtype=object)
    return frame


def not_step_work(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per row: an eager/function wrapper, whose time is not step work."""
    return per_name.per_value(events["name"], lambda s: s.str.startswith(NOT_STEP_WORK), rows)


# --- host -------------------------------------------------------------------------
def host_step_events(plane: Optional[Plane]) -> tuple:
    """(markers, typed spans) of grouped host events (CPU-only profiles)."""
    if plane is None or plane.events.empty:
        if plane is None:
            return no_markers(), no_spans()
        return no_markers(), span_frame(plane.events, np.zeros(0, dtype=np.int64), [])
    ev = plane.events
    rows = real_rows(plane)
    rows = rows[per_name.present(ev[schema.GROUP_ID], rows)]
    explicit = per_name.per_value(
        ev["name"],
        lambda s: s.str.startswith(_MARKER_PREFIXES) & ~s.str.contains("/", regex=False),
        rows,
    )
    marker = explicit | per_name.present(ev[schema.STEP_NAME], rows)
    marker_rows = rows[marker]
    markers = span_frame(ev, marker_rows, np.zeros(len(marker_rows), dtype=np.int64))
    markers["step_name"] = ev[schema.STEP_NAME].iloc[marker_rows].to_numpy(dtype=object)
    work = rows[~marker]
    work = work[~not_step_work(ev, work)]
    return markers, span_frame(ev, work, host_types(ev, work))


def host_types(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Step-time type of each host event row (compute, waiting for input, copies)."""
    codes, table = op_names.parse_codes(events["name"], rows)
    op_type = table["type"]
    waits = per_name.per_value(
        events["name"], lambda s: s.str.lower().str.startswith("iteratorgetnext"), rows
    )
    types = np.full(len(rows), TYPE["HOST_COMPUTE"], dtype=np.int64)
    types[waits | _root_input_stages(events, rows)] = TYPE["HOST_WAIT_INPUT"]
    # Later rules win, as assignments in this order would.
    by_name = np.full(len(table), -1, dtype=np.int64)
    by_name[(op_type == "MemcpyHToH").to_numpy()] = TYPE["HOST_TO_HOST"]
    to_device = op_type.str.startswith("InfeedEnqueue") | (op_type == "MemcpyHToD")
    by_name[to_device.to_numpy()] = TYPE["HOST_TO_DEVICE"]
    override = by_name[codes]
    return np.where(override >= 0, override, types)


def _root_input_stages(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Input-pipeline stage events not nested in another stage (approximation:
    stages whose ``parent_id`` is absent)."""
    stage = per_name.present(events["_ipl_stage_name"], rows)
    return stage & ~per_name.present(events["parent_id"], rows)


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

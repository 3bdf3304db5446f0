"""Guessed steps for profiles without step markers (our addition to upstream).

Upstream shows "No step time measured" when a program has no step annotation
(e.g. Keras 3, plain JAX loops). We look for what most likely is one step and
build the same step database from it, marked ``guessed_from`` so every tool can
say the steps are a guess and name the annotation to add:

1. user annotations that carry a ``step_num`` but no ``_r`` root level (Keras 3's
   "Profiled batch"), else
2. the repeated top-level call of the framework's compiled step function:
   JAX ``PjitFunction(<fn>)``, TensorFlow ``EagerLocalExecute: __inference_<fn>``,
   ``FunctionRun`` or ``SessionRun`` — the name with the largest total time.

Usage::

    db = guessed_step_db(space, empty_db)   # empty_db returned unchanged if nothing fits
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...kernels import per_name
from ...xspace import schema
from ...xspace.event_stats import typed_column
from ...xspace.model import Plane, Space
from . import events as step_events
from .step_db import StepDb, build_step_db

JAX = "JAX"
TENSORFLOW = "TensorFlow"
ANNOTATION_HINT = {
    JAX: 'jax.profiler.StepTraceAnnotation("train", step_num=i)',
    TENSORFLOW: 'tf.profiler.experimental.Trace("train", step_num=i, _r=1)',
}
_STEP_FUNCTION = r"^(?:PjitFunction\(|EagerLocalExecute: __inference_|FunctionRun$|SessionRun$)"


def detect_framework(space: Space) -> str:
    metadata = space.plane(schema.METADATA_PLANE)
    if metadata is not None and any("jax" in str(k) for k in metadata.plane_stats):
        return JAX
    host = space.plane(schema.HOST_PLANE)
    if host is not None and _names_used(host, lambda s: s.str.startswith("PjitFunction")).any():
        return JAX
    return TENSORFLOW


def _names_used(plane, test) -> np.ndarray:
    """Per distinct name that some event carries: ``test`` of it."""
    codes, names = per_name.distinct(plane.events["name"])
    used = np.zeros(len(names), dtype=bool)
    used[codes[codes >= 0]] = True
    return np.asarray(test(names[used]), dtype=bool) if used.any() else used[:0]


def guessed_step_db(space: Space, db: StepDb) -> StepDb:
    framework = detect_framework(space)
    host = space.plane(schema.HOST_PLANE)
    if host is None or host.events.empty:
        return dataclasses.replace(db, framework=framework)
    windows = _step_events(host)
    if windows.empty:
        return dataclasses.replace(db, framework=framework)
    markers, spans = _assign_to_windows(space, host, windows)
    guessed = build_step_db(markers, spans, has_device=db.has_device)
    guessed.guessed_from = str(windows["name"].iloc[0])
    guessed.framework = framework
    return guessed if not guessed.steps.empty else dataclasses.replace(db, framework=framework)


def _step_events(host: Plane) -> pd.DataFrame:
    """Non-overlapping occurrences of the most likely step event on real lines, in time
    order (a small frame indexed by event row, with the event's ``name`` as str).
    Candidates are found per name or from a stat's null mask, then kept on real lines:
    no pass over all events' rows."""
    events = host.events
    steps = typed_column(host, schema.STEP_NUM)
    numbered = per_name.present_rows(steps)
    roots = per_name.present(typed_column(host, schema.ROOT_LEVEL), numbered)
    numbered = step_events.on_real_lines(host, numbered[~roots])
    if len(numbered):
        candidates = numbered
        names = _names_of(events, candidates)
        chosen = candidates[(names == names.value_counts().index[0]).to_numpy()]
    else:
        codes, distinct = per_name.distinct_native(events["name"])
        step_function = distinct.str.contains(_STEP_FUNCTION, regex=True).to_numpy(dtype=bool)
        calls = step_events.on_real_lines(host, per_name.rows_where(step_function, codes))
        names = _names_of(events, calls)
        total = (
            events["duration_ps"]
            .iloc[calls]
            .groupby(names.to_numpy())
            .agg(["size", "sum"])
            .rename(columns={"size": "n", "sum": "t"})
        )
        total = total[total["n"] >= 2]
        if total.empty:
            return _frame(events, steps, calls[:0])
        chosen = calls[(names == total["t"].idxmax()).to_numpy()]
    frame = _frame(events, steps, chosen).sort_values("begin_ps", kind="stable")
    end = (frame["begin_ps"] + frame["duration_ps"]).to_numpy()
    # Keep top-level occurrences: those starting after every earlier one ended.
    previous_end = np.concatenate([[np.iinfo(np.int64).min], np.maximum.accumulate(end)[:-1]])
    frame = frame[frame["begin_ps"].to_numpy() >= previous_end]
    numbers = frame["step_num"].to_numpy(dtype=np.float64, na_value=np.nan)
    step = np.where(np.isnan(numbers), np.arange(len(frame)), numbers).astype(np.int64)
    return frame.assign(step=step)


def _names_of(events: pd.DataFrame, rows: np.ndarray) -> pd.Series:
    codes, names = per_name.distinct(events["name"], rows)
    return pd.Series(per_name.lookup(names.to_numpy(), codes, "nan"), dtype=object)


def _frame(events: pd.DataFrame, steps: pd.Series, rows: np.ndarray) -> pd.DataFrame:
    """The few chosen events: times, step number and name, indexed by event row."""
    return pd.DataFrame(
        {
            "begin_ps": events["begin_ps"].to_numpy()[rows],
            "duration_ps": events["duration_ps"].to_numpy()[rows],
            "step_num": steps.array[rows],
            "name": _names_of(events, rows).to_numpy(),
            "step": 0,
        },
        index=rows,
    )


def _assign_to_windows(
    space: Space, host: Plane, windows: pd.DataFrame, host_rows: Optional[np.ndarray] = None
) -> tuple:
    """Markers from the windows; typed spans of the events starting inside each.
    ``host_rows``: the host's events on real lines (None: found when needed)."""
    begin = windows["begin_ps"].to_numpy(dtype=np.int64)
    end = begin + windows["duration_ps"].to_numpy(dtype=np.int64)
    name = str(windows["name"].iloc[0])
    markers = pd.DataFrame(
        {
            "group": np.arange(len(windows)),
            "begin": begin,
            "end": end,
            "type": 0,
            "step_name": [f"{name} {s}" for s in windows["step"]],
        }
    )
    gpus = [p for p in space.planes if schema.is_gpu_plane(p.name)]
    if gpus:
        parts = [(p.events, step_events.real_rows(p)) for p in gpus]
        types = np.concatenate([step_events.device_types(ev, r) for ev, r in parts])
        return markers, _window_spans(parts, types, begin, end)
    skip = np.sort(windows.index.to_numpy(dtype=np.int64))
    packed = step_events.host_window_spans(host, (begin, end), skip)
    if packed is not None:
        return markers, packed
    rows = step_events.real_rows(host) if host_rows is None else host_rows
    rows = rows[~np.isin(rows, skip)]
    rows = rows[~step_events.not_step_work(host.events, rows)]
    types = step_events.host_types(host.events, rows)
    return markers, _window_spans([(host.events, rows)], types, begin, end)


def _window_spans(parts: list, types, begin: np.ndarray, end: np.ndarray) -> pd.DataFrame:
    """Typed spans of the (events, rows) parts that start inside a window (numpy)."""
    starts = np.concatenate([ev["begin_ps"].to_numpy(dtype=np.int64)[r] for ev, r in parts])
    durations = np.concatenate([ev["duration_ps"].to_numpy(dtype=np.int64)[r] for ev, r in parts])
    window = np.searchsorted(begin, starts, side="right") - 1
    inside = (window >= 0) & (starts < end[np.maximum(window, 0)])
    return pd.DataFrame(
        {
            "group": window[inside],
            "begin": starts[inside],
            "end": starts[inside] + durations[inside],
            "type": np.asarray(types)[inside],
        }
    )

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

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.model import Space
from . import steps as steps_module

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
    if host is not None and _distinct(host.events["name"]).str.startswith("PjitFunction").any():
        return JAX
    return TENSORFLOW


def _distinct(names: pd.Series) -> pd.Series:
    """The distinct names as strings (the categories of a categorical column): string work
    once per name, not per event."""
    if isinstance(names.dtype, pd.CategoricalDtype):
        return pd.Series(names.cat.categories, dtype=object).astype(str)
    return pd.Series(names.unique(), dtype=object).astype(str)


def guessed_step_db(space: Space, db: steps_module.StepDb) -> steps_module.StepDb:
    framework = detect_framework(space)
    host = space.plane(schema.HOST_PLANE)
    if host is None or host.events.empty:
        return dataclasses.replace(db, framework=framework)
    ev = steps_module._real_events(host)
    windows = _step_events(ev)
    if windows.empty:
        return dataclasses.replace(db, framework=framework)
    markers, spans = _assign_to_windows(space, ev, windows)
    guessed = steps_module.build_step_db(markers, spans, has_device=db.has_device)
    guessed.guessed_from = str(windows["name"].iloc[0])
    guessed.framework = framework
    return guessed if not guessed.steps.empty else dataclasses.replace(db, framework=framework)


def _step_events(ev: pd.DataFrame) -> pd.DataFrame:
    """Non-overlapping occurrences of the most likely step event, in time order."""
    names = ev["name"].astype(str)
    numbered = ev["step_num"].notna() & ev["_r"].isna()
    if numbered.any():
        chosen = ev[numbered & (names == names[numbered].value_counts().index[0])]
    else:
        calls = ev[names.str.contains(_STEP_FUNCTION, regex=True).to_numpy()]
        if calls.empty:
            return calls.iloc[:0].assign(step=0)
        total = calls.groupby(calls["name"].astype(str)).agg(
            n=("duration_ps", "size"), t=("duration_ps", "sum")
        )
        total = total[total["n"] >= 2]
        if total.empty:
            return calls.iloc[:0].assign(step=0)
        chosen = calls[calls["name"].astype(str) == total["t"].idxmax()]
    chosen = chosen.sort_values("begin_ps", kind="stable")
    end = (chosen["begin_ps"] + chosen["duration_ps"]).to_numpy()
    # Keep top-level occurrences: those starting after every earlier one ended.
    previous_end = np.concatenate([[np.iinfo(np.int64).min], np.maximum.accumulate(end)[:-1]])
    chosen = chosen[chosen["begin_ps"].to_numpy() >= previous_end]
    numbers = chosen["step_num"].to_numpy(dtype=np.float64, na_value=np.nan)
    step = np.where(np.isnan(numbers), np.arange(len(chosen)), numbers).astype(np.int64)
    return chosen.assign(step=step)


def _assign_to_windows(space: Space, host_events: pd.DataFrame, windows: pd.DataFrame) -> tuple:
    """Markers from the windows; typed spans of the events starting inside each."""
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
        events = pd.concat([steps_module._real_events(p) for p in gpus], ignore_index=True)
        types = steps_module._device_types(events)
    else:
        events = host_events.drop(index=windows.index)
        events = events[
            ~events["name"].astype(str).str.startswith(steps_module._NOT_STEP_WORK).to_numpy()
        ]
        types = steps_module._host_types(events)
    starts = events["begin_ps"].to_numpy(dtype=np.int64)
    window = np.searchsorted(begin, starts, side="right") - 1
    inside = (window >= 0) & (starts < end[np.maximum(window, 0)])
    spans = pd.DataFrame(
        {
            "group": window[inside],
            "begin": starts[inside],
            "end": starts[inside] + events["duration_ps"].to_numpy(dtype=np.int64)[inside],
            "type": np.asarray(types)[inside],
        }
    )
    return markers, spans

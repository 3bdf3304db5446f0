"""The step database: step windows from markers, their time split by typed spans.

``build_step_db`` turns step markers and typed spans (from ``step_events``, or the
guessed ones of ``guess``) into a ``StepDb``: one row per step with its duration and the
step-time breakdown per event type, made non-overlapping by priority (docs/conversion.md
§4.4). ``steps.step_database`` chooses the markers; both it and ``guess`` build on this.

Usage::

    db = build_step_db(markers, spans, has_device=False)
    db.steps[["step_name", "duration_ps", "HOST_COMPUTE", "UNKNOWN_TIME"]]
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Union

import numpy as np
import pandas as pd

from . import events as step_events
from . import keys as step_keys
from . import sweep as step_sweep

EVENT_TYPES = step_events.EVENT_TYPES  # index = priority: later entries win
TYPE = step_events.TYPE
MAX_STEPS_KEPT_WHOLE = 5
Spans = Union[pd.DataFrame, step_keys.PackedSpans]  # group, begin, end, type; or packed


@dataclasses.dataclass
class StepDb:
    # One row per step: step_num, step_name, begin_ps, duration_ps, one column per
    # EVENT_TYPES (ps), max_duration_ps (longest over hosts/cores).
    steps: pd.DataFrame
    has_device: bool = False
    num_steps_dropped: int = 0
    empty_intersect: bool = False
    precision_16bit_ps: int = 0
    precision_32bit_ps: int = 0
    guessed_from: Optional[str] = None  # event name the steps were guessed from
    framework: Optional[str] = None  # "TensorFlow" / "JAX" when detectable
    # Every well-formed step, before the first and last are dropped: upstream's
    # pod viewer keeps them (docs/conversion.md §9 item 1). None means "same as ``steps``".
    all_steps: Optional[pd.DataFrame] = None

    @property
    def with_incomplete_steps(self) -> pd.DataFrame:
        return self.steps if self.all_steps is None else self.all_steps

    @property
    def guessed(self) -> bool:
        return self.guessed_from is not None


def empty_steps() -> pd.DataFrame:
    columns = ["step_num", "step_name", "begin_ps", "duration_ps"] + list(EVENT_TYPES)
    frame = pd.DataFrame({c: pd.Series(dtype=np.int64) for c in columns})
    frame["step_name"] = frame["step_name"].astype(object)
    frame["max_duration_ps"] = frame["duration_ps"]
    return frame


def build_step_db(
    markers: pd.DataFrame, spans: Spans, has_device: bool, drop_incomplete: bool = True
) -> StepDb:
    """Step time from the longest marker per group; breakdown of its typed spans."""
    if markers.empty:
        return StepDb(empty_steps(), has_device)
    windows = _step_windows(markers)
    per_type, total, present = _breakdown(spans, windows)
    steps = windows
    # Columns as a pivot by type name would give them: present types by name, then the rest.
    shown = sorted(np.flatnonzero(present.any(axis=0)).tolist(), key=EVENT_TYPES.__getitem__)
    for t in shown:
        steps[EVENT_TYPES[t]] = per_type[:, t]
    for name in EVENT_TYPES:
        if name not in steps:
            steps[name] = 0
    known = steps[list(EVENT_TYPES)].sum(axis=1)
    steps["UNKNOWN_TIME"] += np.maximum(steps["duration_ps"] - known, 0)
    needed = ["DEVICE_COMPUTE_16", "DEVICE_COMPUTE_32"] if has_device else ["HOST_COMPUTE"]
    well_formed = present[:, [TYPE[n] for n in needed]].any(axis=1)
    steps = steps[well_formed & (steps["duration_ps"] > 0).to_numpy()]
    steps = steps.sort_values("group").rename(columns={"group": "step_num"})
    steps = steps.reset_index(drop=True)
    steps["max_duration_ps"] = steps["duration_ps"]
    all_steps = steps
    if drop_incomplete and len(steps) > MAX_STEPS_KEPT_WHOLE:
        steps = steps.iloc[1:-1].reset_index(drop=True)
    # Precision counts whole pieces (not cut to the window) of the steps kept.
    kept = total[np.isin(windows["group"].to_numpy(), steps["step_num"].to_numpy())]
    return StepDb(
        steps,
        has_device,
        precision_16bit_ps=int(kept[:, TYPE["DEVICE_COMPUTE_16"]].sum()),
        precision_32bit_ps=int(kept[:, TYPE["DEVICE_COMPUTE_32"]].sum()),
        all_steps=all_steps,
    )


def _step_windows(markers: pd.DataFrame) -> pd.DataFrame:
    """Per group: the longest marker's span, and the group's last step name."""
    m = markers.assign(duration=markers["end"] - markers["begin"])
    longest = (
        m.sort_values(["group", "duration", "begin"], ascending=[True, False, True], kind="stable")
        .groupby("group", sort=True)
        .head(1)
    )
    names = markers.dropna(subset=["step_name"]).groupby("group")["step_name"].last()
    out = pd.DataFrame(
        {
            "group": longest["group"].to_numpy(),
            "begin_ps": longest["begin"].to_numpy(),
            "duration_ps": longest["duration"].to_numpy(),
        }
    )
    out["step_name"] = names.reindex(out["group"]).to_numpy(dtype=object)
    missing = pd.isna(out["step_name"])
    out.loc[missing, "step_name"] = out.loc[missing, "group"].astype(str)
    return out


def non_overlapping(spans: pd.DataFrame) -> pd.DataFrame:
    """Per group, cuts typed spans into pieces each owned by the highest active type."""
    if spans.empty:
        return step_events.no_spans()
    return step_sweep.non_overlapping(spans, len(EVENT_TYPES))


def _breakdown(spans: Spans, windows: pd.DataFrame) -> tuple:
    """(ps per window × type inside the step window, ps of whole pieces, whether the
    type occurs there): ``step_sweep.breakdown`` over the windows (in window order)."""
    if spans.empty:
        shape = (len(windows), len(EVENT_TYPES))
        return np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, bool)
    begin = windows["begin_ps"].to_numpy(dtype=np.int64)
    group = windows["group"].to_numpy(dtype=np.int64)  # unique and sorted
    bounds = (group, begin, begin + windows["duration_ps"].to_numpy(dtype=np.int64))
    if isinstance(spans, step_keys.PackedSpans):
        return step_sweep.packed_breakdown(spans.key, spans.runs, bounds, len(EVENT_TYPES))
    return step_sweep.breakdown(spans, bounds, len(EVENT_TYPES))

"""Step events → step database with a step-time breakdown (spec §4.4, §4.7).

A step is a group (``group_id`` from preprocessing). Its time comes from step
markers (host ``train``/``TraceContext`` annotations, or the GPU ``Steps`` line);
its breakdown from the typed spans of its events (host compute, waiting for
input, device compute, memcpy, collectives, ...) made non-overlapping by
priority. When a profile has no step markers we *guess* steps (``guess.py``)
and mark the database ``guessed`` so the tools can say so.

Usage::

    db = step_database(space)       # StepDb; db.steps has one row per step
    db.steps[["step_name", "duration_ps", "HOST_COMPUTE", "UNKNOWN_TIME"]]
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.model import Plane, Space
from . import op_names, step_sweep

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
MAX_STEPS_KEPT_WHOLE = 5
_MARKER_PREFIXES = ("train", "test", "TraceContext")
_NOT_STEP_WORK = ("EagerExecute", "EagerLocalExecute", "EagerKernelExecute", "FunctionRun")


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
    # pod viewer keeps them (spec §9 item 1). None means "same as ``steps``".
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


def step_database(space: Space, drop_incomplete: bool = True) -> StepDb:
    gpus = [p for p in space.planes if schema.is_gpu_plane(p.name)]
    if gpus:
        markers, spans = _device_step_events(gpus)
    else:
        markers, spans = _host_step_events(space.plane(schema.HOST_PLANE))
    db = build_step_db(markers, spans, has_device=bool(gpus), drop_incomplete=drop_incomplete)
    from . import guess  # noqa: PLC0415 (guess builds on this module)

    if db.steps.empty:
        return guess.guessed_step_db(space, db)
    # The overview words its recommendation for the framework that made the profile.
    db.framework = guess.detect_framework(space)
    return db


# --- step events ------------------------------------------------------------------
def _real_events(plane: Plane) -> pd.DataFrame:
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    derived = (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)
    return plane.events[~derived[plane.events["line"].to_numpy()]]


def _span_frame(ev: pd.DataFrame, types: np.ndarray) -> pd.DataFrame:
    begin = ev["begin_ps"].to_numpy(dtype=np.int64)
    return pd.DataFrame(
        {
            "group": ev["group_id"].to_numpy(dtype=np.int64),
            "begin": begin,
            "end": begin + ev["duration_ps"].to_numpy(dtype=np.int64),
            "type": np.asarray(types, dtype=np.int64),
        }
    )


def _host_step_events(plane: Optional[Plane]) -> tuple:
    """(markers, typed spans) of grouped host events (CPU-only profiles)."""
    if plane is None or plane.events.empty:
        no_types = np.zeros(0, dtype=np.int64)
        return _no_markers(), _span_frame(plane.events.iloc[:0], no_types) if plane else _no_spans()
    ev = _real_events(plane)
    ev = ev[ev["group_id"].notna().to_numpy()]
    names = ev["name"].astype(str)
    explicit = names.str.startswith(_MARKER_PREFIXES) & ~names.str.contains("/", regex=False)
    marker = (explicit | ev["step_name"].notna()).to_numpy()
    markers = _span_frame(ev[marker], np.zeros(marker.sum()))
    markers["step_name"] = ev["step_name"][marker].to_numpy(dtype=object)
    work = ev[~marker & ~names.str.startswith(_NOT_STEP_WORK).to_numpy()]
    return markers, _span_frame(work, _host_types(work))


def _host_types(ev: pd.DataFrame) -> np.ndarray:
    parsed = op_names.parse_column(ev["name"])
    op_type = parsed["type"]
    names = ev["name"].astype(str).str.lower().reset_index(drop=True)
    types = np.full(len(ev), TYPE["HOST_COMPUTE"])
    root_stage = _root_input_stages(ev)
    types[(names.str.startswith("iteratorgetnext") | root_stage).to_numpy()] = TYPE[
        "HOST_WAIT_INPUT"
    ]
    types[(op_type == "MemcpyHToH").to_numpy()] = TYPE["HOST_TO_HOST"]
    to_device = op_type.str.startswith("InfeedEnqueue") | (op_type == "MemcpyHToD")
    types[to_device.to_numpy()] = TYPE["HOST_TO_DEVICE"]
    return types


def _root_input_stages(ev: pd.DataFrame) -> pd.Series:
    """Input-pipeline stage events not nested in another stage (approximation:
    stages whose ``parent_id`` is absent)."""
    stage = ev["_ipl_stage_name"].notna() & ev["parent_id"].isna()
    return stage.reset_index(drop=True)


def _device_step_events(planes: Sequence[Plane]) -> tuple:
    markers, spans = [], []
    for plane in planes:
        ev = _real_events(plane)
        steps_line = plane.lines.index[plane.lines["name"] == schema.STEPS_LINE]
        on_steps = plane.events["line"].isin(steps_line)
        step_events = plane.events[on_steps & plane.events["group_id"].notna()]
        grouped = ev[ev["correlation_id"].notna().to_numpy() & ev["group_id"].notna().to_numpy()]
        grouped = grouped[grouped["group_id"].to_numpy() >= 0]
        # Keep the groups that have both device events and a step marker.
        both = np.intersect1d(
            step_events["group_id"].to_numpy(dtype=np.int64),
            grouped["group_id"].to_numpy(dtype=np.int64),
        )
        m = _span_frame(step_events, np.zeros(len(step_events)))
        m["step_name"] = None
        markers.append(m[m["group"].isin(both)])
        s = _span_frame(grouped, _device_types(grouped))
        spans.append(s[s["group"].isin(both)])
    return pd.concat(markers, ignore_index=True), pd.concat(spans, ignore_index=True)


def _device_types(ev: pd.DataFrame) -> np.ndarray:
    names = ev["name"].astype(str).reset_index(drop=True)
    op_type = op_names.parse_column(ev["name"])["type"]
    shape = ev["shape"].fillna("").reset_index(drop=True)
    half = np.where(
        shape != "",
        shape.str.contains("half", regex=False),
        names.str.contains("half|fp16", regex=True),
    )
    types = np.where(half, TYPE["DEVICE_COMPUTE_16"], TYPE["DEVICE_COMPUTE_32"])
    types[names.str.lower().str.startswith("nccl").to_numpy()] = TYPE["DEVICE_COLLECTIVES"]
    for memcpy, kind in (
        ("MemcpyHToD", "HOST_TO_DEVICE"),
        ("MemcpyDToH", "DEVICE_TO_HOST"),
        ("MemcpyDToD", "DEVICE_TO_DEVICE"),
    ):
        types[(op_type == memcpy).to_numpy()] = TYPE[kind]
    return types


def _no_markers() -> pd.DataFrame:
    frame = _no_spans()
    frame["step_name"] = pd.Series(dtype=object)
    return frame


def _no_spans() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in ("group", "begin", "end", "type")})


# --- step database ---------------------------------------------------------------
def build_step_db(
    markers: pd.DataFrame, spans: pd.DataFrame, has_device: bool, drop_incomplete: bool = True
) -> StepDb:
    """Step time from the longest marker per group; breakdown of its typed spans."""
    if markers.empty:
        return StepDb(empty_steps(), has_device)
    windows = _step_windows(markers)
    pieces = non_overlapping(spans)
    per_type, present = _breakdown(pieces, windows)
    steps = windows.join(per_type, on="group").fillna(0)
    for name in EVENT_TYPES:
        steps[name] = steps[name].astype(np.int64) if name in steps else 0
    known = steps[list(EVENT_TYPES)].sum(axis=1)
    steps["UNKNOWN_TIME"] += np.maximum(steps["duration_ps"] - known, 0)
    needed = ["DEVICE_COMPUTE_16", "DEVICE_COMPUTE_32"] if has_device else ["HOST_COMPUTE"]
    well_formed = present.reindex(steps["group"]).reindex(columns=needed).any(axis=1)
    steps = steps[well_formed.to_numpy() & (steps["duration_ps"] > 0).to_numpy()]
    steps = steps.sort_values("group").rename(columns={"group": "step_num"})
    steps = steps.reset_index(drop=True)
    steps["max_duration_ps"] = steps["duration_ps"]
    all_steps = steps
    if drop_incomplete and len(steps) > MAX_STEPS_KEPT_WHOLE:
        steps = steps.iloc[1:-1].reset_index(drop=True)
    kept = pieces[pieces["group"].isin(steps["step_num"])]
    length = kept["end"] - kept["begin"]
    return StepDb(
        steps,
        has_device,
        precision_16bit_ps=int(length[kept["type"] == TYPE["DEVICE_COMPUTE_16"]].sum()),
        precision_32bit_ps=int(length[kept["type"] == TYPE["DEVICE_COMPUTE_32"]].sum()),
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
        return _no_spans()
    return step_sweep.non_overlapping(spans, len(EVENT_TYPES))


def _breakdown(pieces: pd.DataFrame, windows: pd.DataFrame) -> tuple:
    """(ps per group × type inside the step window, types present per group)."""
    w = windows.set_index("group")
    begin = w["begin_ps"].reindex(pieces["group"]).to_numpy()
    end = begin + w["duration_ps"].reindex(pieces["group"]).to_numpy()
    overlap = np.minimum(pieces["end"], end) - np.maximum(pieces["begin"], begin)
    frame = pieces.assign(ps=np.maximum(overlap, 0), name=np.asarray(EVENT_TYPES)[pieces["type"]])
    frame = frame[~np.isnan(begin)] if len(frame) else frame
    per_type = frame.pivot_table(index="group", columns="name", values="ps", aggfunc="sum")
    present = frame.assign(one=True).pivot_table(
        index="group", columns="name", values="one", aggfunc="any"
    )
    return per_type, present.fillna(False).astype(bool)


# --- several hosts ---------------------------------------------------------------
def combine_step_dbs(dbs: Sequence[StepDb]) -> StepDb:
    """Aligns hosts' step sequences (spec §4.7); rows stay the first host's steps."""
    if len(dbs) == 1:
        return dbs[0]
    has_device = any(db.has_device for db in dbs)
    aligned = align_hosts([db.steps for db in dbs])
    if aligned is None:
        return StepDb(empty_steps(), has_device, empty_intersect=True)
    steps = aligned[0].copy()
    steps["max_duration_ps"] = np.max([a["max_duration_ps"].to_numpy() for a in aligned], axis=0)
    return StepDb(
        steps,
        has_device,
        num_steps_dropped=max(len(db.steps) for db in dbs) - len(steps),
        precision_16bit_ps=sum(db.precision_16bit_ps for db in dbs),
        precision_32bit_ps=sum(db.precision_32bit_ps for db in dbs),
        guessed_from=dbs[0].guessed_from,
        framework=dbs[0].framework,
    )


def align_hosts(frames: Sequence[pd.DataFrame]) -> Optional[list]:
    """Each host's steps cut to the range common to all, step k beside step k.

    The chief is the host with the shortest step span; every other host is shifted
    by the index offset that overlaps it most with the chief, and only the index
    range common to all hosts is kept. None when no step is common.
    """
    if any(f.empty for f in frames):
        return None
    chief = frames[min(range(len(frames)), key=lambda i: _span(frames[i]))]
    offsets = [_best_offset(chief, f) for f in frames]
    lo = max(max(0, -off) for off in offsets)
    hi = min(min(len(chief), len(f) - off) for f, off in zip(frames, offsets))
    if hi <= lo:
        return None
    return [f.iloc[lo + off : hi + off].reset_index(drop=True) for f, off in zip(frames, offsets)]


def _span(steps: pd.DataFrame) -> int:
    if steps.empty:
        return 0
    return int((steps["begin_ps"] + steps["duration_ps"]).max() - steps["begin_ps"].min())


def _best_offset(chief: pd.DataFrame, other: pd.DataFrame) -> int:
    """Index offset of ``other`` against the chief that maximises total overlap.

    Ties go to the smallest offset. Only overlapping step pairs contribute, so
    each chief step is paired with the other host's steps that overlap it
    (found by ``searchsorted``; steps of one host are in time order).
    """
    if chief.empty or other.empty:
        return 0
    cb = chief["begin_ps"].to_numpy()
    ce = cb + chief["duration_ps"].to_numpy()
    ob = other["begin_ps"].to_numpy()
    oe = ob + other["duration_ps"].to_numpy()
    if np.any(np.diff(ob) < 0) or np.any(np.diff(oe) < 0):
        order = np.argsort(ob, kind="stable")  # rare: steps not in time order
        ob, oe, index = ob[order], oe[order], order
    else:
        index = np.arange(len(ob))
    first = np.searchsorted(np.maximum.accumulate(oe), cb, side="right")
    last = np.searchsorted(ob, ce, side="left")
    count = np.maximum(last - first, 0)
    i = np.repeat(np.arange(len(cb)), count)
    j = (
        np.arange(count.sum())
        - np.repeat(np.cumsum(count) - count, count)
        + np.repeat(first, count)
    )
    overlap = np.maximum(np.minimum(ce[i], oe[j]) - np.maximum(cb[i], ob[j]), 0)
    offsets = index[j] - i + len(cb) - 1  # offset -(len(cb) - 1) is bin 0
    totals = np.bincount(offsets, weights=overlap, minlength=len(cb) + len(ob) - 1)
    return int(np.argmax(totals)) - (len(cb) - 1)

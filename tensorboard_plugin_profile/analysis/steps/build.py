"""Step events → step database with a step-time breakdown (docs/conversion.md §4.4, §4.7).

A step is a group (``group_id`` from preprocessing). Its time comes from step
markers (host ``train``/``TraceContext`` annotations, or the GPU ``Steps`` line);
its breakdown from the typed spans of its events (host compute, waiting for
input, device compute, memcpy, collectives, ...) made non-overlapping by
priority (``step_db.py``). When a profile has no step markers we *guess* steps
(``guess.py``) and mark the database ``guessed`` so the tools can say so. Several
hosts' databases are aligned step by step here.

Usage::

    db = step_database(space)       # StepDb; db.steps has one row per step
    db.steps[["step_name", "duration_ps", "HOST_COMPUTE", "UNKNOWN_TIME"]]
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...common.errors import ProfileTooLarge
from ...xspace import schema
from ...xspace.model import Space
from . import events as step_events
from . import guess
from .step_db import StepDb, build_step_db, empty_steps


def step_database(space: Space, drop_incomplete: bool = True) -> StepDb:
    """The host's step database; ``ProfileTooLarge`` (HTTP 413) when its working memory
    cannot be had (the process's memory or address-space limit), never a bare
    ``MemoryError`` (an opaque 500)."""
    try:
        return _step_database(space, drop_incomplete)
    except MemoryError:
        raise ProfileTooLarge(
            "The step breakdown of this profile needs more memory than the server could "
            "get. Run the server where it has more memory (or a higher memory limit), or "
            "record fewer steps."
        ) from None


def _step_database(space: Space, drop_incomplete: bool) -> StepDb:
    gpus = [p for p in space.planes if schema.is_gpu_plane(p.name)]
    if gpus:
        markers, spans = step_events.device_step_events(gpus)
    else:
        markers, spans = step_events.host_step_events(space.plane(schema.HOST_PLANE))
    db = build_step_db(markers, spans, has_device=bool(gpus), drop_incomplete=drop_incomplete)
    if db.steps.empty:
        return guess.guessed_step_db(space, db)
    # The overview words its recommendation for the framework that made the profile.
    db.framework = guess.detect_framework(space)
    return db


# --- several hosts ---------------------------------------------------------------
def combine_step_dbs(dbs: Sequence[StepDb]) -> StepDb:
    """Aligns hosts' step sequences (docs/conversion.md §4.7); rows stay the first host's steps."""
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

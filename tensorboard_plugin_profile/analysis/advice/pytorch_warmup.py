"""Warm-up steps of a PyTorch trace: start-up work, not training (``pytorch`` advice).

A profile that starts with the first iteration records CUDA initialisation, the caching
allocator's first allocations and cuDNN autotuning. Judged as a training step, such a step
gives "GPU 0.0 %" and "aten::empty_strided 69 %": true of start-up, useless for training.

A step is a warm-up step when either
- at least ``WARM_UP_SHARE`` % of it is covered by start-up work: the allocation ops
  (``aten::empty_strided``, ``aten::empty``) and CUDA runtime set-up calls
  (``cudaMalloc*``, ``cudaHostAlloc``, ``cudaFree``, ``cudaGetDevice*``, ``cudaSetDevice``,
  ``cudaStreamCreate*``, ``cuInit``, ``cuDevicePrimaryCtx*``, ``cudaDeviceGetAttribute``), or
- it is the first of several steps and lasts at least ``SLOW_FIRST`` times the median of
  the others.

Usage::

    warm = warm_up_steps(space)  # WarmUp(steps=["1"], reasons=[...], positions=[0], all_steps=1)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..pytorch import events as E
from ..pytorch.overview import step_overview

WARM_UP_SHARE = 50.0  # percent of a step covered by start-up work
SLOW_FIRST = 3.0  # the first step, against the median of the others
START_UP_OPS = ("aten::empty_strided", "aten::empty")
START_UP_PREFIXES = (
    "cudaMalloc",
    "cudaHostAlloc",
    "cudaFree",
    "cudaGetDevice",
    "cudaSetDevice",
    "cudaStreamCreate",
    "cuInit",
    "cuDevicePrimaryCtx",
    "cudaDeviceGetAttribute",
)


@dataclasses.dataclass(frozen=True)
class WarmUp:
    steps: list  # names of the warm-up steps, in time order
    reasons: list  # why, per warm-up step, for the finding's evidence
    positions: list  # their places among the steps in time order (names may repeat)
    all_steps: int  # how many steps the trace has

    @property
    def only_warm_up(self) -> bool:
        return self.all_steps > 0 and len(self.steps) == self.all_steps


def warm_up_steps(space) -> WarmUp:
    steps = step_overview(space).steps.sort_values("begin_ps", kind="stable")
    if steps.empty:
        return WarmUp([], [], [], 0)
    names = [str(s) for s in steps["step"]]
    begin = steps["begin_ps"].to_numpy(dtype=np.int64)
    end = steps["end_ps"].to_numpy(dtype=np.int64)
    shares = _start_up_shares(space, begin, end)
    reasons = {}
    for i, share in enumerate(shares.tolist()):
        if share >= WARM_UP_SHARE:
            reasons[i] = f"{share:.0f}% of it is CUDA initialisation and first allocations"
    if len(names) >= 2 and 0 not in reasons:
        others = float(np.median(end[1:] - begin[1:]))
        first = float(end[0] - begin[0])
        if others > 0 and first >= SLOW_FIRST * others:
            reasons[0] = f"it lasts {first / others:.1f}x the median of the other steps"
    positions = sorted(reasons)
    return WarmUp(
        [names[i] for i in positions], [reasons[i] for i in positions], positions, len(names)
    )


def _start_up_shares(space, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Percent of each step [begin, end) covered by start-up events (their union)."""
    ev = E.trace_events(space)
    names = ev["name"].astype(str)
    start_up = names.isin(START_UP_OPS) | names.str.startswith(START_UP_PREFIXES)
    start_up &= ~ev["type"].isin(E.DEVICE_TYPES)
    b = ev["begin_ps"].to_numpy(dtype=np.int64)[start_up.to_numpy()]
    e = ev["end_ps"].to_numpy(dtype=np.int64)[start_up.to_numpy()]
    out = np.zeros(len(begin))
    for i, (lo, hi) in enumerate(zip(begin.tolist(), end.tolist())):  # per step, not event
        covered = _union_length(np.clip(b, lo, hi), np.clip(e, lo, hi))
        out[i] = 100.0 * covered / (hi - lo) if hi > lo else 0.0
    return out


def _union_length(begin: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals: a cumulative-maximum sweep, each interval adds
    what reaches past everything before it."""
    if not len(begin):
        return 0
    order = np.argsort(begin, kind="stable")
    b, e = begin[order], end[order]
    reach = np.maximum.accumulate(e)
    before = np.concatenate(([b[0]], reach[:-1]))
    return int(np.maximum(reach - np.maximum(b, before), 0).sum())

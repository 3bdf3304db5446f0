"""The distributed view of several PyTorch workers (ranks) of one span.

Per worker and step: computation (kernel time, or CPU op time without kernels), the part
of it overlapping communication, communication alone, and the rest of the step; and per
worker, the NCCL/Gloo collectives: calls, bytes (from their input shapes and types) and
latency (the union of their spans). The synchronizing time, which matches the ranks'
collectives call by call, is in ``wait_time.py``.

Usage::

    overlap = overlap_by_step([("rank0", space0), ("rank1", space1)])
    ops = communication_ops(space0)
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ...xspace.model import Space
from . import events as E
from .overview import step_overview
from .ranges import Segments

BYTES_PER_VALUE = {"long int": 8, "float": 4, "int": 4, "c10::Half": 2, "c10::BFloat16": 2,
                   "unsigned char": 1}  # fmt: skip


def overlap_by_step(hosts: list) -> pd.DataFrame:
    """worker, step, computation, overlapping, communication, other (ps); step "all" = mean."""
    frames = []
    for worker, space in hosts:
        c = step_overview(space).comm_overlap
        frame = pd.DataFrame(
            {
                "worker": worker,
                "step": c["step"].astype(str),
                "computation": c["computation"] - c["overlap"],
                "overlapping": c["overlap"],
                "communication": c["communication"] - c["overlap"],
                "other": c["other"],
            }
        )
        mean = frame[["computation", "overlapping", "communication", "other"]].mean()
        frames.append(frame)
        frames.append(pd.DataFrame([{"worker": worker, "step": "all", **mean.to_dict()}]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def communication_ops(space: Space) -> pd.DataFrame:
    """name, calls, total_bytes, latency_ps of one worker's collectives."""
    ev = E.trace_events(space)
    ops = ev[np.isin(ev["type"], E.HOST_OP_TYPES) & np.isin(ev["name"], E.NCCL_OPS + E.GLOO_OPS)]
    rows = []
    for name, group in ops.groupby("name", sort=False):
        begin, end = group["begin_ps"].to_numpy(), group["end_ps"].to_numpy()
        seg = Segments([(begin, end)])
        latency = seg.total_within(seg.covered((begin, end)), [begin.min()], [end.max()])[0]
        size = sum(_bytes(d, t) for d, t in zip(group["input_dims"], group["input_type"]))
        rows.append((name, len(group), size, latency))
    return pd.DataFrame(rows, columns=["name", "calls", "total_bytes", "latency_ps"])


def _bytes(dims_text, types_text) -> int:
    """Bytes of one call's inputs; unknown element types count 0 (as torch-tb-profiler).

    The texts come from the trace as written: a missing one is NaN, and a hostile one may
    hold anything, so only lists of whole non-negative dimensions and type names count.
    """
    if not (isinstance(dims_text, str) and isinstance(types_text, str)):
        return 0
    try:
        dims, types = json.loads(dims_text or "[]"), json.loads(types_text or "[]")
    except (ValueError, RecursionError):
        return 0
    if not (isinstance(dims, list) and isinstance(types, list)):
        return 0
    total = 0
    for shape, kind in zip(dims, types):
        if isinstance(kind, str) and _is_shape(shape):
            total += math.prod(shape) * BYTES_PER_VALUE.get(kind, 0)
    return total


def _is_shape(shape) -> bool:
    """A list of whole non-negative dimensions (``True`` is not one)."""
    return isinstance(shape, list) and all(type(d) is int and 0 <= d < 2**63 for d in shape)

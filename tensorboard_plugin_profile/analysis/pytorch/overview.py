"""Steps of a PyTorch trace and where their time went (torch-tb-profiler's overview).

Steps are the ``ProfilerStep#N`` spans (one step over the whole CPU activity when there
are none). When kernels were launched inside a step, the step is stretched to the end of
its last device activity and starts no earlier than the previous step's end; trailing
steps that launched clearly fewer device activities than the one before (the profiler
stopped before their kernels ran) are dropped.

Each step's time is split by priority: Kernel, Memcpy, Memset, Communication, Runtime,
DataLoader, CPU Exec, and Other for what is left: a moment counts for the first of these
that is active then. Communication is NCCL/Gloo collectives (their CPU ops and the
kernels they launched); DataLoader is ``enumerate(DataLoader)#...__next__`` and
``enumerate(DataPipe)#...`` ops. GPU utilization is the share of the steps' span in which
some kernel ran; SM efficiency weights each moment by the running kernels' blocks per SM
(capped at 1); occupancy is the kernels' duration-weighted mean.

Usage::

    ov = step_overview(space)
    ov.steps            # step name, begin/end (ps), one column per part (ps)
    ov.average          # part -> average ps per step
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...common.memo import memoized
from ...xspace.model import Space
from . import events as E
from .ranges import Segments

PARTS = (
    "Kernel",
    "Memcpy",
    "Memset",
    "Communication",
    "Runtime",
    "DataLoader",
    "CPU Exec",
    "Other",
)
TOTAL = "Total"


@dataclasses.dataclass
class Overview:
    steps: pd.DataFrame  # step, begin_ps, end_ps, <PARTS> (ps), Total (ps)
    average: dict  # part (and Total) -> mean ps per step
    has_gpu: bool  # runtime, kernel, memcpy or memset events exist
    has_communication: bool
    gpu: pd.DataFrame  # device, utilization, sm_efficiency, occupancy (fractions; NaN unknown)
    comm_overlap: pd.DataFrame  # per step: computation, communication, overlap, other (ps)


def step_overview(space: Space) -> Overview:
    return memoized([space], "pytorch_overview", lambda: _overview(E.trace_events(space)))


def communication_external_ids(ev: pd.DataFrame) -> np.ndarray:
    """External ids of the NCCL/Gloo collective ops (their kernels count as Communication)."""
    host = ev[E.of_type(ev, E.HOST_OP_TYPES)]
    comm = host[E.per_distinct(host["name"].to_numpy(dtype=object), _is_collective, bool)]
    return comm["external_id"].dropna().to_numpy()


def _is_collective(names: pd.Series) -> pd.Series:
    return names.isin(E.NCCL_OPS + E.GLOO_OPS)


def _is_loader(names: pd.Series) -> pd.Series:
    """DataLoader ops: ``enumerate(DataLoader)#...__next__`` and ``enumerate(DataPipe)#...``."""
    names = names.astype(object)
    return (
        names.str.startswith("enumerate(DataLoader)#") & names.str.endswith(".__next__")
    ) | names.str.startswith("enumerate(DataPipe)#")


def _overview(ev: pd.DataFrame) -> Overview:
    names = ev["name"].to_numpy(dtype=object)
    begin, end = ev["begin_ps"].to_numpy(), ev["end_ps"].to_numpy()
    comm_ids = communication_external_ids(ev)
    is_kernel = E.of_type(ev, (E.KERNEL,))
    comm_kernel = is_kernel & np.isin(ev["external_id"].to_numpy(), comm_ids)
    host_op = E.of_type(ev, E.HOST_OP_TYPES)
    collective = host_op & E.per_distinct(names, _is_collective, bool)
    loader = E.of_type(ev, (E.OPERATOR, E.USER_ANNOTATION)) & E.per_distinct(
        names, _is_loader, bool
    )
    roles = {
        "Kernel": is_kernel & ~comm_kernel,
        "Memcpy": E.of_type(ev, (E.MEMCPY,)),
        "Memset": E.of_type(ev, (E.MEMSET,)),
        "Communication": comm_kernel | (collective & ~loader),
        "Runtime": E.of_type(ev, (E.RUNTIME,)),
        "DataLoader": loader,
        "CPU Exec": host_op & ~loader & ~collective,
    }
    steps = _steps(ev, begin, end)
    segments = Segments(
        [(begin[m], end[m]) for m in roles.values()] + [(steps["begin_ps"], steps["end_ps"])]
    )
    covered = {part: segments.covered((begin[m], end[m])) for part, m in roles.items()}
    slots = segments.covered((steps["begin_ps"].to_numpy(), steps["end_ps"].to_numpy()))
    cost_masks = {}
    for i, part in enumerate(roles):
        mask = covered[part] if i == 0 else slots & covered[part]
        cost_masks[part] = mask
        slots = slots & ~mask
    cost_masks["Other"] = slots
    sb, se = steps["begin_ps"].to_numpy(), steps["end_ps"].to_numpy()
    for part, mask in cost_masks.items():
        steps[part] = segments.total_within(mask, sb, se)
    steps[TOTAL] = (se - sb).astype(np.float64)
    average = {part: float(steps[part].mean()) if len(steps) else 0.0 for part in PARTS + (TOTAL,)}
    has_gpu = bool((roles["Runtime"] | is_kernel | roles["Memcpy"] | roles["Memset"]).any())
    return Overview(
        steps=steps,
        average=average,
        has_gpu=has_gpu,
        has_communication=bool(roles["Communication"].any()),
        gpu=_gpu_metrics(ev[is_kernel], sb, se),
        comm_overlap=_comm_overlap(segments, covered, roles, steps),
    )


def _comm_overlap(
    segments: Segments, covered: dict, roles: dict, steps: pd.DataFrame
) -> pd.DataFrame:
    """Per step: computation, communication, their overlap and the rest (the distributed view)."""
    compute = covered["Kernel"] if roles["Kernel"].any() else covered["CPU Exec"]
    comm = covered["Communication"]
    sb, se = steps["begin_ps"].to_numpy(), steps["end_ps"].to_numpy()
    out = pd.DataFrame({"step": steps["step"]})
    out["computation"] = segments.total_within(compute, sb, se)
    out["communication"] = segments.total_within(comm, sb, se)
    out["overlap"] = segments.total_within(compute & comm, sb, se)
    out["other"] = (se - sb) + out["overlap"] - out["computation"] - out["communication"]
    return out


# --- steps ---------------------------------------------------------------------------
def _steps(ev: pd.DataFrame, begin, end) -> pd.DataFrame:
    is_step = E.of_type(ev, (E.PROFILER_STEP,))
    if is_step.any():
        steps = pd.DataFrame(
            {
                "step": E.step_numbers(ev["name"].to_numpy(dtype=object)[is_step]),
                "begin_ps": begin[is_step],
                "end_ps": end[is_step],
            }
        )
    else:
        cpu = E.of_type(ev, (E.PYTHON, E.OPERATOR))
        lo, hi = (begin[cpu].min(), end[cpu].max()) if cpu.any() else (0, 0)
        steps = pd.DataFrame({"step": ["0"], "begin_ps": [lo], "end_ps": [hi]})
    return _device_steps(ev, steps)


def _device_steps(ev: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Steps stretched over the device work their runtime calls launched (see module doc)."""
    rt = ev[E.of_type(ev, (E.RUNTIME,))]
    dev = ev[E.of_type(ev, E.DEVICE_TYPES)]
    launched = dev.merge(
        rt[["correlation", "begin_ps", "end_ps"]].drop_duplicates("correlation", keep="last"),
        on="correlation",
        suffixes=("", "_rt"),
    )
    sb, se = steps["begin_ps"].to_numpy(), steps["end_ps"].to_numpy()
    j = np.searchsorted(sb, launched["begin_ps_rt"].to_numpy(), "right") - 1
    inside = (j >= 0) & (launched["end_ps_rt"].to_numpy() <= se[np.maximum(j, 0)])
    launched, j = launched[inside], j[inside]
    if launched.empty:
        return steps
    n = len(steps)
    counts = np.bincount(j, minlength=n)
    dev_lo = np.full(n, np.iinfo(np.int64).max)
    dev_hi = np.full(n, np.iinfo(np.int64).min)
    np.minimum.at(dev_lo, j, launched["begin_ps"].to_numpy())
    np.maximum.at(dev_hi, j, launched["end_ps"].to_numpy())
    prev_end = int(sb[0])
    if counts[0]:
        matched = set(zip(launched["begin_ps"].tolist(), launched["end_ps"].tolist()))
        earlier = dev[dev["end_ps"] < dev_lo[0]]
        for b, e in zip(earlier["begin_ps"].tolist(), earlier["end_ps"].tolist()):
            if (b, e) not in matched:
                prev_end = max(prev_end, e)
    new_b, new_e = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for i in range(n):  # one iteration per step: each start depends on the previous end
        start = max(prev_end, int(sb[i]))
        stop = int(se[i]) if counts[i] == 0 else max(int(se[i]), int(dev_hi[i]))
        stop = max(stop, start)
        new_b[i], new_e[i] = start, stop
        prev_end = stop
    steps = steps.assign(begin_ps=new_b, end_ps=new_e)
    keep = _kept_steps(counts)
    return steps.iloc[:keep].reset_index(drop=True)


def _kept_steps(counts: np.ndarray) -> int:
    """Trailing steps whose device work was cut by the end of profiling are dropped."""
    n = len(counts)
    if n <= 1:
        return n
    last = np.flatnonzero(counts > 0)
    if not len(last):
        return n
    i = int(last[-1])
    if i > 0 and counts[i - 1] * 0.8 > counts[i]:
        return i
    return i + 1


# --- GPU metrics -----------------------------------------------------------------------
def _gpu_metrics(kernels: pd.DataFrame, sb: np.ndarray, se: np.ndarray) -> pd.DataFrame:
    rows = []
    if not len(sb):
        return pd.DataFrame(columns=["device", "utilization", "sm_efficiency", "occupancy"])
    lo, hi = int(sb[0]), int(se[-1])
    span = max(hi - lo, 1)
    for device, k in kernels.dropna(subset=["device"]).groupby("device", sort=True):
        b, e = k["begin_ps"].to_numpy(), k["end_ps"].to_numpy()
        seg = Segments([(b, e), ([lo], [hi])])
        util = seg.total_within(seg.covered((b, e)), [lo], [hi])[0] / span
        bps = k["blocks_per_sm"].to_numpy()
        has_bps = ~np.isnan(bps) & (bps > 0)
        sm = np.nan
        if has_bps.any():
            value = np.minimum(seg.coverage((b[has_bps], e[has_bps]), bps[has_bps]), 1.0)
            sm = seg.total_within(value > 0, [lo], [hi], value)[0] / span
        occ = k["occupancy"].to_numpy()
        has_occ = ~np.isnan(occ) & (occ >= 0)
        clipped = np.clip(np.minimum(e, hi) - np.maximum(b, lo), 0, None)[has_occ]
        occupancy = (occ[has_occ] * clipped).sum() / clipped.sum() if clipped.sum() > 0 else np.nan
        rows.append((int(device), util, sm, occupancy))
    return pd.DataFrame(rows, columns=["device", "utilization", "sm_efficiency", "occupancy"])

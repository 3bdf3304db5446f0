"""The advisor's checks on PyTorch traces (see ``analysis/advice``).

They read what the PyTorch pages show, so a finding's numbers are the ones its link
opens: the step breakdown and GPU utilization of the Overview (``overview``), the
Kernel view (``kernels``) and the operator calls behind the op-type view. Check ids,
thresholds and wording are the XSpace checks' (``checks``, ``op_checks``), so a
script reading ``tbprof advise --format json`` treats both the same:

- ``device_utilization``: per GPU, the share of the steps' span in which a kernel ran
  (the Overview's GPU utilization) and the idle time that leaves;
- ``input_bound``: DataLoader share of the average step (≥ 5 % warning, ≥ 20 % critical);
- ``host_device_copies``: Memcpy share of the average step (≥ 5 %);
- ``unexplained_step_time``: on a GPU run, host-only time (CPU Exec + Other) ≥ 15 % of
  the step while the GPU waits;
- ``slow_steps``, ``idle_between_steps``: the steps of the Overview;
- ``kernels``, ``tiny_kernels``: the Kernel view's launches;
- ``nhwc_convolutions``: layout-conversion kernels (``nchwToNhwcKernel``), per step;
- ``nothing_ran`` when the trace has no operator, step or device activity;
- ``warm_up`` (``pytorch_warmup``): steps that are start-up work. When every step is, the
  step, utilization and top-op checks are left out (they would describe start-up: "GPU
  0.0 %", "aten::empty_strided 69 %") and the finding says which steps to profile
  instead; otherwise the warm-up steps are not judged as slow steps.

Each worker is checked on its own (evidence names the worker when there are several);
GPU utilization is one finding over every worker's GPUs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..pytorch import events as E
from ..pytorch.kernels import kernel_stats
from ..pytorch.overview import step_overview
from . import checks as xc
from . import op_checks as xo
from .findings import CRITICAL, INFO, WARNING, Context, Finding, page_link, percent
from .pytorch_warmup import WarmUp, warm_up_steps

INPUT_MODERATE, INPUT_HIGH = 5.0, 20.0  # percent of the step, as the XSpace input check
HOST_ONLY_PERCENT = 15.0


def pytorch_checks(ctx: Context) -> list:
    """Every PyTorch finding of the session's workers (unsorted)."""
    if all(_nothing_ran(space) for _, space in ctx.hosts):
        return xc.nothing_ran_finding(ctx)
    warm = {worker: warm_up_steps(space) for worker, space in ctx.hosts}
    findings = [f for w, space in ctx.hosts for f in _warm_up(ctx, w, warm[w])]
    if all(w.only_warm_up for w in warm.values()):
        return findings + [f for w, space in ctx.hosts for f in _kernels(ctx, space, "")]
    findings += device_utilization(ctx)
    for worker, space in ctx.hosts:
        label = f"{worker}: " if len(ctx.hosts) > 1 else ""
        findings += _step_parts(ctx, space, label)
        findings += _step_outliers(ctx, space, label, warm[worker].positions)
        findings += _kernels(ctx, space, label)
    return findings + xo.top_ops(ctx)


def _warm_up(ctx: Context, worker: str, warm: WarmUp) -> list:
    if not warm.steps:
        return []
    label = f"{worker}: " if len(ctx.hosts) > 1 else ""
    why = "; ".join(f"step {s}: {r}" for s, r in zip(warm.steps, warm.reasons))
    if warm.only_warm_up:
        title = (
            f"{label}The profiled step is a warm-up step"
            if warm.all_steps == 1
            else f"{label}All {warm.all_steps} profiled steps are warm-up steps"
        )
        advice = (
            "GPU utilization, the step breakdown and the top ops here describe start-up, not "
            "training, so they are not judged. Profile steps after the first ones, e.g. "
            "torch.profiler.schedule(wait=1, warmup=1, active=3) (and repeat=1), and look "
            "again."
        )
    else:
        title = f"{label}{len(warm.steps)} of {warm.all_steps} steps are warm-up steps"
        advice = (
            "They are not judged as slow steps; the step breakdown and GPU "
            "utilization still average them in. Skip them in the profiler's schedule "
            "(wait=1, warmup=1) to measure training steps only."
        )
    return [
        Finding(
            "warm_up",
            INFO,
            title,
            f"Start-up work, not training: {why}.",
            advice,
            page_link(ctx, "pytorch_overview"),
            {"warm_up_steps": list(warm.steps), "steps": warm.all_steps},
        )
    ]


def _nothing_ran(space) -> bool:
    ev = E.trace_events(space)
    kinds = (E.OPERATOR, E.PROFILER_STEP) + E.DEVICE_TYPES
    return not np.isin(ev["type"].to_numpy(dtype=object), kinds).any()


def device_utilization(ctx: Context) -> list:
    busy: dict = {}
    idle_ms: dict = {}
    for worker, space in ctx.hosts:
        ov = step_overview(space)
        span = _steps_span(ov.steps)
        for g in ov.gpu.to_dict("records"):
            label = f"GPU {g['device']}" if len(ctx.hosts) == 1 else f"{worker} GPU {g['device']}"
            busy[label] = 100 * float(g["utilization"])
            idle_ms[label] = span * (1 - float(g["utilization"])) / 1e9
    if not busy:
        return []
    low = {d: u for d, u in busy.items() if u < xc.LOW_UTILIZATION_PERCENT}
    listing = ", ".join(f"{d} {u:.1f}% ({idle_ms[d]:.1f} ms idle)" for d, u in busy.items())
    numbers = {"busy_percent": busy, "idle_ms": idle_ms}
    link = page_link(ctx, "pytorch_overview")
    if not low:
        return [
            Finding(
                "device_utilization",
                INFO,
                "GPUs ran kernels most of the steps",
                f"Share of the steps' span with a kernel running: {listing}.",
                "Look at the top operators and kernels to make each step shorter.",
                link,
                numbers,
            )
        ]
    severity = CRITICAL if len(low) == len(busy) and max(low.values()) < 10 else WARNING
    if len(busy) == 1:
        ((gpu, share),) = busy.items()
        title = f"{gpu} ran kernels in only {share:.1f}% of the steps' span"
    else:
        title = f"{len(low)} of {len(busy)} GPUs ran kernels less than half of the steps' span"
    return [
        Finding(
            "device_utilization",
            severity,
            title,
            f"Share of the steps' span with a kernel running: {listing}.",
            "An idle GPU waits for the host: the DataLoader, Python and kernel launches "
            "(see the step breakdown), or for other ranks in collectives. Larger batches, "
            "torch.compile or CUDA graphs give the GPU more work per launch.",
            link,
            numbers,
        )
    ]


def _steps_span(steps: pd.DataFrame) -> float:
    if steps.empty:
        return 0.0
    return float(steps["end_ps"].max() - steps["begin_ps"].min())


def _step_parts(ctx: Context, space, label: str) -> list:
    ov = step_overview(space)
    total = ov.average.get("Total", 0.0)
    if ov.steps.empty or total <= 0:
        return []
    share = {part: percent(ov.average.get(part, 0.0), total) for part in ov.average}
    link = page_link(ctx, "pytorch_overview")
    out = []
    if share["DataLoader"] >= INPUT_MODERATE:
        out.append(
            Finding(
                "input_bound",
                CRITICAL if share["DataLoader"] >= INPUT_HIGH else WARNING,
                f"{label}{share['DataLoader']:.1f}% of the step waits for the DataLoader",
                f"DataLoader {ov.average['DataLoader'] / 1e9:.1f} ms of an average "
                f"{total / 1e9:.1f} ms step.",
                xc.INPUT_ADVICE[ctx.framework],
                link,
                {"input_percent": share["DataLoader"]},
            )
        )
    if share["Memcpy"] >= xc.COPY_PERCENT:
        out.append(
            Finding(
                "host_device_copies",
                WARNING,
                f"{label}{share['Memcpy']:.1f}% of step time copies data between host and device",
                f"Memcpy {ov.average['Memcpy'] / 1e9:.1f} ms of an average {total / 1e9:.1f} ms "
                "step (in which nothing else ran on the GPU).",
                "Keep tensors on the GPU between steps, copy from pinned memory with "
                "non_blocking=True, and avoid .item() / .cpu() on results every step.",
                link,
                {"copy_percent": share["Memcpy"]},
            )
        )
    host_only = share["CPU Exec"] + share["Other"]
    if ov.has_gpu and host_only >= HOST_ONLY_PERCENT:
        out.append(
            Finding(
                "unexplained_step_time",
                WARNING,
                f"{label}{host_only:.1f}% of the step runs on the host while the GPU waits",
                f"CPU Exec {share['CPU Exec']:.1f}% and Other {share['Other']:.1f}% of an "
                f"average {total / 1e9:.1f} ms step: no kernel, copy or launch ran then.",
                xc.OVERHEAD_ADVICE[ctx.framework],
                link,
                {"cpu_exec_percent": share["CPU Exec"], "other_percent": share["Other"]},
            )
        )
    return out


def _step_outliers(ctx: Context, space, label: str, warm_up: list) -> list:
    """Idle gaps between all steps; slow steps among those that are not warm-up steps
    (``warm_up``: positions in time order)."""
    steps = step_overview(space).steps.sort_values("begin_ps", kind="stable")
    if len(steps) < 2:
        return []
    begin = steps["begin_ps"].to_numpy(dtype=np.int64)
    end = steps["end_ps"].to_numpy(dtype=np.int64)
    out = xc.idle_gaps(ctx, begin, end)
    judged = np.setdiff1d(np.arange(len(steps)), np.asarray(warm_up, dtype=np.int64))
    if len(judged) >= 3:
        named = pd.DataFrame(
            {"step_name": [f"{label}step {s}" for s in steps["step"].iloc[judged]]}
        )
        out += xc.slow_steps(ctx, named, begin[judged], end[judged])
    return out


def _kernels(ctx: Context, space, label: str) -> list:
    table = kernel_stats(space)
    if table.empty:
        return []
    calls = table["calls"].to_numpy(dtype=np.float64)
    total_us = float(table["total_us"].sum())
    launches = float(calls.sum())
    top = table.iloc[0]  # longest in total first
    out = [
        Finding(
            "kernels",
            INFO,
            f"{label}{int(launches)} GPU kernel launches, {total_us / 1e3:.1f} ms of kernel time",
            f"{len(table)} distinct kernels, average {total_us / max(launches, 1):.1f} us per "
            f"launch; the longest in total is {str(top['name'])[:120]} "
            f"({percent(float(top['total_us']), total_us):.1f}%).",
            "The Kernel view lists every kernel with its launch shape and occupancy.",
            page_link(ctx, "pytorch_kernels"),
            {"launches": int(launches), "kernel_time_ms": total_us / 1e3},
        )
    ]
    steps = len(step_overview(space).steps)
    link = page_link(ctx, "pytorch_kernels")
    ns = table["total_us"].to_numpy(dtype=np.float64) * 1e3
    out += xo.layout_finding(ctx, table["name"], calls, ns, steps, link, label)
    tiny = float(calls[table["mean_us"].to_numpy(dtype=np.float64) < xo.TINY_KERNEL_US].sum())
    share = percent(tiny, launches)
    if launches >= xo.MIN_LAUNCHES and share >= xo.TINY_KERNEL_SHARE:
        out.append(
            Finding(
                "tiny_kernels",
                WARNING,
                f"{label}{share:.1f}% of kernel launches are shorter than "
                f"{xo.TINY_KERNEL_US:.0f} us",
                f"{int(tiny)} of {int(launches)} launches average under "
                f"{xo.TINY_KERNEL_US:.0f} us; such steps are bound by launch overhead, not by "
                "the GPU.",
                xo.FUSE_ADVICE[ctx.framework],
                page_link(ctx, "pytorch_kernels"),
                {"tiny_launch_percent": share, "launches": int(launches)},
            )
        )
    return out

"""The advisor's checks over steps, devices and the input pipeline (see ``advice``).

Thresholds are the ones the overview's bottleneck analysis uses where it has one
(input ≥ 5 % moderate, ≥ 20 % high); the others are stated next to each check.
Op and kernel checks live in ``op_checks``.
"""

from __future__ import annotations

import numpy as np

from ..input_pipeline import breakdown as ia
from .facts import JAX, PYTORCH, TENSORFLOW
from .findings import (
    CRITICAL,
    INFO,
    WARNING,
    Context,
    Finding,
    page_link,
    percent,
    trace_window,
)
from .op_checks import OP_CHECKS

LOW_UTILIZATION_PERCENT = 50.0
SLOW_STEP_FACTOR = 1.5  # a step this many times the median is an outlier
IDLE_GAP_PERCENT = 10.0  # share of the steps' span spent between steps
COPY_PERCENT = 5.0  # share of step time in host<->device copies

INPUT_ADVICE = {
    TENSORFLOW: (
        "Make the input pipeline overlap the step: end it with .prefetch(tf.data.AUTOTUNE), "
        "parallelize map() with num_parallel_calls=tf.data.AUTOTUNE, cache() what fits in "
        "memory, and move Python work (py_function) out of the pipeline."
    ),
    JAX: (
        "Load and transfer the next batch while the current step runs: prepare batches in a "
        "background thread and jax.device_put them ahead of time, and keep host-side NumPy "
        "work out of the step."
    ),
    PYTORCH: (
        "Give the DataLoader worker processes (num_workers), pin_memory=True and "
        "persistent_workers=True, and copy batches with non_blocking=True."
    ),
}
DEFAULT_INPUT_ADVICE = "Prepare the next batch while the current step runs (prefetching)."


def nothing_ran(ctx: Context) -> list:
    """An idle capture: no steps, no ops, no device activity. Said once, as info."""
    if not ctx.stats.steps.steps.empty or not ctx.stats.host_ops.without_idle().empty:
        return []
    if any(f.device_events or f.has_xla_ops for f in ctx.facts):
        return []
    return nothing_ran_finding(ctx)


def nothing_ran_finding(ctx: Context) -> list:
    return [
        Finding(
            "nothing_ran",
            INFO,
            "Nothing ran while this profile was captured",
            "The profile holds no training step, no framework or XLA op and no device activity.",
            "Capture while the program is busy: start the capture during training steps, or "
            "capture for longer.",
            page_link(ctx, "trace_viewer@"),
        )
    ]


def device_utilization(ctx: Context) -> list:
    """Per accelerator: time its streams were busy / the profiled span (< 50 % flagged)."""
    per_device: dict = {}
    for (host, _), facts in zip(ctx.hosts, ctx.facts):
        begin, end = facts.span
        for device, busy in facts.devices:
            label = device if len(ctx.hosts) == 1 else f"{host} {device}"
            per_device[label] = percent(busy, end - begin)
    if not per_device:
        return []
    low = {d: u for d, u in per_device.items() if u < LOW_UTILIZATION_PERCENT}
    listing = _utilization_list(per_device)
    if not low:
        return [
            Finding(
                "device_utilization",
                INFO,
                "Accelerators were busy most of the profile",
                f"Busy time per device: {listing}.",
                "Look at the top operations to make each step shorter.",
                page_link(ctx, "trace_viewer@"),
                {"busy_percent": per_device},
            )
        ]
    severity = CRITICAL if len(low) == len(per_device) and max(low.values()) < 10 else WARNING
    title = f"{len(low)} of {len(per_device)} accelerators were busy less than half the time"
    evidence = f"Busy time per device over the profiled span: {listing}."
    advice = (
        "Idle devices wait for the host (input, Python, kernel launches) or for each other. "
        "Check the input and step-time findings below, and in a multi-device job that every "
        "device gets work (data or model parallelism actually in use)."
    )
    return [
        Finding(
            "device_utilization",
            severity,
            title,
            evidence,
            advice,
            page_link(ctx, "trace_viewer@"),
            {"busy_percent": per_device},
        )
    ]


def _utilization_list(per_device: dict) -> str:
    busy = sorted(((u, d) for d, u in per_device.items() if u > 0), reverse=True)
    text = ", ".join(f"{d} {u:.1f}%" for u, d in busy) or "none busy"
    idle = len(per_device) - len(busy)
    return text + (f"; {idle} at 0%" if idle else "")


def host_utilization(ctx: Context) -> list:
    """Share of the host threads' timelines spent in framework ops (info)."""
    db = ctx.stats.host_ops
    if db.total_time_ps <= 0 or db.without_idle().empty:
        return []
    busy = percent(db.total_time_ps - db.idle_time_ps, db.total_time_ps)
    return [
        Finding(
            "host_utilization",
            INFO,
            f"Host threads ran framework ops {busy:.1f}% of their time",
            f"{(db.total_time_ps - db.idle_time_ps) / 1e9:.1f} ms in ops out of "
            f"{db.total_time_ps / 1e9:.1f} ms of host thread timelines.",
            "The rest is waiting or work outside the framework's ops (Python, I/O).",
            page_link(ctx, "framework_op_stats"),
            {"busy_percent": busy},
        )
    ]


def input_bound(ctx: Context) -> list:
    details = ctx.details
    total = float(details["step_time_ms"].sum()) if len(details) else 0.0
    if total <= 0:
        return []
    share = percent(float(details["input_ms"].sum()), total)
    if share < 5:
        return []
    severity = CRITICAL if share >= 20 else WARNING
    level = "highly" if share >= 20 else "moderately"
    return [
        Finding(
            "input_bound",
            severity,
            f"The steps are {level} input-bound: {share:.1f}% of step time waits for input",
            f"{float(details['input_ms'].sum()):.1f} ms of {total:.1f} ms of step time over "
            f"{len(details)} steps was spent waiting for input data.",
            INPUT_ADVICE.get(ctx.framework, DEFAULT_INPUT_ADVICE),
            page_link(ctx, "input_pipeline_analyzer"),
            {"input_percent": share, "steps": len(details)},
        )
    ]


def unexplained_step_time(ctx: Context) -> list:
    """Step time that is neither ops nor input ("All others", ≥ 15 %): Python overhead."""
    details = ctx.details
    total = float(details["step_time_ms"].sum()) if len(details) else 0.0
    share = percent(float(details["unknown_time_ms"].sum()), total) if total > 0 else 0.0
    if share < 15:
        return []
    return [
        Finding(
            "unexplained_step_time",
            WARNING,
            f"{share:.1f}% of step time is outside any recorded op",
            f"'All others' time: {float(details['unknown_time_ms'].sum()):.1f} ms of "
            f"{total:.1f} ms of step time.",
            OVERHEAD_ADVICE.get(ctx.framework, OVERHEAD_ADVICE[TENSORFLOW]),
            page_link(ctx, "overview_page"),
            {"all_others_percent": share},
        )
    ]


OVERHEAD_ADVICE = {
    TENSORFLOW: "Usually Python or eager execution between ops: wrap the step in tf.function.",
    JAX: (
        "Usually Python work between jitted calls (dispatch, host NumPy, blocking on "
        "results): jit the whole step and avoid block_until_ready() / device_get() inside it."
    ),
    PYTORCH: "Usually Python between kernels: try torch.compile or CUDA graphs for the step.",
}


def steps_timing(ctx: Context) -> list:
    """Idle gaps between steps and steps much slower than the median."""
    steps = ctx.stats.steps.steps
    if len(steps) < 2:
        return []
    steps = steps.sort_values("begin_ps")
    begin = steps["begin_ps"].to_numpy(dtype=np.int64)
    end = begin + steps["duration_ps"].to_numpy(dtype=np.int64)
    out = idle_gaps(ctx, begin, end)
    if len(steps) >= 3:
        out += slow_steps(ctx, steps, begin, end)
    return out


def idle_gaps(ctx: Context, begin, end) -> list:
    # Against the latest end so far: a step that overlaps a long one leaves no gap.
    gaps = np.maximum(begin[1:] - np.maximum.accumulate(end)[:-1], 0)
    span = int(end.max() - begin.min())
    share = percent(int(gaps.sum()), span)
    if share < IDLE_GAP_PERCENT:
        return []
    worst = int(np.argmax(gaps))
    return [
        Finding(
            "idle_between_steps",
            WARNING,
            f"{share:.1f}% of the time passes between steps",
            f"{gaps.sum() / 1e9:.1f} ms of gaps over {span / 1e9:.1f} ms; the longest is "
            f"{gaps[worst] / 1e9:.1f} ms after step {worst}.",
            "Something outside the step runs between steps (logging, checkpoints, "
            "evaluation, synchronisation): open the longest gap in the trace viewer.",
            trace_window(ctx, int(end[worst]), int(begin[worst + 1])),
            {"gap_percent": share},
        )
    ]


def slow_steps(ctx: Context, steps, begin, end) -> list:
    duration = end - begin
    median = float(np.median(duration))
    slow = np.flatnonzero(duration > SLOW_STEP_FACTOR * median)
    if not len(slow) or median <= 0:
        return []
    worst = int(slow[np.argmax(duration[slow])])
    names = steps["step_name"].astype(str).to_numpy()
    listed = ", ".join(f"{names[i]} ({duration[i] / 1e9:.1f} ms)" for i in slow[:5])
    return [
        Finding(
            "slow_steps",
            WARNING if len(slow) > 1 or worst != 0 else INFO,
            f"{len(slow)} step(s) took over {SLOW_STEP_FACTOR}x the median step time",
            f"Median step {median / 1e9:.1f} ms; slow: {listed}.",
            "A slow first step is usually compilation or warm-up; later outliers point at "
            "input stalls, garbage collection or recompilation: compare the slowest step with "
            "a typical one in the trace viewer.",
            trace_window(ctx, int(begin[worst]), int(end[worst])),
            {"median_ms": median / 1e9, "slow_steps": [str(names[i]) for i in slow]},
        )
    ]


def host_device_copies(ctx: Context) -> list:
    steps = ctx.stats.steps.steps
    if steps.empty or "duration_ps" not in steps:
        return []
    total = float(steps["duration_ps"].sum())
    cols = [c for c in ("HOST_TO_DEVICE", "DEVICE_TO_HOST", "DEVICE_WAIT_HOST") if c in steps]
    copies = float(steps[cols].to_numpy(dtype=np.float64).sum()) if cols else 0.0
    share = percent(copies, total)
    if share < COPY_PERCENT:
        return []
    return [
        Finding(
            "host_device_copies",
            WARNING,
            f"{share:.1f}% of step time copies data between host and device",
            f"{copies / 1e9:.1f} ms of host-to-device / device-to-host transfers in "
            f"{total / 1e9:.1f} ms of steps.",
            "Keep tensors on the device between steps, copy from pinned memory asynchronously, "
            "and avoid reading results back to the host every step.",
            page_link(ctx, "trace_viewer@"),
            {"copy_percent": share},
        )
    ]


def tf_data_bottleneck(ctx: Context) -> list:
    if ctx.framework != TENSORFLOW:
        return []
    if not any(f.has_tf_data for f in ctx.facts):
        return []
    stats = ctx.tf_data()
    counts: dict = {}
    for pipeline in stats.pipelines:
        if pipeline.is_device:
            continue
        names = stats.metadata.get(pipeline.host)
        for iterator_id in pipeline.bottlenecks["iterator_id"].tolist():
            if iterator_id and names is not None and iterator_id in names.index:
                name = str(names.loc[iterator_id, "long_name"])
                counts[name] = counts.get(name, 0) + 1
    if not counts:
        return []
    name, times = max(counts.items(), key=lambda kv: kv[1])
    total = sum(counts.values())
    severity = WARNING if input_bound(ctx) else INFO
    return [
        Finding(
            "tf_data_bottleneck",
            severity,
            f"tf.data bottleneck: {name}",
            f"{name} was the bottleneck in {times} of {total} slow pipeline executions.",
            "Speed up this stage: parallelize it (num_parallel_calls=tf.data.AUTOTUNE), move "
            "Python (py_function) out of it, or cache its output; prefetch after it.",
            page_link(ctx, "tf_data_bottleneck_analysis"),
            {"iterator": name, "bottleneck_count": times},
        )
    ]


def kernel_launch_bound(ctx: Context) -> list:
    details = ctx.details
    bottleneck = ia.classify(details, False) if len(details) else None
    if bottleneck is None or bottleneck.kernel_launch_classification == "no":
        return []
    return [
        Finding(
            "kernel_launch",
            WARNING,
            "Steps spend time launching kernels",
            bottleneck.kernel_launch_statement,
            "Fewer, larger kernels: fuse ops (XLA / jit / torch.compile) or use CUDA graphs.",
            page_link(ctx, "kernel_stats"),
        )
    ]


CHECKS = (
    nothing_ran,
    device_utilization,
    input_bound,
    tf_data_bottleneck,
    host_device_copies,
    kernel_launch_bound,
    steps_timing,
    unexplained_step_time,
    host_utilization,
) + OP_CHECKS

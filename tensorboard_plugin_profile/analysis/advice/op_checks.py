"""The advisor's op and kernel checks: top op types and ops, GPU kernel problems."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .facts import JAX, PYTORCH, TENSORFLOW
from .findings import (
    INFO,
    WARNING,
    Context,
    Finding,
    duration_text,
    page_link,
    percent,
)

TOP = 3
CODE_FRAMES = 2  # innermost Python frames named per expensive op
TINY_KERNEL_US = 10.0  # kernels shorter than this are dominated by launch overhead
TINY_KERNEL_SHARE = 50.0  # percent of launches
MIN_LAUNCHES = 1000
TENSOR_CORE_SHARE = 10.0  # percent of kernel time in eligible ops not using Tensor Cores


def top_ops(ctx: Context) -> list:
    """tfprof's expensive-operation checker: the top op types and ops by self time, each
    with its CPU and accelerator time and, for ops, the code path that created it."""
    records = ctx.records()
    total = int(records["self_time_ps"].sum()) if len(records) else 0
    if total <= 0:
        return []
    types = _split(records, "type")
    type_list = ", ".join(
        f"{t} {percent(r.self_time_ps, total):.1f}% ({_cpu_accelerator(r)})"
        for t, r in types.head(TOP).iterrows()
    )
    top_share = percent(types["self_time_ps"].iloc[0], total)
    ops = _split(records, "name").head(TOP)
    paths = _code_paths(records, ops.index)
    op_list = "; ".join(
        f"{n} {percent(r.self_time_ps, total):.1f}% ({_cpu_accelerator(r)}"
        + (f", from {paths[n]}" if paths.get(n) else "")
        + ")"
        for n, r in ops.iterrows()
    )
    where, what_to_do = (
        ("scope_view", "The scope view shows which part of the model these ops belong to.")
        if ctx.framework in (JAX, PYTORCH)
        else ("framework_op_stats", "TF stats lists these ops with their host and device time.")
    )
    if any(paths.values()):
        what_to_do += " The code view shows the Python lines that created them."
    return [
        Finding(
            "top_op_types",
            INFO,
            f"Most op time goes to {types.index[0]} ({top_share:.1f}%)",
            f"Top op types by self time ({duration_text(total)} in all): {type_list}.",
            "Start optimising with these types: the op-type view lists their ops.",
            page_link(ctx, "op_types"),
            {
                "types_percent": {
                    str(t): percent(v, total) for t, v in types["self_time_ps"].head(TOP).items()
                },
                "types_split_ms": _split_numbers(types.head(TOP)),
            },
        ),
        Finding(
            "top_ops",
            INFO,
            f"The most expensive op is {ops.index[0]}",
            f"Top ops by self time: {op_list}.",
            what_to_do,
            page_link(ctx, where),
            {
                "ops": [str(n) for n in ops.index],
                "ops_split_ms": _split_numbers(ops),
                "code_paths": {str(n): paths.get(n, "") for n in ops.index},
            },
        ),
    ]


def _split(records: pd.DataFrame, key: str) -> pd.DataFrame:
    """Self time per ``key`` (longest first) with its CPU and accelerator parts, in ps."""
    device = records["self_time_ps"].where(records["side"] == "Device", 0)
    frame = pd.DataFrame(
        {key: records[key].astype(str), "self_time_ps": records["self_time_ps"], "device": device}
    )
    out = frame.groupby(key, sort=False).sum()
    out["host"] = out["self_time_ps"] - out["device"]
    return out.sort_values("self_time_ps", ascending=False, kind="stable")


def _cpu_accelerator(row) -> str:
    return f"CPU {duration_text(row.host)}, accelerator {duration_text(row.device)}"


def _split_numbers(frame: pd.DataFrame) -> dict:
    return {
        str(n): {"cpu_ms": float(r.host) / 1e9, "accelerator_ms": float(r.device) / 1e9}
        for n, r in frame.iterrows()
    }


def _code_paths(records: pd.DataFrame, names) -> dict:
    """The innermost frames (up to ``CODE_FRAMES``) of each named op's longest record."""
    out = {}
    for name in names:
        mine = records[records["name"].astype(str) == name]
        frames = mine["frames"].iloc[int(np.argmax(mine["self_time_ps"].to_numpy()))]
        out[name] = " < ".join(str(f).lstrip("$") for f in reversed(frames[-CODE_FRAMES:]))
    return out


def kernel_summary(ctx: Context) -> list:
    kernels = ctx.stats.kernels
    if kernels.empty:
        return []
    launches = int(kernels["occurrences"].sum())
    total_ns = float(kernels["total_duration_ns"].sum())
    top = kernels.sort_values("total_duration_ns", ascending=False).iloc[0]
    top_share = percent(float(top["total_duration_ns"]), total_ns)
    return [
        Finding(
            "kernels",
            INFO,
            f"{launches} GPU kernel launches, {total_ns / 1e6:.1f} ms of kernel time",
            f"{kernels['name'].nunique()} distinct kernels, average "
            f"{total_ns / 1e3 / max(launches, 1):.1f} us per launch; the longest in total is "
            f"{str(top['name'])[:120]} ({top_share:.1f}%).",
            "The kernel stats page lists every kernel with its op and launch shape.",
            page_link(ctx, "kernel_stats"),
            {"launches": launches, "kernel_time_ms": total_ns / 1e6},
        )
    ]


def tiny_kernels(ctx: Context) -> list:
    kernels = ctx.stats.kernels
    if kernels.empty:
        return []
    occurrences = kernels["occurrences"].to_numpy(dtype=np.float64)
    average_us = (
        kernels["total_duration_ns"].to_numpy(dtype=np.float64) / 1e3 / np.maximum(occurrences, 1)
    )
    launches = float(occurrences.sum())
    tiny = float(occurrences[average_us < TINY_KERNEL_US].sum())
    share = percent(tiny, launches)
    if launches < MIN_LAUNCHES or share < TINY_KERNEL_SHARE:
        return []
    return [
        Finding(
            "tiny_kernels",
            WARNING,
            f"{share:.1f}% of kernel launches are shorter than {TINY_KERNEL_US:.0f} us",
            f"{int(tiny)} of {int(launches)} launches average under {TINY_KERNEL_US:.0f} us; "
            "such steps are bound by launch overhead, not by the GPU.",
            FUSE_ADVICE.get(ctx.framework, FUSE_ADVICE[TENSORFLOW]),
            page_link(ctx, "kernel_stats"),
            {"tiny_launch_percent": share, "launches": int(launches)},
        )
    ]


FUSE_ADVICE = {
    TENSORFLOW: "Fuse small ops: compile the step with XLA (tf.function(jit_compile=True)) "
    "and use larger batches.",
    JAX: "Jit larger functions (the whole step) so XLA fuses them, and use larger batches.",
    PYTORCH: "Fuse small ops with torch.compile, or capture the step in CUDA graphs.",
}


def tensor_cores(ctx: Context) -> list:
    kernels = ctx.stats.kernels
    if kernels.empty:
        return []
    total = float(kernels["total_duration_ns"].sum())
    eligible = kernels["is_op_tensor_core_eligible"].astype(bool)
    using = kernels["is_kernel_using_tensor_core"].astype(bool)
    missed = float(kernels.loc[eligible & ~using, "total_duration_ns"].sum())
    share = percent(missed, total)
    steps = ctx.stats.steps
    both = steps.precision_16bit_ps + steps.precision_32bit_ps
    fp32 = percent(steps.precision_32bit_ps, both)
    if share < TENSOR_CORE_SHARE:
        return []
    return [
        Finding(
            "tensor_cores",
            WARNING,
            f"{share:.1f}% of kernel time is matrix work not using Tensor Cores",
            f"Ops eligible for Tensor Cores (convolutions, matmuls) ran {missed / 1e6:.1f} ms in "
            f"kernels that do not use them; {fp32:.1f}% of device compute is 32-bit.",
            _PRECISION_ADVICE.get(ctx.framework, _PRECISION_ADVICE[TENSORFLOW]),
            page_link(ctx, "kernel_stats"),
            {"missed_percent": share, "fp32_percent": fp32},
        )
    ]


_PRECISION_ADVICE = {
    TENSORFLOW: "Use mixed precision (keras.mixed_precision.set_global_policy('mixed_float16')) "
    "and keep matrix dimensions multiples of 8.",
    JAX: "Compute in bfloat16/float16 (cast params and inputs, or "
    "jax.default_matmul_precision) and keep matrix dimensions multiples of 8.",
    PYTORCH: "Use torch.autocast (float16/bfloat16) or allow TF32 "
    "(torch.backends.cuda.matmul.allow_tf32 = True).",
}


# Kernels and ops that only convert tensors between the NHWC and NCHW layouts: cuDNN's
# nchwToNhwcKernel / nhwcToNchwKernel, TensorFlow's layout optimizer's
# TransposeNHWCToNCHW-LayoutOptimizer ops.
LAYOUT_TRANSPOSE = r"(?i)nchw_?to_?nhwc|nhwc_?to_?nchw"
LAYOUT_ADVICE = {
    TENSORFLOW: "On GPU, give convolutions the layout their kernels want: NCHW "
    "(data_format='channels_first') in float32, or NHWC with mixed precision (Tensor Cores), "
    "so no transposes run around each convolution.",
    JAX: "XLA picks convolution layouts itself: run in bfloat16/float16 so it keeps NHWC for "
    "Tensor Cores, and avoid transposing activations by hand between convolutions.",
    PYTORCH: "Keep one layout end to end: model.to(memory_format=torch.channels_last) and the "
    "inputs .to(memory_format=torch.channels_last) with torch.autocast (float16/bfloat16), or "
    "stay in the default NCHW in float32; mixing them converts around every convolution.",
}


def nhwc_convolutions(ctx: Context) -> list:
    """Layout-conversion kernels around convolutions: the data format fights the GPU."""
    kernels = ctx.stats.kernels
    if kernels.empty:
        return []
    steps = len(ctx.stats.steps.steps)
    return layout_finding(
        ctx,
        kernels["name"].astype(str) + " " + kernels["op_name"].astype(str),
        kernels["occurrences"],
        kernels["total_duration_ns"],
        steps,
        page_link(ctx, "kernel_stats"),
    )


def layout_finding(ctx: Context, names, launches, time_ns, steps: int, link, label="") -> list:
    """The ``nhwc_convolutions`` finding over a kernel table (one row per kernel)."""
    names = pd.Series(names, dtype=object).astype(str)
    layout = names.str.contains(LAYOUT_TRANSPOSE, regex=True).to_numpy()
    if not layout.any():
        return []
    time_ns = np.asarray(time_ns, dtype=np.float64)
    count = int(np.asarray(launches, dtype=np.float64)[layout].sum())
    time = float(time_ns[layout].sum())
    share = percent(time, float(time_ns.sum()))
    per_step = count / steps if steps else None
    how_often = f", {per_step:.1f} per step over {steps} steps" if per_step else ""
    kinds = ", ".join(sorted({n.split("<")[0].split("(")[0][:60] for n in names[layout]}))
    return [
        Finding(
            "nhwc_convolutions",
            WARNING if share >= 5 else INFO,
            f"{label}{share:.1f}% of kernel time converts tensors between NHWC and NCHW",
            f"{count} layout-conversion launches{how_often}, {time / 1e6:.2f} ms ({kinds}): "
            "convolutions run in a data format the GPU kernels do not use directly.",
            LAYOUT_ADVICE.get(ctx.framework, LAYOUT_ADVICE[TENSORFLOW]),
            link,
            {"layout_percent": share, "launches": count, "launches_per_step": per_step},
        )
    ]


OP_CHECKS = (top_ops, kernel_summary, tiny_kernels, tensor_cores, nhwc_convolutions)

"""The advisor's op and kernel checks: top op types and ops, GPU kernel problems."""

from __future__ import annotations

import numpy as np

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
TINY_KERNEL_US = 10.0  # kernels shorter than this are dominated by launch overhead
TINY_KERNEL_SHARE = 50.0  # percent of launches
MIN_LAUNCHES = 1000
TENSOR_CORE_SHARE = 10.0  # percent of kernel time in eligible ops not using Tensor Cores


def top_ops(ctx: Context) -> list:
    records = ctx.records()
    total = int(records["self_time_ps"].sum()) if len(records) else 0
    if total <= 0:
        return []
    types = records.groupby("type")["self_time_ps"].sum().sort_values(ascending=False)
    type_list = ", ".join(f"{t} {percent(v, total):.1f}%" for t, v in types.head(TOP).items())
    ops = records.sort_values("self_time_ps", ascending=False).head(TOP)
    op_list = "; ".join(
        f"{n} ({s}) {percent(v, total):.1f}%"
        for n, s, v in zip(ops["name"], ops["side"], ops["self_time_ps"])
    )
    where, what_to_do = (
        ("scope_view", "The scope view shows which part of the model these ops belong to.")
        if ctx.framework in (JAX, PYTORCH)
        else ("framework_op_stats", "TF stats lists these ops with their host and device time.")
    )
    return [
        Finding(
            "top_op_types",
            INFO,
            f"Most op time goes to {types.index[0]} ({percent(types.iloc[0], total):.1f}%)",
            f"Top op types by self time ({duration_text(total)} in all): {type_list}.",
            "Start optimising with these types: the op-type view lists their ops.",
            page_link(ctx, "op_types"),
            {"types_percent": {str(t): percent(v, total) for t, v in types.head(TOP).items()}},
        ),
        Finding(
            "top_ops",
            INFO,
            f"The most expensive op is {ops['name'].iloc[0]}",
            f"Top ops by self time: {op_list}.",
            what_to_do,
            page_link(ctx, where),
            {"ops": [str(n) for n in ops["name"]]},
        ),
    ]


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


def nhwc_convolutions(ctx: Context) -> list:
    """Layout-conversion kernels around convolutions: the data format fights the GPU."""
    kernels = ctx.stats.kernels
    if kernels.empty:
        return []
    names = kernels["name"].astype(str)
    layout = names.str.contains(r"nhwcToNchw|nchwToNhwc|NHWCToNCHW|NCHWToNHWC", regex=True)
    if not layout.any():
        return []
    time = float(kernels.loc[layout, "total_duration_ns"].sum())
    share = percent(time, float(kernels["total_duration_ns"].sum()))
    return [
        Finding(
            "nhwc_convolutions",
            WARNING if share >= 5 else INFO,
            f"{share:.1f}% of kernel time converts tensors between NHWC and NCHW",
            f"{int(kernels.loc[layout, 'occurrences'].sum())} layout-conversion launches, "
            f"{time / 1e6:.1f} ms: convolutions run in a data format the GPU kernels do not "
            "use directly.",
            "On GPU, give convolutions the layout their kernels want: NCHW in float32, or NHWC "
            "with float16 (Tensor Cores), so no transposes run around each convolution.",
            page_link(ctx, "kernel_stats"),
            {"layout_percent": share},
        )
    ]


OP_CHECKS = (top_ops, kernel_summary, tiny_kernels, tensor_cores, nhwc_convolutions)

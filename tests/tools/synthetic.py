"""Small hand-made GPU XSpaces whose numbers can be checked by hand."""

from __future__ import annotations

from xspace_builder import US, SpaceBuilder, Uint

__all__ = ["US", "gpu_space"]


def gpu_space():
    """One host thread launching kernels on one GPU stream, plus a memcpy.

    Step group 1 spans 100..120 us on the device ``Steps`` line.
    """
    space = SpaceBuilder("synthetic")
    host = space.plane(1, "/host:CPU")
    thread = host.line(7, "python")
    host.event(thread, "dense/MatMul:MatMul", 90, 8, group_id=1)
    host.event(thread, "cuLaunchKernel", 91, 1, correlation_id=Uint(1), group_id=1)
    gpu = space.plane(2, "/device:GPU:0")
    for key, value in (
        ("clock_rate", 1_530_000),
        ("core_count", 80),
        ("memory_bandwidth", 900_000_000_000),
        ("compute_cap_major", 7),
        ("compute_cap_minor", 0),
    ):
        gpu.plane_stat(key, value)
    stream = gpu.line(1, "Stream #1(Compute)")
    details = "regs:96 static_shared:1024 dynamic_shared:512 grid:16,8,1 block:128,1,1 occ_pct:50"
    gpu.event(
        stream,
        "volta_h884gemm_64x64",
        100,
        3,
        correlation_id=Uint(1),
        group_id=1,
        kernel_details=details,
        tf_op="dense/MatMul:MatMul",
        shape="(half[4,4])",
    )
    gpu.event(
        stream,
        "volta_h884gemm_64x64",
        104,
        5,
        correlation_id=Uint(2),
        group_id=1,
        kernel_details=details,
        tf_op="dense/MatMul:MatMul",
        shape="(half[4,4])",
    )
    gpu.event(
        stream,
        "relu_kernel",
        110,
        0.001,
        correlation_id=Uint(3),
        group_id=1,
        kernel_details="regs:8 grid:1,1,1 block:32,1,1",
        tf_op="dense/Relu:Relu",
    )
    copy = "num_bytes:4096"
    gpu.event(stream, "MemcpyDToH", 115, 5, correlation_id=Uint(4), group_id=1, memcpy_details=copy)
    steps = gpu.line(-559038737, "Steps")
    gpu.event(steps, "1", 100, 20, group_id=1, step_name="1")
    return space.decode()

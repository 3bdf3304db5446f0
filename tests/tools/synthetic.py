"""Small hand-made GPU XSpaces whose numbers can be checked by hand."""

from __future__ import annotations

from xspace_builder import US, SpaceBuilder, Uint, set_stat_value

__all__ = ["US", "gpu_space", "gpu_xla_space"]


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


def _xla_module_proto():
    """A compiled program ``jit_step`` (id 7): a loop fusion and a dot."""
    from tensorboard_plugin_profile.protobuf import hlo_pb2

    proto = hlo_pb2.HloProto()
    module = proto.hlo_module
    module.name, module.id, module.entry_computation_name = "jit_step", 7, "main"
    module.entry_computation_id = 2
    fused = module.computations.add(name="fused_add", id=1, root_id=11)
    fused.is_fusion_computation = True
    for iid, name, opcode, operands in ((10, "p", "parameter", ()), (11, "add.0", "add", (10, 10))):
        inst = fused.instructions.add(name=name, opcode=opcode, id=iid)
        inst.operand_ids.extend(operands)
        inst.shape.element_type = hlo_pb2.F32
        inst.shape.dimensions.extend([4, 4])
        inst.shape.layout.minor_to_major.extend([1, 0])
    main = module.computations.add(name="main", id=2, root_id=3)
    for iid, name, opcode, operands in (
        (1, "x", "parameter", ()),
        (2, "fusion.1", "fusion", (1,)),
        (3, "dot.2", "dot", (2, 2)),
    ):
        inst = main.instructions.add(name=name, opcode=opcode, id=iid)
        inst.operand_ids.extend(operands)
        inst.shape.element_type = hlo_pb2.F32
        inst.shape.dimensions.extend([4, 4])
        inst.shape.layout.minor_to_major.extend([1, 0])
        inst.metadata.op_name = f"jit(step)/{name}"
    main.instructions[1].fusion_kind = "kLoop"
    main.instructions[1].called_computation_ids.append(1)
    dims = main.instructions[2].dot_dimension_numbers
    dims.lhs_contracting_dimensions.append(1)
    dims.rhs_contracting_dimensions.append(0)
    return proto


def gpu_xla_space():
    """One GPU running XLA program ``jit_step(7)``: fusion.1 twice, dot.2 once.

    Device ops (us): fusion.1 at 100 (3) and 105 (5), dot.2 at 115 (10) with 1e6 and
    2e7 FLOPs and 1e5 / 2e5 bytes per run: op time 18 us over a 25 us span (7 us idle).
    The GPU reports a 10 TFLOP/s peak and 1 TB/s memory bandwidth.
    """
    space = SpaceBuilder("synthetic")
    meta = space.plane(3, "/host:metadata")
    program = meta.plane.event_metadata[meta.event_id("jit_step(7)")]
    set_stat_value(program.stats.add(), _xla_module_proto().SerializeToString())
    program.stats[0].metadata_id = meta.stat_id("Hlo Proto")
    gpu = space.plane(2, "/device:GPU:0")
    gpu.plane_stat("peak_teraflops_per_second", 10)
    gpu.plane_stat("memory_bandwidth", 1_000_000_000_000)
    stream = gpu.line(1, "Stream #1(Compute)")
    xla = {"hlo_module": "jit_step", "program_id": 7}
    gpu.event(stream, "loop_add_kernel", 100, 3, hlo_op="fusion.1", flops=1_000_000,
              bytes_accessed=100_000, **xla)  # fmt: skip
    gpu.event(stream, "loop_add_kernel", 105, 5, hlo_op="fusion.1", flops=1_000_000,
              bytes_accessed=100_000, **xla)  # fmt: skip
    gpu.event(stream, "gemm_kernel", 115, 10, hlo_op="dot.2", flops=20_000_000,
              bytes_accessed=200_000, **xla)  # fmt: skip
    return space.decode()

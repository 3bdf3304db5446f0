"""FLOPs and bytes from HLO shapes (analysis/hlo/costs.py), worked out by hand.

The JAX fixture ``jax_cpu_train`` trains a small CNN on 64 MNIST images per step
(conv 3x3x1x8, conv 3x3x8x16, dense 784x128, dense 128x10) and ran 12 steps; its
events carry no ``flops`` stat, so every number below comes from the HLO.
"""

from __future__ import annotations

import pytest
from conftest import host_files

from tensorboard_plugin_profile.analysis.hlo.costs import ModuleCosts, array_bytes
from tensorboard_plugin_profile.analysis.hlo.op_events import hlo_op_table
from tensorboard_plugin_profile.protobuf import hlo_pb2
from tensorboard_plugin_profile.tools import hlo_stats, op_profile
from tensorboard_plugin_profile.xspace import read_xspace

STEPS = 12


@pytest.fixture(scope="module")
def jax_ops():
    space = read_xspace(str(host_files("jax_cpu_train")[0]))
    return space, hlo_op_table([("vm", space)]).set_index("hlo_op")


def test_dot_is_2mnk(jax_ops):
    _, ops = jax_ops
    # dot = f32[784,128] dot(f32[64,784], f32[64,128]), contracting dim 0 (the batch of 64):
    # 2 * 784 * 128 * 64 = 12,845,056 FLOPs per step.
    assert ops.loc["dot", "flops"] == 2 * 784 * 128 * 64 * STEPS == 154_140_672
    # bytes: reads 64*784 + 64*128 floats, writes 784*128 floats, 4 bytes each.
    assert ops.loc["dot", "bytes_accessed"] == (64 * 784 + 64 * 128 + 784 * 128) * 4 * STEPS
    # dot.1 = f32[128,10] from f32[64,128] x f32[64,10]: 2 * 128 * 10 * 64.
    assert ops.loc["dot.1", "flops"] == 2 * 128 * 10 * 64 * STEPS


def test_convolution_is_2_x_outputs_x_kernel_window_x_input_features(jax_ops):
    _, ops = jax_ops
    # conv1: f32[64,28,28,8] output, kernel 3x3x1x8 (one input feature):
    # 2 * (64*28*28*8) * 9 * 1 = 7,225,344 per step.
    assert ops.loc["conv_general_dilated.5", "flops"] == 2 * 64 * 28 * 28 * 8 * 9 * 1 * STEPS
    # conv2: f32[64,14,14,16] output, kernel 3x3x8x16: 2 * (64*14*14*16) * 9 * 8.
    assert ops.loc["conv_general_dilated.6", "flops"] == 2 * 64 * 14 * 14 * 16 * 9 * 8 * STEPS


def test_data_movement_counts_bytes_but_no_flops(jax_ops):
    _, ops = jax_ops
    assert ops.loc["wrapped_iota", "flops"] == 0
    # wrapped_iota writes s32[64,28,28,8] and reads nothing.
    assert ops.loc["wrapped_iota", "bytes_accessed"] == 64 * 28 * 28 * 8 * 4 * STEPS


def test_hlo_stats_and_op_profile_fill_the_flop_columns(jax_ops):
    space, ops = jax_ops
    table = hlo_stats.convert([("vm", space)], {})
    names = [c["id"] for c in table["cols"]]
    rows = {r["c"][names.index("hlo_op_name")]["v"]: r["c"] for r in table["rows"]}
    dot = rows["dot"]
    self_us = dot[names.index("total_self_time")]["v"]
    gflops = dot[names.index("model_flop_rate")]["v"]
    # GFLOP/s = FLOPs / self time: FLOP / (us * 1e3) = GFLOP/s.
    assert gflops == pytest.approx(154_140_672 / (self_us * 1e3))
    assert dot[names.index("operational_intensity")]["v"] == pytest.approx(
        154_140_672 / ops.loc["dot", "bytes_accessed"]
    )
    profile = op_profile.convert([("vm", space)], {})
    assert profile["byProgram"]["metrics"]["rawFlops"] == pytest.approx(float(ops["flops"].sum()))
    assert profile["byProgram"]["metrics"]["rawFlops"] > 0


def _shape(dims, element_type=hlo_pb2.F32):
    return hlo_pb2.ShapeProto(element_type=element_type, dimensions=dims)


def test_fusion_reduce_and_grouped_convolution_by_hand():
    """A module built here: a fusion of (add, reduce) and a grouped convolution."""
    module = hlo_pb2.HloModuleProto(name="m", id=1, entry_computation_id=1)
    fused = module.computations.add(id=2, name="fused")
    fused.instructions.add(id=10, name="p0", opcode="parameter", shape=_shape([8, 4]))
    fused.instructions.add(
        id=11, name="add", opcode="add", shape=_shape([8, 4]), operand_ids=[10, 10]
    )
    fused.instructions.add(id=12, name="zero", opcode="constant", shape=_shape([]))
    fused.instructions.add(
        id=13, name="sum", opcode="reduce", shape=_shape([8]), operand_ids=[11, 12]
    )
    entry = module.computations.add(id=1, name="main")
    entry.instructions.add(id=1, name="x", opcode="parameter", shape=_shape([8, 4]))
    fusion = entry.instructions.add(
        id=2, name="fusion", opcode="fusion", shape=_shape([8]), operand_ids=[1],
        called_computation_ids=[2],
    )  # fmt: skip
    entry.instructions.add(id=3, name="image", opcode="parameter", shape=_shape([1, 5, 5, 6]))
    entry.instructions.add(id=4, name="kernel", opcode="parameter", shape=_shape([3, 3, 2, 6]))
    conv = entry.instructions.add(
        id=5, name="conv", opcode="convolution", shape=_shape([1, 3, 3, 6]),
        operand_ids=[3, 4], feature_group_count=3,
    )  # fmt: skip
    numbers = conv.convolution_dimension_numbers
    numbers.kernel_spatial_dimensions.extend([0, 1])
    numbers.kernel_input_feature_dimension = 2
    numbers.kernel_output_feature_dimension = 3
    costs = ModuleCosts(module)
    # add: 32 elements; reduce: 32 inputs summed -> 64 FLOPs; bytes: 32 floats in, 8 out.
    assert costs.flops(fusion) == 32 + 32
    assert costs.bytes_accessed(fusion) == (32 + 8) * 4
    # 6 input features in 3 groups: the kernel holds 6/3 = 2 input features.
    # 2 * (1*3*3*6 outputs) * (3*3 window) * 2 = 1,944.
    assert costs.flops(conv) == 2 * 54 * 9 * 2 == 1944
    tuple_shape = hlo_pb2.ShapeProto(element_type=hlo_pb2.TUPLE)
    tuple_shape.tuple_shapes.extend([_shape([2, 3]), _shape([4], hlo_pb2.BF16)])
    assert array_bytes(tuple_shape) == 6 * 4 + 4 * 2


def test_a_cycle_of_called_computations_ends():
    """A hostile module: a fusion calling its own computation, and a chain deeper than the stack."""
    module = hlo_pb2.HloModuleProto(name="m", id=1, entry_computation_id=1)
    entry = module.computations.add(id=1, name="main")
    entry.instructions.add(id=1, name="x", opcode="parameter", shape=_shape([4]))
    entry.instructions.add(id=2, name="neg", opcode="negate", shape=_shape([4]), operand_ids=[1])
    looping = entry.instructions.add(
        id=3, name="loop", opcode="fusion", shape=_shape([4]), operand_ids=[2],
        called_computation_ids=[1],
    )  # fmt: skip
    costs = ModuleCosts(module)
    assert costs.flops(looping) == 4  # the negate, counted once
    depth = 5000
    for level in range(depth):
        computation = module.computations.add(id=100 + level, name=f"c{level}")
        computation.instructions.add(
            id=10_000 + level, name=f"f{level}", opcode="fusion", shape=_shape([4]),
            called_computation_ids=[101 + level],
        )  # fmt: skip
    last = module.computations.add(id=100 + depth, name="leaf")
    last.instructions.add(id=99_999, name="add", opcode="add", shape=_shape([4]))
    costs = ModuleCosts(module)
    top = module.computations[2].instructions[0]
    assert costs.flops(top) == 0  # past MAX_CALL_DEPTH: no RecursionError

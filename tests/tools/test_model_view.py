"""model_view: parameters and op costs of the fixtures' small models, counted by hand.

profiler_hook: TensorFlow graph mode, a CNN with conv1/w 3x3x1x16 and dense/w 3136x10
(28x28 input, 2x2 pool -> 14*14*16 = 3136 features), trained with Adam.
jax_cpu_train: JAX, p = {conv1 3x3x1x8, conv2 3x3x8x16, w1 784x128, b1 128, w2 128x10,
b2 10}, batches x 64x28x28x1 and y 64x10, 12 steps on a CPU.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO

from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService

HOOK_EVENTS = "events.out.tfevents.1795462996.vm"


def _tables(logdir, run=None):
    service = ProfileService(str(logdir))
    try:
        run = run or service.runs()[0]
        listed = "model_view" in service.run_tools(run)
        try:
            return listed, service.tool_data(run, "model_view").json()
        except NotApplicable as e:
            return listed, e
    finally:
        service.close()


def _rows(table):
    return [[c["v"] for c in r["c"]] for r in table["rows"]]


def _by(table, *keys):
    names = [c["id"] for c in table["cols"]]
    return {tuple(r[names.index(k)] for k in keys): dict(zip(names, r)) for r in _rows(table)}


def test_profiler_hook_graph_variables_by_hand():
    listed, (params, scopes, graph_ops) = _tables(FIXTURES / "profiler_hook")
    assert listed
    rows = _by(params, "name")
    assert rows[("conv1/w",)]["shape"] == "3x3x1x16" and rows[("conv1/w",)]["elements"] == 144
    assert rows[("dense/w",)]["shape"] == "3136x10" and rows[("dense/w",)]["elements"] == 31360
    # Trainable: 3*3*1*16 + 3136*10 = 144 + 31,360 = 31,504 floats = 126,016 bytes.
    assert params["p"]["trainable_parameters"] == "31504"
    assert params["p"]["trainable_bytes"] == str(31504 * 4)
    # Adam keeps two slots per trainable variable; global_step, beta1/2_power are the rest.
    assert rows[("dense/w/Adam_1",)]["kind"] == "optimizer slot"
    assert rows[("global_step",)]["kind"] == "other" and rows[("global_step",)]["dtype"] == "int64"
    assert params["p"]["total_parameters"] == str(3 * 31504 + 3)
    assert "events.out.tfevents" in params["p"]["source"]
    totals = _by(scopes, "scope", "kind")
    assert totals[("(total)", "trainable")]["elements"] == 31504
    assert totals[("(total)", "optimizer slot")]["elements"] == 2 * 31504
    assert totals[("dense", "trainable")]["count"] == 1


def test_jax_entry_parameters_by_hand():
    listed, tables = _tables(FIXTURES / "jax_cpu_train")
    assert listed and len(tables) == 4
    params, scopes, framework_ops, hlo_ops = tables
    rows = _by(params, "program", "name")
    step = "jit_train_step(32)"
    assert rows[(step, "p['conv1']")]["shape"] == "f32[3,3,1,8]"
    assert rows[(step, "p['w1']")]["elements"] == 784 * 128
    # The weights p: 3*3*1*8 + 3*3*8*16 + 784*128 + 128 + 128*10 + 10 = 102,994.
    weights = 72 + 1152 + 100352 + 128 + 1280 + 10
    assert weights == 102_994
    assert _by(scopes, "program", "scope")[(step, "p")]["elements"] == weights
    # With the batch (64*28*28*1 + 64*10) the program takes 153,810 numbers.
    assert _by(scopes, "program", "scope")[(step, "(total)")]["elements"] == weights + 50176 + 640
    assert params["p"]["largest_program"] == step
    assert _rows(params)[0][0] == step  # the largest program first
    # Forward convolutions, 12 steps: conv1 2*(64*28*28*8)*9*1 + conv2 2*(64*14*14*16)*9*8.
    forward = _by(framework_ops, "framework_op")[("jit(train_step)/jvp()/conv_general_dilated",)]
    assert forward["flops"] == 12 * (2 * 64 * 28 * 28 * 8 * 9 + 2 * 64 * 14 * 14 * 16 * 9 * 8)
    assert forward["flops_per_run"] == forward["flops"] / forward["occurrences"]
    assert forward["flop_rate"] == pytest.approx(forward["flops"] / (forward["self_time"] * 1e3))
    dot = _by(hlo_ops, "op")[("dot",)]
    assert dot["flops_per_run"] == 2 * 784 * 128 * 64 and dot["occurrences"] == 12


@pytest.mark.parametrize(
    "fixture, reason",
    [("pytorch_cpu_only", "does not record|module parameters"), ("tf_keras_fit", "no HLO")],
)
def test_not_listed_and_says_why(fixture, reason):
    listed, error = _tables(FIXTURES / fixture)
    assert not listed and isinstance(error, NotApplicable)
    assert any(word in str(error) for word in reason.split("|"))


def _hook_copy(tmp_path, events: bytes = None):
    run = tmp_path / "train"
    shutil.copytree(FIXTURES / "profiler_hook" / "train", run)
    if events is not None:
        (run / HOOK_EVENTS).write_bytes(events)
    return tmp_path


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda data: b"", "No events.out.tfevents"),
        (lambda data: data[:40], "No events.out.tfevents"),  # torn after the first record
        (lambda data: b"\xff" * 64, "not a TFRecord file"),
        (lambda data: struct.pack("<Q", 3) + data[8:], "not a TFRecord file"),
    ],
)
def test_a_bad_event_file_leaves_the_timelines_readable(tmp_path, damage, says):
    data = (FIXTURES / "profiler_hook" / "train" / HOOK_EVENTS).read_bytes()
    logdir = _hook_copy(tmp_path, damage(data))
    listed, error = _tables(logdir)
    assert not listed and isinstance(error, NotApplicable) and says in str(error)
    service = ProfileService(str(logdir))
    try:
        run = service.runs()[0]
        assert "trace_viewer@" in service.run_tools(run)
        assert service.tool_data(run, "framework_op_stats").json()
    finally:
        service.close()


def test_no_event_file_says_where_the_graph_would_be(tmp_path):
    logdir = _hook_copy(tmp_path)
    os.remove(logdir / "train" / HOOK_EVENTS)
    listed, error = _tables(logdir)
    assert not listed and "summary writer" in str(error)


def test_cli_converts_the_model_view_to_csv(tmp_path):
    out = tmp_path / "params.csv"
    session = FIXTURES / "profiler_hook" / "train"
    result = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", "convert", str(session),
         "--tool", "model_view", "--format", "csv", "-o", str(out)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    text = out.read_text()
    assert "conv1/w" in text and "3136x10" in text


def _stats_rows(run_dir):
    service = ProfileService(str(run_dir))
    try:
        table = service.tool_data(service.runs()[0], "framework_op_stats").json()
    finally:
        service.close()
    table = table[0] if isinstance(table, list) else table
    return _by(table, "operation")


def test_profiler_hook_tf_stats_get_the_graph_flops_by_hand():
    """The traced step ran a batch of 32: conv1 makes [32,28,28,16] from a 3x3x1 window,
    dense/MatMul [32,10] from [32,3136]; one run of each per timeline."""
    rows = _stats_rows(FIXTURES / "profiler_hook")
    conv = rows[("conv1/Conv2D",)]
    conv_flops = 2 * 32 * 28 * 28 * 16 * 9 * 1  # 7,225,344
    assert conv["occurrences"] == 1
    assert conv["model_flop_rate"] == pytest.approx(conv_flops / (conv["total_self_time"] * 1e3))
    matmul = rows[("dense/MatMul",)]
    matmul_flops = 2 * 32 * 10 * 3136  # 2,007,040
    assert matmul["model_flop_rate"] == pytest.approx(
        matmul_flops / (matmul["total_self_time"] * 1e3)
    )
    # bytes: x [32,3136] and w [3136,10] read, [32,10] written, 4 bytes each.
    matmul_bytes = 4 * (32 * 3136 + 3136 * 10 + 32 * 10)
    assert matmul["operational_intensity"] == pytest.approx(matmul_flops / matmul_bytes)
    _, tables = _tables(FIXTURES / "profiler_hook")
    graph_ops = _by(tables[2], "op")
    assert graph_ops[("conv1/Conv2D",)]["flops_per_run"] == conv_flops
    # MaxPool 2x2 over [32,28,28,16]: 4 comparisons per output of [32,14,14,16].
    assert graph_ops[("conv1/MaxPool2d",)]["flops_per_run"] == 32 * 14 * 14 * 16 * 4


def test_graph_costs_of_strided_input_gradients_and_transposed_matmuls():
    from tensorboard.compat.proto import config_pb2, graph_pb2

    from tensorboard_plugin_profile.chrome_trace.graph_costs import node_costs

    graph = graph_pb2.GraphDef()
    for name, op, inputs in [
        ("sizes", "Const", []),
        ("filter", "Const", []),
        ("dy", "Const", []),
        ("dx", "Conv2DBackpropInput", ["sizes", "filter", "dy"]),
        ("a", "Const", []),
        ("b", "Const", []),
        ("ab", "MatMul", ["a:0", "b", "^dx"]),
    ]:
        graph.node.add(name=name, op=op, input=inputs)
    graph.node[6].attr["transpose_a"].b = True
    shapes = {
        "sizes": [4], "filter": [3, 3, 8, 16], "dy": [2, 7, 7, 16], "dx": [2, 14, 14, 8],
        "a": [5, 4], "b": [5, 6], "ab": [4, 6],
    }  # fmt: skip
    metadata = config_pb2.RunMetadata()
    device = metadata.step_stats.dev_stats.add()
    for name, dims in shapes.items():
        out = device.node_stats.add(node_name=name).output.add(slot=0)
        out.tensor_description.dtype = 1  # float
        for size in dims:
            out.tensor_description.shape.dim.add(size=size)
    costs = node_costs(graph, metadata).set_index("name")["flops"]
    # Stride 2: the forward convolution made dy [2,7,7,16] from 3x3x8 windows.
    assert costs["dx"] == 2 * (2 * 7 * 7 * 16) * (3 * 3 * 8)
    # a is [5,4] transposed: K = 5; output [4,6].
    assert costs["ab"] == 2 * 4 * 6 * 5

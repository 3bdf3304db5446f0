"""GPU kernels without ``tf_op`` get the TensorFlow op of their host launch (gpu_multi_worker).

The oracle below is deliberately naive (a Python loop per launch over the op events of its
thread): it checks the vectorised join of ``analysis/ops/launches.py`` on the real fixture.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import host_files
from xspace_builder import SpaceBuilder, Uint

from tensorboard_plugin_profile.analysis import environment
from tensorboard_plugin_profile.analysis.ops import launches, metrics
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.tools import (
    framework_op_stats,
    kernel_stats,
    op_types,
    overview_page,
)
from tensorboard_plugin_profile.xspace import op_names, read_xspace

FIXTURE = "gpu_multi_worker"


def fixture_hosts(name: str) -> list:
    return [(p.name[: -len(".xplane.pb")], read_xspace(str(p))) for p in host_files(name)]


@pytest.fixture(scope="module")
def space():
    return preprocess(read_xspace(host_files(FIXTURE)[0]))


def _oracle_launch_ops(host) -> dict:
    """correlation id -> innermost enclosing ``name:Type`` op event on the launch's line."""
    ev = host.events
    names = ev["name"].astype(str).to_numpy()
    is_op = op_names.parse_op_names(list(names))["category"].to_numpy() == op_names.TENSORFLOW
    begin = ev["begin_ps"].to_numpy()
    end = begin + ev["duration_ps"].to_numpy()
    line = ev["line"].to_numpy()
    cid = ev["correlation_id"]
    found = {}
    for row in np.flatnonzero(cid.notna().to_numpy()):
        around = np.flatnonzero(
            is_op & (line == line[row]) & (begin <= begin[row]) & (end >= end[row])
        )
        around = around[around != row]
        if len(around):
            inner = around[np.argmax(begin[around])]
            found.setdefault(int(cid.iat[row]), names[inner])
    return found


def _device_events(space):
    for plane in environment.gpu_planes(space):
        real = metrics._nonderived(plane)
        yield plane, plane.events[real]


def test_launch_ops_match_a_naive_oracle(space):
    launched = launches.launch_ops(space.plane("/host:CPU"))
    oracle = _oracle_launch_ops(space.plane("/host:CPU"))
    assert len(launched) == len(oracle) == 1366  # of 1,556 launches; the rest ran outside ops
    ours = dict(zip(launched.correlation_ids.tolist(), launched.tf_ops.tolist()))
    assert ours == oracle


def test_device_op_time_is_the_time_of_device_events_whose_launch_has_an_op(space):
    oracle = _oracle_launch_ops(space.plane("/host:CPU"))
    expected_ps = expected_kernel_ps = 0
    for _plane, ev in _device_events(space):
        ids = ev["correlation_id"].to_numpy(dtype=np.uint64, na_value=0).tolist()
        has = np.array([i in oracle for i in ids], dtype=bool)
        duration = ev["duration_ps"].to_numpy()
        expected_ps += int(duration[has].sum())
        is_kernel = ~ev["name"].astype(str).str.startswith("Memcpy").to_numpy()
        expected_kernel_ps += int(duration[has & is_kernel].sum())
    device = metrics.device_op_metrics(
        environment.gpu_planes(space), launches.launch_ops(space.plane("/host:CPU"))
    )
    assert device.total_op_time_ps == expected_ps == 29_816_284_000
    # Kernels alone: every kernel's launch ran inside an op, so all kernel time is attributed,
    # the kernel_stats total of this host (upstream's 59,381.496 us is both identical hosts).
    table = kernel_stats.kernel_stats_table([("h", space)])
    kernel_total_us = sum(r["c"][11]["v"] for r in table["rows"])
    assert expected_kernel_ps / 1e6 == pytest.approx(kernel_total_us) == 59_381.496 / 2
    # Before: no kernel had tf_op, so the device side was empty.
    unattributed = metrics.device_op_metrics(environment.gpu_planes(space))
    assert unattributed.total_op_time_ps == 0


def test_tools_show_the_attributed_device_ops():
    hosts = list(fixture_hosts(FIXTURE))
    top = overview_page.convert(hosts, {})
    analysis = (top if isinstance(top, list) else top.json_obj)[0]
    assert len(analysis["rows"]) == 10  # upstream: none (docs/differences.md)
    first = [c["v"] for c in analysis["rows"][0]["c"]]
    assert first[2:4] == [
        "Cast",
        "replica_4/bert_span_labeler/bert_encoder_1/word_embeddings/GatherV2/Cast",
    ]
    tf_stats = framework_op_stats.convert(hosts, {})[1]
    device_rows = [[c["v"] for c in r["c"]] for r in tf_stats["rows"] if r["c"][1]["v"] == "Device"]
    # More framework ops on the device than the table keeps (before: none); as upstream the
    # first MAX_ROWS rows are taken with the IDLE row among them, which the table then drops.
    assert len(device_rows) == framework_op_stats.MAX_ROWS - 1
    assert device_rows[0][2:8] == [
        "Cast",
        "replica_4/bert_span_labeler/bert_encoder_1/word_embeddings/GatherV2/Cast",
        2.0,
        493.566,
        246.783,
        493.566,
    ]
    table = op_types.convert(hosts, {})
    root = [c["v"] for c in table["rows"][0]["c"]]
    assert root[0] == "(all)" and root[4] == pytest.approx(59_632.568)  # device_time_us


def _synthetic_space():
    """Launch 1 inside MatMul inside a function op; launch 2 inside Relu; launch 3 in no op."""
    space = SpaceBuilder("synthetic")
    host = space.plane(1, "/host:CPU")
    thread = host.line(7, "tf_Compute")
    host.event(thread, "fn/call:PartitionedCall", 80, 30)
    host.event(thread, "fn/dense/MatMul:MatMul", 90, 8)
    host.event(thread, "volta_sgemm", 91, 1, correlation_id=Uint(1))
    host.event(thread, "fn/dense/Relu:Relu", 100, 5)
    host.event(thread, "relu_kernel", 101, 1, correlation_id=Uint(2))
    host.event(host.line(8, "other"), "MemcpyH2D", 120, 1, correlation_id=Uint(3))
    gpu = space.plane(2, "/device:GPU:0")
    stream = gpu.line(1, "Stream #1(Compute)")
    gpu.event(stream, "volta_sgemm", 200, 3, correlation_id=Uint(1))
    gpu.event(stream, "relu_kernel", 204, 2, correlation_id=Uint(2), tf_op="own/Relu:Relu")
    gpu.event(stream, "MemcpyH2D", 210, 4, correlation_id=Uint(3))
    gpu.event(stream, "orphan_kernel", 220, 7, correlation_id=Uint(9))
    return space.decode()


def test_synthetic_innermost_op_own_tf_op_first_and_no_guessing():
    space = _synthetic_space()
    launched = launches.launch_ops(space.plane("/host:CPU"))
    assert launched.correlation_ids.tolist() == [1, 2]
    assert launched.tf_ops.tolist() == ["fn/dense/MatMul:MatMul", "fn/dense/Relu:Relu"]
    device = metrics.device_op_metrics(environment.gpu_planes(space), launched)
    ops = device.without_idle().set_index("name")
    # The gemm gets its launch's innermost op; the relu keeps its own tf_op; the memcpy
    # launched outside any op and the kernel without a launch stay unattributed.
    assert ops["time_ps"].to_dict() == {
        "fn/dense/MatMul/volta_sgemm": 3_000_000,
        "own/Relu/relu_kernel": 2_000_000,
    }
    assert ops.loc["fn/dense/MatMul/volta_sgemm", "provenance"] == "fn/dense/MatMul:MatMul"
    assert device.total_op_time_ps == 5_000_000


def test_no_host_or_no_launches_attributes_nothing():
    assert not len(launches.launch_ops(None))
    space = _synthetic_space()
    assert (
        launches.LaunchOps.empty()
        .tf_ops_of(space.plane("/device:GPU:0").events["correlation_id"])
        .tolist()
        == [""] * 4
    )

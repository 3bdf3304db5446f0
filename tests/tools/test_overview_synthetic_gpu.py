"""Step breakdown, op DBs and framework-op rows on a hand-made GPU profile."""

from __future__ import annotations

import pytest

from tensorboard_plugin_profile.analysis.ops import metrics as ops
from tensorboard_plugin_profile.analysis.ops import op_stats
from tensorboard_plugin_profile.tools import framework_op_stats, overview_page

from .synthetic import US, gpu_space


@pytest.fixture(scope="module")
def stats():
    return op_stats.analyse_host(gpu_space())


def test_step_breakdown_by_hand(stats):
    step = stats.steps.steps.iloc[0]
    assert step["duration_ps"] == 20 * US  # the Steps line event
    assert step["DEVICE_COMPUTE_16"] == 8 * US  # two half-precision gemms: 3 + 5 us
    assert step["DEVICE_COMPUTE_32"] == 1000  # relu, 1 ns, no "half"
    assert step["DEVICE_TO_HOST"] == 5 * US  # the memcpy
    assert step["UNKNOWN_TIME"] == 20 * US - 13 * US - 1000
    assert (stats.steps.precision_16bit_ps, stats.steps.precision_32bit_ps) == (8 * US, 1000)


def test_device_ops_by_hand(stats):
    device = stats.device_ops
    assert device.total_time_ps == 20 * US  # first kernel begin to memcpy end
    by_name = device.ops.set_index("name")
    gemm = by_name.loc["dense/MatMul/volta_h884gemm_64x64"]
    assert (gemm["occurrences"], gemm["time_ps"], gemm["category"]) == (2, 8 * US, "MatMul")
    assert by_name.loc[ops.IDLE, "self_time_ps"] == 20 * US - 8 * US - 1000
    framework = ops.device_framework_ops(device).ops.set_index("name")
    assert framework.loc["dense/MatMul", "occurrences"] == 2
    assert framework.loc["dense/Relu", "category"] == "Relu"


def test_framework_op_rows_by_hand(stats):
    with_idle = framework_op_stats.framework_op_tables(stats)[0]
    ids = [c["id"] for c in with_idle["cols"]]
    rows = [dict(zip(ids, (c["v"] for c in r["c"]))) for r in with_idle["rows"]]
    device = [r for r in rows if r["host_or_device"] == "Device"]
    assert [r["operation"] for r in device] == ["IDLE", "dense/MatMul", "dense/Relu"]
    matmul = device[1]
    assert matmul["total_self_time"] == 8.0 and matmul["avg_self_time"] == 4.0
    assert matmul["device_total_self_time_percent"] == pytest.approx(8 / 20)
    assert matmul["gpu_tensorcore_utilization"] == 1.0
    host = [r for r in rows if r["host_or_device"] == "Host"]
    assert host[0]["operation"] == "dense/MatMul" and host[0]["rank"] == 4.0


def test_overview_top_ops_and_precision(stats):
    tables = overview_page.overview_tables(stats)
    analysis = tables[0]
    assert analysis["p"]["device_compute_16bit_percent"] == "100.0%"
    first = [c["v"] for c in analysis["rows"][0]["c"]]
    assert first[2:] == ["MatMul", "dense/MatMul", 0.0, True, True]
    assert first[0] == pytest.approx(8 / 8.001)
    assert tables[1]["rows"][0]["c"][1]["v"] == pytest.approx(0.008001)  # device compute ms

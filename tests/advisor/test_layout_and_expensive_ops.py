"""The advisor's layout check (NHWC/NCHW conversions on GPU) and its expensive-op findings.

No fixture launches layout-conversion kernels (none was recorded on a convolutional GPU
model), so the PyTorch test adds cuDNN's ``nchwToNhwcKernel`` to a real GPU trace, 12 per
step as an AlexNet-like model in NHWC launches it, and reads the file back as any trace.
"""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.analysis.advice import op_checks as advice_ops
from tensorboard_plugin_profile.analysis.advice.findings import advise
from tensorboard_plugin_profile.analysis.ops.attribution import op_records
from tensorboard_plugin_profile.chrome_trace import read_chrome_trace

from .test_advice_checks import context, with_kernels
from .test_chrome_views import hosts_of

CUDNN_LAYOUT_KERNEL = (
    "void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>"
    "(int, int, int, int, float const*, float*, float, float)"
)
PER_STEP, KERNEL_US = 12, 50.0


def by_check(report) -> dict:
    out: dict = {}
    for f in report.findings:
        out.setdefault(f.check, []).append(f)
    return out


@pytest.fixture(scope="module")
def nhwc_trace(tmp_path_factory):
    source = FIXTURES / "pytorch_two_ranks/run/rank0.1.pt.trace.json.gz"
    trace = json.loads(gzip.decompress(source.read_bytes()))
    steps = [e for e in trace["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep")]
    for step in steps:
        for i in range(PER_STEP):
            trace["traceEvents"].append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": CUDNN_LAYOUT_KERNEL,
                    "pid": 0,
                    "tid": 99,
                    "ts": step["ts"] + 1000 * (i + 1),
                    "dur": KERNEL_US,
                    "args": {"device": 0, "stream": 99, "correlation": 10**9 + i},
                }
            )
    path = tmp_path_factory.mktemp("nhwc") / "run" / "rank0.1.pt.trace.json.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))
    return path, len(steps)


def test_pytorch_layout_conversions_are_found_per_step(nhwc_trace):
    path, steps = nhwc_trace
    report = advise([("rank0", read_chrome_trace(str(path)))], run="run/1")
    (finding,) = by_check(report)["nhwc_convolutions"]
    assert finding.numbers["launches"] == PER_STEP * steps
    assert finding.numbers["launches_per_step"] == PER_STEP
    assert "12.0 per step" in finding.evidence and "nchwToNhwcKernel" in finding.evidence
    assert "channels_last" in finding.advice  # PyTorch advice
    assert finding.link["query"].endswith("tool=pytorch_kernels")


def test_pytorch_without_layout_kernels_stays_quiet():
    hosts = hosts_of(FIXTURES / "pytorch_two_ranks/run/rank0.1.pt.trace.json.gz")
    assert "nhwc_convolutions" not in by_check(advise(hosts, run="run/1"))


def test_xspace_layout_conversions_by_kernel_or_layout_optimizer_op():
    ctx = context("tf_keras2_fit")
    steps = len(ctx.stats.steps.steps)
    assert steps > 0
    rows = [
        ("void nhwcToNchwKernel<float>", 3 * steps, 10**6, False, False),
        ("conv", 5, 9 * 10**6, True, False),
    ]
    (finding,) = advice_ops.nhwc_convolutions(with_kernels(ctx, rows))
    assert finding.numbers["launches_per_step"] == 3.0
    assert "mixed precision" in finding.advice  # TensorFlow advice
    # TensorFlow's layout optimizer names the op, whatever the kernel is called.
    ctx = with_kernels(ctx, [("SwapDimension1And2InTensor3UsingTiles", 4, 10**6, False, False)])
    ctx.stats.kernels.loc[0, "op_name"] = "TransposeNHWCToNCHW-LayoutOptimizer"
    (finding,) = advice_ops.nhwc_convolutions(ctx)
    assert finding.numbers["launches"] == 4


def test_expensive_ops_split_cpu_and_accelerator_time():
    hosts = hosts_of(FIXTURES / "pytorch_two_ranks/run/rank0.1.pt.trace.json.gz")
    records = op_records(hosts)
    found = by_check(advise(hosts, run="run/1"))
    (ops,) = found["top_ops"]
    split = ops.numbers["ops_split_ms"]
    for name in ops.numbers["ops"]:
        mine = records[records["name"] == name]
        device = mine.loc[mine["side"] == "Device", "self_time_ps"].sum() / 1e9
        host = mine.loc[mine["side"] == "Host", "self_time_ps"].sum() / 1e9
        assert split[name] == {
            "cpu_ms": pytest.approx(host),
            "accelerator_ms": pytest.approx(device),
        }
    (types,) = found["top_op_types"]
    assert any(v["accelerator_ms"] > 0 for v in types.numbers["types_split_ms"].values())
    assert "accelerator" in ops.evidence and "CPU" in ops.evidence


def test_expensive_ops_name_the_code_path_when_known():
    from tools.compare_tables import fixture_hosts

    report = advise(list(fixture_hosts("jax_cpu_train")), run="r")
    (ops,) = by_check(report)["top_ops"]
    paths = ops.numbers["code_paths"]
    known = {n: p for n, p in paths.items() if p}
    assert known, paths
    # The innermost frame first: the line in forward() that built the op, then its caller.
    assert any(
        p.startswith("/") and "gen_jax_cpu_train.py:" in p and " < " in p for p in known.values()
    )
    assert "from " in ops.evidence and "code view" in ops.advice

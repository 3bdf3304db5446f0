"""The advisor on PyTorch traces and ProfilerHook timelines: the fixtures' known problems."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, load_reference

from tensorboard_plugin_profile.analysis.advice.findings import (
    CRITICAL,
    INFO,
    PYTORCH,
    WARNING,
    advise,
)
from tensorboard_plugin_profile.analysis.pytorch.kernels import kernel_stats
from tensorboard_plugin_profile.analysis.pytorch.overview import step_overview
from tensorboard_plugin_profile.tools import advisor

from .test_chrome_views import WORKERS, hosts_of
from .test_tree_views import rows


def session(name: str) -> list:
    return [h for path in WORKERS if path.parents[1].name == name for h in hosts_of(path)]


def findings(name: str) -> dict:
    report = advise(session(name), run="run/1")
    assert report.framework == PYTORCH
    out: dict = {}
    for f in report.findings:
        out.setdefault(f.check, []).append(f)
    return out


def reference_gpu_utilization(name: str, worker: str) -> float:
    ref_file = next((FIXTURES / "reference" / name).glob(f"overview.{worker}.*"))
    ref = load_reference(name, ref_file.name.removesuffix(".gz"))
    metrics = {d["title"]: d["value"] for d in ref["gpu_metrics"]["data"]}
    return float(metrics["GPU Utilization"].rstrip(" %"))


def test_two_ranks_gpus_idle_half_of_the_steps_as_the_overview_says():
    found = findings("pytorch_two_ranks")
    (util,) = found["device_utilization"]
    assert util.severity == WARNING
    busy = util.numbers["busy_percent"]
    assert set(busy) == {"rank0 GPU 0", "rank1 GPU 1"}
    for worker, label in (("rank0", "rank0 GPU 0"), ("rank1", "rank1 GPU 1")):
        expected = reference_gpu_utilization("pytorch_two_ranks", worker)
        assert busy[label] == pytest.approx(expected, abs=0.01)
        steps = step_overview(
            hosts_of(FIXTURES / "pytorch_two_ranks/run" / f"{worker}.1.pt.trace.json.gz")[0][1]
        ).steps
        span_ms = (steps["end_ps"].max() - steps["begin_ps"].min()) / 1e9
        assert util.numbers["idle_ms"][label] == pytest.approx(span_ms * (1 - busy[label] / 100))
    assert "683.0 ms idle" in util.evidence
    assert util.link["query"] == "?run=run%2F1&tool=pytorch_overview"
    # Each rank's host-only share of the step, worded per worker.
    assert [f.title[:6] for f in found["unexplained_step_time"]] == ["rank0:", "rank1:"]


def test_amd_gpu_is_almost_never_busy_and_the_first_step_is_slow():
    found = findings("pytorch_amd_mi250")
    (util,) = found["device_utilization"]
    assert util.severity == CRITICAL
    expected = reference_gpu_utilization("pytorch_amd_mi250", "worker0")
    assert util.numbers["busy_percent"]["GPU 2"] == pytest.approx(expected, abs=0.01)
    (slow,) = found["slow_steps"]
    assert slow.severity == INFO and slow.numbers["slow_steps"] == ["step 1"]
    assert slow.link["tool"] == "trace_viewer@" and float(dict(
        p.split("=") for p in slow.link["query"][1:].split("&"))["end_ms"]) > 9.457  # fmt: skip
    # Its two "step 1" spans overlap: no idle gap is invented between them.
    assert "idle_between_steps" not in found


def test_copies_in_the_step_and_kernel_counts():
    found = findings("pytorch_diff_test")
    (copies,) = found["host_device_copies"]
    ov = step_overview(session("pytorch_diff_test")[0][1])
    share = 100 * ov.average["Memcpy"] / ov.average["Total"]
    assert copies.numbers["copy_percent"] == pytest.approx(share) and share >= 5
    assert found["device_utilization"][0].severity == INFO  # 83 % busy
    (kernels,) = found["kernels"]
    table = kernel_stats(session("pytorch_diff_test")[0][1])
    assert kernels.numbers["launches"] == table["calls"].sum() == 9876
    # Few launches are tiny here (average 81 us): no launch-bound finding.
    assert "tiny_kernels" not in found


def test_cpu_only_trace_gets_nothing_false():
    found = findings("pytorch_cpu_only")
    assert set(found) == {"top_op_types", "top_ops"}
    assert all(f.severity == INFO for fs in found.values() for f in fs)


@pytest.mark.parametrize("name", sorted({p.parents[1].name for p in WORKERS}))
def test_no_tensorflow_or_jax_advice_for_pytorch(name):
    text = " ".join(f.advice for fs in findings(name).values() for f in fs)
    assert "tf." not in text and "jit" not in text.replace("torch.compile", "")


def test_profiler_hook_timeline_is_not_an_idle_capture():
    path = FIXTURES / "profiler_hook" / "train" / "timeline-8.json"
    report = advise(hosts_of(path), run="train/timeline-8")
    checks = [f.check for f in report.findings]
    assert "nothing_ran" not in checks and "top_op_types" in checks
    top = next(f for f in report.findings if f.check == "top_op_types")
    assert top.title.startswith("Most op time goes to _MklNativeConv2D")


def test_advisor_table_for_all_ranks():
    table = rows(advisor.convert(session("pytorch_two_ranks"), {"run": "run/1"}))
    assert table[0]["severity"] == WARNING and table[0]["check"] == "device_utilization"

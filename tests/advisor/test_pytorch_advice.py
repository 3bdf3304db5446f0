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


def test_amd_gpu_is_almost_never_busy_and_the_first_step_is_warm_up():
    found = findings("pytorch_amd_mi250")
    (util,) = found["device_utilization"]
    assert util.severity == CRITICAL
    expected = reference_gpu_utilization("pytorch_amd_mi250", "worker0")
    assert util.numbers["busy_percent"]["GPU 2"] == pytest.approx(expected, abs=0.01)
    # Its first step (9.3 ms) lasts 17x the others: a warm-up step, said so, and no longer
    # reported as a slow step.
    (warm,) = found["warm_up"]
    assert warm.severity == INFO and warm.numbers["warm_up_steps"] == ["1"]
    assert "17.2x the median" in warm.evidence
    assert "slow_steps" not in found
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


def _warm_up_trace(tmp_path, keep_steps: int):
    """The real diff_test trace (6 steps) cut to its first ``keep_steps`` steps, whose first
    step becomes a 30 s start-up step as a first profiled iteration records it: one 30 s
    ``aten::empty_strided`` (the caching allocator's first allocation) opens it, and the
    step and everything after it move 30 s later."""
    import gzip
    import json

    from tensorboard_plugin_profile.chrome_trace.read import read_chrome_trace

    path = FIXTURES / "pytorch_diff_test" / "run" / "worker0.1.pt.trace.json.gz"
    trace = json.loads(gzip.decompress(path.read_bytes()))
    events = trace["traceEvents"]
    steps = sorted(
        (e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")),
        key=lambda e: e["ts"],
    )
    first, last = steps[0], steps[keep_steps - 1]
    end = last["ts"] + last["dur"]
    delay = 30_000_000  # 30 s, in us
    kept = []
    for e in events:
        if "ts" in e and not first["ts"] <= e["ts"] <= end:
            continue
        e = dict(e)
        if "ts" in e and e is not first and e["ts"] >= first["ts"]:
            e["ts"] += delay
        kept.append(e)
    for e in kept:
        if e.get("name") == first["name"]:
            e["ts"], e["dur"] = first["ts"], first["dur"] + delay
    kept.append(
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::empty_strided",
            "pid": first["pid"],
            "tid": first["tid"],
            "ts": first["ts"] + 1,
            "dur": delay - 2,
            "args": {},
        }
    )
    trace["traceEvents"] = kept
    out = tmp_path / "worker0.1.pt.trace.json"
    out.write_text(json.dumps(trace))
    return [("worker0", read_chrome_trace(str(out)))]


def test_a_single_warm_up_step_is_said_so_and_not_judged(tmp_path):
    """One profiled step of 30 s start-up gave "CRITICAL: GPU 0.0%" and "aten::empty_strided
    69%"; now one INFO finding says it is a warm-up step and what to profile instead."""
    report = advise(_warm_up_trace(tmp_path, keep_steps=1), run="run/1")
    checks = {f.check: f for f in report.findings}
    assert "warm_up" in checks and checks["warm_up"].severity == INFO
    assert "warm-up step" in checks["warm_up"].title
    assert "CUDA initialisation" in checks["warm_up"].evidence
    assert "schedule(" in checks["warm_up"].advice
    assert not any(f.severity == CRITICAL for f in report.findings)
    assert "device_utilization" not in checks and "top_ops" not in checks


def test_a_slow_first_step_is_warm_up_and_not_a_slow_step(tmp_path):
    report = advise(_warm_up_trace(tmp_path, keep_steps=4), run="run/1")
    checks = {f.check: f for f in report.findings}
    warm = checks["warm_up"]
    assert warm.title == "1 of 4 steps are warm-up steps"
    assert warm.numbers["warm_up_steps"] == ["1009"]
    slow = checks.get("slow_steps")
    assert slow is None or "1009" not in slow.evidence
    assert "device_utilization" in checks  # the other steps are still judged


def test_the_other_fixtures_have_no_warm_up_step():
    for name in ("pytorch_two_ranks", "pytorch_diff_test", "pytorch_diff_control",
                 "pytorch_cpu_only"):  # fmt: skip
        assert "warm_up" not in findings(name), name

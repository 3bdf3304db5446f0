"""The advisor's findings on the fixtures: the known problems, and nothing false."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES, fixture_names
from tools.compare_tables import fixture_hosts

from tensorboard_plugin_profile.analysis.advice.facts import JAX, TENSORFLOW
from tensorboard_plugin_profile.analysis.advice.findings import advise
from tensorboard_plugin_profile.tools import advisor


def findings(name: str) -> dict:
    report = advise(list(fixture_hosts(name)), run="r")
    return {f.check: f for f in report.findings}


def test_keras_fit_is_input_bound_on_its_map_and_batch_stage():
    found = findings("tf_keras2_fit")
    assert found["input_bound"].severity == "critical"
    assert found["input_bound"].numbers["input_percent"] == pytest.approx(82.5, abs=0.1)
    assert found["input_bound"].link["query"] == "?run=r&tool=input_pipeline_analyzer"
    bottleneck = found["tf_data_bottleneck"]
    assert bottleneck.numbers["iterator"] == "Iterator::Root::Prefetch::MapAndBatch"
    assert bottleneck.severity == "warning"  # it is what makes the steps input-bound
    assert "prefetch" in found["input_bound"].advice


def test_multi_worker_gpus_are_mostly_idle_and_its_kernels_are_counted():
    hosts = list(fixture_hosts("gpu_multi_worker"))
    found = findings("gpu_multi_worker")
    busy = found["device_utilization"].numbers["busy_percent"]
    assert len(busy) == 16  # 8 GPUs on each of the two hosts
    assert max(busy.values()) < 1.0 and found["device_utilization"].severity == "critical"
    kernels = found["kernels"].numbers
    from tensorboard_plugin_profile.tools import kernel_stats

    table = kernel_stats.convert(hosts, {})
    occurrences = [c["id"] for c in table["cols"]].index("occurrences")
    assert kernels["launches"] == sum(r["c"][occurrences]["v"] for r in table["rows"])
    assert "input_bound" not in found and "tf_data_bottleneck" not in found


def test_idle_capture_only_says_that_nothing_ran():
    report = advise(list(fixture_hosts("tf_idle_capture")), run="r")
    assert [f.check for f in report.findings] == ["nothing_ran"]
    assert report.findings[0].severity == "info"


@pytest.mark.parametrize("name", ["jax_cpu_train", "jax_two_hosts", "jax_remote_capture"])
def test_jax_runs_get_jax_advice(name):
    report = advise(list(fixture_hosts(name)), run="r")
    assert report.framework == JAX
    text = json.dumps(report.as_json()).lower()
    assert "tf.data" not in text and "tf2" not in text and "tf.function" not in text
    table = advisor.convert(list(fixture_hosts(name)), {"run": "r"})
    assert table["p"]["guide"].startswith("https://docs.jax.dev/")


def test_slow_steps_link_to_the_slowest_step_in_the_trace():
    found = findings("jax_cpu_train")
    slow = found["slow_steps"]
    assert slow.numbers["slow_steps"] == ["train 2", "train 3"]
    query = slow.link["query"]
    assert "tool=trace_viewer%40" in query and "start_ms=" in query and "end_ms=" in query


@pytest.mark.parametrize("name", fixture_names())
def test_every_fixture_gets_linked_findings(name):
    report = advise(list(fixture_hosts(name)), run="r")
    assert report.framework in (TENSORFLOW, JAX)
    for finding in report.findings:
        assert finding.severity in ("critical", "warning", "info")
        assert finding.link["query"].startswith("?run=r&tool=")
        assert finding.title and finding.evidence and finding.advice
        for page, tool in (("scope view", "scope_view"), ("TF stats", "framework_op_stats")):
            if finding.advice.startswith(f"{page} ") or f"The {page} " in finding.advice:
                assert f"tool={tool}" in finding.link["query"], (page, finding)  # says = links


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_tbprof_advise_prints_findings_and_gates_ci():
    path = str(FIXTURES / "tf_keras2_fit")
    text = run_cli("advise", path)
    assert text.returncode == 0, text.stderr
    assert "[CRITICAL] The steps are highly input-bound" in text.stdout
    as_json = run_cli("advise", path, "--format", "json", "--fail-on", "critical")
    assert as_json.returncode == 2
    report = json.loads(as_json.stdout)
    assert report["framework"] == TENSORFLOW
    assert report["findings"][0]["check"] == "input_bound"
    idle = run_cli("advise", str(FIXTURES / "tf_idle_capture"), "--fail-on", "warning")
    assert idle.returncode == 0, idle.stdout


def test_tbprof_advise_advises_every_run_and_fails_on_any(tmp_path):
    """A log directory of several runs: each is advised and ``--fail-on`` sees them all.
    Before, only the first run found was advised (here the idle one: exit 0)."""
    import shutil

    shutil.copytree(FIXTURES / "tf_idle_capture", tmp_path / "b_idle")
    shutil.copytree(FIXTURES / "tf_keras2_fit", tmp_path / "a_input_bound")
    text = run_cli("advise", str(tmp_path), "--fail-on", "critical")
    assert text.returncode == 2, text.stderr
    assert "Advisor: b_idle/" in text.stdout and "Advisor: a_input_bound/" in text.stdout
    assert "[CRITICAL] The steps are highly input-bound" in text.stdout
    as_json = run_cli("advise", str(tmp_path), "--format", "json")
    assert as_json.returncode == 0
    reports = json.loads(as_json.stdout)["runs"]
    assert sorted(r["run"].split("/")[0] for r in reports) == ["a_input_bound", "b_idle"]
    idle_run = next(r["run"] for r in reports if r["run"].startswith("b_idle"))
    one = run_cli("advise", str(tmp_path), "--run", idle_run, "--fail-on", "warning")
    assert one.returncode == 0 and "a_input_bound" not in one.stdout
    missing = run_cli("advise", str(tmp_path), "--run", "nope")
    assert missing.returncode == 1 and "runs: " in missing.stderr

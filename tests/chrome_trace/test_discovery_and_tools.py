"""Chrome-trace files as runs: discovery, the service, the CLI and the ProfilerHook tools."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.logdir import LogDir

HOOK = FIXTURES / "profiler_hook"
TWO_RANKS = FIXTURES / "pytorch_two_ranks"


def test_timelines_are_sessions_of_their_folder_and_spans_group_workers():
    assert LogDir(str(HOOK)).runs() == [
        "train/timeline-8",
        "train/timeline-4",
        "train/timeline-12",
        "train/all_steps",  # the three together (tests/chrome_trace/test_all_steps.py)
    ]
    logdir = LogDir(str(TWO_RANKS))
    assert logdir.runs() == ["run/1"]
    assert logdir.session("run/1").hosts() == ["rank0", "rank1"]


def test_a_single_trace_file_is_a_logdir(tmp_path):
    path = TWO_RANKS / "run" / "rank1.1.pt.trace.json.gz"
    logdir = LogDir(str(path))
    assert logdir.runs() == ["1"]
    assert logdir.session("1").hosts() == ["rank1"]
    odd = tmp_path / "my trace.json"
    shutil.copyfile(HOOK / "train" / "timeline-4.json", odd)
    assert LogDir(str(odd)).session("my trace").hosts() == ["my trace"]


def test_unreadable_trace_files_are_skipped_with_the_reason(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    name = "rank0.1.pt.trace.json.gz"
    shutil.copyfile(TWO_RANKS / "run" / name, run / name)
    (run / "rank1.1.pt.trace.json.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    (run / "timeline-3.json").write_text("")
    logdir = LogDir(str(tmp_path))
    assert logdir.session("run/1").hosts() == ["rank0"]
    assert logdir.session("run/timeline-3").hosts() == []
    skipped = " ".join(logdir.diagnose().skipped)
    assert "rank1.1.pt.trace.json.gz: a damaged gzip file" in skipped
    assert "timeline-3.json: empty" in skipped


def test_run_tools_per_kind():
    service = ProfileService(str(FIXTURES))
    assert service.run_tools("profiler_hook/train/timeline-4") == [
        "trace_viewer@",
        "framework_op_stats",
        "model_view",  # the graph in the event file beside the timelines
        "advisor",
        "op_types",
        "scope_view",
        "tensor_memory",
    ]
    assert service.run_tools("pytorch_two_ranks/run/1") == [
        "trace_viewer@",
        "advisor",
        "op_types",
        "scope_view",
        "pytorch_overview",
        "pytorch_operators",
        "pytorch_kernels",
        "pytorch_distributed",
    ]
    assert "pytorch_kernels" not in service.run_tools("pytorch_cpu_only/run/1074")
    assert service.hosts("pytorch_two_ranks/run/1", "pytorch_distributed") == [
        {"hostname": "ALL_HOSTS"}
    ]


def test_profiler_hook_tf_stats_are_the_op_events():
    service = ProfileService(str(HOOK))
    raw = json.loads((HOOK / "train" / "timeline-8.json").read_text())["traceEvents"]
    table = service.tool_data("train/timeline-8", "framework_op_stats").json()[0]
    labels = [c["label"] for c in table["cols"]]
    rows = [dict(zip(labels, (c["v"] for c in r["c"]))) for r in table["rows"]]
    ops = [r for r in rows if r["Operation Type"] != "IDLE"]
    x = [e for e in raw if e["ph"] == "X"]
    assert sum(r["#Occurrences"] for r in ops) == len(x)
    assert sum(r["Total time (us)"] for r in ops) == pytest.approx(sum(e["dur"] for e in x))
    by_node = {r["Operation Name"]: r["Operation Type"] for r in ops}
    assert all(by_node[e["args"]["name"]] == e["args"]["op"] for e in x)


def test_profiler_hook_trace_keeps_every_event_in_its_own_phase():
    """``tbprof convert timeline-N.json --tool trace_viewer``: every op is there, the ones of
    ``dur: 0`` (Const, VarHandleOp, _Retval...) as instants as upstream writes them; the
    allocator counter as ``C`` samples and the tensors as ``N``/``O``/``D`` objects, with
    the source's times and values. Before, counters and objects came out as ``X`` slices."""
    for timeline in ("timeline-4", "timeline-12"):
        path = HOOK / "train" / f"{timeline}.json"
        raw = json.loads(path.read_text())["traceEvents"]
        origin = min(e["ts"] for e in raw if "ts" in e)  # times come relative to the first
        raw = [dict(e, ts=e["ts"] - origin) if "ts" in e else e for e in raw]
        result = subprocess.run(
            [sys.executable, "-m", "tensorboard_plugin_profile", "convert", str(path),
             "--tool", "trace_viewer"],
            capture_output=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        out = [e for e in json.loads(result.stdout)["traceEvents"] if e]

        def of(events, *phases):
            return [e for e in events if e.get("ph") in phases]

        ops = sorted((e["name"], e["ts"]) for e in of(raw, "X"))
        assert any(e["dur"] == 0 for e in of(raw, "X"))
        assert sorted((e["name"], e["ts"]) for e in of(out, "X", "i")) == ops
        assert len(of(out, "i")) == sum(e["dur"] == 0 for e in of(raw, "X"))
        counters = sorted((e["name"], e["ts"], tuple(e["args"].items())) for e in of(raw, "C"))
        assert sorted((e["name"], e["ts"], tuple(e["args"].items())) for e in of(out, "C")) == (
            counters
        )
        for phase in "ND":
            expected = sorted((e["name"], e["ts"], str(e["id"])) for e in of(raw, phase))
            assert sorted((e["name"], e["ts"], e["id"]) for e in of(out, phase)) == expected
        # A snapshot is written at its object's creation (the reader keeps its fields, not
        # its own time, a microsecond later in these files).
        expected = sorted((e["name"], str(e["id"])) for e in of(raw, "O"))
        assert sorted((e["name"], e["id"]) for e in of(out, "O")) == expected
        snapshot = next(e for e in of(out, "O"))["args"]["snapshot"]
        assert {"requested_bytes", "allocator_name", "dtype", "shape"} <= set(snapshot)


def test_profiler_hook_memory_peak_agrees_with_the_allocator_counter():
    service = ProfileService(str(HOOK))
    for run in service.runs():
        if "tensor_memory" not in service.run_tools(run):
            continue  # train/all_steps: the steps' trace only
        summary, live, timeline = service.tool_data(run, "tensor_memory").json()
        row = [c["v"] for c in summary["rows"][0]["c"]]
        allocator, peak, _, live_count, counter_peak = row
        assert allocator == "mklcpu"
        assert peak == counter_peak  # tensor lifetimes replay the allocator's own number
        sizes = [r["c"][2]["v"] for r in live["rows"]]
        assert len(sizes) == live_count and sum(sizes) == peak
        assert max(r["c"][2]["v"] for r in timeline["rows"]) == peak


def test_pytorch_tools_reject_what_is_not_there():
    service = ProfileService(str(FIXTURES / "pytorch_cpu_only"))
    with pytest.raises(NotApplicable, match="no GPU kernels"):
        service.tool_data("run/1074", "pytorch_kernels", host="rank-34")


def test_trace_viewer_windows_flows_and_search_on_a_pytorch_trace():
    service = ProfileService(str(FIXTURES / "pytorch_amd_mi250"))
    params = {"start_time_ms": "0", "end_time_ms": "1e9", "resolution": "0"}
    window = _json(service.tool_data("run/1", "trace_viewer@", params=params))
    assert window["processes"] and window["flows"]["from_row"]
    found = _json(service.tool_data("run/1", "trace_viewer@", params={"search": "aten::addmm"}))
    assert json.dumps(found).count("aten::addmm") >= 1


def test_counter_rows_carry_their_sample_values():
    """The allocator series come with `value` (bytes in use per sample); slice rows do not."""
    service = ProfileService(str(HOOK))
    run = service.runs()[0]
    exact = {"start_time_ms": "0", "end_time_ms": "1e9", "resolution": "0"}
    window = _json(service.tool_data(run, "trace_viewer@", params=exact))
    names = {(t["pid"], t["tid"]): t["name"] for t in window["threads"]}
    counters = [r for r in window["rows"] if "value" in r]
    assert [names[(r["pid"], r["tid"])] for r in counters] == ["mklcpu"]
    values = counters[0]["value"]
    assert len(values) == len(counters[0]["ts"]) and min(values) >= 0
    summary = service.tool_data(run, "tensor_memory").json()[0]
    assert max(values) == summary["rows"][0]["c"][-1]["v"]  # the allocator counter's own peak
    coarse = {"start_time_ms": "0", "end_time_ms": "1e9", "resolution": "20"}
    boxes = [
        r
        for r in _json(service.tool_data(run, "trace_viewer@", params=coarse))["rows"]
        if "value" in r
    ][0]
    assert max(boxes["merged"]) > 1 and max(boxes["value"]) == max(values)  # boxes keep peaks


def _json(result) -> dict:
    return json.loads(b"".join(result.chunks()))


def test_cli_converts_a_pytorch_file_to_csv():
    path = TWO_RANKS / "run" / "rank0.1.pt.trace.json.gz"
    result = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", "convert", str(path), "--tool",
         "pytorch_kernels", "--format", "csv"],
        capture_output=True,
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0].startswith('"Name","Tensor Cores used","Calls"')
    assert len(lines) == 1 + 194

"""Right answers, said well (issue 28): percent in CSV, tools that do not apply, the tool list.

Every path a user takes is exercised for real: the ``tbprof`` command in a subprocess,
``ProfileService`` and the HTTP routes through real WSGI, on the real fixtures.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from urllib.parse import parse_qs

import pytest
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
PYTORCH_GPU = "pytorch_diff_test/run/1"  # a V100 trace with kernels
PYTORCH_FILE = FIXTURES / "pytorch_diff_test" / "run" / "worker0.1.pt.trace.json.gz"
JAX_RUN = "jax_cpu_train/session_1"
PYTORCH_TOOLS = ("pytorch_overview", "pytorch_operators", "pytorch_kernels")


@pytest.fixture(scope="module")
def service():
    service = ProfileService(str(FIXTURES))
    yield service
    service.close()


@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES)))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        capture_output=True,
        timeout=180,
    )


def _rows(text: str) -> list:
    return list(csv.reader(io.StringIO(text, newline="")))


def _column(rows: list, label: str) -> list:
    index = rows[0].index(label)
    return [float(r[index]) for r in rows[1:] if r[index]]


# --- item 1: one rule for percent ---------------------------------------------------------
PERCENT_CASES = (
    # run, tool, table, label, (JSON value -> CSV value): percent stays, fractions x 100
    (PYTORCH_GPU, "pytorch_overview", 1, "GPU utilization (%)", 1),
    (PYTORCH_GPU, "pytorch_kernels", 0, "Mean est. achieved occupancy (%)", 1),
    (JAX_RUN, "hlo_stats", 0, "Total self time (%)", 100),
)


@pytest.mark.parametrize("run, tool, table, label, scale", PERCENT_CASES)
def test_csv_writes_every_percent_column_in_percent_once(
    service, client, run, tool, table, label, scale
):
    """The CLI, ``tool_csv`` and ``/data_csv`` write the same percent: a value the JSON holds
    in percent (GPU utilization 83.38, occupancy) is never multiplied again; upstream's
    fraction columns (HLO stats' 0.178) become 17.8. Before, every "(%)" column was scaled:
    GPU utilization 96.52 came out as 9652."""
    answer = service.tool_data(run, tool).json()
    tables = answer if isinstance(answer, list) else [answer]
    labels = [c["label"] for c in tables[table]["cols"]]
    column = labels.index(label)
    expected = [r["c"][column]["v"] * scale for r in tables[table]["rows"]]
    expected = [v for v in expected if v is not None]
    assert expected and max(expected) <= 100.0 + 1e-6, "a percent column above 100 %"

    _, service_text = service.tool_csv(run, tool, params={"table": str(table)})
    response = client.get(f"{PREFIX}/data_csv?run={run}&tag={tool}&table={table}")
    assert response.status_code == 200
    texts = [service_text, response.get_data(as_text=True)]
    host = service.logdir.session(run).host_files[0]
    result = run_cli("convert", str(host.path), "--tool", tool, "--format", "csv",
                     "--table", str(table))  # fmt: skip
    assert result.returncode == 0, result.stderr
    texts.append(result.stdout.decode())
    for text in texts:
        assert _column(_rows(text), label) == pytest.approx(expected, rel=1e-9)


# --- item 2: a tool that does not apply says so, and names those that do --------------------
@pytest.mark.parametrize("tool", ["overview_page", "kernel_stats", "framework_op_stats",
                                  "input_pipeline_analyzer", "pod_viewer"])  # fmt: skip
def test_an_xspace_tool_on_a_pytorch_trace_is_an_error_naming_the_pytorch_tools(
    service, client, tool
):
    """Before: exit 0 and an empty TensorFlow overview; kernel_stats on a trace with 16
    kernels said "recorded without a GPU"; framework_op_stats gave 0 rows."""
    result = run_cli("convert", str(PYTORCH_FILE), "--tool", tool)
    assert result.returncode == 1 and result.stdout == b""
    message = result.stderr.decode()
    assert f"Tool {tool} does not apply" in message and "PyTorch profiler trace" in message
    assert all(name in message for name in PYTORCH_TOOLS)
    assert "without a GPU" not in message and "Traceback" not in message

    response = client.get(f"{PREFIX}/data?run={PYTORCH_GPU}&tag={tool}")
    assert response.status_code == 404
    error = json.loads(response.get_data())["error"]
    assert error["code"] == "NOT_APPLICABLE"
    assert set(PYTORCH_TOOLS) <= set(error["tools"])
    assert error["tools"] == [t.rstrip("@") for t in service.run_tools(PYTORCH_GPU)]
    response = client.get(f"{PREFIX}/data_csv?run={PYTORCH_GPU}&tag={tool}")
    assert response.status_code == 404


def test_a_pytorch_tool_on_an_xspace_profile_names_the_xspace_tools(client):
    response = client.get(f"{PREFIX}/data?run={JAX_RUN}&tag=pytorch_kernels")
    error = json.loads(response.get_data())["error"]
    assert response.status_code == 404 and error["code"] == "NOT_APPLICABLE"
    assert "XSpace" in error["message"] and "hlo_stats" in error["tools"]


def test_a_tool_without_data_names_the_tools_with_data(client):
    """The tool's own reason stays, then what to open instead."""
    response = client.get(f"{PREFIX}/data?run={JAX_RUN}&tag=kernel_stats")
    error = json.loads(response.get_data())["error"]
    assert response.status_code == 404 and error["code"] == "NOT_APPLICABLE"
    assert "GPU" in error["message"] and "Tools with data for run" in error["message"]
    assert "kernel_stats" not in error["tools"] and "overview_page" in error["tools"]


@pytest.mark.parametrize("run", [JAX_RUN, "jax_two_hosts/multi_jax2__xprof_client"])
def test_tf_stats_of_a_jax_profile_is_not_listed_and_points_to_the_xla_tools(service, client, run):
    """Before: listed, and "0 of 0 operations" (one IDLE row) while HLO stats had 58 ops;
    the overview's device next step and the trace viewer's "Show in TF stats" led there."""
    listed = service.run_tools(run)
    assert "framework_op_stats" not in listed and {"hlo_stats", "op_profile"} <= set(listed)
    for tag in ("framework_op_stats", "tensorflow_stats"):
        response = client.get(f"{PREFIX}/data?run={run}&tag={tag}")
        error = json.loads(response.get_data())["error"]
        assert response.status_code == 404 and error["code"] == "NOT_APPLICABLE"
        assert "no TensorFlow ops" in error["message"] and "hlo_stats" in error["message"]
        assert error["tools"] == [t.rstrip("@") for t in listed]
    steps = service.tool_data(run, "overview_page").json()[3]["rows"]
    device = [r["c"][1]["v"] for r in steps if r["c"][2]["v"].endswith("Device time")]
    assert device[0].startswith("hlo_stats (identify the time-consuming XLA operations")
    name, session = run.split("/")
    folder = FIXTURES / name / "plugins" / "profile" / session
    result = run_cli("convert", str(folder), "--tool", "framework_op_stats")
    assert result.returncode == 1 and b"no TensorFlow ops" in result.stderr


def test_tf_stats_stays_listed_where_there_are_tensorflow_ops(service):
    for run in ("tf_keras2_fit/session_1", "gpu_multi_worker", "profiler_hook/train/timeline-4"):
        matches = [r for r in service.runs() if r.startswith(run)]
        assert matches and "framework_op_stats" in service.run_tools(matches[0]), run


def test_an_unknown_tool_lists_the_valid_names(client):
    result = run_cli("convert", str(PYTORCH_FILE), "--tool", "overveiw_page")
    assert result.returncode == 1
    assert b"Unknown tool 'overveiw_page'" in result.stderr
    assert b"overview_page" in result.stderr and b"pytorch_overview" in result.stderr
    response = client.get(f"{PREFIX}/data?run={JAX_RUN}&tag=nope")
    error = json.loads(response.get_data())["error"]
    assert response.status_code == 404 and "trace_viewer" in error["tools"]
    assert "hlo_stats" in error["message"]


def test_pytorch_distributed_is_listed_only_with_collectives(service, tmp_path):
    """One rank that ran no collective had three empty tables behind a listed tool."""
    import gzip

    trace = json.loads(gzip.decompress(PYTORCH_FILE.read_bytes()))
    collectives = ("nccl:", "gloo:", "c10d::", "record_param_comms")
    trace["traceEvents"] = [
        e for e in trace["traceEvents"]
        if not str(e.get("name", "")).lower().startswith(collectives)
    ]  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    (run / "worker0.1.pt.trace.json").write_text(json.dumps(trace))
    quiet = ProfileService(str(tmp_path))
    try:
        tools = quiet.run_tools("run/1")
        assert "pytorch_overview" in tools and "pytorch_distributed" not in tools
        with pytest.raises(Exception) as raised:
            quiet.tool_data("run/1", "pytorch_distributed")
        assert "no collective" in str(raised.value)
    finally:
        quiet.close()
    assert "pytorch_distributed" in service.run_tools(PYTORCH_GPU)  # it ran all_reduce


def _linked_tools(service, run: str, tool: str) -> set:
    answer = service.tool_data(run, tool).json()
    tables = answer if isinstance(answer, list) else [answer]
    names = set()
    for table in tables:
        for row in table.get("rows", []):
            for cell in row["c"]:
                value = cell.get("v") if cell else None
                if isinstance(value, str) and value.startswith("?"):
                    names.update(parse_qs(value[1:]).get("tool", []))
    return names


@pytest.mark.parametrize("run", [JAX_RUN, "tf_keras2_fit/session_1", PYTORCH_GPU,
                                 "profiler_hook/train/timeline-4"])  # fmt: skip
def test_links_point_only_to_listed_tools(service, run):
    """The advisor's links and the overview's next steps name tools of the run's list."""
    listed = set(service.run_tools(run))
    assert _linked_tools(service, run, "advisor") <= listed
    if "overview_page" in listed:
        steps = service.tool_data(run, "overview_page").json()[3]
        named = {row["c"][1]["v"].split(" ", 1)[0] for row in steps["rows"]}
        named = {n.replace("trace_viewer", "trace_viewer@") for n in named if "_" in n}
        assert named and named <= listed


CPU_ONLY = ("pytorch_cpu_only/run/1074", "pytorch_cpu_train_ns/run/1795771280028402343")


@pytest.mark.parametrize("run", [*CPU_ONLY, PYTORCH_GPU])
def test_a_cpu_only_trace_says_why_its_gpu_summary_is_empty(service, run):
    """No empty GPU table shown as if it were an answer: without a GPU the table says why."""
    gpus = json.loads(b"".join(service.tool_data(run, "pytorch_overview").chunks()))[1]
    assert gpus["p"]["title"] == "GPU summary"
    if gpus["rows"]:
        assert "empty_reason" not in gpus["p"]
    else:
        assert "No GPU ran in this trace" in gpus["p"]["empty_reason"]
    assert bool(gpus["rows"]) == (run == PYTORCH_GPU)

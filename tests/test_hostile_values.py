"""Hostile values in requests and in trace files get an answer or a 4xx, never a 500.

Issue 24, item 11: numbers no parameter can mean (``nan``, ``inf``, ``1e308``, ``2**64``),
names holding a lone UTF-16 surrogate, and top-level metadata nested hundreds of levels
deep each made some routes answer an opaque 500. Everything here goes through the real
WSGI app of the standalone server, on real fixtures or on traces built from them.
"""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import threading

import pytest
from capture.capture_fakes import FakeProfiler, FakeServer
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile.analysis.pytorch.distributed import BYTES_PER_VALUE
from tensorboard_plugin_profile.capture.routes import _INT_PARAMS as CAPTURE_INT_PARAMS
from tensorboard_plugin_profile.chrome_trace.stream import MAX_NESTING
from tensorboard_plugin_profile.tools import TOOLS
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
HOSTILE_NUMBERS = ("nan", "inf", "-inf", "1e308", "-1", str(2**64))
# One run per kind of input; a tool is asked on the first of them that lists it.
RUNS = (
    "jax_cpu_train/session_1",
    "tf_memory/session_1",
    "pytorch_cpu_only/run/1074",
    "profiler_hook/train/timeline-4",
)
REQUEST_TIMEOUT_S = 60
# Parameters of the route itself (the advisor also reads ``run``, to link to pages).
ROUTE_PARAMS = ("run", "tag", "host", "hosts")


def _body(response) -> bytes:
    data = response.get_data()
    if response.headers.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return data


def _get(client: Client, route: str, **params):
    """(status, body) of a GET, failing the test if it takes longer than a minute."""
    out: dict = {}

    def run() -> None:
        response = client.get(f"{PREFIX}/{route}", query_string=params)
        out["status"], out["body"] = response.status_code, _body(response)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(REQUEST_TIMEOUT_S)
    assert not thread.is_alive(), f"{route} {params} did not answer in {REQUEST_TIMEOUT_S} s"
    return out["status"], out["body"]


def _assert_answer_or_4xx(status: int, body: bytes, what: str) -> None:
    assert status == 200 or 400 <= status < 500, f"{what}: {status} {body[:300]!r}"
    if status != 200:
        error = json.loads(body)["error"]
        assert error["code"] != "INTERNAL" and error["message"], what


def _trace(path: pathlib.Path) -> dict:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


# --- deeply nested metadata -------------------------------------------------------------
@pytest.mark.parametrize("depth", [MAX_NESTING, 900])
def test_top_level_metadata_nested_hundreds_of_levels_is_answered(tmp_path, depth):
    # Before: measuring the decoded profile for the cache (memsize) recursed once per level,
    # and 400 levels were a RecursionError: every tool of the profile answered 500. Now the
    # reader keeps up to MAX_NESTING levels (measured without recursion) and refuses deeper
    # values with a 422 naming the limit.
    trace = _trace(FIXTURES / "pytorch_cpu_only/run/rank-34.1074.pt.trace.json.gz")
    levels = depth - 1  # the "deepMetadata" object itself is inside the top-level one
    nested = '{"a":' * levels + "1" + "}" * levels
    text = json.dumps(trace)[:-1] + f', "deepMetadata": {nested}}}'
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "worker.1.pt.trace.json").write_text(text)
    client = Client(StandaloneApp(str(tmp_path)))
    (run,) = json.loads(_get(client, "runs")[1])
    status, body = _get(client, "run_tools", run=run)
    if depth > MAX_NESTING:
        assert status == 422, body
        assert f"nested more than {MAX_NESTING} levels" in json.loads(body)["error"]["message"]
        return
    assert status == 200, body
    for tool in json.loads(body):
        status, body = _get(client, "data", run=run, tag=tool)
        _assert_answer_or_4xx(status, body, tool)
    assert _get(client, "data", run=run, tag="pytorch_overview")[0] == 200


# --- names holding lone surrogates ------------------------------------------------------
def _with_lone_surrogates(trace: dict) -> dict:
    """Every event name ends in a lone high surrogate, every string argument in a lone low
    one (as a JSON file writes them: ``\\ud800``, ``\\udfff``)."""

    def walk(value, in_args: bool):
        if isinstance(value, dict):
            return {
                k: v + "\ud800"
                if k == "name" and isinstance(v, str)
                else walk(v, in_args or k == "args")
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v, in_args) for v in value]
        if isinstance(value, str) and in_args:
            return value + "\udfff"
        return value

    return walk(trace, False)


SURROGATE_TRACES = (
    ("pytorch_two_ranks/run/rank0.1.pt.trace.json.gz", "worker.1.pt.trace.json"),
    ("profiler_hook/train/timeline-4.json", "timeline-4.json"),
)


@pytest.mark.parametrize("source,name", SURROGATE_TRACES)
def test_lone_surrogates_in_names_are_sent_as_replacement_characters(tmp_path, source, name):
    # Before: UnicodeEncodeError, so a 500 from op_types, scope_view, the pytorch_* tools,
    # framework_op_stats, advisor, trace_viewer@ windows and every CSV of them.
    text = json.dumps(_with_lone_surrogates(_trace(FIXTURES / source)))
    assert "\\ud800" in text and "\\udfff" in text
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / name).write_text(text)
    client = Client(StandaloneApp(str(tmp_path)))
    (run,) = json.loads(_get(client, "runs")[1])
    tools = json.loads(_get(client, "run_tools", run=run)[1]) + ["trace_viewer"]
    queries = [("data", {}), ("data_csv", {})]
    queries += [("data", {"format": "columnar"}), ("data", {"search": "a"})]
    replaced = 0
    for tool in tools:
        for route, extra in queries:
            if extra and tool != "trace_viewer@":
                continue
            status, body = _get(client, route, run=run, tag=tool, **extra)
            _assert_answer_or_4xx(status, body, f"{route} {tool} {extra}")
            if status == 200:
                text = body.decode("utf-8")  # strict: valid UTF-8
                replaced += "\ufffd" in text
    assert replaced >= len(tools)  # the names are there, marked, in most answers


# --- numeric request parameters --------------------------------------------------------
@pytest.fixture(scope="module")
def fixtures_client():
    return Client(StandaloneApp(str(FIXTURES)))


def _tool_cases(client: Client) -> list:
    """(tool, run, host, base params) for every tool that declares parameters."""
    listed = {run: json.loads(_get(client, "run_tools", run=run)[1]) for run in RUNS}
    module = _get(client, "module_list", run=RUNS[0])[1].decode().split(",")[0]
    bases = {
        "trace_viewer@": [{"format": "columnar"}, {"search": "a"}, {"details": "1"}],
        "graph_viewer": [{"module_name": module, "type": "graph", "node_name": "a"}],
        "memory_viewer": [{"module_name": module}],
    }
    cases = []
    for tool in TOOLS.values():
        if not tool.params:
            continue
        # The complete trace JSON is served at /data for every run that lists the windowed
        # viewer (run_tools names only trace_viewer@, as upstream).
        shown_as = "trace_viewer@" if tool.name == "trace_viewer" else tool.name
        run = next((r for r in RUNS if shown_as in listed[r]), None)
        assert run is not None, f"no fixture run lists {tool.name}: add one to RUNS"
        hosts = json.loads(_get(client, "hosts", run=run, tag=tool.name)[1])
        host = hosts[0]["hostname"]
        for base in bases.get(tool.name, [{}]):
            cases.append((tool, run, host, base))
    return cases


def test_every_numeric_parameter_of_every_tool_gets_an_answer_or_a_4xx(fixtures_client):
    # On the code before this fix: start_time_ms / end_time_ms = nan, inf or 1e308 were 500s
    # (int() of a non-finite product), and so were integers past int64 (2**64) in windows,
    # searches, details and graph widths.
    asked, failed = 0, []
    for tool, run, host, base in _tool_cases(fixtures_client):
        for name in set(tool.params) - set(ROUTE_PARAMS):
            for value in HOSTILE_NUMBERS:
                params = {**base, "run": run, "tag": tool.name, "host": host, name: value}
                status, body = _get(fixtures_client, "data", **params)
                try:
                    _assert_answer_or_4xx(status, body, f"{tool.name} {base} {name}={value}")
                except AssertionError as e:
                    failed.append(str(e).splitlines()[0])
                asked += 1
    assert not failed, "\n".join(failed)
    assert asked > 200


def test_the_csv_table_number_gets_an_answer_or_a_4xx(fixtures_client):
    for tag in ("framework_op_stats", "op_types"):
        for value in HOSTILE_NUMBERS:
            status, body = _get(fixtures_client, "data_csv", run=RUNS[1], tag=tag, table=value)
            _assert_answer_or_4xx(status, body, f"data_csv {tag} table={value}")


def test_a_non_finite_or_absurd_number_is_refused_naming_the_parameter(fixtures_client):
    for name in ("start_time_ms", "end_time_ms"):
        for value in ("nan", "inf", "-inf", "1e308"):
            params = {"run": RUNS[0], "tag": "trace_viewer@", name: value}
            status, body = _get(fixtures_client, "data", **params)
            assert status == 400, (name, value, body)
            message = json.loads(body)["error"]["message"]
            assert repr(name) in message and value in message, message
    status, body = _get(fixtures_client, "data", run=RUNS[0], tag="trace_viewer@", pids=str(2**64))
    assert status == 400 and "'pids'" in json.loads(body)["error"]["message"]


@pytest.mark.parametrize("name", CAPTURE_INT_PARAMS)
def test_every_numeric_capture_parameter_is_refused_with_a_message(tmp_path, name):
    # A capture that gets past the guard answers 200 with {"error": ...} (docs/capture.md);
    # the profiler answers every capture, so a value that is not refused captures.
    server = FakeServer(FakeProfiler(), None, "127.0.0.1")
    try:
        client = Client(StandaloneApp(str(tmp_path)))
        token = json.loads(_get(client, "capture_token")[1])["token"]
        headers = {"X-TBProf-Token": token, "Sec-Fetch-Site": "same-origin"}
        for value in HOSTILE_NUMBERS:
            form = {"service_addr": server.address, name: value}
            response = client.post(f"{PREFIX}/capture_profile", data=form, headers=headers)
            body = _body(response)
            _assert_answer_or_4xx(response.status_code, body, f"capture {name}={value}")
            error = json.loads(body).get("error", "")
            assert error and "internal error" not in error, (name, value, body)
    finally:
        server.stop()
    assert not any(tmp_path.iterdir())


# --- hostile values in the fields an analysis parses ------------------------------------
_HOSTILE_SHAPES = (
    ("Input Dims", None),  # missing: NaN in the column
    ("Input Dims", 5),
    ("Input Dims", [[1e308, 2]]),
    ("Input Dims", [["a"]]),
    ("Input Dims", {"a": 1}),
    ("Input Dims", [[True, 2]]),
    ("Input Dims", [[2**70, 2**70]]),
    ("Input type", [["float"]]),
    ("Input type", {"float": 1}),
    ("Input type", None),
)


def test_collectives_with_hostile_input_shapes_are_answered(tmp_path):
    # Found by the JSON fuzz campaign: a collective whose "Input Dims" or "Input type" is
    # missing (NaN), or holds another type, made pytorch_distributed answer 500.
    trace = _trace(FIXTURES / "pytorch_two_ranks/run/rank0.1.pt.trace.json.gz")
    events = trace["traceEvents"]
    real = [e["args"] for e in events if e.get("name") == "nccl:all_reduce"]
    calls, call = len(real), next(e for e in events if e.get("name") == "nccl:all_reduce")
    real_bytes = sum(
        math.prod(dims) * BYTES_PER_VALUE[kind]
        for args in real
        for dims, kind in zip(args["Input Dims"], args["Input type"])
    )
    for i, (key, value) in enumerate(_HOSTILE_SHAPES, 1):
        copy = json.loads(json.dumps(call))  # one more call per hostile value, later on
        copy["ts"] += 1000 * i
        if value is None:
            del copy["args"][key]
        else:
            copy["args"][key] = value
        events.append(copy)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "worker.1.pt.trace.json").write_text(json.dumps(trace))
    client = Client(StandaloneApp(str(tmp_path)))
    (run,) = json.loads(_get(client, "runs")[1])
    status, body = _get(client, "data", run=run, tag="pytorch_distributed")
    assert status == 200, body
    (table,) = [t for t in json.loads(body) if t["p"]["title"] == "Communication operations"]
    (row,) = [r["c"] for r in table["rows"] if r["c"][1]["v"] == "nccl:all_reduce"]
    assert row[2]["v"] == calls + len(_HOSTILE_SHAPES)  # every call counted, its bytes or 0
    assert row[3]["v"] == real_bytes  # the hostile calls add 0

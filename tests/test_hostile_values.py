"""Hostile values in requests and in trace files get an answer or a 4xx, never a 500.

Issue 24, item 11: numbers no parameter can mean (``nan``, ``inf``, ``1e308``, ``2**64``),
names holding a lone UTF-16 surrogate, and top-level metadata nested hundreds of levels
deep each made some routes answer an opaque 500. Everything here goes through the real
WSGI app of the standalone server, on real fixtures or on traces built from them.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import threading

import pytest
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
REQUEST_TIMEOUT_S = 60


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
def test_top_level_metadata_nested_hundreds_of_levels_is_answered(tmp_path):
    # Before: measuring the decoded profile for the cache (memsize) recursed once per level,
    # and 400 levels were a RecursionError: every tool of the profile answered 500.
    trace = _trace(FIXTURES / "pytorch_cpu_only/run/rank-34.1074.pt.trace.json.gz")
    nested = '{"a":' * 900 + "1" + "}" * 900
    text = json.dumps(trace)[:-1] + f', "deepMetadata": {nested}}}'
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "worker.1.pt.trace.json").write_text(text)
    client = Client(StandaloneApp(str(tmp_path)))
    (run,) = json.loads(_get(client, "runs")[1])
    status, body = _get(client, "run_tools", run=run)
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

"""Fuzz: mutated Chrome-trace / PyTorch JSON files through the standalone server's routes.

Each case (``fuzz_traces.cases``: byte edits, cuts, wrong types for every known key, huge
numbers, deep nesting, lone surrogates, a BOM, damaged gzip, odd shapes) is written into a
fresh logdir and asked for through the real WSGI app: ``runs``, ``run_tools``, a
``trace_viewer@`` window, one more of the listed tools (in turn) and its CSV. Every answer
must be 200 with valid JSON (no ``NaN``), or a JSON 4xx error (413 included), never a 500;
each case must finish within ``CASE_TIMEOUT_S`` and raise the process's peak memory by at
most ``MEMORY_LIMIT_BYTES``.

``TBPROF_FUZZ_JSON_CASES`` sets the number of cases (default 150, about 30 s on two busy
cores); a longer campaign: ``TBPROF_FUZZ_JSON_CASES=5000 pytest
tests/chrome_trace/test_json_fuzz.py``. Cases are deterministic: a label names its seed,
family and index.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
import traceback

import pytest
from fuzz_traces import cases
from peak_memory import peak_growth
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

CASES = int(os.environ.get("TBPROF_FUZZ_JSON_CASES", "150"))
CASE_TIMEOUT_S = 30.0
MEMORY_LIMIT_BYTES = 512 << 20
PREFIX = "/data/plugin/profile"



def _params() -> list:
    return [pytest.param(case, id=case.label) for case in cases(CASES)]


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} in a JSON answer")


class _Answers:
    """Asks the routes and checks each answer; failures are collected, not raised."""

    def __init__(self, client: Client):
        self.client = client
        self.problems: list = []

    def get(self, route: str, **params) -> tuple:
        response = self.client.get(f"{PREFIX}/{route}", query_string=params)
        body = response.get_data()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        status, what = response.status_code, f"{route} {params}"
        parsed = None
        if response.mimetype == "application/json":
            try:
                parsed = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
            except ValueError as e:
                self.problems.append(f"{what}: {status} with a body that is not JSON ({e})")
        if status >= 500 or status < 200 or 300 <= status < 400:
            self.problems.append(f"{what}: {status} {body[:200]!r}")
        elif status >= 400:
            error = parsed.get("error", {}) if isinstance(parsed, dict) else {}
            if not error.get("message"):
                self.problems.append(f"{what}: {status} without a JSON error {body[:200]!r}")
        return status, parsed


def _ask_everything(client: Client, turn: int) -> list:
    answers = _Answers(client)
    status, runs = answers.get("runs")
    if status != 200:
        return answers.problems
    if not runs:
        answers.get("diagnose")  # an unreadable file is named there
    for run in runs:
        status, tools = answers.get("run_tools", run=run)
        if status != 200 or not tools:
            continue
        answers.get("data", run=run, tag="trace_viewer@", format="columnar", resolution="500")
        others = [t for t in tools if t != "trace_viewer@"]
        if others:
            tool = others[turn % len(others)]
            answers.get("data", run=run, tag=tool)
            if turn % 3 == 0:
                answers.get("data_csv", run=run, tag=tool)
    return answers.problems


@pytest.mark.parametrize("case", _params())
def test_a_mutated_trace_is_answered_or_refused_never_a_500(case, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / case.file_name).write_bytes(case.data)
    client = Client(StandaloneApp(str(tmp_path)))
    result: dict = {}
    turn = int(case.label.rsplit(":", 1)[1])

    def run() -> None:
        try:
            result["problems"] = _ask_everything(client, turn)
        except BaseException:  # the test client raised: reported below
            result["problems"] = [traceback.format_exc(limit=-3)]

    with peak_growth() as grown:
        worker = threading.Thread(target=run, daemon=True, name=f"fuzz {case.label}")
        worker.start()
        worker.join(CASE_TIMEOUT_S)
    assert not worker.is_alive(), f"{case.label}: no answer within {CASE_TIMEOUT_S} s"
    assert not result["problems"], "\n".join(result["problems"])
    if grown.bytes is not None:
        assert grown.bytes <= MEMORY_LIMIT_BYTES, f"{case.label}: peak grew {grown.bytes >> 20} MiB"

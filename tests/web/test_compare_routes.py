"""Comparing two runs through the real ``tbprof diff`` command and the HTTP API (``base_run``
on /data and /data_csv, real WSGI): the same answer as api/compare.py, clear errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO
from werkzeug.test import Client

from tensorboard_plugin_profile.api.compare import compare_in_logdir
from tensorboard_plugin_profile.api.compare_table import to_datatable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
BASE_RUN, EXP_RUN = "pytorch_diff_control/run/1", "pytorch_diff_test/run/1"
JAX_RUN = "jax_cpu_train/session_1"


def tbprof(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", "diff", *args, "--no_cache"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def expected():
    service = ProfileService(str(FIXTURES))
    yield lambda tool, run=EXP_RUN, base=BASE_RUN: compare_in_logdir(service, run, base, tool)
    service.close()


@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES)))


def test_cli_json_csv_and_text(expected):
    base, exp = str(FIXTURES / "pytorch_diff_control"), str(FIXTURES / "pytorch_diff_test")
    want = expected("pytorch_operators")
    out = tbprof(base, exp, "--tool", "pytorch_operators", "--format", "json")
    assert out.returncode == 0, out.stderr
    table = json.loads(out.stdout)
    assert table["rows"] == to_datatable(want)["rows"]
    assert table["p"]["summary"] == want.attrs["summary"]
    out = tbprof(base, exp, "--tool", "pytorch_operators", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == len(want) and rows[0]["name"] == want["name"].iloc[0]
    out = tbprof(base, exp, "--tool", "pytorch_overview")
    assert out.returncode == 0, out.stderr
    assert "step time 77,491.0 -> 124,067.0 us (+60.1%)" in out.stdout


def test_cli_two_runs_of_one_logdir_and_errors():
    out = tbprof(
        str(FIXTURES),
        str(FIXTURES),
        "--tool",
        "overview_page",
        "--base-run",
        JAX_RUN,
        "--run",
        JAX_RUN,
        "--base-step",
        "nope",
    )
    assert out.returncode == 1 and "No step 'nope' in this run" in out.stderr
    out = tbprof(str(FIXTURES / "jax_cpu_train"), str(FIXTURES / "jax_cpu_train"), "--tool", "x")
    assert out.returncode == 1 and "cannot be compared; the tools that can:" in out.stderr


def test_http_base_run_answers_the_comparison(client, expected):
    response = client.get(f"{PREFIX}/data?run={EXP_RUN}&base_run={BASE_RUN}&tag=pytorch_kernels")
    assert response.status_code == 200, response.get_data(as_text=True)
    table = json.loads(response.get_data())
    want = expected("pytorch_kernels")
    assert table["rows"] == to_datatable(want)["rows"]
    assert table["p"]["base_run"] == BASE_RUN and table["p"]["exp_run"] == EXP_RUN
    response = client.get(
        f"{PREFIX}/data_csv?run={EXP_RUN}&base_run={BASE_RUN}&tag=pytorch_kernels"
    )
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    assert response.get_data(as_text=True).splitlines()[0].startswith("name,status,total_us_base")


def test_http_step_parameters(client):
    url = f"{PREFIX}/data?run={JAX_RUN}&base_run={JAX_RUN}&tag=overview_page"
    table = json.loads(client.get(url).get_data())
    assert table["rows"][0]["c"][0]["v"] == "step_time_ms"
    response = client.get(url + "&step=nope")
    assert response.status_code == 400
    assert "No step 'nope'" in json.loads(response.get_data())["error"]["message"]


@pytest.mark.parametrize(
    "query,status,message",
    [
        (f"run={EXP_RUN}&base_run=nope&tag=pytorch_operators", 404, "No run 'nope' (base_run)"),
        (f"run={EXP_RUN}&base_run=../../etc&tag=pytorch_operators", 404, "No run '../../etc'"),
        (f"run={EXP_RUN}&base_run={BASE_RUN}&tag=trace_viewer", 400, "cannot be compared"),
        (f"run={EXP_RUN}&base_run={BASE_RUN}", 400, "'tag' parameter is required"),
        (f"run={EXP_RUN}&base_run={JAX_RUN}&tag=pytorch_operators", 404, "The baseline run"),
        (
            f"run={EXP_RUN}&base_run={BASE_RUN}&tag=pytorch_operators&base_host=../../etc",
            404,
            "../../etc",
        ),
    ],
)
def test_http_bad_base_run_is_a_clear_4xx(client, query, status, message):
    for route in ("data", "data_csv"):
        response = client.get(f"{PREFIX}/{route}?{query}")
        assert response.status_code == status, response.get_data(as_text=True)
        assert message in json.loads(response.get_data())["error"]["message"]


def test_scope_on_the_cli_and_http(client):
    """``--scope`` / ``scope=`` count like torch-tb-profiler's diff view (main_thread_steps):
    the same rows from the command line, /data and /data_csv as from api/compare.py."""
    service = ProfileService(str(FIXTURES))
    try:
        want = compare_in_logdir(
            service, EXP_RUN, BASE_RUN, "pytorch_operators", scope="main_thread_steps"
        )
    finally:
        service.close()
    base, exp = str(FIXTURES / "pytorch_diff_control"), str(FIXTURES / "pytorch_diff_test")
    out = tbprof(base, exp, "--tool", "pytorch_operators", "--format", "json",
                 "--scope", "main_thread_steps")  # fmt: skip
    assert out.returncode == 0, out.stderr
    table = json.loads(out.stdout)
    assert table["rows"] == to_datatable(want)["rows"]
    assert table["p"]["scope"] == "main_thread_steps"
    query = f"run={EXP_RUN}&base_run={BASE_RUN}&tag=pytorch_operators&scope=main_thread_steps"
    table = json.loads(client.get(f"{PREFIX}/data?{query}").get_data())
    assert table["rows"] == to_datatable(want)["rows"]
    text = client.get(f"{PREFIX}/data_csv?{query}").get_data(as_text=True)
    assert len(text.strip().splitlines()) == len(want) + 1
    response = client.get(f"{PREFIX}/data?{query.replace('main_thread_steps', 'nope')}")
    assert response.status_code == 400
    assert "scope must be one of all, main_thread_steps" in response.get_data(as_text=True)

"""Smoke test through the real `tensorboard` binary, with --path_prefix."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from conftest import FIXTURES, REPO

PREFIX = "/tb"
RUN = "jax_cpu_train/session_1"
# The first plugins_listing TensorBoard answered: it decides whether a user sees the tab.
FIRST_LISTING: list = []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str, timeout: float = 30.0, data: bytes = None, **headers: str):
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.headers, response.read()


def _refusal(url: str, data: bytes = None, **headers: str):
    """(status, error JSON) of a request the plugin must refuse."""
    with pytest.raises(urllib.error.HTTPError) as info:
        _fetch(url, data=data, **headers)
    return info.value.code, json.loads(info.value.read())["error"]


@pytest.fixture(scope="module")
def tb_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tb-cache")


@pytest.fixture(scope="module")
def tensorboard_url(tmp_path_factory, tb_cache_dir):
    binary = shutil.which("tensorboard", path=os.path.dirname(sys.executable)) or shutil.which(
        "tensorboard"
    )
    if binary is None:
        pytest.fail("the tensorboard command is not installed")
    port = _free_port()
    log = tmp_path_factory.mktemp("tb") / "tensorboard.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                binary,
                "--logdir",
                str(FIXTURES),
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
                "--path_prefix",
                PREFIX,
                "--load_fast",
                "false",
                # The plugin's own flags (docs/cache.md): TensorBoard refuses unknown ones.
                "--cache_dir",
                str(tb_cache_dir),
                "--cache_bytes",
                "1G",
                "--allowed_hosts",
                "tb.lan",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}{PREFIX}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _, _, body = _fetch(f"{base}/data/plugins_listing", timeout=2)
                FIRST_LISTING.append(json.loads(body))
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"tensorboard did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_profile_tab_is_enabled_in_the_very_first_listing(tensorboard_url):
    # The page asks this once on load; "enabled": false files the tab under INACTIVE for good.
    assert FIRST_LISTING, "the fixture records the first listing"
    assert FIRST_LISTING[0]["profile"]["enabled"] is True


def test_plugin_is_listed_as_an_es_module(tensorboard_url):
    _, _, body = _fetch(f"{tensorboard_url}/data/plugins_listing")
    listing = json.loads(body)["profile"]
    assert listing["loading_mechanism"] == {
        "type": "IFRAME",
        "module_path": f"{PREFIX}/data/plugin/profile/index.js",
    } or listing["loading_mechanism"]["module_path"].endswith("/data/plugin/profile/index.js")


def test_routes_answer_through_tensorboard(tensorboard_url):
    base = f"{tensorboard_url}/data/plugin/profile"
    _, _, body = _fetch(f"{base}/runs")
    assert RUN in json.loads(body)
    _, _, body = _fetch(f"{base}/run_tools?run={RUN}")
    tools = json.loads(body)
    assert "trace_viewer@" in tools
    status, headers, body = _fetch(f"{base}/data?run={RUN}&tag=trace_viewer&host=vm")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["traceEvents"]


def test_bad_requests_are_json_errors_through_tensorboard(tensorboard_url):
    base = f"{tensorboard_url}/data/plugin/profile"
    with pytest.raises(urllib.error.HTTPError) as info:
        _fetch(f"{base}/data?run=../../etc&tag=trace_viewer")
    assert info.value.code == 404
    assert json.loads(info.value.read())["error"]["code"] == "NOT_FOUND"


def test_frontend_entry_is_served(tensorboard_url):
    status, headers, body = _fetch(f"{tensorboard_url}/data/plugin/profile/index.js")
    assert status == 200 and b"render" in body
    status, _, body = _fetch(f"{tensorboard_url}/data/plugin/profile/index.html")
    assert status == 200 and b"<script" in body


def test_the_plugin_uses_the_cache_dir_given_to_tensorboard(tensorboard_url, tb_cache_dir):
    base = f"{tensorboard_url}/data/plugin/profile"
    status, _, _ = _fetch(f"{base}/data?run={RUN}&tag=overview_page", timeout=120)
    assert status == 200
    assert any(p.name.startswith("result-") for p in tb_cache_dir.glob("v*/*.bin"))


def test_a_foreign_host_is_refused_through_tensorboard(tensorboard_url):
    # TensorBoard itself checks no Host: the plugin's handlers do (docs/security.md).
    base = f"{tensorboard_url}/data/plugin/profile"
    for route in ("runs", f"data?run={RUN}&tag=overview_page&host=vm", "index.js"):
        status, error = _refusal(f"{base}/{route}", Host="rebind.attacker.example")
        assert (status, error["code"]) == (403, "HOST_NOT_ALLOWED")
    status, error = _refusal(f"{base}/capture_profile", b"", Host="rebind.attacker.example")
    assert (status, error["code"]) == (403, "HOST_NOT_ALLOWED")
    # The name given with --allowed_hosts on TensorBoard's command line is answered.
    status, _, body = _fetch(f"{base}/runs", Host="tb.lan:6006")
    assert status == 200 and RUN in json.loads(body)


def test_a_capture_needs_post_and_the_token_through_tensorboard(tensorboard_url):
    base = f"{tensorboard_url}/data/plugin/profile"
    query = "service_addr=127.0.0.1:19001&duration=100&async=1"
    status, error = _refusal(f"{base}/capture_profile?{query}")  # the <img> of the report
    assert (status, error["code"]) == (405, "METHOD_NOT_ALLOWED")
    status, error = _refusal(f"{base}/capture_profile", query.encode())  # a form of another site
    assert (status, error["code"]) == (403, "FORBIDDEN")
    _, _, body = _fetch(f"{base}/capture_token")
    token = json.loads(body)["token"]
    headers = {"X-TBProf-Token": token, "Sec-Fetch-Site": "cross-site"}
    status, error = _refusal(f"{base}/capture_profile", query.encode(), **headers)
    assert (status, error["code"]) == (403, "FORBIDDEN")
    headers["Sec-Fetch-Site"] = "same-origin"
    bad = b"service_addr=127.0.0.1:1&duration=x"  # gets through the guard, fails before connecting
    status, error = _refusal(f"{base}/capture_profile", bad, **headers)
    assert (status, error["message"]) == (400, "duration must be an integer, got 'x'.")


def test_the_profile_tab_keeps_its_selection_in_tensorboards_address(tensorboard_url):
    """Real Chromium on real TensorBoard (frontend/e2e/tensorboard.mjs): a link naming run, tool,
    host and the trace's range opens that view; picking a tool writes TensorBoard's address; a
    reload keeps it; Copy link gives TensorBoard's address; a stale run and a hostile host fall
    back with a note and insert no markup. Builds the current frontend first."""
    frontend = REPO / "frontend"
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is required for the browser test")
    artifacts = REPO / "tests" / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PROFILE_E2E_TB_URL": f"{tensorboard_url}/",
        "PROFILE_E2E_ARTIFACTS": str(artifacts),
    }
    for args in ([npm, "run", "build"], ["node", "e2e/tensorboard.mjs"]):
        result = subprocess.run(
            args, cwd=frontend, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"{args}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"

"""The Host allowlist (DNS rebinding) and the capture guard (CSRF), through real WSGI and sockets.

The browser side of the same promises (an attack page in Chromium, a rebound name) is
``tests/web/test_frontend.py::test_pages_of_other_origins_cannot_capture_nor_read``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURES
from werkzeug.serving import make_server
from werkzeug.test import Client

from tensorboard_plugin_profile.web.guard import (
    ENV_ALLOWED_HOSTS,
    LOOPBACK_NAMES,
    TOKEN_HEADER,
    Guard,
    allowed_hosts_setting,
    parse_host_list,
)
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
JAX_RUN = "jax_cpu_train/session_1"
REBOUND = "rebind.attacker.example"
# Every kind of URL the server answers: reading routes, capture, the page, a bundle file.
URLS = [
    f"{PREFIX}/runs",
    f"{PREFIX}/data?run={JAX_RUN}&tag=overview_page&host=vm",
    f"{PREFIX}/capture_profile?service_addr=127.0.0.1:1&async=1",
    f"{PREFIX}/capture_token",
    f"{PREFIX}/index.js",
    "/",
    "/runs",
    "/favicon.svg",
]


@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES)))


@pytest.fixture
def empty_client(tmp_path):
    return Client(StandaloneApp(str(tmp_path)))


def _error(response) -> dict:
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.get_data())["error"]


def _token(client) -> str:
    response = client.get(f"{PREFIX}/capture_token")
    assert response.status_code == 200
    return json.loads(response.get_data())["token"]


# --- Host ---------------------------------------------------------------------------------
@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("host", [REBOUND, f"{REBOUND}:8791", "127.0.0.1.nip.io:8791", ""])
def test_a_foreign_host_is_refused_on_every_route(client, url, host):
    method = "POST" if "capture_profile" in url else "GET"
    response = client.open(url, method=method, headers={"Host": host})
    assert response.status_code == 403
    error = _error(response)
    assert error["code"] == "HOST_NOT_ALLOWED"
    assert "--allowed_hosts" in error["message"]


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8791", "127.0.0.1:6006", "[::1]:8791", "LocalHost:1"]
)
def test_loopback_names_are_answered_on_any_port(client, host):
    response = client.get(f"{PREFIX}/runs", headers={"Host": host})
    assert response.status_code == 200 and JAX_RUN in json.loads(response.get_data())


def test_a_real_server_refuses_a_rebound_host_like_curl_did():
    # The report: curl -H 'Host: rebind.attacker.example' 127.0.0.1:PORT/... answered 200.
    server = make_server("127.0.0.1", 0, StandaloneApp(str(FIXTURES)), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for path, status in ((f"{PREFIX}/runs", 403), ("/runs", 403)):
            assert _raw_get(server.server_port, path, REBOUND) == status
        assert _raw_get(server.server_port, f"{PREFIX}/runs", "127.0.0.1") == 200
    finally:
        server.shutdown()


def _raw_get(port: int, path: str, host: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_the_names_follow_the_bind_address():
    loopback = set(LOOPBACK_NAMES)
    assert Guard.for_bind("127.0.0.1").hosts == loopback
    assert Guard.for_bind("::1").hosts == loopback
    assert Guard.for_bind("localhost").loopback_only
    assert Guard.for_bind("10.1.2.3").hosts == loopback | {"10.1.2.3"}
    assert Guard.for_bind("fe80::1").hosts == loopback | {"[fe80::1]"}
    for wildcard in ("0.0.0.0", "::"):
        assert Guard.for_bind(wildcard).hosts == loopback | {socket.gethostname().lower()}
    extra = parse_host_list(" Box.LAN:8791, 10.0.0.5 ,[fe80::2]:1,")
    assert extra == ("box.lan", "10.0.0.5", "[fe80::2]")
    assert Guard.for_bind("0.0.0.0", extra).hosts >= {"box.lan", "10.0.0.5", "[fe80::2]"}


def test_allowed_hosts_come_from_the_flag_else_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_ALLOWED_HOSTS, "env.lan")
    assert allowed_hosts_setting(None) == ("env.lan",)
    assert allowed_hosts_setting("flag.lan,other.lan") == ("flag.lan", "other.lan")
    monkeypatch.delenv(ENV_ALLOWED_HOSTS)
    assert allowed_hosts_setting(None) == ()


def test_a_star_answers_any_host_and_says_so(tmp_path):
    guard = Guard.for_bind("0.0.0.0", parse_host_list("*"))
    assert "DNS rebinding" in guard.describe()
    client = Client(StandaloneApp(str(tmp_path), guard=guard))
    assert client.get(f"{PREFIX}/runs", headers={"Host": REBOUND}).status_code == 200


@pytest.mark.parametrize("how", ["flag", "env"])
def test_tbprof_serve_answers_the_allowed_names_and_prints_them(tmp_path, how):
    port = _free_port()
    args = ["serve", str(tmp_path), "--port", str(port)]
    env = dict(os.environ)
    if how == "flag":
        args += ["--allowed_hosts", "Box.lan"]
    else:
        env[ENV_ALLOWED_HOSTS] = "box.lan"
    child = subprocess.Popen(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        lines = [child.stdout.readline() for _ in range(3)]
        assert any("answering host names 127.0.0.1, [::1], box.lan, localhost" in x for x in lines)
        _wait_for_port(port)
        assert _raw_get(port, "/runs", f"box.lan:{port}") == 200
        assert _raw_get(port, "/runs", f"other.lan:{port}") == 403
    finally:
        child.terminate()
        child.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


# --- capture: POST, same origin, token ---------------------------------------------------------
BAD_ARGS = {"service_addr": "127.0.0.1:1", "duration": "x"}  # refused before any connection
GOT_THROUGH = {
    "error": {"code": "INVALID_ARGUMENT", "message": "duration must be an integer, got 'x'."}
}


def test_a_capture_by_get_is_refused_as_the_img_attack_sent_it(empty_client):
    url = f"{PREFIX}/capture_profile?service_addr=127.0.0.1:19001&duration=100&async=1"
    response = empty_client.get(url)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert _error(response)["code"] == "METHOD_NOT_ALLOWED"


def test_capture_cancel_takes_the_same_guard_as_capture_profile(empty_client):
    # A page of another site must not stop the user's captures either.
    url = f"{PREFIX}/capture_cancel"
    response = empty_client.get(f"{url}?job=x")
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    response = empty_client.post(url, data={"job": "x"})
    assert response.status_code == 403 and _error(response)["code"] == "FORBIDDEN"
    headers = {TOKEN_HEADER: _token(empty_client), "Sec-Fetch-Site": "cross-site"}
    response = empty_client.post(url, data={"job": "x"}, headers=headers)
    assert response.status_code == 403 and "another origin" in _error(response)["message"]
    headers["Sec-Fetch-Site"] = "same-origin"
    response = empty_client.post(url, data={"job": "x"}, headers=headers)
    assert response.status_code == 404 and _error(response)["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "headers",
    [
        {},  # a form of another site, or curl without the token
        {TOKEN_HEADER: ""},
        {TOKEN_HEADER: "guess"},
        {TOKEN_HEADER: "é"},  # not ASCII: still a clean 403
    ],
)
def test_a_capture_without_the_token_is_refused(empty_client, headers):
    response = empty_client.post(f"{PREFIX}/capture_profile", data=BAD_ARGS, headers=headers)
    assert response.status_code == 403
    error = _error(response)
    assert error["code"] == "FORBIDDEN" and TOKEN_HEADER in error["message"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # another port of localhost is the same site
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:9999"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost"},
    ],
)
def test_a_capture_from_another_origin_is_refused_even_with_the_token(empty_client, headers):
    headers = {**headers, TOKEN_HEADER: _token(empty_client)}
    response = empty_client.post(f"{PREFIX}/capture_profile", data=BAD_ARGS, headers=headers)
    assert response.status_code == 403
    assert "another origin" in _error(response)["message"]


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, scripts
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"},
        {"Origin": "http://localhost"},  # a browser without Sec-Fetch-*
        # Behind a proxy that rewrites Host, the browser's Sec-Fetch-Site still says same-origin.
        {"Sec-Fetch-Site": "same-origin", "Origin": "https://hub.example.com"},
    ],
)
def test_the_page_s_own_capture_gets_through(empty_client, headers):
    headers = {**headers, TOKEN_HEADER: _token(empty_client)}
    response = empty_client.post(f"{PREFIX}/capture_profile", data=BAD_ARGS, headers=headers)
    assert response.status_code == 400 and json.loads(response.get_data()) == GOT_THROUGH
    query = "service_addr=127.0.0.1:1&duration=x"  # parameters in the query string also work
    response = empty_client.post(f"{PREFIX}/capture_profile?{query}", headers=headers)
    assert json.loads(response.get_data()) == GOT_THROUGH


def test_the_token_is_random_per_server_and_not_given_to_other_origins(tmp_path, empty_client):
    token = _token(empty_client)
    assert len(token) >= 40 and token != _token(Client(StandaloneApp(str(tmp_path))))
    for site in ("cross-site", "same-site"):
        response = empty_client.get(f"{PREFIX}/capture_token", headers={"Sec-Fetch-Site": site})
        assert response.status_code == 403 and token not in response.get_data(as_text=True)
    # No CORS header ever lets another origin read an answer.
    response = empty_client.get(f"{PREFIX}/capture_token", headers={"Origin": "http://evil.x"})
    assert not any(h.lower().startswith("access-control-") for h in response.headers.keys())


def test_capture_status_only_reads_and_stays_a_get(empty_client):
    assert empty_client.get(f"{PREFIX}/capture_status?job=nope").status_code == 200
    response = empty_client.post(f"{PREFIX}/capture_status?job=nope")
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"


def test_inside_tensorboard_the_names_follow_tensorboard_s_flags(monkeypatch):
    # TensorBoard hands its parsed flags (an argparse Namespace) to the plugin's context.
    from tensorboard_plugin_profile.web.plugin import guard_for_tensorboard

    monkeypatch.delenv(ENV_ALLOWED_HOSTS, raising=False)
    flags = argparse.Namespace(host=None, bind_all=False, allowed_hosts=None)
    assert guard_for_tensorboard(flags).hosts == set(LOOPBACK_NAMES)
    assert guard_for_tensorboard(None).hosts == set(LOOPBACK_NAMES)
    flags = argparse.Namespace(host=None, bind_all=True, allowed_hosts="tb.lan")
    assert guard_for_tensorboard(flags).hosts == set(LOOPBACK_NAMES) | {
        socket.gethostname().lower(),
        "tb.lan",
    }
    flags = argparse.Namespace(host="10.1.2.3", bind_all=False, allowed_hosts=None)
    monkeypatch.setenv(ENV_ALLOWED_HOSTS, "env.lan")
    assert guard_for_tensorboard(flags).hosts == set(LOOPBACK_NAMES) | {"10.1.2.3", "env.lan"}

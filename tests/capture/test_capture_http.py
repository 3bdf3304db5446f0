"""The capture routes through the real WSGI app of the standalone server.

A capture is POSTed with the token the page reads from ``capture_token``, as the page does
(tests/web/test_guard.py tests the refusals).
"""

from __future__ import annotations

import gzip
import json
import time

import pytest

from .capture_fakes import FakeProfiler, unused_port

werkzeug_test = pytest.importorskip("werkzeug.test")
server_module = pytest.importorskip("tensorboard_plugin_profile.web.server")

PREFIX = "/data/plugin/profile"


def _get_json(client, path, **params):
    return _json(client.get(PREFIX + path, query_string=params))


def _capture(client, **params):
    token = _get_json(client, "/capture_token")["token"]
    headers = {"X-TBProf-Token": token, "Sec-Fetch-Site": "same-origin"}
    return _json(client.post(PREFIX + "/capture_profile", data=params, headers=headers))


def _json(response):
    body = response.get_data()
    if response.headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    assert response.status_code == 200, body
    assert response.mimetype == "application/json"
    return json.loads(body)


@pytest.fixture
def client(tmp_path):
    app = server_module.StandaloneApp(str(tmp_path))
    return werkzeug_test.Client(app)


def test_capture_then_the_session_is_listed(fake_servers, client):
    server = fake_servers(FakeProfiler())
    assert _get_json(client, "/runs") == []
    reply = _capture(client, service_addr=f"grpc://{server.address}", duration="100")
    assert reply["result"].startswith("Capture profile successfully. Please refresh."), reply
    (run,) = _get_json(client, "/runs")
    assert run in reply["result"]


def test_capture_errors_are_200_with_a_message(client):
    reply = _capture(client, service_addr="localhost", duration="100")
    assert "host-port pair" in reply["error"]
    reply = _capture(client, service_addr="localhost:1", duration="x")
    assert reply == {"error": "duration must be an integer, got 'x'."}


def test_async_capture_and_status_routes(fake_servers, client):
    server = fake_servers(FakeProfiler())
    job = _capture(client, service_addr=server.address, duration="100", **{"async": "1"})["job"]
    deadline = time.monotonic() + 5
    status = _get_json(client, "/capture_status", job=job)
    while status["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        status = _get_json(client, "/capture_status", job=job)
    assert status["state"] == "done", status
    assert _get_json(client, "/runs") == [status["session"]]
    assert "error" in _get_json(client, "/capture_status", job="unknown")


def test_dead_port_through_http_is_quick(client):
    start = time.monotonic()
    reply = _capture(client, service_addr=f"127.0.0.1:{unused_port()}")
    assert "Nothing listens at" in reply["error"]
    assert time.monotonic() - start < 4.5  # the default 3 s pre-flight

"""The capture routes through the real WSGI app of the standalone server.

A capture is POSTed with the token the page reads from ``capture_token``, as the page does
(tests/web/test_guard.py tests the refusals).
"""

from __future__ import annotations

import gzip
import json
import time

import pytest

from tensorboard_plugin_profile.protobuf import profiler_service_pb2

from .capture_fakes import FakeProfiler, unused_port

werkzeug_test = pytest.importorskip("werkzeug.test")
server_module = pytest.importorskip("tensorboard_plugin_profile.web.server")

PREFIX = "/data/plugin/profile"


def _get_json(client, path, **params):
    return _json(client.get(PREFIX + path, query_string=params))


def _capture(client, route="/capture_profile", status=200, **params):
    token = _get_json(client, "/capture_token")["token"]
    headers = {"X-TBProf-Token": token, "Sec-Fetch-Site": "same-origin"}
    return _json(client.post(PREFIX + route, data=params, headers=headers), status)


def _json(response, status=200):
    body = response.get_data()
    if response.headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    assert response.status_code == status, body
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


def test_a_failed_capture_is_200_with_a_message(client):
    reply = _capture(client, service_addr=f"127.0.0.1:{unused_port()}", duration="100")
    assert "Nothing listens at" in reply["error"]


# Issue 24, item 11: `duration=18446744073709551616` reached the request (uint64) and failed
# there; every numeric parameter is now checked first and refused with a 400 naming it.
@pytest.mark.parametrize(
    "name, value, fragment",
    [
        ("duration", str(2**64), "at most 600000"),
        ("duration", "9" * 5000, "at most 600000"),
        ("duration", "nan", "must be an integer"),
        ("duration", "inf", "must be an integer"),
        ("duration", "1e308", "must be an integer"),
        ("duration", "-5", "must not be negative"),
        ("duration", "0", "at least 1"),
        ("duration", "١٢", "must be an integer"),  # Arabic-Indic digits: int() takes them
        ("delay", str(2**64), "at most 600000"),
        ("delay", "-1", "must not be negative"),
        ("num_retry", str(2**64), "at most 99"),
        ("host_tracer_level", str(2**32), "at most 3"),
        ("host_tracer_level", "7", "at most 3"),
        ("device_tracer_level", "5", "at most 2"),
        ("python_tracer_level", "2", "at most 1"),
        ("device_tracer_level", "nan", "must be an integer"),
        ("python_tracer_level", "-0.5", "must be an integer"),
    ],
)
def test_bad_numbers_are_a_400_naming_the_parameter(fake_servers, client, name, value, fragment):
    server = fake_servers(FakeProfiler())
    reply = _capture(client, status=400, service_addr=server.address, **{name: value})
    error = reply["error"]
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["message"].startswith(f"{name} ") and fragment in error["message"], error
    assert len(error["message"]) < 200
    assert server.profiler.requests == []  # refused before any connection


def test_bad_addresses_are_a_400(client):
    reply = _capture(client, status=400, service_addr="localhost", duration="100")
    assert "host-port pair" in reply["error"]["message"]


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


def test_the_page_can_cancel_a_capture_of_a_server_that_hangs(fake_servers, client):
    cancelled = []
    profiler = FakeProfiler()

    def hang(request, context):
        while context.is_active() and not profiler.release.wait(0.05):
            pass
        cancelled.append(not context.is_active())
        return profiler_service_pb2.ProfileResponse(empty_trace=True)

    profiler.profile_handler = hang
    server = fake_servers(profiler)
    job = _capture(client, service_addr=server.address, duration="600000", **{"async": "1"})["job"]
    deadline = time.monotonic() + 10
    while not profiler.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    status = _capture(client, route="/capture_cancel", job=job)
    assert status["state"] == "cancelled" and "nothing was written" in status["error"], status
    assert _get_json(client, "/capture_status", job=job)["state"] == "cancelled"
    deadline = time.monotonic() + 10
    while not cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cancelled == [True]  # the profiler server saw its call cancelled
    assert _get_json(client, "/runs") == []
    assert "job" in _capture(client, route="/capture_cancel", status=400)["error"]["message"]
    assert _capture(client, route="/capture_cancel", status=404, job="nope")["error"]["code"] == (
        "NOT_FOUND"
    )

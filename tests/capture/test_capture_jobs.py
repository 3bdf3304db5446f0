"""Capture jobs, the /capture_profile and capture_status semantics, and the CLI functions."""

from __future__ import annotations

import argparse
import importlib.util
import os
import threading
import time

import pytest

from tensorboard_plugin_profile.capture import cli, jobs, routes
from tensorboard_plugin_profile.capture.jobs import CaptureManager, CaptureParams
from tensorboard_plugin_profile.common.errors import InvalidArgument

from .capture_fakes import FakeProfiler, answer_empty, answer_with_xspace, files_under, unused_port

DIALOG_ARGS = {
    "is_tpu_name": "false",
    "duration": "300",
    "num_retry": "0",
    "worker_list": "",
    "host_tracer_level": "2",
    "device_tracer_level": "1",
    "python_tracer_level": "0",
    "delay": "0",
}


@pytest.fixture
def manager():
    return CaptureManager(connect_timeout_s=1.0)


def test_route_success_reply(fake_servers, tmp_path, manager):
    server = fake_servers(FakeProfiler())
    args = dict(DIALOG_ARGS, service_addr=f"grpc://{server.address}")
    reply = routes.capture_profile_route(str(tmp_path), args, manager)
    assert reply["result"].startswith("Capture profile successfully. Please refresh.")
    (session,) = os.listdir(tmp_path / "plugins/profile")
    assert session in reply["result"]
    _, request = server.profiler.requests[0]
    assert (request.opts.duration_ms, request.opts.host_tracer_level) == (300, 2)


def test_route_runs_the_capture_off_the_calling_thread(
    fake_servers, tmp_path, manager, monkeypatch
):
    server = fake_servers(FakeProfiler())
    seen = []
    real_trace = jobs.trace
    monkeypatch.setattr(
        jobs,
        "trace",
        lambda *a, **k: seen.append(threading.current_thread()) or real_trace(*a, **k),
    )
    routes.capture_profile_route(
        str(tmp_path), dict(DIALOG_ARGS, service_addr=server.address), manager
    )
    assert seen and seen[0] is not threading.current_thread()


@pytest.mark.parametrize("name", ["duration", "num_retry", "delay", "host_tracer_level"])
def test_route_non_integer_parameter(name, tmp_path, manager):
    args = dict(DIALOG_ARGS, service_addr="localhost:1", **{name: "1.5x"})
    with pytest.raises(InvalidArgument, match=f"^{name} must be an integer, got '1.5x'"):
        routes.capture_profile_route(str(tmp_path), args, manager)
    assert files_under(str(tmp_path)) == [] and manager._jobs == {}


def test_route_exact_upstream_messages(tmp_path, manager):
    args = dict(DIALOG_ARGS, service_addr="localhost:1")
    assert routes.capture_profile_route("", args, manager) == {
        "error": "logdir is not set, abort capturing."
    }
    if importlib.util.find_spec("tensorflow") is None:
        tpu_args = dict(args, is_tpu_name="true", service_addr="my-tpu")
        assert routes.capture_profile_route(str(tmp_path), tpu_args, manager) == {
            "error": "TensorFlow is not installed, but is required to use TPU names."
        }


def test_route_errors_are_fast(tmp_path, manager, timer):
    dead = f"127.0.0.1:{unused_port()}"
    with timer() as t:
        reply = routes.capture_profile_route(
            str(tmp_path), dict(DIALOG_ARGS, service_addr=dead), manager
        )
    assert set(reply) == {"error"} and "Nothing listens at" in reply["error"], reply
    assert t.elapsed < 2.5
    # Bad requests are refused before a job starts (the HTTP layer answers 400).
    cases = {"": "No service address", "localhost": "host-port pair"}
    for service_addr, fragment in cases.items():
        with pytest.raises(InvalidArgument, match=fragment):
            routes.capture_profile_route(
                str(tmp_path), dict(DIALOG_ARGS, service_addr=service_addr), manager
            )
    with pytest.raises(InvalidArgument, match="^duration must be at least 1, got 0"):
        routes.capture_profile_route(
            str(tmp_path), dict(DIALOG_ARGS, service_addr="localhost:1", duration="0"), manager
        )
    assert files_under(str(tmp_path)) == []


def test_async_capture_and_status(fake_servers, tmp_path, manager):
    profiler = FakeProfiler()
    profiler.profile_handler = lambda req, ctx: time.sleep(0.4) or answer_with_xspace(req, ctx)
    server = fake_servers(profiler)
    args = dict(DIALOG_ARGS, service_addr=server.address, duration="200", delay="100")
    args["async"] = "1"
    reply = routes.capture_profile_route(str(tmp_path), args, manager)
    job_id = reply["job"]
    status = routes.capture_status_route({"job": job_id}, manager)
    assert status["state"] == "running"
    assert status["phase"] in ("waiting", "tracing")
    assert status["expected_end"] >= status["started_at"] + 0.3
    phases = _poll_until_finished(manager, job_id)
    final = routes.capture_status_route({"job": job_id}, manager)
    assert final["state"] == "done" and final["phase"] == "writing"
    assert final["result"].startswith("Capture profile successfully.")
    assert final["hosts_written"] == [server.address] and final["hosts_failed"] == {}
    assert {"tracing", "collecting"} <= phases


def test_failed_job_status_and_unknown_job(fake_servers, tmp_path, manager):
    server = fake_servers(FakeProfiler(answer_empty))
    job_id = manager.start(str(tmp_path), CaptureParams(server.address, duration_ms=50))
    manager.job(job_id).done.wait(5)
    status = manager.status(job_id)
    assert status["state"] == "failed"
    assert status["error"].startswith("UNAVAILABLE: ") and "no trace events" in status["error"]
    assert "error" in routes.capture_status_route({"job": "nope"}, manager)
    assert routes.capture_status_route({}, manager) == {"error": 'Missing "job" parameter.'}


def test_too_many_running_captures(fake_servers, tmp_path):
    profiler = FakeProfiler()
    profiler.profile_handler = lambda req, ctx: profiler.release.wait(5) and answer_empty(req, ctx)
    server = fake_servers(profiler)
    manager = CaptureManager(max_running=1, connect_timeout_s=1.0, deadline_s=2.0)
    manager.start(str(tmp_path), CaptureParams(server.address, duration_ms=50))
    reply = routes.capture_profile_route(
        str(tmp_path), dict(DIALOG_ARGS, service_addr=server.address), manager
    )
    assert "already running" in reply["error"]


def test_internal_errors_are_opaque(tmp_path, manager, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret /etc/passwd detail")

    monkeypatch.setattr(jobs, "trace", broken)
    reply = routes.capture_profile_route(
        str(tmp_path), dict(DIALOG_ARGS, service_addr="localhost:1"), manager
    )
    assert reply == {"error": jobs.INTERNAL_ERROR_MESSAGE}


def _cli(argv):
    parser = argparse.ArgumentParser(prog="tbprof")
    cli.add_capture_arguments(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_capture_success(fake_servers, tmp_path, capsys):
    server = fake_servers(FakeProfiler())
    argv = [
        "capture",
        f"grpc://{server.address}",
        "--logdir",
        str(tmp_path),
        "--duration-ms",
        "100",
    ]
    assert _cli(argv + ["--host-tracer-level", "3", "--delay-ms", "50"]) == 0
    out, err = capsys.readouterr()
    session_dir = out.strip()
    assert os.listdir(session_dir) == [server.address.replace(":", "_") + ".xplane.pb"]
    assert "Connecting to" in err and "Done in" in err
    assert server.profiler.requests[0][1].opts.host_tracer_level == 3


def test_cli_capture_failure_prints_advice_without_traceback(tmp_path, capsys, timer):
    dead = f"localhost:{unused_port()}"
    with timer() as t:  # the default 3 s pre-flight timeout
        code = _cli(["capture", dead, "--logdir", str(tmp_path), "--duration-ms", "100"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"Capture failed: Nothing listens at {dead}" in err and "Traceback" not in err
    assert t.elapsed < 4.5
    assert files_under(str(tmp_path)) == []


def test_cli_monitor(fake_servers, capsys):
    from tensorboard_plugin_profile.protobuf import profiler_service_pb2

    profiler = FakeProfiler(monitor=lambda r, c: profiler_service_pb2.MonitorResponse(data="ok"))
    server = fake_servers(profiler)
    argv = ["monitor", f"grpc://{server.address}", "--duration-ms", "100"]
    assert _cli(argv + ["--monitoring-level", "2", "--timestamp"]) == 0
    assert capsys.readouterr().out == "ok\n"
    assert _cli(["monitor", "localhost", "--duration-ms", "100"]) == 1
    assert "host-port pair" in capsys.readouterr().err


def _poll_until_finished(manager, job_id, timeout_s=5.0):
    phases = set()
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        status = manager.status(job_id)
        phases.add(status["phase"])
        if status["state"] != "running":
            return phases
        time.sleep(0.02)
    raise AssertionError("capture job did not finish")

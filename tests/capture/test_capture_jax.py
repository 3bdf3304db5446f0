"""Captures from a real JAX profiler server (jax.profiler.start_server) in a child process.

Skipped only when ``import jax`` fails in the child; CI installs jax and jaxlib.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import pytest

from tensorboard_plugin_profile.capture import cli, monitor, routes, trace
from tensorboard_plugin_profile.capture.jobs import CaptureManager
from tensorboard_plugin_profile.common.errors import Unavailable
from tensorboard_plugin_profile.protobuf import xplane_pb2

pytestmark = pytest.mark.slow

# Event names of the jitted loop on the host plane: the dispatch of the jitted
# function (PjitFunction(step)) and the PjRt execution under it.
LOOP_EVENT_MARKERS = ("PjitFunction(step)", "PjRt")


def _decode(path: str) -> xplane_pb2.XSpace:
    with open(path, "rb") as f:
        return xplane_pb2.XSpace.FromString(f.read())


def _assert_loop_was_traced(space: xplane_pb2.XSpace) -> None:
    planes = {plane.name: plane for plane in space.planes}
    assert "/host:CPU" in planes, sorted(planes)
    host = planes["/host:CPU"]
    names = {m.name for m in host.event_metadata.values()}
    for marker in LOOP_EVENT_MARKERS:
        assert any(marker in name for name in names), (marker, sorted(names)[:40])
    events = sum(len(line.events) for line in host.lines)
    assert events > 100


def test_trace_writes_a_real_profile(jax_server, tmp_path, timer):
    with timer() as t:
        result = trace(f"grpc://{jax_server}", str(tmp_path), 2000)
    print(f"2-second capture from JAX took {t.elapsed:.2f} s end to end")
    assert 2.0 <= t.elapsed < 10
    assert result.hosts_written == (jax_server,) and result.hosts_failed == {}
    stem = jax_server.replace(":", "_")
    assert result.files == (f"{stem}.xplane.pb",)
    _assert_loop_was_traced(_decode(os.path.join(result.session_dir, f"{stem}.xplane.pb")))
    assert not [n for n in os.listdir(tmp_path / "plugins/profile") if n.startswith(".")]


def test_cli_capture_from_jax(jax_server, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="tbprof")
    cli.add_capture_arguments(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["capture", f"grpc://{jax_server}", "--logdir", str(tmp_path), "--duration-ms", "500"]
    )
    assert args.func(args) == 0
    session_dir = capsys.readouterr().out.strip()
    (file_name,) = os.listdir(session_dir)
    _assert_loop_was_traced(_decode(os.path.join(session_dir, file_name)))


def test_capture_profile_route_with_jax(jax_server, tmp_path):
    args = {"service_addr": jax_server, "duration": "500", "num_retry": "1", "delay": "200"}
    reply = routes.capture_profile_route(str(tmp_path), args, CaptureManager())
    assert reply["result"].startswith("Capture profile successfully. Please refresh."), reply
    (session,) = os.listdir(tmp_path / "plugins/profile")
    (file_name,) = os.listdir(tmp_path / "plugins/profile" / session)
    _assert_loop_was_traced(_decode(str(tmp_path / "plugins/profile" / session / file_name)))


def test_concurrent_capture_reports_a_busy_profiler(jax_server, tmp_path):
    first: dict = {}
    runner = threading.Thread(
        target=lambda: first.setdefault("result", trace(jax_server, str(tmp_path / "a"), 1500))
    )
    runner.start()
    time.sleep(0.5)
    try:
        with pytest.raises(Unavailable, match="already profiling"):
            trace(jax_server, str(tmp_path / "b"), 200, num_tracing_attempts=1)
    finally:
        runner.join(20)
    assert first["result"].hosts_written == (jax_server,)
    assert not (tmp_path / "b").exists()


def test_monitor_is_not_implemented_by_jax(jax_server):
    with pytest.raises(Unavailable, match="does not implement Monitor"):
        monitor(jax_server, 100)


def test_trace_takes_options_as_a_dict_like_the_multi_gpu_example(jax_server, tmp_path, timer):
    options = {"host_tracer_level": 2, "python_tracer_level": 1}
    options["delay_ms"] = 1000
    with timer() as t:
        result = trace(f"grpc://{jax_server}", str(tmp_path), 300, options=options)
    # The server waited for the delay before tracing (before the fix: no delay at all).
    assert t.elapsed >= 1.3, t.elapsed
    space = _decode(os.path.join(result.session_dir, result.files[0]))
    _assert_loop_was_traced(space)
    host = {plane.name: plane for plane in space.planes}["/host:CPU"]
    names = {m.name for m in host.event_metadata.values()}
    # python_tracer_level=1 reached the server: Python function events are there.
    assert any(name.startswith("$") for name in names), sorted(names)[:40]


def test_trace_takes_options_as_keywords(jax_server, tmp_path, timer):
    with timer() as t:
        result = trace(jax_server, str(tmp_path), 300, delay_ms=800, host_tracer_level=1)
    assert t.elapsed >= 1.1, t.elapsed
    assert result.hosts_written == (jax_server,)

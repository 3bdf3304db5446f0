"""The capture client against small in-process gRPC servers on 127.0.0.1."""

from __future__ import annotations

import os
import time

import pytest

from tensorboard_plugin_profile.capture import ProfilerOptions, monitor, trace
from tensorboard_plugin_profile.capture import attempt as attempt_lib
from tensorboard_plugin_profile.common.errors import DeadlineExceeded, InvalidArgument, Unavailable
from tensorboard_plugin_profile.protobuf import (
    profiler_analysis_pb2,
    profiler_service_pb2,
    xplane_pb2,
)

from .capture_fakes import (
    FakeAnalysis,
    FakeProfiler,
    answer_busy,
    answer_empty,
    answer_like_a_legacy_server,
    answer_with_xspace,
    files_under,
    small_xspace,
    unused_port,
)

FAST = {"connect_timeout_s": 1.0}


def test_writes_the_returned_xspace_and_sends_the_upstream_request(fake_servers, tmp_path):
    server = fake_servers(FakeProfiler())
    options = ProfilerOptions(host_tracer_level=3, device_tracer_level=0, python_tracer_level=1)
    sent_ns = time.time_ns()
    result = trace(f"grpc://{server.address}", str(tmp_path), 1500, options=options, **FAST)

    stem = server.address.replace(":", "_")
    assert result.hosts_written == (server.address,)
    assert result.files == (f"{stem}.xplane.pb",)
    assert result.session_dir == str(tmp_path / "plugins" / "profile" / result.session_id)
    written = (tmp_path / "plugins/profile" / result.session_id / f"{stem}.xplane.pb").read_bytes()
    assert xplane_pb2.XSpace.FromString(written) == small_xspace()

    ((received_ns, request),) = server.profiler.requests
    assert request.emit_xspace is True
    assert request.host_name == server.address
    assert request.session_id == result.session_id
    assert request.repository_root == str(tmp_path / "plugins" / "profile")
    assert (request.duration_ms, request.max_events) == (1500, 1_000_000)
    assert "xplane.pb" in request.tools and "trace_viewer" in request.tools
    opts = request.opts
    assert (opts.version, opts.duration_ms, opts.repository_path) == (1, 1500, "")
    assert (opts.host_tracer_level, opts.device_tracer_level, opts.python_tracer_level) == (3, 0, 1)
    assert opts.include_dataset_ops and opts.enable_hlo_proto
    assert sent_ns <= opts.start_timestamp_ns <= received_ns + 50_000_000


def test_start_time_is_in_the_future_by_the_delay(fake_servers, tmp_path):
    server = fake_servers(FakeProfiler())
    trace(server.address, str(tmp_path), 100, options=ProfilerOptions(delay_ms=700), **FAST)
    ((received_ns, request),) = server.profiler.requests
    ahead_ms = (request.opts.start_timestamp_ns - received_ns) / 1e6
    assert 500 < ahead_ms <= 700


def test_several_hosts_share_one_start_time_at_least_a_second_ahead(fake_servers, tmp_path):
    first, second = fake_servers(FakeProfiler()), fake_servers(FakeProfiler())
    result = trace(f"{first.address},grpc://{second.address}", str(tmp_path), 100, **FAST)
    (t1, r1), (t2, r2) = first.profiler.requests[0], second.profiler.requests[0]
    assert r1.opts.start_timestamp_ns == r2.opts.start_timestamp_ns
    assert r1.opts.start_timestamp_ns - max(t1, t2) > 800_000_000
    assert set(result.hosts_written) == {first.address, second.address}
    assert len(os.listdir(result.session_dir)) == 2


def test_partial_success_writes_the_good_host_and_reports_the_other(fake_servers, tmp_path):
    good, bad = fake_servers(FakeProfiler()), fake_servers(FakeProfiler(answer_empty))
    dead = f"127.0.0.1:{unused_port()}"
    result = trace(f"{good.address},{bad.address},{dead}", str(tmp_path), 50, **FAST)
    assert result.hosts_written == (good.address,)
    assert set(result.hosts_failed) == {bad.address, dead}
    assert "no trace events were collected" in result.hosts_failed[bad.address]
    assert "Nothing listens at" in result.hosts_failed[dead]
    assert os.listdir(result.session_dir) == [good.address.replace(":", "_") + ".xplane.pb"]
    assert len(bad.profiler.requests) == 1  # one host had data: no retry


def test_empty_traces_are_retried_then_unavailable(fake_servers, tmp_path, timer):
    server = fake_servers(FakeProfiler(answer_empty))
    with timer() as t, pytest.raises(Unavailable) as info:
        trace(server.address, str(tmp_path), 50, num_tracing_attempts=3, **FAST)
    assert len(server.profiler.requests) == 3
    assert len({r.session_id for _, r in server.profiler.requests}) == 1  # same session each time
    assert "was the program running (executing steps) during the 50 ms window?" in (
        info.value.message
    )
    assert t.elapsed < 3
    assert files_under(str(tmp_path)) == []


def test_busy_profiler_is_named_and_retried_after_a_pause(fake_servers, tmp_path, monkeypatch):
    monkeypatch.setattr(attempt_lib, "BUSY_RETRY_PAUSE_S", 0.1)
    server = fake_servers(FakeProfiler(answer_busy))
    with pytest.raises(Unavailable) as info:
        trace(server.address, str(tmp_path), 50, num_tracing_attempts=2, **FAST)
    assert "already profiling" in info.value.message
    assert len(server.profiler.requests) == 2


def test_slow_server_hits_the_deadline_with_advice(fake_servers, tmp_path, timer):
    profiler = FakeProfiler()
    profiler.profile_handler = lambda req, ctx: profiler.release.wait(5) and answer_empty(req, ctx)
    server = fake_servers(profiler)
    with timer() as t, pytest.raises(DeadlineExceeded) as info:
        trace(server.address, str(tmp_path), 50, num_tracing_attempts=3, deadline_s=0.5, **FAST)
    assert "took longer than" in info.value.message
    assert info.value.code == "DEADLINE_EXCEEDED"
    assert len(profiler.requests) == 1  # waiting as long again would not help
    assert t.elapsed < 3
    assert files_under(str(tmp_path)) == []


def test_server_that_ignores_emit_xspace_writes_itself_and_we_say_so(fake_servers, tmp_path):
    server = fake_servers(FakeProfiler(answer_like_a_legacy_server))
    result = trace(server.address, str(tmp_path), 50, **FAST)
    assert result.hosts_written == () and result.hosts_written_by_server == (server.address,)
    assert "wrote session" in result.summary() and "own filesystem" in result.summary()
    stem = server.address.replace(":", "_")
    assert os.listdir(result.session_dir) == [f"{stem}.xplane.pb"]


def test_mixed_session_merges_client_and_server_written_files(fake_servers, tmp_path):
    modern = fake_servers(FakeProfiler())
    legacy = fake_servers(FakeProfiler(answer_like_a_legacy_server))
    result = trace(f"{modern.address},{legacy.address}", str(tmp_path), 50, **FAST)
    assert result.hosts_written == (modern.address,)
    assert result.hosts_written_by_server == (legacy.address,)
    assert len(os.listdir(result.session_dir)) == 2
    assert not [n for n in os.listdir(tmp_path / "plugins/profile") if n.startswith(".")]


def test_legacy_tool_data_is_written_with_safe_names_only(fake_servers, tmp_path):
    def answer(request, context):
        response = profiler_service_pb2.ProfileResponse(empty_trace=False)
        response.tool_data.add(name="trace.json.gz", data=b"t")
        response.tool_data.add(name="../escape", data=b"x")
        response.tool_data.add(name="x.tf_stats_helper_result", data=b"x")
        return response

    server = fake_servers(FakeProfiler(answer))
    result = trace(server.address, str(tmp_path), 50, **FAST)
    assert result.files == (server.address.replace(":", "_") + ".trace.json.gz",)
    assert len(files_under(str(tmp_path))) == 4  # plugins, profile, session, file


def test_worker_list_uses_new_session(fake_servers, tmp_path):
    analysis = FakeAnalysis()
    server = fake_servers(analysis=analysis)
    result = trace(f"grpc://{server.address}", str(tmp_path), 300, worker_list="w1, w2", **FAST)
    (request,) = analysis.requests
    assert list(request.hosts) == ["w1", "w2"]
    assert request.repository_root == str(tmp_path / "plugins" / "profile")
    assert request.session_id == result.session_id == request.request.session_id
    assert request.request.host_name == "127.0.0.1"  # port dropped, as upstream
    assert (request.request.opts.version, request.request.opts.duration_ms) == (1, 300)
    assert result.hosts_written_by_server == ("w1", "w2")
    assert files_under(str(tmp_path)) == []  # the TPU-side service writes the files


def test_new_session_errors(fake_servers, tmp_path):
    failing = FakeAnalysis(profiler_analysis_pb2.NewProfileSessionResponse(error_message="boom"))
    server = fake_servers(analysis=failing)
    with pytest.raises(Unavailable, match="boom"):
        trace(server.address, str(tmp_path), 50, worker_list="w1", **FAST)
    jax_like = fake_servers(FakeProfiler())
    with pytest.raises(Unavailable, match="does not offer the Cloud TPU ProfileAnalysis"):
        trace(jax_like.address, str(tmp_path), 50, worker_list="w1", **FAST)
    assert files_under(str(tmp_path)) == []


def test_unimplemented_profile_says_wrong_service(fake_servers, tmp_path):
    server = fake_servers(analysis=FakeAnalysis())
    with pytest.raises(Unavailable, match="does not speak the profiler service"):
        trace(server.address, str(tmp_path), 50, **FAST)


@pytest.mark.parametrize(
    "service_addr, duration_ms, fragment",
    [
        ("", 100, "No service address"),
        ("localhost", 100, "host-port pair"),
        ("localhost:70000", 100, "between 1 and 65535"),
        ("localhost:abc", 100, "must be a number"),
        ("localhost:1", 0, "duration_ms must be greater than zero"),
        ("localhost:1", -5, "duration_ms must be greater than zero"),
        ("localhost:1", "soon", "duration_ms must be an integer"),
    ],
)
def test_bad_arguments_fail_before_any_network_call(
    service_addr, duration_ms, fragment, tmp_path, timer
):
    with timer() as t, pytest.raises(InvalidArgument, match=fragment):
        trace(service_addr, str(tmp_path), duration_ms)
    assert t.elapsed < 0.5
    assert files_under(str(tmp_path)) == []


def test_dead_port_fails_fast_with_advice(tmp_path, timer):
    dead = f"127.0.0.1:{unused_port()}"
    with timer() as t, pytest.raises(Unavailable) as info:
        trace(dead, str(tmp_path), 100, num_tracing_attempts=3, connect_timeout_s=0.5)
    assert t.elapsed < 2
    assert f"Nothing listens at {dead}" in info.value.message
    assert "jax.profiler.start_server(port)" in info.value.message
    assert "keep a reference" in info.value.message
    assert files_under(str(tmp_path)) == []


def test_ipv6_loopback_in_brackets(fake_servers, tmp_path):
    try:
        server = fake_servers(FakeProfiler(), host="[::1]")
    except RuntimeError:
        pytest.skip("no IPv6 loopback on this machine")
    result = trace(f"grpc://{server.address}", str(tmp_path), 50, **FAST)
    assert result.files == (f"[__1]_{server.port}.xplane.pb",)
    assert server.profiler.requests[0][1].host_name == f"[::1]:{server.port}"


def test_monitor_returns_the_text_and_sends_the_fields(fake_servers):
    profiler = FakeProfiler(
        monitor=lambda req, ctx: profiler_service_pb2.MonitorResponse(data="Idle 12%")
    )
    server = fake_servers(profiler)
    assert monitor(f"grpc://{server.address}", 200, monitoring_level=2, display_timestamp=True) == (
        "Idle 12%"
    )
    (request,) = profiler.monitor_requests
    assert (request.duration_ms, request.monitoring_level, request.timestamp) == (200, 2, True)


def test_monitor_errors(fake_servers):
    server = fake_servers(FakeProfiler())  # Monitor not implemented, as in JAX
    with pytest.raises(Unavailable, match="does not implement Monitor"):
        monitor(server.address, 100)
    with pytest.raises(InvalidArgument, match="exactly one"):
        monitor(f"{server.address},{server.address.replace('127.0.0.1', 'localhost')}", 100)
    with pytest.raises(InvalidArgument, match="monitoring_level"):
        monitor(server.address, 100, monitoring_level=3)


def test_monitor_of_an_unreachable_host_says_nothing_listens():
    # Unreachable hosts are keyed by target: this used to raise KeyError instead.
    with pytest.raises(Unavailable, match="Nothing listens at"):
        monitor(f"127.0.0.1:{unused_port()}", 100, connect_timeout_s=0.2)


def test_progress_reports_phases_in_order(fake_servers, tmp_path):
    server = fake_servers(FakeProfiler(_slow_answer(0.3)))
    phases: list[str] = []
    trace(server.address, str(tmp_path), 200, progress=lambda p, info: phases.append(p), **FAST)
    assert phases == ["waiting", "waiting", "tracing", "collecting", "writing"]


def _slow_answer(seconds):
    def answer(request, context):
        time.sleep(seconds)
        return answer_with_xspace(request, context)

    return answer

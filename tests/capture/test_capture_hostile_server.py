"""A profiler server that lies: bad tool names, garbage XSpaces, silence. Nothing bad lands."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
import pytest
from conftest import REPO

from tensorboard_plugin_profile.capture import ProfilerOptions, trace
from tensorboard_plugin_profile.capture.jobs import CaptureManager, CaptureParams
from tensorboard_plugin_profile.capture.limits import CaptureLimits
from tensorboard_plugin_profile.common.errors import InvalidArgument, ProfileTooLarge, Unavailable
from tensorboard_plugin_profile.protobuf import profiler_service_pb2, xplane_pb2

from .capture_fakes import FakeProfiler, files_under, small_xspace, unused_port

FAST = {"connect_timeout_s": 1.0}


def _answer_with_tools(*tools):
    def answer(request, context):
        response = profiler_service_pb2.ProfileResponse(empty_trace=False, xspace=small_xspace())
        for name, data in tools:
            response.tool_data.add(name=name, data=data)
        return response

    return answer


def test_a_tool_named_like_the_xspace_cannot_overwrite_it(fake_servers, tmp_path):
    server = fake_servers(FakeProfiler(_answer_with_tools(("xplane.pb", b"evil"))))
    result = trace(server.address, str(tmp_path), 50, **FAST)
    stem = server.address.replace(":", "_")
    assert result.files == (f"{stem}.xplane.pb",)
    written = (tmp_path / "plugins/profile" / result.session_id / f"{stem}.xplane.pb").read_bytes()
    assert xplane_pb2.XSpace.FromString(written) == small_xspace()


@pytest.mark.parametrize(
    "name", ["bad\0name", ".hidden", "a/b", "..", "x" * 300, "sub\\dir", "new\nline"]
)
def test_unsafe_tool_names_are_dropped_and_leave_no_trace(fake_servers, tmp_path, name):
    server = fake_servers(FakeProfiler(_answer_with_tools((name, b"x"), ("trace.json.gz", b"t"))))
    result = trace(server.address, str(tmp_path), 50, **FAST)
    stem = server.address.replace(":", "_")
    assert result.files == (f"{stem}.xplane.pb", f"{stem}.trace.json.gz")
    session = f"plugins/profile/{result.session_id}"
    assert files_under(str(tmp_path)) == sorted(
        ["plugins", "plugins/profile", session] + [f"{session}/{f}" for f in result.files]
    )


def _raw_profile_server(body: bytes):
    """A ProfilerService whose Profile answers ``body`` as the serialized response."""
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, context: body, request_deserializer=None, response_serializer=None
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=2), options=[("grpc.max_send_message_length", -1)]
    )
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("tensorflow.ProfilerService", {"Profile": handler})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.mark.parametrize(
    "xspace", [b"\xff\xfe garbage that is no protobuf", b"\x78\x01", b"\x0a\x05short"]
)
def test_an_xspace_that_does_not_decode_fails_and_writes_nothing(tmp_path, xspace):
    body = b"\x42" + bytes([len(xspace)]) + xspace  # field 8 (xspace), length-delimited
    server, address = _raw_profile_server(body)
    try:
        with pytest.raises(Unavailable, match="not a valid XSpace"):
            trace(address, str(tmp_path), 50, **FAST)
    finally:
        server.stop(grace=None)
    assert files_under(str(tmp_path)) == []


def test_a_listener_that_accepts_but_never_answers_is_named_as_such(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    stop = threading.Event()

    def accept_forever():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_forever, daemon=True)
    thread.start()
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    try:
        with pytest.raises(Unavailable) as info:
            trace(address, str(tmp_path), 50, connect_timeout_s=0.5)
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    assert "accepted the connection but did not answer" in info.value.message
    assert "Nothing listens" not in info.value.message
    assert files_under(str(tmp_path)) == []


# --- issue 24, item 5: what a server sends, and what a capture may ask for ----------------
def test_thousands_of_tool_files_fail_the_host_and_write_nothing(fake_servers, tmp_path):
    # The report: 5,000 junk tool files landed in the logdir.
    tools = [(f"junk{i}.trace.json.gz", b"x" * 10) for i in range(5000)]
    server = fake_servers(FakeProfiler(_answer_with_tools(*tools)))
    with pytest.raises(ProfileTooLarge) as info:
        trace(server.address, str(tmp_path), 50, **FAST)
    assert "more than 32 tool files" in info.value.message
    assert "TBPROF_CAPTURE_MAX_TOOL_FILES" in info.value.message
    assert files_under(str(tmp_path)) == []


def test_tool_files_past_the_byte_limit_fail_the_host(fake_servers, tmp_path):
    tools = [(f"t{i}.pb", b"x" * 600_000) for i in range(3)]
    server = fake_servers(FakeProfiler(_answer_with_tools(*tools)))
    limits = CaptureLimits(max_tool_bytes=1 << 20)
    with pytest.raises(ProfileTooLarge, match="more than 1 MiB of tool files"):
        trace(server.address, str(tmp_path), 50, limits=limits, **FAST)
    assert files_under(str(tmp_path)) == []
    # Within the limits the same server's files are kept.
    result = trace(
        server.address, str(tmp_path), 50, limits=CaptureLimits(max_tool_bytes=2 << 20), **FAST
    )
    assert len(result.files) == 4


def test_an_answer_past_the_host_limit_is_refused_before_it_is_received(tmp_path):
    body = _xspace_field(b"\0" * (8 << 20))  # 8 MiB, refused from its length
    server, address = _raw_profile_server(body)
    try:
        with pytest.raises(ProfileTooLarge) as info:
            trace(address, str(tmp_path), 50, limits=CaptureLimits(max_host_bytes=1 << 20), **FAST)
    finally:
        server.stop(grace=None)
    assert "larger than 1 MiB" in info.value.message
    assert "TBPROF_CAPTURE_MAX_HOST_BYTES" in info.value.message
    assert files_under(str(tmp_path)) == []


CHILD_CAPTURE = r"""
import resource, sys
from tensorboard_plugin_profile.capture import trace
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    trace(sys.argv[1], sys.argv[2], 50, connect_timeout_s=5)
    print("written")
except Exception as e:
    print(type(e).__name__, e)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
"""


def test_a_hostile_answer_costs_memory_only_up_to_the_host_limit(tmp_path):
    """The report: 800 MB of tool data made the server peak at 3.6 GB. Here 96 MiB against a
    16 MiB limit (TBPROF_CAPTURE_MAX_HOST_BYTES), in a child process that measures its peak."""
    tools = b"".join(_tool_field(f"junk{i}.pb", b"x" * (6 << 20)) for i in range(16))
    server, address = _raw_profile_server(tools + _xspace_field(small_xspace().SerializeToString()))
    env = dict(os.environ, TBPROF_CAPTURE_MAX_HOST_BYTES=str(16 << 20), PYTHONPATH=str(REPO))
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD_CAPTURE, address, str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        server.stop(grace=None)
    outcome, growth_kib = child.stdout.strip().splitlines()[-2:]
    assert outcome.startswith("ProfileTooLarge") and "larger than 16 MiB" in outcome, child.stderr
    assert int(growth_kib) < 48 << 10  # under 3x the limit; taking the answer costs ~3x 96 MiB
    assert files_under(str(tmp_path)) == []


def _tool_field(name: str, data: bytes) -> bytes:
    tool = profiler_service_pb2.ProfileToolData(name=name, data=data).SerializeToString()
    return _length_delimited(6, tool)


def _xspace_field(data: bytes) -> bytes:
    return _length_delimited(8, data)


def _length_delimited(number: int, payload: bytes) -> bytes:
    key, length, size = bytes([number << 3 | 2]), bytearray(), len(payload)
    while True:
        byte, size = size & 0x7F, size >> 7
        length.append(byte | (0x80 if size else 0))
        if not size:
            return key + bytes(length) + payload


def test_a_request_past_the_limits_is_refused_at_once(tmp_path, timer):
    with timer() as t:
        with pytest.raises(
            InvalidArgument, match=r"duration_ms may be at most 600000 ms \(10 min\)"
        ):
            trace("127.0.0.1:1", str(tmp_path), 100_000_000, **FAST)
        with pytest.raises(InvalidArgument, match="delay_ms may be at most 600000 ms"):
            trace(
                "127.0.0.1:1", str(tmp_path), 100, options=ProfilerOptions(delay_ms=2**31), **FAST
            )
        # The report: a 3,900-address list started ~2,950 threads and stalled /runs for 19 s.
        many = ",".join(f"127.0.0.1:{port}" for port in range(20_000, 23_900))
        with pytest.raises(
            InvalidArgument, match="at most 256 service addresses; this list has more"
        ):
            trace(many, str(tmp_path), 100, **FAST)
    assert t.elapsed < 1
    assert files_under(str(tmp_path)) == []


def test_many_addresses_take_a_bounded_number_of_threads(tmp_path):
    # Listening sockets that never accept: gRPC never connects (a silent listener), so every
    # address goes through the pre-flight, the wait and the TCP probe.
    listeners = [socket.create_server(("127.0.0.1", 0), backlog=1) for _ in range(120)]
    dead = sorted({f"127.0.0.1:{unused_port()}" for _ in range(120)})
    addresses = [f"127.0.0.1:{s.getsockname()[1]}" for s in listeners] + dead
    before, peak, stop = _threads(), [0], threading.Event()

    def watch():
        while not stop.wait(0.005):
            peak[0] = max(peak[0], _threads())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with pytest.raises(Unavailable) as info:
            trace(",".join(addresses), str(tmp_path), 50, connect_timeout_s=1.0)
    finally:
        stop.set()
        watcher.join()
        for listener in listeners:
            listener.close()
    assert info.value.message.count("accepted the connection but did not answer") == 120
    assert info.value.message.count("Nothing listens at") == len(dead)
    assert peak[0] - before < 24, f"{peak[0] - before} threads for {len(addresses)} addresses"


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _hang_until_cancelled(profiler, seen_cancel: list):
    def answer(request, context):
        while context.is_active() and not profiler.release.wait(0.05):
            pass
        seen_cancel.append(not context.is_active())
        return profiler_service_pb2.ProfileResponse(empty_trace=True)

    return answer


def _wait_for(condition, timeout_s=10.0):
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_captures_of_a_hanging_server_can_be_cancelled_and_free_their_place(fake_servers, tmp_path):
    # The report: four `duration=100000000&async=1` captures of a server that hangs refused
    # every later capture for ~55 h, with no cancel.
    seen_cancel: list = []
    profiler = FakeProfiler()
    profiler.profile_handler = _hang_until_cancelled(profiler, seen_cancel)
    server = fake_servers(profiler)
    manager = CaptureManager(max_running=2, connect_timeout_s=1.0)
    longest = CaptureParams(server.address, duration_ms=manager.limits.max_duration_ms)
    first = manager.start(str(tmp_path), longest)
    manager.start(str(tmp_path), longest)
    with pytest.raises(Unavailable, match="at most 2 at once"):
        manager.start(str(tmp_path), longest)
    _wait_for(lambda: len(profiler.requests) == 2)
    started = time.monotonic()
    status = manager.cancel(first)
    assert status["state"] == status["phase"] == "cancelled", status
    assert "cancelled" in status["error"] and time.monotonic() - started < 3
    _wait_for(lambda: seen_cancel == [True])  # the server saw its call cancelled
    third = manager.start(str(tmp_path), longest)  # the place is free again
    for job_id in list(manager._jobs):
        manager.cancel(job_id)
    assert manager.status(third)["state"] == "cancelled"
    assert files_under(str(tmp_path)) == []


def test_ctrl_c_stops_tbprof_capture_and_the_server_s_trace(fake_servers, tmp_path):
    seen_cancel: list = []
    profiler = FakeProfiler()
    profiler.profile_handler = _hang_until_cancelled(profiler, seen_cancel)
    server = fake_servers(profiler)
    argv = ["capture", server.address, "--logdir", str(tmp_path), "--duration-ms", "600000"]
    child = subprocess.Popen(
        [sys.executable, "-m", "tensorboard_plugin_profile", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    try:
        _wait_for(lambda: profiler.requests, timeout_s=60)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert time.monotonic() - started < 5
    assert "Capture cancelled (Ctrl-C)" in err and "Traceback" not in err and out == ""
    _wait_for(lambda: seen_cancel == [True])
    assert files_under(str(tmp_path)) == []


def test_a_remote_server_gets_no_local_path(fake_servers, tmp_path, monkeypatch):
    """repository_root / opts.repository_path carried our absolute logdir to every server.
    A server that returns the XSpace reads neither (upstream's profiler_service_impl.cc only
    reads repository_root when emit_xspace is false, and repository_path is "no-op when
    empty" in profiler_options.proto), so a server on another machine gets empty ones."""
    for proxy in ("http_proxy", "https_proxy", "grpc_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    host = _non_loopback_address()
    remote = fake_servers(FakeProfiler(), host=host)
    local = fake_servers(FakeProfiler())
    result = trace(f"{remote.address},{local.address}", str(tmp_path), 50, **FAST)
    assert set(result.hosts_written) == {remote.address, local.address}
    ((_, sent_remote),) = remote.profiler.requests
    ((_, sent_local),) = local.profiler.requests
    assert str(tmp_path) not in sent_remote.SerializeToString().decode("latin-1")
    assert (sent_remote.repository_root, sent_remote.opts.repository_path) == ("", "")
    assert sent_remote.session_id == result.session_id and sent_remote.emit_xspace
    # A server on this machine may be one that writes the file itself (before emit_xspace).
    assert sent_local.repository_root == str(tmp_path / "plugins" / "profile")
    assert sent_local.opts.repository_path == ""


def _non_loopback_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent; picks the outgoing address
            address = probe.getsockname()[0]
        except OSError:
            address = ""
    if not address or address.startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address")
    return address

"""A profiler server that lies: bad tool names, garbage XSpaces, silence. Nothing bad lands."""

from __future__ import annotations

import socket
import threading
from concurrent import futures

import grpc
import pytest

from tensorboard_plugin_profile.capture import trace
from tensorboard_plugin_profile.common.errors import Unavailable
from tensorboard_plugin_profile.protobuf import profiler_service_pb2, xplane_pb2

from .capture_fakes import FakeProfiler, files_under, small_xspace

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
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
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

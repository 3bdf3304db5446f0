"""In-process ProfilerService / ProfileAnalysis servers for the capture tests.

Each fake listens on 127.0.0.1 with an ephemeral port and records every request.
Behaviour is a plain function ``(request, context) -> response`` so a test says
exactly what the server does.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from concurrent import futures

import grpc

from tensorboard_plugin_profile.protobuf import (
    profiler_analysis_pb2,
    profiler_analysis_pb2_grpc,
    profiler_service_pb2,
    profiler_service_pb2_grpc,
    xplane_pb2,
)


def small_xspace(name: str = "/host:CPU") -> xplane_pb2.XSpace:
    space = xplane_pb2.XSpace(hostnames=["fake"])
    plane = space.planes.add(id=1, name=name)
    plane.event_metadata[1].id = 1
    plane.event_metadata[1].name = "fake_step"
    line = plane.lines.add(id=1, name="main", timestamp_ns=1_000)
    line.events.add(metadata_id=1, offset_ps=0, duration_ps=5_000)
    return space


def answer_with_xspace(request, context):
    return profiler_service_pb2.ProfileResponse(empty_trace=False, xspace=small_xspace())


def answer_empty(request, context):
    return profiler_service_pb2.ProfileResponse(empty_trace=True)


def answer_busy(request, context):
    context.abort(grpc.StatusCode.INTERNAL, "Another profiling session active.")


def answer_like_a_legacy_server(request, context):
    """Ignores emit_xspace and writes the file itself, as servers before field 9 do."""
    session_dir = os.path.join(request.repository_root, request.session_id)
    os.makedirs(session_dir, exist_ok=True)
    path = os.path.join(session_dir, request.host_name.replace(":", "_") + ".xplane.pb")
    with open(path, "wb") as f:
        f.write(small_xspace().SerializeToString())
    return profiler_service_pb2.ProfileResponse(empty_trace=False)


class FakeProfiler(profiler_service_pb2_grpc.ProfilerServiceServicer):
    def __init__(self, profile=answer_with_xspace, monitor=None):
        self.profile_handler = profile
        self.monitor_handler = monitor
        self.requests: list[tuple[int, profiler_service_pb2.ProfileRequest]] = []
        self.monitor_requests: list[profiler_service_pb2.MonitorRequest] = []
        self.release = threading.Event()  # set at teardown to end slow handlers

    def Profile(self, request, context):  # noqa: N802 (gRPC method name)
        self.requests.append((time.time_ns(), request))
        return self.profile_handler(request, context)

    def Monitor(self, request, context):  # noqa: N802
        self.monitor_requests.append(request)
        if self.monitor_handler is None:
            return super().Monitor(request, context)
        return self.monitor_handler(request, context)


class FakeAnalysis(profiler_analysis_pb2_grpc.ProfileAnalysisServicer):
    def __init__(self, response=None):
        self.response = response or profiler_analysis_pb2.NewProfileSessionResponse()
        self.requests: list[profiler_analysis_pb2.NewProfileSessionRequest] = []

    def NewSession(self, request, context):  # noqa: N802
        self.requests.append(request)
        return self.response


class FakeServer:
    """A grpc.server on 127.0.0.1 with the given servicers; ``address`` is host:port."""

    def __init__(
        self,
        profiler: FakeProfiler | None = None,
        analysis: FakeAnalysis | None = None,
        host: str = "127.0.0.1",
    ):
        self.profiler = profiler
        self.analysis = analysis
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        if profiler is not None:
            profiler_service_pb2_grpc.add_ProfilerServiceServicer_to_server(profiler, self._server)
        if analysis is not None:
            profiler_analysis_pb2_grpc.add_ProfileAnalysisServicer_to_server(analysis, self._server)
        self.port = self._server.add_insecure_port(f"{host}:0")  # RuntimeError if unavailable
        self.address = f"{host}:{self.port}"
        self._server.start()

    def stop(self) -> None:
        if self.profiler is not None:
            self.profiler.release.set()
        self._server.stop(grace=None)


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def files_under(path: str) -> list[str]:
    """Every file and directory below ``path``, relative, sorted."""
    found = []
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), path))
    return sorted(found)

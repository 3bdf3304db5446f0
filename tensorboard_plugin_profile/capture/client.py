"""Capture profiles from running profiler servers over gRPC.

The behaviour of TensorFlow's ``tf.profiler.experimental.client.trace`` /
``monitor`` (docs/capture.md), with these differences:

* a pre-flight check per address (is anything listening?) before tracing, so a
  wrong port fails in seconds with advice instead of a generic "no trace";
* the server returns the XSpace (``emit_xspace``) and this process writes it into
  ``<logdir>/plugins/profile/<session>/`` atomically, so profiles from another
  machine land in *our* logdir; servers that ignore the field write it themselves;
* the deadline includes the delay; the multi-host delay is ``max(user, 1 s)``;
* failures keep their cause (see ``outcomes``); partial success is success.

>>> result = trace("grpc://localhost:9999", "/tmp/logs", duration_ms=2000)  # doctest: +SKIP
>>> result.session_dir                                                    # doctest: +SKIP
'/tmp/logs/plugins/profile/2024_05_01_12_00_00'
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import grpc

from tensorboard_plugin_profile.capture import addresses as addr_lib
from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture.attempt import CapturePlan, run_attempts
from tensorboard_plugin_profile.capture.outcomes import (
    CaptureResult,
    HostFailure,
    combined_error,
    not_listening_failure,
    rpc_failure,
    silent_listener_failure,
)
from tensorboard_plugin_profile.capture.writer import (
    SessionWriter,
    allocate_session_id,
    is_local_logdir,
    release_session_id,
    repository_root,
)
from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.protobuf import profiler_service_pb2, profiler_service_pb2_grpc

logger = logging.getLogger("tensorboard_plugin_profile.capture")

ProgressCallback = Callable[[str, dict], None]
DEFAULT_CONNECT_TIMEOUT_S = opt_lib.DEFAULT_CONNECT_TIMEOUT_S
MAX_ATTEMPTS = 100
_MAX_MESSAGE_BYTES = 2**31 - 1


def trace(
    service_addr: str,
    logdir: str,
    duration_ms: int,
    worker_list: str = "",
    num_tracing_attempts: int = 3,
    options: Any = None,
    *,
    progress: ProgressCallback | None = None,
    deadline_s: float | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> CaptureResult:
    """Captures ``duration_ms`` of every host in ``service_addr`` into ``logdir``.

    ``progress(phase, info)`` is called with phases ``waiting``, ``tracing``,
    ``collecting``, ``writing``; ``deadline_s`` overrides the per-attempt gRPC
    deadline. Raises ``InvalidArgument`` for bad arguments, ``Unavailable`` /
    ``DeadlineExceeded`` when no host produced a profile.
    """
    started = time.monotonic()
    plan = _plan(service_addr, logdir, duration_ms, worker_list, num_tracing_attempts, options)
    report = _reporter(progress)
    channels = {a: _channel(a) for a in plan.addresses}
    try:
        report("waiting", {"step": "connecting", "hosts": [a.target for a in plan.addresses]})
        reachable, unreachable = _preflight(channels, connect_timeout_s)
        if not reachable:
            raise combined_error(unreachable)
        plan = plan.with_addresses(reachable, deadline_s)
        outcome = run_attempts(plan, {a: channels[a] for a in reachable}, report)
        failures = {**unreachable, **outcome.failures}
        if not outcome.profiles and not outcome.written_by_server:
            raise combined_error(failures)
        return _write_session(plan, outcome, failures, report, started)
    finally:
        release_session_id(plan.session_id)
        for channel in channels.values():
            channel.close()


def monitor(
    service_addr: str,
    duration_ms: int,
    monitoring_level: int = 1,
    display_timestamp: bool = False,
    *,
    deadline_s: float | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> str:
    """Asks one profiler server for a text summary of ``duration_ms`` of activity."""
    address = _single_address(service_addr)
    duration_ms = opt_lib.check_duration(duration_ms)
    if monitoring_level not in (1, 2):
        raise InvalidArgument(f"monitoring_level must be 1 or 2, got {monitoring_level!r}.")
    deadline = deadline_s or opt_lib.attempt_deadline_s(duration_ms, 0)
    with _channel(address) as channel:
        _, unreachable = _preflight({address: channel}, connect_timeout_s)
        if unreachable:
            raise unreachable[address.target].error
        request = profiler_service_pb2.MonitorRequest(
            duration_ms=duration_ms,
            monitoring_level=monitoring_level,
            timestamp=bool(display_timestamp),
        )
        stub = profiler_service_pb2_grpc.ProfilerServiceStub(channel)
        try:
            return stub.Monitor(request, timeout=deadline).data
        except grpc.RpcError as e:
            raise rpc_failure(e, address.target, deadline, "Monitor").error from None


def _plan(service_addr, logdir, duration_ms, worker_list, num_tracing_attempts, options):
    addresses = addr_lib.parse_service_addresses(service_addr)
    duration_ms = opt_lib.check_duration(duration_ms)
    attempts = _check_attempts(num_tracing_attempts)
    if not logdir or not str(logdir).strip():
        raise InvalidArgument("logdir is not set, abort capturing.")
    logdir = str(logdir)
    if is_local_logdir(logdir):
        logdir = os.path.abspath(os.path.expanduser(logdir))
    workers = addr_lib.parse_worker_list(worker_list)
    root = repository_root(logdir)
    return CapturePlan(
        addresses=tuple(addresses[:1] if workers else addresses),
        logdir=logdir,
        repository_root=root,
        session_id=allocate_session_id(root) if is_local_logdir(logdir) else _remote_id(),
        duration_ms=duration_ms,
        attempts=attempts,
        options=opt_lib.ProfilerOptions.coerce(options),
        workers=tuple(workers),
        emit_xspace=is_local_logdir(logdir),
    )


def _remote_id() -> str:
    return time.strftime("%Y_%m_%d_%H_%M_%S")


def _check_attempts(num_tracing_attempts: Any) -> int:
    try:
        attempts = int(num_tracing_attempts)
    except (TypeError, ValueError):
        raise InvalidArgument(
            f"num_tracing_attempts must be an integer, got {num_tracing_attempts!r}."
        ) from None
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise InvalidArgument(f"num_tracing_attempts must be between 1 and {MAX_ATTEMPTS}.")
    return attempts


def _single_address(service_addr: str) -> addr_lib.ServiceAddress:
    addresses = addr_lib.parse_service_addresses(service_addr)
    if len(addresses) != 1:
        raise InvalidArgument("monitor takes exactly one service address.")
    return addresses[0]


def _channel(address: addr_lib.ServiceAddress) -> grpc.Channel:
    options = [
        ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
    ]
    if address.is_loopback:
        # An http_proxy in the environment must not capture our own machine's traffic.
        options.append(("grpc.enable_http_proxy", 0))
    return grpc.insecure_channel(address.target, options=options)


def _preflight(
    channels: dict[addr_lib.ServiceAddress, grpc.Channel], timeout_s: float
) -> tuple[list[addr_lib.ServiceAddress], dict[str, HostFailure]]:
    """Waits (in parallel, at most ``timeout_s``) until each channel connects."""
    futures = {a: grpc.channel_ready_future(ch) for a, ch in channels.items()}
    end = time.monotonic() + timeout_s
    reachable, unreachable = [], {}
    for address, future in futures.items():
        try:
            future.result(timeout=max(0.0, end - time.monotonic()))
            reachable.append(address)
        except grpc.FutureTimeoutError:
            future.cancel()
            if _accepts_tcp(address):
                failure = silent_listener_failure(address.target, timeout_s)
            else:
                failure = not_listening_failure(address.target, timeout_s)
            unreachable[address.target] = failure
    if unreachable:
        logger.info("Not reachable: %s", ", ".join(unreachable))
    return reachable, unreachable


def _accepts_tcp(address: addr_lib.ServiceAddress, timeout_s: float = 1.0) -> bool:
    """Whether something accepts a TCP connection there (though gRPC got no answer)."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _write_session(plan, outcome, failures, report, started) -> CaptureResult:
    writer = SessionWriter(plan.logdir, plan.session_id) if plan.emit_xspace else None
    if writer is not None:
        try:
            if outcome.profiles:
                report("writing", {"files": len(outcome.profiles)})
                for file_name, data in outcome.files():
                    writer.write(file_name, data)
            session_dir = writer.commit(merge_existing=bool(outcome.written_by_server))
        except BaseException:
            writer.discard()  # a failed capture leaves nothing in the logdir
            raise
        session_id = writer.session_id
    else:
        session_dir = os.path.join(plan.repository_root, plan.session_id)
        session_id = plan.session_id
    result = CaptureResult(
        session_id=session_id,
        session_dir=session_dir,
        hosts_written=tuple(outcome.profiles),
        hosts_written_by_server=tuple(outcome.written_by_server),
        hosts_failed={host: f.reason for host, f in sorted(failures.items())},
        files=tuple(writer.files) if writer else (),
        attempts=outcome.attempts,
        elapsed_s=time.monotonic() - started,
        logdir=plan.logdir,
    )
    logger.info("Capture done in %.1f s. %s", result.elapsed_s, result.summary())
    return result


def _reporter(progress: ProgressCallback | None) -> Callable[[str, dict], None]:
    def report(phase: str, info: dict) -> None:
        logger.info("Capture phase %s %s", phase, _short(info))
        if progress is not None:
            progress(phase, info)

    return report


def _short(info: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in info.items() if k not in ("start_time", "end_time"))


__all__ = ["CaptureResult", "monitor", "trace"]

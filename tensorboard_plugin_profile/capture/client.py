"""Capture profiles from running profiler servers over gRPC.

The behaviour of TensorFlow's ``tf.profiler.experimental.client.trace`` /
``monitor`` (docs/capture.md), with these differences:

* a pre-flight check per address (is anything listening?) before tracing, so a
  wrong port fails in seconds with advice instead of a generic "no trace";
* the server returns the XSpace (``emit_xspace``) and this process writes it into
  ``<logdir>/plugins/profile/<session>/`` atomically, so profiles from another
  machine land in *our* logdir; servers that ignore the field write it themselves;
* the deadline includes the delay; the multi-host delay is ``max(user, 1 s)``;
* failures keep their cause (see ``outcomes``); partial success is success;
* bounded (``limits.CaptureLimits``: duration, addresses, bytes and tool files per
  host) and cancellable (``cancel``, Ctrl-C); servers on other machines are sent no
  local path;
* all gRPC calls run on one asyncio loop (``grpc.aio``) in a thread of their own: the
  threads used do not grow with the number of addresses.

>>> result = trace("grpc://localhost:9999", "/tmp/logs", duration_ms=2000)  # doctest: +SKIP
>>> result.session_dir                                                    # doctest: +SKIP
'/tmp/logs/plugins/profile/2024_05_01_12_00_00'
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from tensorboard_plugin_profile.capture import addresses as addr_lib
from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture.attempt import CapturePlan, run_attempts
from tensorboard_plugin_profile.capture.limits import CaptureLimits
from tensorboard_plugin_profile.capture.outcomes import (
    CaptureCancelled,
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
_CANCEL_POLL_S = 0.05
_TCP_PROBE_TIMEOUT_S = 1.0


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
    cancel: threading.Event | None = None,
    limits: CaptureLimits | None = None,
    **option_kwargs: Any,
) -> CaptureResult:
    """Captures ``duration_ms`` of every host in ``service_addr`` into ``logdir``.

    ``options`` is a ``ProfilerOptions``, TF's namedtuple or a dict; keyword arguments
    (``host_tracer_level=3``, ``delay_ms=1000``, ...) override it. Unknown keys and
    levels out of range (host 0-3, device 0-2, python 0-1) raise ``InvalidArgument``.

    ``progress(phase, info)`` is called with phases ``waiting``, ``tracing``,
    ``collecting``, ``writing``; ``deadline_s`` overrides the per-attempt gRPC
    deadline. Setting ``cancel`` (from any thread), or Ctrl-C in the calling thread,
    stops the capture: the servers' calls are cancelled and nothing is written.
    Raises ``InvalidArgument`` for bad arguments or arguments past ``limits``
    (default ``CaptureLimits.from_env()``), ``CaptureCancelled`` when cancelled,
    ``Unavailable`` / ``DeadlineExceeded`` when no host produced a profile.
    """
    started = time.monotonic()
    limits = limits or CaptureLimits.from_env()
    options = opt_lib.ProfilerOptions.coerce(options, **option_kwargs)
    plan = _plan(
        service_addr, logdir, duration_ms, worker_list, num_tracing_attempts, options, limits
    )
    report = _reporter(progress)
    try:
        capture = _capture(plan, report, deadline_s, connect_timeout_s, started)
        return run_cancellable(capture, cancel or threading.Event())
    finally:
        release_session_id(plan.session_id)


def run_cancellable(coroutine, cancel: threading.Event):
    """Runs ``coroutine`` on an event loop of its own thread until it ends or ``cancel`` is set.

    Its own thread: the caller may already run a loop (a notebook does). A
    ``KeyboardInterrupt`` in the waiting thread cancels the coroutine, waits for it to
    clean up, and is raised again.
    """
    outcome: dict = {}

    async def until_cancelled():
        task = asyncio.ensure_future(coroutine)
        while not task.done():
            if cancel.is_set():
                task.cancel()
                break
            await asyncio.wait({task}, timeout=_CANCEL_POLL_S)
        try:
            return await task
        except asyncio.CancelledError:
            raise CaptureCancelled(
                "The capture was cancelled; the profiler servers were told to stop and "
                "nothing was written."
            ) from None

    def run() -> None:
        try:
            outcome["result"] = asyncio.run(until_cancelled())
        except BaseException as e:  # handed to the waiting thread as is
            outcome["error"] = e

    runner = threading.Thread(target=run, name="capture-loop", daemon=True)
    runner.start()
    interrupted = False
    while runner.is_alive():
        try:
            runner.join(0.1)
        except KeyboardInterrupt:
            interrupted = True
            cancel.set()
    if interrupted:
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


async def _capture(plan: CapturePlan, report, deadline_s, connect_timeout_s, started):
    channels = {a: _aio_channel(a, plan.limits) for a in plan.addresses}
    writer = SessionWriter(plan.logdir, plan.session_id) if plan.emit_xspace else None
    try:
        report("waiting", {"step": "connecting", "hosts": [a.target for a in plan.addresses]})
        reachable, unreachable = await _preflight(
            channels, connect_timeout_s, plan.limits.max_probes
        )
        if not reachable:
            raise combined_error(unreachable)
        plan = plan.with_addresses(reachable, deadline_s)
        store = _store(writer) if writer is not None else None
        outcome = await run_attempts(plan, {a: channels[a] for a in reachable}, report, store)
        failures = {**unreachable, **outcome.failures}
        if not outcome.has_data:
            raise combined_error(failures)
        return _write_session(plan, outcome, failures, writer, report, started)
    except BaseException:
        if writer is not None:
            writer.discard()  # a failed or cancelled capture leaves nothing in the logdir
        raise
    finally:
        await asyncio.gather(*(channel.close() for channel in channels.values()))


def _store(writer: SessionWriter):
    def store(_address, files) -> list:
        for file_name, data in files:
            writer.write(file_name, data)
        return [name for name, _ in files]

    return store


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
    limits = CaptureLimits.from_env()
    duration_ms = opt_lib.check_duration(duration_ms, limits.max_duration_ms)
    if monitoring_level not in (1, 2):
        raise InvalidArgument(f"monitoring_level must be 1 or 2, got {monitoring_level!r}.")
    deadline = deadline_s or opt_lib.attempt_deadline_s(duration_ms, 0)
    request = profiler_service_pb2.MonitorRequest(
        duration_ms=duration_ms,
        monitoring_level=monitoring_level,
        timestamp=bool(display_timestamp),
    )
    watch = _monitor(address, request, deadline, connect_timeout_s, limits)
    return run_cancellable(watch, threading.Event())


async def _monitor(address, request, deadline: float, connect_timeout_s: float, limits) -> str:
    channel = _aio_channel(address, limits)
    try:
        _, unreachable = await _preflight({address: channel}, connect_timeout_s, 1)
        if unreachable:
            raise unreachable[address.target].error
        stub = profiler_service_pb2_grpc.ProfilerServiceStub(channel)
        try:
            return (await stub.Monitor(request, timeout=deadline)).data
        except grpc.aio.AioRpcError as e:
            raise rpc_failure(e, address.target, deadline, "Monitor").error from None
    finally:
        await channel.close()


def _plan(service_addr, logdir, duration_ms, worker_list, num_tracing_attempts, options, limits):
    addresses = addr_lib.parse_service_addresses(service_addr, limits.max_addresses)
    limits.check_addresses(len(addresses))
    duration_ms = opt_lib.check_duration(duration_ms, limits.max_duration_ms)
    attempts = _check_attempts(num_tracing_attempts)
    options = opt_lib.ProfilerOptions.coerce(options)
    opt_lib.check_ms("delay_ms", options.delay_ms or 0, 0, limits.max_delay_ms, "MAX_DELAY_MS")
    if not logdir or not str(logdir).strip():
        raise InvalidArgument("logdir is not set, abort capturing.")
    logdir = str(logdir)
    if is_local_logdir(logdir):
        logdir = os.path.abspath(os.path.expanduser(logdir))
    workers = addr_lib.parse_worker_list(worker_list)
    limits.check_addresses(len(workers), "TPU workers")
    root = repository_root(logdir)
    return CapturePlan(
        addresses=tuple(addresses[:1] if workers else addresses),
        logdir=logdir,
        repository_root=root,
        session_id=allocate_session_id(root) if is_local_logdir(logdir) else _remote_id(),
        duration_ms=duration_ms,
        attempts=attempts,
        options=options,
        workers=tuple(workers),
        emit_xspace=is_local_logdir(logdir),
        limits=limits,
    )


def _remote_id() -> str:
    return time.strftime("%Y_%m_%d_%H_%M_%S")


def _check_attempts(num_tracing_attempts: Any) -> int:
    try:
        attempts = int(num_tracing_attempts)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument(
            f"num_tracing_attempts must be an integer, got {num_tracing_attempts!r:.40}."
        ) from None
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise InvalidArgument(f"num_tracing_attempts must be between 1 and {MAX_ATTEMPTS}.")
    return attempts


def _single_address(service_addr: str) -> addr_lib.ServiceAddress:
    addresses = addr_lib.parse_service_addresses(service_addr)
    if len(addresses) != 1:
        raise InvalidArgument("monitor takes exactly one service address.")
    return addresses[0]


def _aio_channel(address: addr_lib.ServiceAddress, limits: CaptureLimits) -> grpc.aio.Channel:
    options = [
        # gRPC refuses a larger answer as soon as its length arrives, before buffering it.
        ("grpc.max_receive_message_length", limits.max_host_bytes),
        ("grpc.max_send_message_length", 4 << 20),  # our requests are a few hundred bytes
    ]
    if address.is_loopback:
        # An http_proxy in the environment must not capture our own machine's traffic.
        options.append(("grpc.enable_http_proxy", 0))
    return grpc.aio.insecure_channel(address.target, options=options)


async def _preflight(
    channels: dict, timeout_s: float, max_probes: int
) -> tuple[list[addr_lib.ServiceAddress], dict[str, HostFailure]]:
    """Waits (in parallel, at most ``timeout_s``) until each channel connects.

    The addresses that did not connect are then probed with a plain TCP connection, at
    most ``max_probes`` at a time, to tell a silent listener from nothing listening.
    """

    async def connects(channel) -> bool:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout_s)
            return True
        except asyncio.TimeoutError:
            return False

    ready = await asyncio.gather(*(connects(channel) for channel in channels.values()))
    reachable = [a for a, ok in zip(channels, ready) if ok]
    silent = [a for a, ok in zip(channels, ready) if not ok]
    probes = asyncio.Semaphore(max_probes)

    async def failure(address) -> HostFailure:
        async with probes:
            if await _accepts_tcp(address):
                return silent_listener_failure(address.target, timeout_s)
            return not_listening_failure(address.target, timeout_s)

    failures = await asyncio.gather(*(failure(a) for a in silent))
    unreachable = {a.target: f for a, f in zip(silent, failures)}
    if unreachable:
        logger.info("Not reachable: %s", ", ".join(unreachable))
    return reachable, unreachable


async def _accepts_tcp(address: addr_lib.ServiceAddress) -> bool:
    """Whether something accepts a TCP connection there (though gRPC got no answer)."""
    try:
        connecting = asyncio.open_connection(address.host, address.port)
        _, writer = await asyncio.wait_for(connecting, _TCP_PROBE_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return False
    writer.close()
    return True


def _write_session(plan, outcome, failures, writer, report, started) -> CaptureResult:
    if writer is not None:
        report("writing", {"files": len(writer.files)})
        session_dir = writer.commit(merge_existing=bool(outcome.written_by_server))
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


__all__ = ["CaptureCancelled", "CaptureResult", "monitor", "trace"]

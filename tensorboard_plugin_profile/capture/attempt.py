"""One capture attempt (parallel ``Profile`` calls, or one ``NewSession``) and the retry loop.

All hosts of an attempt get the same ``start_timestamp_ns``. The calls run on one
asyncio event loop (``grpc.aio``): a capture of 200 hosts uses the same few threads as
one of a single host (the blocking API spent a thread per channel). While they run a
task only watches the clock to report the phases: ``waiting`` until the start time,
``tracing`` for the duration, ``collecting`` until the last answer arrives. Each
host's answer is checked and handed to ``store`` (which writes its files) as soon as it
arrives, so its bytes are dropped before the next host's arrive. Cancelling the task
cancels the calls: a profiler server stops tracing when its call is cancelled.

Retries happen when no host produced a profile and every failure may be
transient (empty trace, connection dropped, a busy profiler); a busy profiler
gets a short pause first, since an immediate retry would find it busy again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from collections.abc import Callable

import grpc

from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture.addresses import ServiceAddress
from tensorboard_plugin_profile.capture.limits import CaptureLimits, describe_bytes, env_name
from tensorboard_plugin_profile.capture.outcomes import (
    HostFailure,
    empty_trace_failure,
    rpc_failure,
)
from tensorboard_plugin_profile.capture.wire import OverLimit, scan_profile_response
from tensorboard_plugin_profile.common.errors import CorruptProfile, ProfileTooLarge, Unavailable
from tensorboard_plugin_profile.protobuf import (
    profiler_analysis_pb2_grpc,
    profiler_service_pb2,
)

logger = logging.getLogger("tensorboard_plugin_profile.capture")

BUSY_RETRY_PAUSE_S = 1.0
_PROFILE_METHOD = "/tensorflow.ProfilerService/Profile"
# Legacy servers send tool dumps; upstream skips this one too.
_SKIPPED_TOOL_SUFFIX = "tf_stats_helper_result"
# Tool names come from the server and become file names: a plain name, no path, no hidden file.
_TOOL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
_XSPACE_SUFFIX = "xplane.pb"
# gRPC's words when a message is past max_receive_message_length.
_TOO_LARGE_MARKER = "larger than max"
Report = Callable[[str, dict], None]
# Writes one host's files (name, bytes) into the session; returns the names written.
Store = Callable[[ServiceAddress, list], list]


@dataclasses.dataclass(frozen=True)
class CapturePlan:
    """Everything one capture needs, validated."""

    addresses: tuple[ServiceAddress, ...]
    logdir: str
    repository_root: str
    session_id: str
    duration_ms: int
    attempts: int
    options: opt_lib.ProfilerOptions
    workers: tuple[str, ...] = ()
    emit_xspace: bool = True
    deadline_s: float | None = None
    limits: CaptureLimits = CaptureLimits()

    def with_addresses(self, addresses, deadline_s: float | None) -> CapturePlan:
        return dataclasses.replace(self, addresses=tuple(addresses), deadline_s=deadline_s)

    @property
    def delay_ms(self) -> int:
        return opt_lib.effective_delay_ms(self.options, len(self.addresses))

    @property
    def deadline(self) -> float:
        return self.deadline_s or opt_lib.attempt_deadline_s(self.duration_ms, self.delay_ms)

    def root_for(self, address: ServiceAddress) -> str:
        """The ``repository_root`` this target gets: only what it needs.

        A server that returns the XSpace (``emit_xspace``) never reads it, so a server on
        another machine learns nothing of our filesystem. A server on this machine gets the
        logdir path, so one that ignores ``emit_xspace`` (older than that field) still
        writes the session into our logdir. A ``gs://`` logdir is the servers' to write
        into (the Cloud TPU service too): they need it, and it is no local path.
        """
        if not self.emit_xspace or self.workers or address.is_loopback:
            return self.repository_root
        return ""

    def request(
        self, address: ServiceAddress, host_name: str, start_ns: int
    ) -> profiler_service_pb2.ProfileRequest:
        return opt_lib.profile_request(
            repository_root=self.root_for(address),
            session_id=self.session_id,
            host_name=host_name,
            duration_ms=self.duration_ms,
            start_timestamp_ns=start_ns,
            options=self.options,
            emit_xspace=self.emit_xspace,
        )


@dataclasses.dataclass
class Outcome:
    """Per host: files written, written by the server itself, or why it failed."""

    profiles: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    written_by_server: list[str] = dataclasses.field(default_factory=list)
    failures: dict[str, HostFailure] = dataclasses.field(default_factory=dict)
    attempts: int = 0

    @property
    def has_data(self) -> bool:
        return bool(self.profiles or self.written_by_server)


async def run_attempts(plan: CapturePlan, channels: dict, report: Report, store: Store | None):
    """Runs up to ``plan.attempts`` attempts; returns the first with data, or the last."""
    for number in range(1, plan.attempts + 1):
        if plan.workers:
            outcome = await _new_session_attempt(plan, channels[plan.addresses[0]], report, number)
        else:
            outcome = await _profile_attempt(plan, channels, report, number, store)
        outcome.attempts = number
        failures = list(outcome.failures.values())
        if outcome.has_data or not all(f.retryable for f in failures):
            return outcome
        if number < plan.attempts:
            logger.info("Attempt %d of %d collected nothing; retrying.", number, plan.attempts)
            if any(f.busy for f in failures):
                await asyncio.sleep(BUSY_RETRY_PAUSE_S)
    return outcome


async def _profile_attempt(plan, channels, report, number, store) -> Outcome:
    start_ns = opt_lib.start_timestamp_ns(plan.delay_ms)
    calls = {}
    for address, channel in channels.items():
        profile = channel.unary_unary(
            _PROFILE_METHOD,
            request_serializer=profiler_service_pb2.ProfileRequest.SerializeToString,
            response_deserializer=None,  # raw bytes: see wire.py
        )
        call = profile(plan.request(address, address.target, start_ns), timeout=plan.deadline)
        calls[asyncio.ensure_future(_answer(call))] = address
    outcome = Outcome()
    await _follow(
        calls, start_ns, plan, report, number, lambda a, t: _classify(a, t, plan, outcome, store)
    )
    return outcome


async def _answer(call):
    """The call's answer; cancelling this cancels the RPC (the server stops tracing)."""
    try:
        return await call
    except asyncio.CancelledError:
        call.cancel()
        raise


async def _follow(calls: dict, start_ns: int, plan, report, number, on_done) -> None:
    """Waits for every call, handing each to ``on_done(address, task)`` as it ends."""
    phases = asyncio.ensure_future(_report_phases(start_ns, plan, report, number))
    pending = set(calls)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                on_done(calls.pop(task), task)  # popped: the answer's bytes go with the task
            del done
    finally:
        phases.cancel()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)


def _classify(address: ServiceAddress, task, plan: CapturePlan, outcome: Outcome, store) -> None:
    target = address.target
    try:
        raw = task.result()
    except grpc.aio.AioRpcError as e:
        outcome.failures[target] = _rpc_failure(e, target, plan)
        return
    limits = plan.limits
    try:
        scanned = scan_profile_response(raw, limits.max_tool_files, limits.max_tool_bytes)
    except OverLimit as e:
        outcome.failures[target] = _too_large(target, f"{e} ({_raise_hint(e.limit)})")
        return
    except ValueError as e:
        outcome.failures[target] = HostFailure(Unavailable(f"{target} sent a malformed reply: {e}"))
        return
    if scanned.empty_trace:
        outcome.failures[target] = empty_trace_failure(target, plan.duration_ms)
        return
    if scanned.xspace is not None and plan.emit_xspace:
        problem = _xspace_problem(scanned.xspace)
        if problem:
            outcome.failures[target] = HostFailure(
                Unavailable(f"{target} sent a profile that {problem}; nothing was written.")
            )
            return
    files = [(f"{address.file_stem}.{name}", data) for name, data in _safe_tool_data(scanned)]
    if scanned.xspace is not None and plan.emit_xspace:
        files.insert(0, (f"{address.file_stem}.{_XSPACE_SUFFIX}", scanned.xspace))
    if files and store is not None:
        outcome.profiles[target] = store(address, files)
    else:
        outcome.written_by_server.append(target)


def _rpc_failure(error: grpc.aio.AioRpcError, target: str, plan: CapturePlan) -> HostFailure:
    if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and _TOO_LARGE_MARKER in (
        error.details() or ""
    ):
        limit = describe_bytes(plan.limits.max_host_bytes)
        return _too_large(
            target, f"sent an answer larger than {limit} ({_raise_hint('max_host_bytes')})"
        )
    return rpc_failure(error, target, plan.deadline, "Profile")


def _too_large(target: str, what: str) -> HostFailure:
    return HostFailure(ProfileTooLarge(f"{target} {what}; nothing of it was written."))


def _raise_hint(field: str) -> str:
    return f"the limit per host; {env_name(field)} raises it"


def _xspace_problem(data) -> str:
    """Why ``data`` is not an XSpace this server can show, or ""."""
    from tensorboard_plugin_profile.xspace import decode_xspace

    try:
        decode_xspace(bytes(data), "captured")
    except CorruptProfile:
        return "is not a valid XSpace (it does not decode)"
    except Exception:  # decodes, but trips a reader bug: keep what the server sent
        logger.exception("Capture: the XSpace decodes only partly; writing it anyway")
    return ""


def _safe_tool_data(scanned) -> list:
    """The server's extra tool files whose names are safe, each name once."""
    kept: dict = {}
    for name, data in scanned.tool_data:
        if not _TOOL_NAME.fullmatch(name) or name.endswith(_XSPACE_SUFFIX):
            logger.warning("Capture: dropped a tool file with an unsafe name %r", name[:100])
        elif not name.endswith(_SKIPPED_TOOL_SUFFIX):
            kept.setdefault(name, data)
    return list(kept.items())


async def _new_session_attempt(plan: CapturePlan, channel, report, number) -> Outcome:
    address = plan.addresses[0]
    start_ns = opt_lib.start_timestamp_ns(plan.delay_ms)
    request = opt_lib.new_session_request(
        plan.request(address, address.host, start_ns), list(plan.workers)
    )
    stub = profiler_analysis_pb2_grpc.ProfileAnalysisStub(channel)
    call = stub.NewSession(request, timeout=plan.deadline)
    outcome = Outcome()

    def on_done(_address, task) -> None:
        _classify_new_session(address, task, plan, outcome)

    await _follow(
        {asyncio.ensure_future(_answer(call)): address}, start_ns, plan, report, number, on_done
    )
    return outcome


def _classify_new_session(address: ServiceAddress, task, plan: CapturePlan, outcome: Outcome):
    try:
        response = task.result()
    except grpc.aio.AioRpcError as e:
        outcome.failures[address.target] = rpc_failure(
            e, address.target, plan.deadline, "NewSession"
        )
        return
    if response.error_message:
        message = f"{address.target}: {response.error_message[:300]}"
        outcome.failures[address.target] = HostFailure(Unavailable(message))
    elif response.empty_trace:
        outcome.failures[address.target] = empty_trace_failure(address.target, plan.duration_ms)
    else:
        outcome.written_by_server.extend(plan.workers)


async def _report_phases(start_ns: int, plan: CapturePlan, report: Report, number: int):
    """Reports ``waiting``, ``tracing`` and ``collecting`` as the clock passes them."""
    start_time = start_ns / 1e9
    info = {
        "attempt": number,
        "start_time": start_time,
        "end_time": start_time + plan.duration_ms / 1000,
    }
    report("waiting", info)
    await asyncio.sleep(max(0.0, start_time - time.time()))
    report("tracing", info)
    await asyncio.sleep(max(0.0, info["end_time"] - time.time()))
    report("collecting", info)

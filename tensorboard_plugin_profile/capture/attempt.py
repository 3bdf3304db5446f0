"""One capture attempt (parallel ``Profile`` calls, or one ``NewSession``) and the retry loop.

All hosts of an attempt get the same ``start_timestamp_ns``; the calls are gRPC
futures, so no thread per host. While they run we only watch the clock to report
the phases: ``waiting`` until the start time, ``tracing`` for the duration,
``collecting`` until the last answer arrives.

Retries happen when no host produced a profile and every failure may be
transient (empty trace, connection dropped, a busy profiler); a busy profiler
gets a short pause first, since an immediate retry would find it busy again.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator

import grpc

from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture.addresses import ServiceAddress
from tensorboard_plugin_profile.capture.outcomes import (
    HostFailure,
    empty_trace_failure,
    rpc_failure,
)
from tensorboard_plugin_profile.capture.wire import scan_profile_response
from tensorboard_plugin_profile.common.errors import CorruptProfile, Unavailable
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
Report = Callable[[str, dict], None]


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

    def with_addresses(self, addresses, deadline_s: float | None) -> CapturePlan:
        return dataclasses.replace(self, addresses=tuple(addresses), deadline_s=deadline_s)

    @property
    def delay_ms(self) -> int:
        return opt_lib.effective_delay_ms(self.options, len(self.addresses))

    @property
    def deadline(self) -> float:
        return self.deadline_s or opt_lib.attempt_deadline_s(self.duration_ms, self.delay_ms)

    def request(self, host_name: str, start_ns: int) -> profiler_service_pb2.ProfileRequest:
        return opt_lib.profile_request(
            logdir=self.logdir,
            repository_root=self.repository_root,
            session_id=self.session_id,
            host_name=host_name,
            duration_ms=self.duration_ms,
            start_timestamp_ns=start_ns,
            options=self.options,
            emit_xspace=self.emit_xspace,
        )


@dataclasses.dataclass
class Outcome:
    """Per host: files to write, written by the server itself, or why it failed."""

    profiles: dict[str, list[tuple[str, bytes]]] = dataclasses.field(default_factory=dict)
    written_by_server: list[str] = dataclasses.field(default_factory=list)
    failures: dict[str, HostFailure] = dataclasses.field(default_factory=dict)
    attempts: int = 0

    @property
    def has_data(self) -> bool:
        return bool(self.profiles or self.written_by_server)

    def files(self) -> Iterator[tuple[str, bytes]]:
        for host_files in self.profiles.values():
            yield from host_files


def run_attempts(plan: CapturePlan, channels: dict[ServiceAddress, grpc.Channel], report: Report):
    """Runs up to ``plan.attempts`` attempts; returns the first with data, or the last."""
    for number in range(1, plan.attempts + 1):
        if plan.workers:
            outcome = _new_session_attempt(plan, channels[plan.addresses[0]], report, number)
        else:
            outcome = _profile_attempt(plan, channels, report, number)
        outcome.attempts = number
        failures = list(outcome.failures.values())
        if outcome.has_data or not all(f.retryable for f in failures):
            return outcome
        if number < plan.attempts:
            logger.info("Attempt %d of %d collected nothing; retrying.", number, plan.attempts)
            if any(f.busy for f in failures):
                time.sleep(BUSY_RETRY_PAUSE_S)
    return outcome


def _profile_attempt(plan, channels, report, number) -> Outcome:
    start_ns = opt_lib.start_timestamp_ns(plan.delay_ms)
    futures = {}
    for address, channel in channels.items():
        call = channel.unary_unary(
            _PROFILE_METHOD,
            request_serializer=profiler_service_pb2.ProfileRequest.SerializeToString,
            response_deserializer=None,  # raw bytes: see wire.py
        )
        futures[address] = call.future(
            plan.request(address.target, start_ns), timeout=plan.deadline
        )
    _follow_phases(list(futures.values()), start_ns, plan, report, number)
    outcome = Outcome()
    for address, future in futures.items():
        _classify_profile(address, future, plan, outcome)
    return outcome


def _classify_profile(address: ServiceAddress, future, plan: CapturePlan, outcome: Outcome):
    target = address.target
    try:
        scanned = scan_profile_response(future.result())
    except grpc.RpcError as e:
        outcome.failures[target] = rpc_failure(e, target, plan.deadline, "Profile")
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
    if files:
        outcome.profiles[target] = files
    else:
        outcome.written_by_server.append(target)


def _xspace_problem(data: bytes) -> str:
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


def _new_session_attempt(plan: CapturePlan, channel, report, number) -> Outcome:
    address = plan.addresses[0]
    start_ns = opt_lib.start_timestamp_ns(plan.delay_ms)
    request = opt_lib.new_session_request(plan.request(address.host, start_ns), list(plan.workers))
    stub = profiler_analysis_pb2_grpc.ProfileAnalysisStub(channel)
    future = stub.NewSession.future(request, timeout=plan.deadline)
    _follow_phases([future], start_ns, plan, report, number)
    outcome = Outcome()
    try:
        response = future.result()
    except grpc.RpcError as e:
        outcome.failures[address.target] = rpc_failure(
            e, address.target, plan.deadline, "NewSession"
        )
        return outcome
    if response.error_message:
        message = f"{address.target}: {response.error_message[:300]}"
        outcome.failures[address.target] = HostFailure(Unavailable(message))
    elif response.empty_trace:
        outcome.failures[address.target] = empty_trace_failure(address.target, plan.duration_ms)
    else:
        outcome.written_by_server.extend(plan.workers)
    return outcome


def _follow_phases(futures, start_ns: int, plan: CapturePlan, report: Report, number: int):
    """Blocks until every future is done, reporting phases as the clock passes them."""
    done = _all_done(futures)
    start_time = start_ns / 1e9
    info = {
        "attempt": number,
        "start_time": start_time,
        "end_time": start_time + plan.duration_ms / 1000,
    }
    report("waiting", info)
    if done.wait(max(0.0, start_time - time.time())):
        return
    report("tracing", info)
    if done.wait(max(0.0, info["end_time"] - time.time())):
        return
    report("collecting", info)
    # The futures carry the deadline; the extra wait is only a guard against a stuck channel.
    done.wait(plan.deadline + 5.0)


def _all_done(futures) -> threading.Event:
    event = threading.Event()
    lock = threading.Lock()
    remaining = [len(futures)]

    def one_done(_future) -> None:
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0:
                event.set()

    if not futures:
        event.set()
    for future in futures:
        future.add_done_callback(one_done)
    return event

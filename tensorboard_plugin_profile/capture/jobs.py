"""Captures as background jobs, so an HTTP request thread never does the gRPC work.

A job runs ``trace`` in its own thread and records its progress (phase,
expected end, result or error). The HTTP layer either waits for it (the
classic blocking ``/capture_profile``) or returns its id at once and lets the
page poll ``job_status``. At most ``max_running`` jobs run at once, each within
``CaptureLimits`` (checked before its thread starts), and any can be cancelled
(``CaptureManager.cancel``): its calls are cancelled, nothing is written, and
its place is free again. A manager given a ``local`` profiler (live tracing:
``in_process.InProcessProfiler``) sends captures of its ``target`` address to it
instead of over gRPC.

>>> job_id = start_capture("/tmp/logs", CaptureParams("localhost:9999", duration_ms=2000))
>>> job_status(job_id)["phase"]                                   # doctest: +SKIP
'tracing'
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from tensorboard_plugin_profile.capture import addresses as addr_lib
from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture.client import DEFAULT_CONNECT_TIMEOUT_S, trace
from tensorboard_plugin_profile.capture.limits import CaptureLimits
from tensorboard_plugin_profile.capture.options import ProfilerOptions
from tensorboard_plugin_profile.capture.outcomes import CaptureCancelled, CaptureResult
from tensorboard_plugin_profile.common.errors import NotFound, ProfileError, Unavailable

logger = logging.getLogger("tensorboard_plugin_profile.capture")

SUCCESS_MESSAGE = "Capture profile successfully. Please refresh."
INTERNAL_ERROR_MESSAGE = "Capture failed with an internal error; see the server log."


@dataclasses.dataclass(frozen=True)
class CaptureParams:
    """The arguments of ``trace`` besides the logdir."""

    service_addr: str
    duration_ms: int = 1000
    num_tracing_attempts: int = 1
    worker_list: str = ""
    options: ProfilerOptions = ProfilerOptions()


class LocalProfiler(Protocol):
    """Captures the process the manager runs in (``in_process.InProcessProfiler``)."""

    target: str

    def check(self, params: CaptureParams) -> None: ...

    def capture(
        self,
        logdir: str,
        params: CaptureParams,
        progress: Callable[[str, dict], None],
        cancel: threading.Event | None = None,
    ) -> CaptureResult: ...


class CaptureJob:
    """One capture running (or finished) in a worker thread."""

    def __init__(self, logdir: str, params: CaptureParams):
        self.id = uuid.uuid4().hex
        self.logdir = logdir
        self.params = params
        self.started_at = time.time()
        delay_s = (params.options.delay_ms or 0) / 1000
        self.expected_end = self.started_at + delay_s + params.duration_ms / 1000
        self.phase = "waiting"
        self.state = "running"
        self.result: CaptureResult | None = None
        self.error: ProfileError | None = None
        self.done = threading.Event()
        self.cancel_requested = threading.Event()  # set by cancel(); the capture watches it
        self.on_success: Callable[[], None] | None = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            if not self.done.is_set():
                self.phase = "cancelling"
        self.cancel_requested.set()

    def on_progress(self, phase: str, info: dict) -> None:
        with self._lock:
            if self.cancel_requested.is_set():
                return  # stays "cancelling" until the thread has cleaned up
            self.phase = phase
            if "end_time" in info:
                self.expected_end = info["end_time"]

    def finish(self, result: CaptureResult | None, error: ProfileError | None) -> None:
        with self._lock:
            self.result, self.error = result, error
            if isinstance(error, CaptureCancelled):
                self.state = self.phase = "cancelled"
            else:
                self.state = "done" if error is None else "failed"
        self.done.set()

    def status(self) -> dict[str, Any]:
        with self._lock:
            status: dict[str, Any] = {
                "job": self.id,
                "state": self.state,
                "phase": self.phase,
                "service_addr": self.params.service_addr,
                "duration_ms": self.params.duration_ms,
                "started_at": self.started_at,
                "expected_end": self.expected_end,
            }
            if self.result is not None:
                status.update(_result_fields(self.result))
            if self.error is not None:
                status["error"] = error_text(self.error)
        return status


class CaptureManager:
    """Starts capture jobs (a few at a time) and keeps the recent ones for status queries."""

    def __init__(
        self,
        max_running: int = 4,
        max_kept: int = 100,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        deadline_s: float | None = None,
        local: LocalProfiler | None = None,
        limits: CaptureLimits | None = None,
    ):
        self.local = local
        self.limits = limits or CaptureLimits.from_env()
        self.max_running = max_running
        self.max_kept = max_kept
        self.connect_timeout_s = connect_timeout_s
        self.deadline_s = deadline_s
        self._jobs: collections.OrderedDict[str, CaptureJob] = collections.OrderedDict()
        self._lock = threading.Lock()

    def start(
        self, logdir: str, params: CaptureParams, on_success: Callable[[], None] | None = None
    ) -> str:
        """Starts a job; ``on_success()`` runs in its thread after a successful capture."""
        local = self._local_for(params)
        if local is not None:
            local.check(params)  # a duration above its limit fails at once, not in the job
        else:
            check_params(params, self.limits)
        job = CaptureJob(logdir, params)
        job.on_success = on_success
        with self._lock:
            running = sum(1 for j in self._jobs.values() if not j.done.is_set())
            if running >= self.max_running:
                raise Unavailable(
                    f"{running} captures are already running (at most {self.max_running} at "
                    "once); wait for one to finish or cancel one."
                )
            self._jobs[job.id] = job
            self._forget_old_jobs()
        thread = threading.Thread(
            target=self._run, args=(job,), name=f"capture-{job.id[:8]}", daemon=True
        )
        thread.start()
        return job.id

    def job(self, job_id: str) -> CaptureJob:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"No capture job {job_id!r} (finished jobs are kept for a while only).")
        return job

    def status(self, job_id: str) -> dict[str, Any]:
        return self.job(job_id).status()

    def cancel(self, job_id: str, wait_s: float = 5.0) -> dict[str, Any]:
        """Stops a running job (a finished one stays as it is); its status after ``wait_s``."""
        job = self.job(job_id)
        job.cancel()
        job.done.wait(wait_s)  # the calls are cancelled within ~0.1 s; writing may take longer
        return job.status()

    def _local_for(self, params: CaptureParams) -> LocalProfiler | None:
        if self.local is not None and params.service_addr == self.local.target:
            return self.local
        return None

    def _capture(self, job: CaptureJob) -> CaptureResult:
        params = job.params
        local = self._local_for(params)
        if local is not None:
            return local.capture(job.logdir, params, job.on_progress, cancel=job.cancel_requested)
        return trace(
            params.service_addr,
            job.logdir,
            params.duration_ms,
            worker_list=params.worker_list,
            num_tracing_attempts=params.num_tracing_attempts,
            options=params.options,
            progress=job.on_progress,
            deadline_s=self.deadline_s,
            connect_timeout_s=self.connect_timeout_s,
            cancel=job.cancel_requested,
            limits=self.limits,
        )

    def _run(self, job: CaptureJob) -> None:
        logger.info("Capture %s started: %s", job.id[:8], job.params.service_addr)
        try:
            result = self._capture(job)
        except CaptureCancelled as e:
            logger.info("Capture %s cancelled", job.id[:8])
            job.finish(None, e)
        except ProfileError as e:
            logger.warning("Capture %s failed: %s", job.id[:8], error_text(e))
            job.finish(None, e)
        except Exception:
            # A bug, not a user error: log the traceback, show an opaque message.
            logger.exception("Capture %s failed unexpectedly", job.id[:8])
            job.finish(None, ProfileError(INTERNAL_ERROR_MESSAGE))
        else:
            _call_hook(job)
            job.finish(result, None)

    def _forget_old_jobs(self) -> None:
        finished = [j.id for j in self._jobs.values() if j.done.is_set()]
        for job_id in finished[: max(0, len(self._jobs) - self.max_kept)]:
            del self._jobs[job_id]


def check_params(params: CaptureParams, limits: CaptureLimits) -> None:
    """Raises ``InvalidArgument`` when ``params`` ask for more than ``limits`` allow.

    ``trace`` checks the same again; here it happens before a job is started, so a request
    past a limit is refused as such (HTTP 400) instead of becoming a failed job.
    """
    opt_lib.check_duration(params.duration_ms, limits.max_duration_ms)
    delay_ms = params.options.delay_ms or 0
    opt_lib.check_ms("delay_ms", delay_ms, 0, limits.max_delay_ms, "MAX_DELAY_MS")
    addresses = addr_lib.parse_service_addresses(params.service_addr, limits.max_addresses)
    limits.check_addresses(len(addresses))
    limits.check_addresses(len(addr_lib.parse_worker_list(params.worker_list)), "TPU workers")


def _call_hook(job: CaptureJob) -> None:
    if job.on_success is None:
        return
    try:
        job.on_success()
    except Exception:
        # The profile is written; a failing hook (e.g. a run-list refresh) must not hide that.
        logger.exception("After capture %s: on_success hook failed", job.id[:8])


def success_text(result: CaptureResult) -> str:
    return f"{SUCCESS_MESSAGE} {result.summary()}"


def error_text(error: ProfileError) -> str:
    """``CODE: message`` like upstream, except for our own opaque internal message."""
    if error.message == INTERNAL_ERROR_MESSAGE:
        return error.message
    return f"{error.code}: {error.message}"


def _result_fields(result: CaptureResult) -> dict[str, Any]:
    return {
        "result": success_text(result),
        "session": result.session_id,
        "session_dir": result.shown_dir,
        "hosts_written": list(result.hosts_written),
        "hosts_written_by_server": list(result.hosts_written_by_server),
        "hosts_failed": dict(result.hosts_failed),
        "elapsed_s": round(result.elapsed_s, 3),
    }


DEFAULT_MANAGER = CaptureManager()


def start_capture(logdir: str, params: CaptureParams) -> str:
    """Starts a capture in a worker thread; returns its job id."""
    return DEFAULT_MANAGER.start(logdir, params)


def job_status(job_id: str) -> dict[str, Any]:
    """State (running/done/failed/cancelled), phase, times, and the result or error of a job."""
    return DEFAULT_MANAGER.status(job_id)


def cancel_capture(job_id: str) -> dict[str, Any]:
    """Cancels a job started by ``start_capture``; returns its status."""
    return DEFAULT_MANAGER.cancel(job_id)

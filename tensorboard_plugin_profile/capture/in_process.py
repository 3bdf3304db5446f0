"""Capture the calling process itself with the framework's in-process profiler: no open port.

Live tracing (``web/live.py``) serves the Profile page from inside the training
process, so its "Capture" needs no profiler server. And it should not start one:
JAX's ``jax.profiler.start_server(port)`` and TensorFlow's
``tf.profiler.experimental.server.start(port)`` take only a port and listen on
every interface (``[::]:PORT``) without authentication, so any user of the
machine, or anyone on the network, can pull the process's trace (its HLO, its
function names) and make it trace for as long as they like. Here a capture calls
the programmatic API instead (``jax.profiler.start_trace`` / ``stop_trace``,
``tf.profiler.experimental.start`` / ``stop``) into a private temporary folder
(mode 0700) and moves the host's ``.xplane.pb`` into
``<logdir>/plugins/profile/<session>/`` like any capture (``writer``).

A trace costs the traced process memory while it runs (a tight jitted JAX loop:
~150 MB a second), so a capture is bounded (``TraceLimits``): ``duration_ms`` at
most ``max_duration_ms`` (``InvalidArgument`` above it); the trace is stopped early
once the process has grown by ``max_trace_bytes`` since it started (resident
memory from ``/proc/self/statm``, so on Linux only); and profile files larger than
that in all are not kept (``ProfileTooLarge``). One capture runs at a time; a
cancelled one (``cancel`` set) stops the profiler at once and keeps nothing.

>>> profiler = InProcessProfiler("JAX")
>>> profiler.capture("/tmp/logs", CaptureParams(LIVE_TARGET, duration_ms=2000))  # doctest: +SKIP
CaptureResult(session_id='2026_11_26_22_50_43', ...)
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, Iterator, Optional

from tensorboard_plugin_profile.capture.jobs import CaptureParams
from tensorboard_plugin_profile.capture.options import ProfilerOptions
from tensorboard_plugin_profile.capture.outcomes import CaptureCancelled, CaptureResult
from tensorboard_plugin_profile.capture.writer import (
    SessionWriter,
    allocate_session_id,
    release_session_id,
    repository_root,
)
from tensorboard_plugin_profile.common.errors import (
    InvalidArgument,
    ProfileError,
    ProfileTooLarge,
    Unavailable,
)

logger = logging.getLogger("tensorboard_plugin_profile.capture")

LIVE_TARGET = "this-process"  # the capture dialog's address for "the process serving this page"
JAX, TENSORFLOW = "JAX", "TensorFlow"
DEFAULT_MAX_DURATION_MS = 120_000
DEFAULT_MAX_TRACE_BYTES = 512 << 20
_POLL_S = 0.1
_XSPACE_SUFFIX = ".xplane.pb"

Progress = Callable[[str, dict], None]


@dataclasses.dataclass(frozen=True)
class TraceLimits:
    """How long one capture may trace, and how much it may grow the process by."""

    max_duration_ms: int = DEFAULT_MAX_DURATION_MS
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES

    def __post_init__(self) -> None:
        for name in ("max_duration_ms", "max_trace_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidArgument(f"{name} must be a positive integer, got {value!r}.")


def loaded_framework() -> str:
    """JAX or TensorFlow: the one this process imported (JAX first), else the one installed."""
    for module, name in (("jax", JAX), ("tensorflow", TENSORFLOW)):
        if module in sys.modules:
            return name
    for module, name in (("jax", JAX), ("tensorflow", TENSORFLOW)):
        try:
            __import__(module)
        except ImportError:
            continue
        return name
    raise ProfileError(
        "Live tracing needs JAX or TensorFlow in this process: neither can be imported."
    )


class InProcessProfiler:
    """Captures of this process for ``CaptureManager`` (the ``LIVE_TARGET`` address)."""

    target = LIVE_TARGET

    def __init__(self, framework: str, limits: Optional[TraceLimits] = None):
        self.framework = framework
        self.limits = limits or TraceLimits()
        self._busy = threading.Lock()

    def check(self, params: CaptureParams) -> None:
        """Raises ``InvalidArgument`` for a duration or delay above ``max_duration_ms``."""
        limit = self.limits.max_duration_ms
        for what, value in (("duration", params.duration_ms), ("delay", params.options.delay_ms)):
            if (value or 0) > limit:
                raise InvalidArgument(
                    f"A capture of this process may last at most {limit} ms ({limit / 1000:g} s) "
                    f"and wait as long; the {what} asked is {value} ms "
                    "(live.serve(max_duration_ms=...) sets the limit)."
                )

    def capture(
        self,
        logdir: str,
        params: CaptureParams,
        progress: Optional[Progress] = None,
        cancel: Optional[threading.Event] = None,
    ) -> CaptureResult:
        """Traces this process for ``params.duration_ms`` and saves the session into ``logdir``."""
        self.check(params)
        if not self._busy.acquire(blocking=False):
            raise Unavailable("A capture of this process is already running; wait for it to end.")
        try:
            report = progress or (lambda phase, info: None)
            return self._capture(logdir, params, report, cancel or threading.Event())
        finally:
            self._busy.release()

    def _capture(
        self, logdir: str, params: CaptureParams, report: Progress, cancel: threading.Event
    ) -> CaptureResult:
        started = time.monotonic()
        delay_s = (params.options.delay_ms or 0) / 1000
        report("waiting", {"end_time": time.time() + delay_s + params.duration_ms / 1000})
        if cancel.wait(delay_s):
            raise CaptureCancelled("The capture was cancelled before it started.")
        with tempfile.TemporaryDirectory(prefix="tbprof-live-") as scratch:
            _start(self.framework, scratch, params.options)
            try:
                report("tracing", {"end_time": time.time() + params.duration_ms / 1000})
                note = _trace_within(params.duration_ms, self.limits.max_trace_bytes, cancel)
            finally:
                report("collecting", {})
                _stop(self.framework)
            if cancel.is_set():
                raise CaptureCancelled("The capture was cancelled; nothing was written.")
            files = self._written_files(scratch)
            report("writing", {"files": len(files)})
            return _save(logdir, files, note, time.monotonic() - started)

    @contextlib.contextmanager
    def trace_block(
        self, logdir: str, options: Optional[ProfilerOptions] = None
    ) -> Iterator[BlockTrace]:
        """Traces this process while the ``with`` block runs, then saves the session into
        ``logdir`` (``BlockTrace.result``). Bounded as ``capture``: a watchdog stops the
        trace after ``max_duration_ms`` or once the process grew by ``max_trace_bytes``
        (the result's notes say so). A block that raises saves nothing."""
        if not self._busy.acquire(blocking=False):
            raise Unavailable("A capture of this process is already running; wait for it to end.")
        try:
            trace = BlockTrace()
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="tbprof-live-") as scratch:
                _start(self.framework, scratch, options or ProfilerOptions())
                watchdog = _Watchdog(self.framework, self.limits)
                try:
                    yield trace
                finally:
                    note = watchdog.finish()
                files = self._written_files(scratch)
                trace.result = _save(logdir, files, note, time.monotonic() - started)
        finally:
            self._busy.release()

    def _written_files(self, scratch: str) -> list:
        pattern = os.path.join(scratch, "plugins", "profile", "*", "*" + _XSPACE_SUFFIX)
        files = sorted(glob.glob(pattern))
        if not files:
            raise Unavailable(f"{self.framework}'s profiler wrote no profile for this capture.")
        size = sum(os.path.getsize(path) for path in files)
        limit = self.limits.max_trace_bytes
        if size > limit:
            raise ProfileTooLarge(
                f"The trace of this process is {size / 1e6:.0f} MB, above the limit of "
                f"{limit / 1e6:.0f} MB (live.serve(max_trace_bytes=...)); nothing was saved. "
                "Capture for less time or with lower tracer levels."
            )
        return files


@dataclasses.dataclass
class BlockTrace:
    """What ``trace_block`` saved, once the block has ended."""

    result: Optional[CaptureResult] = None

    @property
    def session_dir(self) -> Optional[str]:
        return self.result.session_dir if self.result else None


class _Watchdog:
    """Stops a block's trace from a thread of its own once it passes the limits."""

    def __init__(self, framework: str, limits: TraceLimits):
        self.framework = framework
        self.limits = limits
        self.note = ""
        self._done = threading.Event()
        self._stop_lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._watch, name="tbprof-trace-limits", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        note = _trace_within(self.limits.max_duration_ms, self.limits.max_trace_bytes, self._done)
        if self._done.is_set():
            return
        self.note = note or (
            f"Stopped after {self.limits.max_duration_ms / 1000:g} s, the longest a trace of "
            "this process may last (max_duration_ms); the rest of the block was not traced."
        )
        self._stop_once()

    def _stop_once(self) -> None:
        with self._stop_lock:
            if not self._stopped:
                self._stopped = True
                _stop(self.framework)

    def finish(self) -> str:
        """Ends the watch and stops the trace unless the watchdog did; its note, if any."""
        self._done.set()
        self._thread.join()
        self._stop_once()
        return self.note


def step_annotation(framework: str, step_num: int) -> Any:
    """The framework's step marker (``train`` step ``step_num``), so a trace finds steps."""
    if framework == JAX:
        import jax.profiler

        return jax.profiler.StepTraceAnnotation("train", step_num=step_num)
    import tensorflow as tf

    return tf.profiler.experimental.Trace("train", step_num=step_num, _r=1)


def _trace_within(duration_ms: int, max_growth: int, cancel: threading.Event) -> str:
    """Waits ``duration_ms``; less once the process grew by ``max_growth`` (the note says so)
    or ``cancel`` is set."""
    start_rss = _resident_bytes()
    start = time.monotonic()
    end = start + duration_ms / 1000
    while (left := end - time.monotonic()) > 0:
        if cancel.wait(min(_POLL_S, left)):
            return ""
        rss = _resident_bytes()
        if start_rss is None or rss is None or rss - start_rss <= max_growth:
            continue
        return (
            f"Stopped after {time.monotonic() - start:.1f} s of the {duration_ms / 1000:g} s "
            f"asked: the process grew by {(rss - start_rss) / 1e6:.0f} MB while tracing "
            f"(limit {max_growth / 1e6:.0f} MB, live.serve(max_trace_bytes=...))."
        )
    return ""


def _resident_bytes() -> Optional[int]:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux: the duration is the only bound


def _start(framework: str, folder: str, options: ProfilerOptions) -> None:
    try:
        if framework == JAX:
            _start_jax(folder, options)
        else:
            _start_tensorflow(folder, options)
    except Exception as e:  # RuntimeError (JAX), AlreadyExistsError (TF), ...
        logger.warning("Live capture: %s's profiler did not start: %s", framework, e)
        raise Unavailable(
            f"{framework}'s profiler did not start: is another trace of this process running "
            "(jax.profiler.trace, tf.profiler.experimental.start, a profiler server's "
            "capture)? The training script's log has the details."
        ) from None


def _start_jax(folder: str, options: ProfilerOptions) -> None:
    import jax.profiler

    options_type = getattr(jax.profiler, "ProfileOptions", None)  # JAX >= 0.4.32
    if options_type is None:
        jax.profiler.start_trace(folder)
        return
    jax_options = options_type()
    jax_options.host_tracer_level = options.host_tracer_level
    jax_options.python_tracer_level = options.python_tracer_level
    jax.profiler.start_trace(folder, profiler_options=jax_options)


def _start_tensorflow(folder: str, options: ProfilerOptions) -> None:
    import tensorflow as tf

    tf_options = tf.profiler.experimental.ProfilerOptions(
        host_tracer_level=options.host_tracer_level,
        python_tracer_level=options.python_tracer_level,
        device_tracer_level=options.device_tracer_level,
        delay_ms=0,  # the delay was waited out before starting
    )
    tf.profiler.experimental.start(folder, options=tf_options)


def _stop(framework: str) -> None:
    try:
        if framework == JAX:
            import jax.profiler

            jax.profiler.stop_trace()
        else:
            import tensorflow as tf

            tf.profiler.experimental.stop()
    except Exception as e:  # the frameworks raise their own types
        logger.warning("Live capture: stopping %s's profiler failed: %s", framework, e)
        raise Unavailable(
            f"{framework}'s profiler failed to stop and save the trace; the training "
            "script's log has the details."
        ) from None


def _save(logdir: str, files: list, note: str, elapsed_s: float) -> CaptureResult:
    session_id = allocate_session_id(repository_root(logdir))
    writer = SessionWriter(logdir, session_id)
    try:
        for path in files:
            writer.move_in(os.path.basename(path), path)
        session_dir = writer.commit()
    except BaseException:
        writer.discard()  # a failed capture leaves nothing in the logdir
        raise
    finally:
        release_session_id(session_id)
    hosts = tuple(name[: -len(_XSPACE_SUFFIX)] for name in writer.files)
    result = CaptureResult(
        session_id=writer.session_id,
        session_dir=session_dir,
        hosts_written=hosts,
        hosts_written_by_server=(),
        hosts_failed={},
        files=tuple(writer.files),
        attempts=1,
        elapsed_s=elapsed_s,
        logdir=logdir,
        notes=(note,) if note else (),
    )
    logger.info("Live capture done in %.1f s. %s", elapsed_s, result.summary())
    return result

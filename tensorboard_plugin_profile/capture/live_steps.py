"""The steps a live process has run, and "capture the next one" (the live page's step list).

A training loop marks its steps (``with server.step():``, ``web/live.py``); each step is
timed and kept in a bounded list (the last ``max_steps``: memory stays constant however
long the loop runs), and runs under the framework's step marker so a trace of it finds
the step. Untraced, a step costs two clock reads, a lock and the marker (a no-op while
nothing traces).

The page lists the steps (``GET live_steps``) and asks for the next step to be captured
(``POST live_capture_step``): the next step that begins runs inside
``InProcessProfiler.trace_block`` and is saved into the logdir as a session of its own,
whose name the list then shows beside the step. The step is traced in the training
thread, where it runs; nothing is traced while no capture is asked for.

Usage::

    steps = StepLog(profiler, logdir)
    with steps.step():        # in the training loop
        train_step()
    steps.request_capture()   # from the page's route: the next step is traced
    steps.snapshot()          # {"steps": [...], "capture": {...}, "total": n}
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from typing import Any, Iterator, Optional

from ..common.errors import InvalidArgument, ProfileError
from .in_process import InProcessProfiler, step_annotation

logger = logging.getLogger("tensorboard_plugin_profile.capture")

DEFAULT_MAX_STEPS = 1000
IDLE, ARMED, TRACING, DONE, FAILED = "idle", "armed", "tracing", "done", "failed"


class StepLog:
    """Steps of this process, newest last, and the state of a step capture."""

    def __init__(
        self, profiler: InProcessProfiler, logdir: str, max_steps: int = DEFAULT_MAX_STEPS
    ):
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps <= 0:
            raise InvalidArgument(f"max_steps must be a positive integer, got {max_steps!r}.")
        self.profiler = profiler
        self.logdir = logdir
        self._steps: collections.deque = collections.deque(maxlen=max_steps)
        self._lock = threading.Lock()
        self._total = 0
        self._next_num = 0
        self._capture: dict[str, Any] = {"state": IDLE}

    @contextlib.contextmanager
    def step(self, step_num: Optional[int] = None) -> Iterator[int]:
        """Times one step (numbered ``step_num``, else one more than the last); traces it if
        the page asked for a capture. Yields the step's number. A capture that fails is
        reported on the page and in the log; the step itself always runs."""
        number, traced = self._begin(step_num)
        tracing = self._start_trace(number) if traced else None
        start_ns = time.time_ns()
        ran = False
        try:
            with step_annotation(self.profiler.framework, number):
                yield number
            ran = True
        finally:
            end_ns = time.time_ns()
            session = self._end_trace(number, tracing, ran) if tracing else None
            self._record(number, start_ns, end_ns, session)

    def _begin(self, step_num: Optional[int]) -> tuple:
        with self._lock:
            number = self._next_num if step_num is None else int(step_num)
            self._next_num = number + 1
            traced = self._capture["state"] == ARMED
            if traced:
                self._capture = {"state": TRACING, "step": number}
            return number, traced

    def _start_trace(self, number: int) -> Optional[tuple]:
        block = self.profiler.trace_block(self.logdir)
        try:
            return block, block.__enter__()
        except ProfileError as e:
            self._finish_capture(number, error=e.message)
            return None

    def _end_trace(self, number: int, tracing: tuple, ran: bool) -> Optional[str]:
        block, trace = tracing
        try:
            if ran:
                block.__exit__(None, None, None)
            else:  # the step raised: stop tracing, save nothing
                failed = RuntimeError("the step raised")
                block.__exit__(RuntimeError, failed, None)
                self._finish_capture(number, error="The step raised an exception; nothing saved.")
                return None
        except ProfileError as e:
            self._finish_capture(number, error=e.message)
            return None
        session = trace.result.session_id if trace.result else None
        self._finish_capture(number, session=session)
        return session

    def _finish_capture(self, number: int, session: Optional[str] = None, error: str = "") -> None:
        with self._lock:
            if error:
                logger.warning("Capture of step %d failed: %s", number, error)
                self._capture = {"state": FAILED, "step": number, "message": error}
            else:
                self._capture = {"state": DONE, "step": number, "session": session}

    def _record(self, number: int, start_ns: int, end_ns: int, session: Optional[str]) -> None:
        with self._lock:
            self._steps.append((number, start_ns, end_ns - start_ns, session))
            self._total += 1

    def request_capture(self) -> dict:
        """Asks for the next step to be traced; the state after asking."""
        with self._lock:
            if self._capture["state"] in (ARMED, TRACING):
                return dict(self._capture)
            self._capture = {"state": ARMED}
            return dict(self._capture)

    def snapshot(self) -> dict:
        """The steps kept (oldest first), how many ran in all, and the capture's state."""
        with self._lock:
            steps = [
                {
                    "step": number,
                    "start_time_ms": start_ns / 1e6,
                    "duration_ms": duration_ns / 1e6,
                    "session": session,
                }
                for number, start_ns, duration_ns, session in self._steps
            ]
            return {"steps": steps, "total": self._total, "capture": dict(self._capture)}

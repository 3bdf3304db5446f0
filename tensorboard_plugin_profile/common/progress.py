"""What the service is working on now, for the page's progress display.

Conversions register a task and move it through stages ("decoding vm (1/2)",
"converting"), with details from the work's checkpoints ("decoding vm (1/2): 35 of
120 MB read", ``common/work.py``); the ``progress`` route lists the tasks in flight so
the page can show more than a spinner while a large profile is decoded.

Usage::

    tracker = ProgressTracker()
    with tracker.task(run, tool) as task:
        task.stage("decoding vm (1/2)")
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from typing import Iterator


class Task:
    def __init__(self, tracker: ProgressTracker, task_id: int, run: str, tool: str):
        self._tracker = tracker
        self.id = task_id
        self.run = run
        self.tool = tool
        self.started = time.time()
        self.current = "starting"
        self.details = ""

    def stage(self, text: str) -> None:
        with self._tracker._lock:
            self.current = text
            self.details = ""

    def detail(self, text: str) -> None:
        """How far the current stage is (the decoder's checkpoints: "35 of 120 MB read")."""
        with self._tracker._lock:
            self.details = text

    def as_dict(self) -> dict:
        stage = f"{self.current}: {self.details}" if self.details else self.current
        return {
            "run": self.run,
            "tool": self.tool,
            "stage": stage,
            "elapsed_s": round(time.time() - self.started, 3),
        }


class ProgressTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict = {}
        self._ids = itertools.count(1)

    @contextlib.contextmanager
    def task(self, run: str, tool: str) -> Iterator[Task]:
        task = Task(self, next(self._ids), run, tool)
        with self._lock:
            self._tasks[task.id] = task
        try:
            yield task
        finally:
            with self._lock:
                del self._tasks[task.id]

    def snapshot(self) -> list:
        with self._lock:
            return [t.as_dict() for t in sorted(self._tasks.values(), key=lambda t: t.id)]

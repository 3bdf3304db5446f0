"""Independent analyses of one request run side by side, joined in a fixed order.

A cold overview computes several analyses of the same host that share nothing but their
input (the op tables, the step database, whether XLA ops exist). Most of their time is
numpy and compiled passes, which release the GIL, so on a small thread pool they use the
cores that one Python thread leaves idle. Each analysis computes alone and returns its
own value; ``run_all`` gives the values in the order of the tasks, so the answer is the
same bytes for any number of threads. Memoised pieces two tasks both ask for are computed
once (``common/memo.py`` makes the second caller wait for the first).

Errors are those of a sequential run: the first task, in task order, that fails raises its
own exception; tasks after it are not started once it is known (a task already running
finishes). Helpers run in a copy of the caller's context, so numpy's buffer reuse
(``kernels/blockpool.reusing``) holds in them as in the caller.

``TBPROF_ANALYSIS_THREADS=N`` sets the threads (1: run the tasks one after another in the
caller); else one per core this process may use, at most ``MAX_THREADS``.

Usage::

    stats, steps = run_all([lambda: op_metrics(space), lambda: step_database(space)])
"""

from __future__ import annotations

import contextvars
import os
import threading
from typing import Any, Callable, Optional, Sequence

from ..kernels import compiled

ANALYSIS_THREADS_ENV = compiled.ANALYSIS_THREADS_ENV
MAX_THREADS = 4


def analysis_threads(threads: Optional[int] = None) -> int:
    """``threads`` when given, else ``TBPROF_ANALYSIS_THREADS``, else one per core."""
    if threads is None:
        value = os.environ.get(ANALYSIS_THREADS_ENV, "")
        threads = int(value) if value.isdigit() and int(value) > 0 else compiled.cores()
    return max(1, min(int(threads), MAX_THREADS))


def run_all(tasks: Sequence[Callable[[], Any]], threads: Optional[int] = None) -> list:
    """Each task's value, in task order; the first failing task (in order) raises."""
    count = min(analysis_threads(threads), len(tasks))
    if count <= 1:
        return [task() for task in tasks]
    results: list = [None] * len(tasks)
    errors: list = [None] * len(tasks)
    state = {"next": 0, "failed": len(tasks)}
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                i = state["next"]
                if i >= min(len(tasks), state["failed"]):
                    return
                state["next"] = i + 1
            try:
                results[i] = tasks[i]()
            except BaseException as error:  # re-raised by the caller, in task order
                errors[i] = error
                with lock:
                    state["failed"] = min(state["failed"], i)

    helpers = [
        threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True)
        for _ in range(count - 1)
    ]
    for helper in helpers:
        helper.start()
    try:
        work()
    finally:
        for helper in helpers:
            helper.join()
    for error in errors:
        if error is not None:
            raise error
    return results

"""Work on several hosts at once, in worker processes, with nothing large crossing a pipe.

Two kinds of work run here, both one host per task:

- ``decode_to_disk``: a worker decodes one profile and writes the decoded Space as a disk
  cache entry; the parent then reads that entry.
- ``map``: any module-level function over a list of items (``pod/``: one host's summary
  each), at most ``workers`` at a time, so at most that many hosts' transient memory
  exists at once; the small results come back through the pipe.

Workers are started with ``spawn`` (forking a threaded server is unsafe) and die with the
server: on Linux each asks the kernel for SIGTERM when its parent goes away
(``PR_SET_PDEATHSIG``), so even a server killed with SIGKILL leaves no worker behind. When
the pool cannot start or breaks, ``decode_to_disk`` returns False and ``map`` raises
``PoolUnavailable``: callers then work in-process. A typed error raised in a worker (a
corrupt file) comes back as the same error.

Usage::

    pool = HostPool(workers=2)
    summaries = pool.map(summarize_file, host_files, on_done=lambda done: ...)
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import logging
import multiprocessing
import os
import signal
import threading
from typing import Any, Callable, Optional, Sequence

from ..common import errors

logger = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1
# Worker processes that died are replaced this many times before the pool gives up.
MAX_RESTARTS = 3


class PoolUnavailable(Exception):
    """The worker processes could not start or died: do the work in-process."""


def _worker_decode(host_file: Any, root: str, max_bytes: int, key: Any) -> bool:
    """In the worker: decode and store; False when the cache could not be written."""
    from ..kernels.blockpool import reusing
    from .disk_cache import DiskCache
    from .profile_reader import read_host_profile

    with reusing():
        space = read_host_profile(host_file)  # checked open
    return DiskCache(root, max_bytes).store_value("space", key, space)


def run_in_worker(fn: Callable, item: Any) -> tuple:
    """Runs ``fn(item)``; a typed error travels back as (class name, message)."""
    try:
        return ("ok", fn(item))
    except errors.ProfileError as e:
        return ("error", type(e).__name__, e.message)


def raise_typed(name: str, message: str) -> None:
    """Raises the typed error a worker reported (a plain ProfileError if unknown)."""
    error = getattr(errors, name, None)
    if isinstance(error, type) and issubclass(error, errors.ProfileError):
        raise error(message)
    raise errors.ProfileError(message)


def die_with_parent() -> None:
    """Worker initializer: SIGTERM when the parent exits (Linux), and no Ctrl-C of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server handles Ctrl-C and stops us
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux: the server's shutdown stops the workers
    if os.getppid() != parent:  # the parent died before the request reached the kernel
        os._exit(1)


class HostPool:
    def __init__(self, workers: Optional[int] = None):
        self.workers = workers or max(1, min(os.cpu_count() or 1, 8))
        self._lock = threading.Lock()
        self._executor: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._failures = 0

    def decode_to_disk(self, host_file: Any, root: str, max_bytes: int, key: Any) -> bool:
        """Decodes ``host_file`` (a ``logdir.HostFile``) in a worker into the disk cache.

        False if that was not possible. Raises the worker's typed error.
        """
        try:
            (stored,) = self.map(_decode_args, [(host_file, root, max_bytes, key)])
        except PoolUnavailable:
            return False
        return bool(stored)

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        on_done: Optional[Callable[[int], None]] = None,
        limit: Optional[int] = None,
    ) -> list:
        """``[fn(item) for item in items]`` in the workers, at most ``limit`` (default:
        ``workers``) at a time.

        ``fn`` must be a module-level function (it is pickled by name). ``on_done(n)`` is
        called as the n-th result arrives. Raises the first typed error of a task, or
        ``PoolUnavailable`` when the workers cannot run the tasks.
        """
        executor = self._get()
        if executor is None:
            raise PoolUnavailable("the worker processes could not be started")
        limit = max(1, min(limit or self.workers, self.workers))
        results: list = [None] * len(items)
        pending = list(enumerate(items))[::-1]
        running: dict = {}
        done = 0
        try:
            while pending or running:
                while pending and len(running) < limit:  # back-pressure
                    index, item = pending.pop()
                    running[executor.submit(run_in_worker, fn, item)] = index
                finished, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in finished:
                    results[running.pop(future)] = self._outcome(future)
                    done += 1
                    if on_done is not None:
                        on_done(done)
        except (OSError, RuntimeError, concurrent.futures.process.BrokenProcessPool) as e:
            logger.warning("host worker processes failed (%s); working in-process", e)
            self._mark_broken()
            raise PoolUnavailable(str(e)) from e
        finally:
            for future in running:
                future.cancel()
        return results

    @staticmethod
    def _outcome(future: concurrent.futures.Future) -> Any:
        outcome = future.result()
        if outcome[0] == "error":
            raise_typed(outcome[1], outcome[2])
        return outcome[1]

    def _get(self) -> Optional[concurrent.futures.ProcessPoolExecutor]:
        with self._lock:
            if self._executor is None and self._failures < MAX_RESTARTS:
                try:
                    self._executor = concurrent.futures.ProcessPoolExecutor(
                        self.workers, mp_context=_context(), initializer=die_with_parent
                    )
                except (OSError, ValueError, NotImplementedError, ImportError) as e:
                    logger.warning("cannot start the host worker processes (%s)", e)
                    self._failures = MAX_RESTARTS
            return self._executor

    @property
    def usable(self) -> bool:
        """False once the workers could not start, or died too often: work in-process."""
        return self._failures < MAX_RESTARTS

    def _mark_broken(self) -> None:
        """Drops the broken workers; the next call starts new ones (a few times at most)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
            self._failures += 1

    def shutdown(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def _context() -> Any:
    return multiprocessing.get_context("spawn")


def _decode_args(args: tuple) -> bool:
    return _worker_decode(*args)

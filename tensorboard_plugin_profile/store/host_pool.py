"""Work on several hosts at once, in worker processes, with nothing large crossing a pipe.

Two kinds of work run here, both one host per task:

- ``decode_to_disk``: a worker decodes one profile and writes the decoded Space as a disk
  cache entry; the parent then reads that entry.
- ``map``: any module-level function over a list of items (``pod/``: one host's summary
  each), at most ``workers`` at a time, so at most that many hosts' transient memory
  exists at once; the small results come back through the pipe. The tasks running side by
  side share the cores: each runs its decoder, passes and analyses on
  ``cores // tasks at once`` threads (``thread_share``), unless the user set those counts.

Workers are started with ``spawn`` (forking a threaded server is unsafe) and die with the
server: each watches its parent process and exits when it is gone, so even a server killed
with SIGKILL leaves no worker behind; they outlive the request that started them. When
the pool cannot start or breaks, ``decode_to_disk`` returns False and ``map`` raises
``PoolUnavailable``: callers then work in-process. A typed error raised in a worker (a
corrupt file) comes back as the same error.

A spawned worker first re-imports the program's main module: a user's script without an
``if __name__ == "__main__":`` guard would run again in every worker (and a script read
from stdin cannot be re-imported at all). Whether a script has that guard cannot be known,
so ``pool_for`` starts workers only when that is safe or was asked for (``spawn_is_safe``):
under ``tbprof`` and TensorBoard, in a notebook or the interactive prompt (nothing to
re-run), or with an explicit worker count (``--workers``, ``TBPROF_WORKERS``,
``CacheConfig(workers=N)``). Elsewhere per-host work runs in this process.

Usage::

    pool = HostPool(workers=2)
    summaries = pool.map(summarize_file, host_files, on_done=lambda done: ...)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, Optional, Sequence

from ..common import errors
from ..kernels import compiled

logger = logging.getLogger(__name__)
# How often a worker checks that the server still runs (see ``die_with_parent``).
ORPHAN_POLL_S = 0.5
# Worker processes that died are replaced this many times before the pool gives up.
MAX_RESTARTS = 3


# Programs whose main module a worker may re-import: ours (``tbprof``, ``python -m
# tensorboard_plugin_profile``) and TensorBoard's; their entry points guard ``main()``.
SAFE_MAIN_PACKAGES = ("tensorboard_plugin_profile", "tensorboard")
SAFE_MAIN_SCRIPTS = ("tbprof", "tensorboard")


def spawn_is_safe() -> bool:
    """Whether a spawned worker would re-run nothing of the user's program (module doc)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if name:  # ``python -m NAME``: the worker imports NAME again
        return name.split(".")[0] in SAFE_MAIN_PACKAGES
    path = getattr(main, "__file__", None)
    if path is None:  # notebook, ``python -c``, the prompt: spawn re-imports nothing
        return True
    return os.path.basename(str(path)) in SAFE_MAIN_SCRIPTS  # else a script, or "<stdin>"


def pool_for(workers: Optional[int]) -> Optional[HostPool]:
    """A pool of ``workers`` processes (None: as many as cores, when ``spawn_is_safe``);
    None to work in-process."""
    if workers is None and not spawn_is_safe():
        logger.info(
            "per-host work runs in this process: worker processes would re-import %s. "
            'To use them, guard the script with `if __name__ == "__main__":` and set '
            "TBPROF_WORKERS=N (or CacheConfig(workers=N)).",
            getattr(sys.modules.get("__main__"), "__file__", "the main module"),
        )
        return None
    return HostPool(workers)


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


def run_in_worker(fn: Callable, item: Any, threads: Optional[int] = None) -> tuple:
    """Runs ``fn(item)``, its compiled passes, decoder and analyses on at most ``threads``
    threads when given (``threads_at_most``); a typed error travels back as (class name,
    message)."""
    try:
        if threads is None:
            return ("ok", fn(item))
        with threads_at_most(threads):
            return ("ok", fn(item))
    except errors.ProfileError as e:
        return ("error", type(e).__name__, e.message)


def thread_share(tasks_at_once: int) -> int:
    """The threads each of ``tasks_at_once`` tasks running side by side in the workers may
    use: this machine's cores shared out, at least one each. Two workers on two cores, each
    starting a thread per core in its decoder, passes and analyses, would run four busy
    threads on two cores, each pass waiting at its end for a part whose thread got no core."""
    return max(1, compiled.cores() // max(1, tasks_at_once))


@contextlib.contextmanager
def threads_at_most(threads: int) -> Iterator[None]:
    """Sets every thread-count setting (``compiled.THREAD_ENVS``) the user did not set to
    ``threads`` for the duration; a worker runs one task at a time, so nothing else reads
    them meanwhile. A setting in the environment the worker was started with is the user's
    and wins."""
    mine = [name for name in compiled.THREAD_ENVS if name not in os.environ]
    for name in mine:
        os.environ[name] = str(threads)
    try:
        yield
    finally:
        for name in mine:
            os.environ.pop(name, None)


def raise_typed(name: str, message: str) -> None:
    """Raises the typed error a worker reported (a plain ProfileError if unknown)."""
    error = getattr(errors, name, None)
    if isinstance(error, type) and issubclass(error, errors.ProfileError):
        raise error(message)
    raise errors.ProfileError(message)


def die_with_parent() -> None:
    """Worker initializer: exit when the server goes away, and no Ctrl-C of its own.

    A watchdog thread notices within ``ORPHAN_POLL_S`` that the worker was re-parented
    (the server exited, SIGKILL included) and ends the process. Not ``PR_SET_PDEATHSIG``:
    Linux sends that signal when the *thread* that started the worker ends, and workers are
    started from request threads, so every worker died with the request that started it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server handles Ctrl-C and stops us
    parent = os.getppid()
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_S)
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
        threads = thread_share(min(limit, len(items)))
        results: list = [None] * len(items)
        pending = list(enumerate(items))[::-1]
        running: dict = {}
        done = 0
        try:
            while pending or running:
                while pending and len(running) < limit:  # back-pressure
                    index, item = pending.pop()
                    running[executor.submit(run_in_worker, fn, item, threads)] = index
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

    def warm(self, module: str) -> None:
        """Starts the workers now and has each import ``module`` (the one whose function
        ``map`` will run), without waiting: a multi-host request that follows finds them
        ready instead of paying about a second of imports. Failures are left to ``map``."""
        if self._executor is not None:
            return
        executor = self._get()
        if executor is None:
            return
        try:
            for _ in range(self.workers):
                executor.submit(_import_module, module)
        except RuntimeError:  # shut down meanwhile
            return

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


def _import_module(name: str) -> None:
    import importlib

    importlib.import_module(name)


def _decode_args(args: tuple) -> bool:
    return _worker_decode(*args)

"""Decoding several hosts at once, in worker processes that hand over through the disk cache.

A worker decodes one ``.xplane.pb`` and writes the decoded Space as a disk
cache entry; the parent then loads that entry (memory-mapped), so nothing
large crosses a pipe and each decode's transient memory lives and dies in its
worker. The pool starts on first use with the ``forkserver`` method where it
exists (forking a threaded server is unsafe), else ``spawn``; when it cannot
start or breaks, callers decode in-process instead (``decode_to_disk`` returns
False).

Usage::

    pool = HostPool(workers=2)
    if pool.decode_to_disk(host_file, disk.root, disk.max_bytes, key):
        space = disk.load_value("space", key)
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
import threading
from typing import Any, Optional

from ..common import errors

logger = logging.getLogger(__name__)


def _worker_decode(host_file: Any, root: str, max_bytes: int, key: Any) -> Optional[tuple]:
    """In the worker: decode and store; a typed error comes back as (class name, message)."""
    from ..kernels.blockpool import reusing
    from .disk_cache import DiskCache
    from .profile_reader import read_host_profile

    try:
        with reusing():
            space = read_host_profile(host_file)  # checked open
    except errors.ProfileError as e:
        return (type(e).__name__, e.message)
    if not DiskCache(root, max_bytes).store_value("space", key, space):
        return ("", "")
    return None


class HostPool:
    def __init__(self, workers: Optional[int] = None):
        self.workers = workers or max(1, min(os.cpu_count() or 1, 8))
        self._lock = threading.Lock()
        self._executor: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._broken = False

    def decode_to_disk(self, host_file: Any, root: str, max_bytes: int, key: Any) -> bool:
        """Decodes ``host_file`` (a ``logdir.HostFile``) in a worker into the disk cache.

        False if that was not possible.

        Raises the worker's typed error (a corrupt file is corrupt in any process).
        """
        executor = self._get()
        if executor is None:
            return False
        try:
            outcome = executor.submit(_worker_decode, host_file, root, max_bytes, key).result()
        except (OSError, RuntimeError, concurrent.futures.process.BrokenProcessPool) as e:
            logger.warning("host decoding pool failed (%s); decoding in-process", e)
            self._mark_broken()
            return False
        if outcome is None:
            return True
        name, message = outcome
        error = getattr(errors, name, None) if name else None
        if isinstance(error, type) and issubclass(error, errors.ProfileError):
            raise error(message)
        return False  # the worker could not write the cache: decode here

    def _get(self) -> Optional[concurrent.futures.ProcessPoolExecutor]:
        with self._lock:
            if self._executor is None and not self._broken:
                try:
                    self._executor = concurrent.futures.ProcessPoolExecutor(
                        self.workers, mp_context=_context()
                    )
                except (OSError, ValueError, NotImplementedError, ImportError) as e:
                    logger.warning("cannot start the host decoding pool (%s)", e)
                    self._broken = True
            return self._executor

    def _mark_broken(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
            self._broken = True

    def shutdown(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            self._executor = None


def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__, "tensorboard_plugin_profile.xspace"])
        return context
    return multiprocessing.get_context("spawn")

"""Each host's summary, from the cheapest place that has it: memory, disk, or a worker.

``HostMap.summaries(host_files)`` returns one ``HostSummary`` per host file. A summary
already in the memory cache or the disk cache is used as it is (keyed like the decoded
Space: the file's identity and this package's code), one whose Space is in memory is read
from it, and the rest are computed where per-host work runs:

- on the Dask cluster when the server was given one (``--dask_scheduler``),
- else in the local worker processes, at most ``--workers`` hosts at a time,
- else (one host, or no workers) in this process, one host at a time.

A cluster that fails falls back to the local pool, and a pool that fails to this process,
with a log line; a request never gets half an answer. New summaries are kept in memory
(charged to the byte budget) and written to the disk cache, so adding a host to a session
recomputes that host only.

Usage::

    hosts = HostMap(spaces, cache, disk, pool)
    summaries = hosts.summaries(session.host_files, stage=print)
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Callable, Optional

from ..analysis.host_summary import Detailed, HostDetails, HostSummary, details, summarize
from ..common.memsize import deep_size
from ..kernels import blockpool
from ..store.cache import ByteBudgetCache
from ..store.disk_cache import DiskCache, code_fingerprint
from ..store.host_pool import HostPool, PoolUnavailable
from ..store.profile_reader import read_host_profile
from ..store.space_store import SpaceStore
from ..tools import listed_tools

logger = logging.getLogger(__name__)


def summarize_space(space: Any) -> HostSummary:
    """One decoded host's summary, with the tools a session starting with it lists."""
    return summarize(space, listed_tools(space))


def summarize_file(host_file: Any) -> HostSummary:
    """In a worker (or a Dask task): read one listed host file and summarise it. The tables
    are dropped after, so they skip what only the trace viewer reads (flows: 40% of the
    preprocessing of a large JAX profile)."""
    with blockpool.reusing():
        return summarize_space(read_host_profile(host_file, with_flows=False))


def detail_file(host_file: Any) -> HostDetails:
    """In a worker (or a Dask task): one listed host file's details (``HostDetails``)."""
    with blockpool.reusing():
        return details(read_host_profile(host_file, with_flows=False))


@dataclasses.dataclass(frozen=True)
class _Kind:
    """What is mapped over the hosts: its cache and disk name, and how to make it from a
    host file (in a worker; a module-level function, pickled by name) or from a Space."""

    name: str
    of_file: Callable[[Any], Any]
    of_space: Callable[[Any], Any]


SUMMARY = _Kind("summary", summarize_file, summarize_space)
DETAILS = _Kind("details", detail_file, details)


class HostMap:
    def __init__(
        self,
        spaces: SpaceStore,
        cache: ByteBudgetCache,
        disk: Optional[DiskCache],
        pool: Optional[HostPool],
        cluster: Any = None,
    ):
        self.spaces = spaces
        self.cache = cache
        self.disk = disk
        self.pool = pool
        self.cluster = cluster  # a DaskPool, or None
        self.computed = 0  # summaries computed by this server (tests and benchmarks read it)
        self.computed_details = 0  # and details

    @staticmethod
    def key(host_file: Any, kind: _Kind = SUMMARY) -> tuple:
        return (kind.name, code_fingerprint()) + host_file.key

    def warm(self) -> None:
        """Starts the local workers ahead of a multi-host request (see ``HostPool.warm``)."""
        if self.pool is not None and self.cluster is None:
            self.pool.warm(__name__)

    def summaries(self, host_files: list, stage: Callable[[str], None] = lambda _: None) -> list:
        """One summary per host file, in order (see the module docstring)."""
        return self._map(SUMMARY, host_files, stage)

    def detailed(self, host_files: list, stage: Callable[[str], None] = lambda _: None) -> list:
        """One ``Detailed`` (summary and details) per host file, in order: the details are
        mapped like the summaries, on first use (the advisor, op views and tf.data read them)."""
        summaries = self._map(SUMMARY, host_files, stage)
        return [Detailed(s, d) for s, d in zip(summaries, self._map(DETAILS, host_files, stage))]

    def _map(self, kind: _Kind, host_files: list, stage: Callable[[str], None]) -> list:
        found = [self._known(kind, f) for f in host_files]
        missing = [f for f, s in zip(host_files, found) if s is None]
        if missing:
            computed = iter(self._compute(kind, missing, stage))
            found = [s if s is not None else next(computed) for s in found]
        return found

    def _known(self, kind: _Kind, host_file: Any) -> Optional[Any]:
        key = self.key(host_file, kind)
        value = self.cache.get(key)
        if value is None:
            space = self.cache.get(self.spaces.key(host_file))
            value = kind.of_space(space) if space is not None else self._from_disk(kind, key)
            if value is not None:
                self._keep(kind, key, value, to_disk=False)
        return value

    def _from_disk(self, kind: _Kind, key: tuple) -> Optional[Any]:
        return self.disk.load_value(kind.name, key) if self.disk is not None else None

    def _compute(self, kind: _Kind, host_files: list, stage: Callable[[str], None]) -> list:
        started = time.perf_counter()
        total = len(host_files)
        stage(f"summarising {total} hosts" if kind is SUMMARY else f"details of {total} hosts")

        def progress(done: int) -> None:
            stage(f"{'summarised' if kind is SUMMARY else 'details of'} {done}/{total} hosts")

        values = self._run(kind, host_files, progress)
        for f, value in zip(host_files, values):
            self._keep(kind, self.key(f, kind), value, to_disk=True)
        if kind is SUMMARY:
            self.computed += total
        else:
            self.computed_details += total
        logger.info(
            "%s: %d hosts in %.0f ms", kind.name, total, (time.perf_counter() - started) * 1e3
        )
        return values

    def _run(self, kind: _Kind, host_files: list, progress: Callable[[int], None]) -> list:
        if self.cluster is not None:
            try:
                return self.cluster.map(kind.of_file, host_files, progress)
            except PoolUnavailable:
                pass  # logged by the cluster; the local pool takes over
        if self.pool is not None and len(host_files) > 1:
            for _ in range(2):  # dead workers are replaced once for this request
                limit, memory = self._workers_and_memory(host_files)
                try:
                    with self.cache.reservation(memory):
                        return self.pool.map(kind.of_file, host_files, progress, limit)
                except PoolUnavailable:
                    continue
        return [self._in_process(kind, f, i, progress) for i, f in enumerate(host_files, 1)]

    def _in_process(
        self, kind: _Kind, host_file: Any, done: int, progress: Callable[[int], None]
    ) -> Any:
        with self.cache.reservation(self.spaces.estimate([host_file])):
            value = kind.of_file(host_file)
        progress(done)
        return value

    def _workers_and_memory(self, host_files: list) -> tuple:
        """How many hosts may be in workers at once within the memory budget (at least
        one), and the memory that many hold at most: the largest hosts, one per worker."""
        sizes = sorted((self.spaces.estimate([f]) for f in host_files), reverse=True)
        workers = self.pool.workers if self.pool is not None else 1
        while workers > 1 and sum(sizes[:workers]) > self.cache.budget_bytes:
            workers -= 1
        return workers, sum(sizes[:workers])

    def _keep(self, kind: _Kind, key: tuple, value: Any, to_disk: bool) -> None:
        self.cache.get_or_compute(key, lambda: value, size_of=deep_size)
        if to_disk and self.disk is not None:
            self.disk.store_value_later(kind.name, key, value)

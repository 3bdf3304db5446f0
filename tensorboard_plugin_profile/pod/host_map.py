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

import concurrent.futures
import dataclasses
import logging
import threading
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
        self._lock = threading.Lock()
        self._making: dict = {}  # key -> Future of a value some request is making
        self._background: list = []  # threads making what ``first_summaries`` did not wait for
        # Called with each host file whose value was just made, before it is kept (tests hold
        # a host back with it to see what an answer waited for).
        self.on_made: Callable[[Any], None] = lambda _: None

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

    def first_summaries(self, host_files: list) -> list:
        """The first host's summary as soon as it is made, and of the others those already
        made (None for the rest, which go on being made in the background for the answer
        after this one): a pod session's tool list needs one host, not all of them."""
        found, mine, waits = self._claim(SUMMARY, host_files)
        if mine:
            thread = threading.Thread(
                target=self._compute_in_background, args=(mine,), name="host-summaries",
                daemon=True,
            )  # fmt: skip
            with self._lock:
                self._background.append(thread)
            thread.start()
        if found[0] is None:
            found[0] = waits[0].result()  # the first host's typed error, as a full map gives
        for i, future in waits.items():
            if found[i] is None and future.done() and future.exception() is None:
                found[i] = future.result()
        return found

    def join_background(self) -> None:
        """Waits for the summaries ``first_summaries`` left in the background (on close)."""
        while True:
            with self._lock:
                if not self._background:
                    return
                thread = self._background.pop()
            thread.join()

    def detailed(self, host_files: list, stage: Callable[[str], None] = lambda _: None) -> list:
        """One ``Detailed`` (summary and details) per host file, in order: the details are
        mapped like the summaries, on first use (the advisor, op views and tf.data read them)."""
        summaries = self._map(SUMMARY, host_files, stage)
        return [Detailed(s, d) for s, d in zip(summaries, self._map(DETAILS, host_files, stage))]

    def _map(self, kind: _Kind, host_files: list, stage: Callable[[str], None]) -> list:
        found, mine, waits = self._claim(kind, host_files)
        if mine:
            self._compute(kind, mine, stage)
        if len(waits) > len(mine):  # some are being made for another request: wait for them
            stage(f"waiting for {len(waits) - len(mine)} hosts being summarised")
        return [s if s is not None else waits[i].result() for i, s in enumerate(found)]

    def _claim(self, kind: _Kind, host_files: list) -> tuple:
        """(what is known per host or None, [(host file, future)] this caller makes, {index:
        future} of every host not known): a host another request is making is waited for,
        not made twice."""
        found = [self._known(kind, f) for f in host_files]
        mine: list = []
        waits: dict = {}
        with self._lock:
            for i, (f, value) in enumerate(zip(host_files, found)):
                if value is not None:
                    continue
                key = self.key(f, kind)
                future = self._making.get(key)
                if future is None:
                    value = self.cache.get(key)  # made since _known looked
                    if value is not None:
                        found[i] = value
                        continue
                    future = self._making[key] = concurrent.futures.Future()
                    mine.append((f, future))
                waits[i] = future
        return found, mine, waits

    def _compute_in_background(self, mine: list) -> None:
        try:
            self._compute(SUMMARY, mine, lambda _: None)
        except Exception as e:  # the request that needs the host raises it (made again)
            logger.info("background host summaries stopped: %s", e)

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

    def _compute(self, kind: _Kind, mine: list, stage: Callable[[str], None]) -> None:
        """Makes the claimed hosts' values, keeping and handing out each as it arrives; a
        failure is handed to every host not made (and the next request tries them again)."""
        started = time.perf_counter()
        total = len(mine)
        stage(f"summarising {total} hosts" if kind is SUMMARY else f"details of {total} hosts")

        def progress(done: int) -> None:
            stage(f"{'summarised' if kind is SUMMARY else 'details of'} {done}/{total} hosts")

        remaining = dict(enumerate(mine))

        def arrived(index: int, value: Any) -> None:
            host_file, future = remaining.pop(index)
            self.on_made(host_file)
            self._keep(kind, self.key(host_file, kind), value, to_disk=True)
            with self._lock:
                if kind is SUMMARY:
                    self.computed += 1
                else:
                    self.computed_details += 1
                self._making.pop(self.key(host_file, kind), None)
            future.set_result(value)

        try:
            self._run(kind, remaining, progress, arrived)
        except BaseException as e:
            with self._lock:
                for host_file, _ in remaining.values():
                    self._making.pop(self.key(host_file, kind), None)
            for _, future in remaining.values():
                future.set_exception(e)
            raise
        logger.info(
            "%s: %d hosts in %.0f ms", kind.name, total, (time.perf_counter() - started) * 1e3
        )

    def _run(
        self,
        kind: _Kind,
        remaining: dict,
        progress: Callable[[int], None],
        arrived: Callable[[int, Any], None],
    ) -> None:
        """Makes the values of ``remaining`` ({index: (host file, future)}), calling
        ``arrived(index, value)`` as each is made (which takes it out of ``remaining``)."""
        if self.cluster is not None:
            try:
                return self._on(self.cluster, kind, remaining, progress, arrived)
            except PoolUnavailable:
                pass  # logged by the cluster; the local pool takes over
        if self.pool is not None and len(remaining) > 1:
            for _ in range(2):  # dead workers are replaced once for this request
                limit, memory = self._workers_and_memory([f for f, _ in remaining.values()])
                try:
                    with self.cache.reservation(memory):
                        return self._on(self.pool, kind, remaining, progress, arrived, limit)
                except PoolUnavailable:
                    continue
        for done, index in enumerate(list(remaining), 1):
            arrived(index, self._in_process(kind, remaining[index][0], done, progress))

    @staticmethod
    def _on(pool: Any, kind: _Kind, remaining: dict, progress: Any, arrived: Any, *limit: Any):
        """One map over ``pool`` (the cluster or the local workers) of the hosts not made."""
        indexes = list(remaining)
        files = [remaining[i][0] for i in indexes]
        pool.map(kind.of_file, files, progress, *limit,
                 on_result=lambda i, value: arrived(indexes[i], value))  # fmt: skip

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

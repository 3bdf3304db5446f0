"""Decoded Spaces for the service: memory cache, then disk cache, then a decode.

A Space is looked up in the in-memory byte-budget cache, then in the disk
cache (read back and verified), and only then decoded: in-process for one host,
in worker processes (``host_pool``) when several hosts of a request need
decoding and a disk cache exists for the workers to hand their results over.
Every freshly decoded Space is written to the disk cache (in the background).

A Space's charge against the memory budget is its real size (``memsize``)
plus what analyses memoised on it (the preprocessed copy, op statistics, the
trace index), grown after each tool ran on it by measuring only what the tool memoised
(``recharge``, ``_Walk``). When the budget needs room, those memoised results are dropped
before any Space is evicted (``shed``): they are rebuilt from the Space in a fraction of
a decode. The same
measurements teach ``estimate`` how much memory a profile needs per byte of
file, which admission control reserves before a decode starts.

Usage::

    store = SpaceStore(cache, disk, pool)
    with cache.reservation(store.estimate(files)):
        spaces = store.get_many(files)
        ... run a tool ...
        store.recharge(spaces)
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import threading
import time
import weakref
from typing import Any, Callable, Optional

from ..common import memo
from ..common.errors import CorruptProfile, ProfileTooLarge
from ..common.memsize import deep_size, limit_heap_fragmentation
from .cache import ByteBudgetCache
from .disk_cache import DiskCache, code_fingerprint
from .host_pool import HostPool
from .profile_reader import read_host_profile

logger = logging.getLogger(__name__)

# Memory per byte of .xplane.pb before any profile was measured. A cold overview and trace
# window peak at ~10x the file above the idle server (docs/cold_path.md, "Where it stands"),
# of which the preprocessed tables and memoised analyses kept afterwards are ~7x; 2.5 times
# that peak leaves room for other profiles' shapes until one is measured.
INITIAL_BYTES_PER_FILE_BYTE = 25
# What is learned is what stays (tables + memoised analyses); a cold overview and trace
# window peak at ~1.4x what they keep on an .xplane.pb (2.8x the file kept, 3.7-4.0x peak;
# docs/cold_path.md), so a reservation scales the learned ratio up to the working set, with
# a wide margin: the first files of other kinds and other tools' memos are learned later.
PEAK_OVER_KEPT = 2.5
# Decode failures remembered (by file identity), oldest forgotten first.
MAX_FAILURES_KEPT = 256
# What a stored Space depends on: the decoders, and the preprocessing applied to an XSpace
# before it is kept (``formats.py``'s readers, through ``profile_reader.read_host_profile``),
# with the helpers both call.
_DECODER_CODE = (
    "common",
    "kernels",
    "xspace",
    "chrome_trace",
    "preprocessing",
    "store/formats.py",
    "store/profile_reader.py",
    "store/frames_codec.py",
    "store/column_codec.py",
)


class SpaceStore:
    def __init__(self, cache: ByteBudgetCache, disk: Optional[DiskCache], pool: Optional[HostPool]):
        self.cache = cache
        self.disk = disk
        self.pool = pool
        self.decodes = 0  # in this process (tests and benchmarks read it)
        self._lock = threading.Lock()
        self._ratio: Optional[float] = None  # measured bytes in memory per file byte
        self._ratios: dict = {}  # the same, per input kind (_input_kind)
        self._walks: dict = {}  # id(Space) -> _Walk: what its charge has counted so far
        self.walked = 0  # objects the recharge walks visited (tests read it)
        self._failures: collections.OrderedDict = collections.OrderedDict()  # key -> error
        limit_heap_fragmentation()  # freed event columns go back to the OS, not to holes

    @staticmethod
    def key(host_file: Any) -> tuple:
        return ("space", code_fingerprint(_DECODER_CODE)) + host_file.key

    def get(self, host_file: Any, reserve: bool = True, in_worker: bool = False) -> Any:
        """The Space of one host file (``reserve``: admission for a decode of its own).

        A file that failed to decode (too large, corrupt) fails again at once while it is the
        same file (same cache key): retrying a 413 must not cost another decode.
        """
        key = self.key(host_file)
        failed = self._failures.get(key)
        if failed is not None:
            raise type(failed)(failed.message)  # a fresh error: no shared traceback
        try:
            return self.cache.get_or_compute(
                key,
                lambda: self._load_or_decode(host_file, in_worker),
                size_of=lambda space: self._walk_of(space).total,
                reserve=self.estimate([host_file]) if reserve else 0,
                shed=self.shed,
            )
        except (ProfileTooLarge, CorruptProfile) as e:
            with self._lock:
                self._failures[key] = e
                while len(self._failures) > MAX_FAILURES_KEPT:
                    self._failures.popitem(last=False)
            raise

    def get_many(self, host_files: list, stage: Callable[[str], None]) -> list:
        """[(host, Space)] in order; hosts missing from memory are decoded in parallel."""
        missing = [f for f in host_files if self.cache.get(self.key(f)) is None]
        if len(missing) > 1 and self.disk is not None and self.pool is not None:
            stage(f"decoding {len(missing)} hosts in parallel")
            with concurrent.futures.ThreadPoolExecutor(len(missing)) as threads:
                list(threads.map(lambda f: self.get(f, reserve=False, in_worker=True), missing))
        spaces = []
        for i, f in enumerate(host_files, 1):
            if f in missing:
                stage(f"decoding {f.host} ({i}/{len(host_files)})")
            spaces.append((f.host, self.get(f, reserve=False)))
        return spaces

    def estimate(self, host_files: list) -> int:
        """Bytes to reserve before opening these files (0 for those already in memory)."""
        cold = [f for f in host_files if self.cache.get(self.key(f)) is None]
        return int(sum(self._ratio_of(f.path) * max(f.size, 1) for f in cold))

    def _ratio_of(self, path: str) -> float:
        # Learned per input kind: a gzip-compressed JSON trace holds far more per file byte
        # than an .xplane.pb, and must not inflate the estimate for the others.
        learned = self._ratios.get(_input_kind(path)) or self._ratio
        return learned * PEAK_OVER_KEPT if learned else INITIAL_BYTES_PER_FILE_BYTE

    def recharge(self, host_files: list, spaces: list) -> None:
        """Charges Spaces with what analyses memoised on them since they were last measured.

        Only what a request added is walked (``_Walk``): the Space and the results measured
        before are not walked again, and buffers they share with the new results are not
        counted twice, so the charge is what one walk of everything would give."""
        for f, (_, space) in zip(host_files, spaces):
            key = self.key(f)
            walk = self._walk_of(space)
            if not walk.update(memo.derived_from(space)):
                continue  # nothing new, nothing grown
            self._learn(walk.total, f.size, f.path)
            self.cache.recharge(key, walk.total)

    def shed(self, space: Any) -> int:
        """Drops what analyses memoised on ``space`` (the cache makes room with this before
        it evicts a Space); returns the Space's charge without them. Called under the cache's
        lock: takes only the memo's and the walk's (a stored Space has its walk already, so
        this never waits for another Space's first walk)."""
        memo.forget(space)
        walk = self._walks.get(id(space)) or self._walk_of(space)
        return walk.reset()

    def _walk_of(self, space: Any) -> _Walk:
        """The Space's running measurement, dropped with the Space."""
        with self._lock:
            walk = self._walks.get(id(space))
            if walk is None:
                walk = self._walks[id(space)] = _Walk(space, self)
                weakref.finalize(space, self._walks.pop, id(space), None)
            return walk

    # --- internals ---------------------------------------------------------
    def _load_or_decode(self, host_file: Any, in_worker: bool) -> Any:
        key = self.key(host_file)
        if self.disk is not None:
            started = time.perf_counter()
            space = self.disk.load_value("space", key)
            if space is not None:
                logger.info(
                    "loaded %s from the disk cache in %.0f ms",
                    host_file.host,
                    (time.perf_counter() - started) * 1e3,
                )
                return space
            if in_worker and self.pool is not None:
                args = (host_file, self.disk.root, self.disk.max_bytes, key)
                if self.pool.decode_to_disk(*args):
                    self._count_decode()
                    space = self.disk.load_value("space", key)
                    if space is not None:
                        return space
        space = self._decode(host_file)
        if self.disk is not None:
            self.disk.store_value_later("space", key, space)
        return space

    def _decode(self, host_file: Any) -> Any:
        started = time.perf_counter()
        logger.info("decoding %s (%.1f MB)", host_file.path, host_file.size / 1e6)
        space = read_host_profile(host_file)  # checked open
        self._count_decode()
        logger.info(
            "decoded %s: %d events in %.0f ms",
            host_file.host,
            space.num_events,
            (time.perf_counter() - started) * 1e3,
        )
        return space

    def _count_decode(self) -> None:
        with self._lock:
            self.decodes += 1

    def _learn(self, size: int, file_size: int, path: str = "") -> None:
        if file_size > 0:
            with self._lock:
                kind = _input_kind(path)
                self._ratios[kind] = max(self._ratios.get(kind, 0.0), size / file_size)
                if kind == "xplane":
                    self._ratio = max(self._ratio or 0.0, size / file_size)


class _Walk:
    """A Space's charge, grown by walking only what was memoised on it since the last walk.

    ``counted`` holds the ids of the buffers and containers already charged (as one
    ``deep_size`` walk over the Space and its memoised results keeps them), so a new result
    that shares a Space's column is charged only for what it adds. A result that grows after
    it was measured (the trace index makes columns on first use: ``memory_version``) is
    walked again alone: its own part is taken out and measured anew.
    """

    def __init__(self, space: Any, store: SpaceStore):
        self.store = store
        self.counted: set = set()
        self.total = deep_size(space, _Counting(self.counted, store))
        self.space_ids, self.space_total = frozenset(self.counted), self.total
        self.parts: dict = {}  # id(result) -> (memory_version, ids it counted, its bytes)
        self.lock = threading.Lock()

    def reset(self) -> int:
        """Back to the Space alone (its memoised results were dropped); its charge."""
        with self.lock:
            self.counted = set(self.space_ids)
            self.total = self.space_total
            self.parts = {}
            return self.total

    def update(self, derived: list) -> bool:
        """Measures the new and the grown results; False when there were none."""
        with self.lock:
            changed = self._forget_gone({id(value) for value in derived})
            return any([self._measure(value) for value in derived]) or changed

    def _forget_gone(self, alive: set) -> bool:
        """Takes out the parts of results no longer memoised (another owner's Space shed
        a result they shared); whether there were any."""
        gone = [key for key in self.parts if key not in alive]
        for key in gone:
            _, ids, size = self.parts.pop(key)
            self.counted.difference_update(ids)
            self.total -= size
        return bool(gone)

    def _measure(self, value: Any) -> bool:
        """Measures one result if it is new or grew since; whether it did."""
        version = getattr(value, "memory_version", 0)
        known = self.parts.get(id(value))
        if known is not None and known[0] == version:
            return False
        if known is not None:  # grown: its part again, the rest stays counted
            self.counted.difference_update(known[1])
            self.total -= known[2]
        own: set = set()
        size = deep_size(value, _Counting(self.counted, self.store, own))
        self.counted.update(own)
        self.parts[id(value)] = (version, own, size)
        self.total += size
        return True


class _Counting:
    """The ``seen`` of a ``deep_size`` walk: ids already ``counted`` are skipped, new ones go
    to ``own`` (or straight to ``counted``), and each is counted in the store's ``walked``."""

    def __init__(self, counted: set, store: SpaceStore, own: Optional[set] = None):
        self.counted = counted
        self.own = counted if own is None else own
        self.store = store

    def __contains__(self, item: int) -> bool:
        return item in self.own or item in self.counted

    def add(self, item: int) -> None:
        self.own.add(item)
        self.store.walked += 1


def full_size(space: Any) -> int:
    """What one walk of a Space and everything memoised on it holds (``recharge``'s charge
    without its shortcuts; tests compare the two)."""
    seen: set = set()
    return deep_size(space, seen) + sum(deep_size(d, seen) for d in memo.derived_from(space))


def _input_kind(path: str) -> str:
    if ".xplane.pb" in path or not path:
        return "xplane"
    return "json.gz" if path.endswith(".gz") else "json"

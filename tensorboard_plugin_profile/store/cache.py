"""An in-memory LRU cache with a byte budget, admission control and single-flight computation.

Concurrent requests for the same cold key wait for one computation instead of
starting their own: the first caller computes, the others block on its event
and then read the result (or its exception).

The budget counts stored values *and* computations in flight: a caller that is
about to build something large (a decode) passes ``reserve=`` its estimated
size; the reservation is admitted only when stored entries (evicted LRU first)
and other reservations leave room for it, else the caller waits in line (first
come, first admitted), and gets ``Overloaded`` when no work in flight finished
for ``admission_timeout_s``. A reservation alone larger than
the budget is admitted once nothing else is in flight, so memory exceeds the
budget by at most one value's working set. The newest value is kept even when
it alone is over budget (every other entry is evicted for it): dropping it would
make every later request rebuild it.

A computation's reservation grows to what it reports holding (``common/work.py``), so a
decode that turns out larger than its estimate evicts others instead of going unseen;
and it stops (``Cancelled``) once no caller waits for it any more.

Room is made in order of what is cheapest to rebuild: first the derived data of stored
values (``shed=``: a decoded profile drops the analyses memoised on it, rebuilt from it on
demand), least recently used first, then whole values, least recently used first. Values
``pinned`` by a request in flight are neither shed nor evicted: a request never loses the
profile it is answering from (which it would then decode a second time).

Usage::

    cache = ByteBudgetCache(budget_bytes=2 << 30)
    with cache.pinned([key]):                   # this request's profile stays
        space = cache.get_or_compute(key, decode, size_of=deep_size, reserve=20 * file_size,
                                     shed=drop_derived)   # drop_derived(space) -> its new size
        cache.recharge(key, deep_size(space))   # after it grew (derived tables)
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from typing import Any, Callable, Hashable, Iterator, Optional

from ..common import work
from ..common.errors import Cancelled, Overloaded
from ..common.memsize import release_free_memory

logger = logging.getLogger(__name__)

# A large profile on a busy machine takes minutes: refuse only when the line stood still this long.
DEFAULT_ADMISSION_TIMEOUT_S = 600.0


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None
        # Whom the computation is for: its owner's request, then every caller that waits on it.
        self.wanted_by = work.AnyOf(work.current_interest())


class _Held:
    """Bytes a computation in flight holds against the budget: its reservation, grown to
    what the work reports holding (``work.checkpoint(held_bytes=...)``)."""

    def __init__(self, cache: ByteBudgetCache, reserved: int):
        self.cache, self.bytes = cache, reserved

    def grow(self, held: int) -> None:
        cache = self.cache
        with cache._lock:
            if held <= self.bytes:
                return
            cache.reserved_bytes += held - self.bytes
            self.bytes = held
            cache._evict_to(cache.budget_bytes - cache.reserved_bytes)
            cache._note_peak()


class ByteBudgetCache:
    def __init__(self, budget_bytes: int, admission_timeout_s: float = DEFAULT_ADMISSION_TIMEOUT_S):
        self.budget_bytes = budget_bytes
        self.admission_timeout_s = admission_timeout_s
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # notified when bytes are released
        # key -> (value, charged bytes, shed or None); shed(value) drops what the value
        # derived and returns its new charge.
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._pins: collections.Counter = collections.Counter()  # key -> requests using it
        self._pending: dict = {}
        self.used_bytes = 0  # charged by stored entries
        self.reserved_bytes = 0  # held by computations in flight
        self.peak_bytes = 0  # max of used + reserved, for load tests
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.sheds = 0  # derived data dropped to make room (tests read it)
        self._queue: collections.deque = collections.deque()  # tickets of callers waiting for room
        self._releases = 0  # reservations ended so far: a waiting caller's sign of progress

    def get(self, key: Hashable) -> Any:
        """The stored value, or None (counts as neither hit nor miss)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def get_or_compute(
        self,
        key: Hashable,
        compute: Callable[[], Any],
        size_of: Callable[[Any], int],
        reserve: int = 0,
        on_wait: Optional[Callable[[str], None]] = None,
        shed: Optional[Callable[[Any], int]] = None,
    ) -> Any:
        """The value of ``key``, computed once however many callers ask at the same time.

        The computation stops (``Cancelled``, from its ``work.checkpoint`` calls) when none of
        the callers waiting for it wants it any more; a caller that still does starts it again.
        ``shed(value)``, if given, drops what the value derived (to make room before whole
        values are evicted) and returns its charge after that.
        """
        while True:
            try:
                return self._get_or_compute(key, compute, size_of, reserve, on_wait, shed)
            except Cancelled:
                if not work.wanted():
                    raise
                # Another caller's computation stopped as this one joined it: compute anew.

    def _get_or_compute(
        self,
        key: Hashable,
        compute: Callable[[], Any],
        size_of: Callable[[Any], int],
        reserve: int = 0,
        on_wait: Optional[Callable[[str], None]] = None,
        shed: Optional[Callable[[Any], int]] = None,
    ) -> Any:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key][0]
        # Admission first, before owning the key: a caller that waits for memory must
        # not block another caller (holding a reservation) that needs this same key.
        reserved = self._admit(reserve, on_wait)
        with self._lock:
            if key in self._entries:
                self._release(reserved)
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key][0]
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = _Pending()
                self._pending[key] = pending
                self.misses += 1
            else:
                self._release(reserved)
                reserved = 0
        assert pending is not None
        if not owner:
            return self._wait_for(pending)
        size = 0
        held = _Held(self, reserved)
        try:
            # Without a reservation of its own, what it holds counts in the caller's.
            grow = held.grow if reserved else None
            with work.interest(pending.wanted_by), work.listening(holding=grow):
                pending.value = compute()
            size = max(int(size_of(pending.value)), 1)  # measured outside the lock: it may be slow
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._lock:
                del self._pending[key]
                self._release(held.bytes)
                if pending.error is None:
                    self._store(key, pending.value, size, shed)
            pending.done.set()
        return pending.value

    @staticmethod
    def _wait_for(pending: _Pending) -> Any:
        """Another caller's computation, counted as wanted by this caller while it waits."""
        me = work.current_interest()
        pending.wanted_by.add(me)
        try:
            pending.done.wait()
        finally:
            pending.wanted_by.remove(me)
        if pending.error is not None:
            raise pending.error
        return pending.value

    @contextlib.contextmanager
    def reservation(
        self, size: int, on_wait: Optional[Callable[[str], None]] = None
    ) -> Iterator[None]:
        """Holds ``size`` bytes of the budget for work that will build values (admission)."""
        held = _Held(self, self._admit(size, on_wait))
        try:
            with work.listening(holding=held.grow):
                yield
        finally:
            with self._lock:
                self._release(held.bytes)
            if held.bytes:
                release_free_memory()  # the work's transient memory, before others start

    def recharge(self, key: Hashable, size: int) -> None:
        """Updates a stored entry's charge (it grew), evicting others to the budget."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[1] == size:
                return
            self.used_bytes += size - entry[1]
            self._entries[key] = (entry[0], size, entry[2])
            self._entries.move_to_end(key)
            self._evict_to(self.budget_bytes - self.reserved_bytes, keep=key)
            self._note_peak()

    def discard(self, key: Hashable) -> None:
        """Forgets a stored value (one that must not outlive the request that made it)."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self.used_bytes -= entry[1]
                self._room.notify_all()

    @contextlib.contextmanager
    def pinned(self, keys: list) -> Iterator[None]:
        """While inside, the values of ``keys`` (stored now or later) are neither evicted nor
        shed: the request using them answers from them, however full the budget is."""
        with self._lock:
            self._pins.update(keys)
        try:
            yield
        finally:
            with self._lock:
                self._pins.subtract(keys)
                self._pins += collections.Counter()  # drops the keys no request pins

    # --- admission ---------------------------------------------------------
    def _admit(self, reserve: int, on_wait: Optional[Callable[[str], None]]) -> int:
        if reserve <= 0:
            return 0
        evictions = self.evictions
        reserved = self._wait_for_room(reserve, on_wait)
        if self.evictions != evictions:
            release_free_memory()  # what was evicted for this work, before it allocates
        return reserved

    def _wait_for_room(self, reserve: int, on_wait: Optional[Callable[[str], None]]) -> int:
        """Admits callers in arrival order; refuses when the queue stood still for the timeout."""
        ticket, logged = object(), False
        with self._lock:
            self._queue.append(ticket)
            deadline, releases = time.monotonic() + self.admission_timeout_s, self._releases
            try:
                while not (self._queue[0] is ticket and self._fits(reserve)):
                    if self._releases != releases:  # others finished: the queue moves
                        deadline, releases = (
                            time.monotonic() + self.admission_timeout_s,
                            self._releases,
                        )
                    left = deadline - time.monotonic()
                    if not work.wanted():
                        raise Cancelled("Stopped waiting for memory: the request went away.")
                    if left <= 0:
                        raise Overloaded(
                            f"The server is busy opening other profiles and its memory budget "
                            f"({_gb(self.budget_bytes)}) is taken ({_gb(self.reserved_bytes)} by "
                            f"work in progress); this profile needs about {_gb(reserve)}. Retry "
                            "later, or raise the budget (--cache_bytes / TBPROF_CACHE_BYTES)."
                        )
                    message = f"waiting for memory ({_gb(self.reserved_bytes)} in use by others)"
                    if on_wait is not None:
                        on_wait(message)
                    if not logged:
                        logger.info("%s; this needs %s", message, _gb(reserve))
                        logged = True
                    self._room.wait(min(left, 1.0))
            finally:
                self._queue.remove(ticket)
                self._room.notify_all()  # the next in line may fit now
            self.reserved_bytes += reserve
            self._note_peak()
        return reserve

    def _fits(self, reserve: int) -> bool:
        """Evicts stored entries for ``reserve``; True when it fits or nothing else is in flight."""
        self._evict_to(self.budget_bytes - self.reserved_bytes - reserve)
        fits = self.used_bytes + self.reserved_bytes + reserve <= self.budget_bytes
        return fits or self.reserved_bytes == 0  # alone and still too big: admitted

    def _release(self, reserved: int) -> None:
        if reserved:
            self.reserved_bytes -= reserved
            self._releases += 1
            self._room.notify_all()

    # --- storage -----------------------------------------------------------
    def _store(
        self, key: Hashable, value: Any, size: int, shed: Optional[Callable[[Any], int]] = None
    ) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.used_bytes -= old[1]
        self._entries[key] = (value, size, shed)
        self.used_bytes += size
        self._evict_to(self.budget_bytes - self.reserved_bytes, keep=key)
        self._note_peak()

    def _evict_to(self, limit: int, keep: Optional[Hashable] = None) -> None:
        """Makes ``used_bytes`` at most ``limit``: derived data first, then whole values, each
        least recently used first; never ``keep`` nor a pinned value."""
        limit = max(limit, 0)
        if self.used_bytes <= limit:
            return
        spare = [k for k in self._entries if k != keep and not self._pins[k]]
        for key in spare:  # derived data: rebuilt from its value, which stays
            if self.used_bytes <= limit:
                return
            value, size, shed = self._entries[key]
            if shed is not None:
                smaller = int(shed(value))
                self.used_bytes += smaller - size
                self._entries[key] = (value, smaller, shed)
                self.sheds += 1
        evicted = False
        for key in spare:
            if self.used_bytes <= limit:
                break
            self.used_bytes -= self._entries.pop(key)[1]
            self.evictions += 1
            evicted = True
        if evicted:
            self._room.notify_all()

    def _note_peak(self) -> None:
        self.peak_bytes = max(self.peak_bytes, self.used_bytes + self.reserved_bytes)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.used_bytes = 0
            self._room.notify_all()


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.0f} MB"

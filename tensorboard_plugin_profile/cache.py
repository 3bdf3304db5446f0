"""An in-memory LRU cache with a byte budget and single-flight computation.

Concurrent requests for the same cold key wait for one computation instead of
starting their own: the first caller computes, the others block on its event
and then read the result (or its exception).

Usage::

    cache = ByteBudgetCache(budget_bytes=2 << 30)
    space = cache.get_or_compute(("space", path, size, mtime), decode, size_of=lambda s: s.nbytes)
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Hashable, Optional


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None


class ByteBudgetCache:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._pending: dict = {}
        self.used_bytes = 0
        self.hits = 0
        self.misses = 0

    def get_or_compute(
        self, key: Hashable, compute: Callable[[], Any], size_of: Callable[[Any], int]
    ) -> Any:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key][0]
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = _Pending()
                self._pending[key] = pending
                self.misses += 1
        assert pending is not None
        if not owner:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            pending.value = compute()
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._lock:
                del self._pending[key]
                if pending.error is None:
                    self._store(key, pending.value, max(int(size_of(pending.value)), 1))
            pending.done.set()
        return pending.value

    def _store(self, key: Hashable, value: Any, size: int) -> None:
        if size > self.budget_bytes:
            return  # too big to keep; the caller still gets it
        self._entries[key] = (value, size)
        self.used_bytes += size
        while self.used_bytes > self.budget_bytes:
            _, (_, old_size) = self._entries.popitem(last=False)
            self.used_bytes -= old_size

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.used_bytes = 0

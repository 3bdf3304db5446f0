"""Results computed once per decoded Space and dropped with it.

The service caches decoded Spaces; everything derived from them (the preprocessed
copy, per-host op statistics, combined multi-host results, the trace index) is
memoised here under the ids of the Spaces it came from. An entry is removed as
soon as any of its Spaces is garbage-collected, so a reused id never finds a stale
result. Concurrent callers for the same entry wait for one computation.

Usage::

    stats = memoized([space], "op_stats", lambda: analyse_host(space))
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Sequence

_ENTRIES: dict = {}
_PENDING: dict = {}
_LOCK = threading.Lock()


def memoized(owners: Sequence[Any], name: str, compute: Callable[[], Any]) -> Any:
    key = (name,) + tuple(id(owner) for owner in owners)
    with _LOCK:
        if key in _ENTRIES:
            return _ENTRIES[key]
        pending = _PENDING.setdefault(key, threading.Lock())
    with pending:
        with _LOCK:
            if key in _ENTRIES:
                return _ENTRIES[key]
        try:
            value = compute()
        finally:
            with _LOCK:
                _PENDING.pop(key, None)
        with _LOCK:
            _ENTRIES[key] = value
        for owner in owners:
            weakref.finalize(owner, _ENTRIES.pop, key, None)
    return value


def forget(owner: Any) -> None:
    """Drops every value memoised for ``owner`` (alone or with others): rebuilt on demand.

    A computation in flight for it still stores its value when it ends."""
    owner_id = id(owner)
    with _LOCK:
        for key in [key for key in _ENTRIES if owner_id in key[1:]]:
            del _ENTRIES[key]


def derived_from(owner: Any) -> list:
    """Every value memoised for ``owner`` (alone or with others), for memory accounting."""
    owner_id = id(owner)
    with _LOCK:
        return [value for key, value in _ENTRIES.items() if owner_id in key[1:]]

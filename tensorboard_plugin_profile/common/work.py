"""What a long computation tells the request it runs for, between blocks of its work.

A decoder calls ``checkpoint(detail, held_bytes)`` after every block (a MB of input or so).
The layers above listen on the current thread, each for what it owns:

- the service's progress task shows ``detail`` ("decoding w (1/1): 35 of 120 MB");
- the cache's reservation grows to ``held_bytes``, so the memory budget counts what a decode
  really holds, not only what was guessed from the file size before it started;
- whoever the work is for (``interest``): the HTTP layer's request, or a computation the
  cache runs for every request that waits on it. When none of them wants the result any
  more (every client hung up), ``checkpoint`` raises ``Cancelled`` and the work stops.

Outside a request (CLI, notebooks) nothing listens and ``checkpoint`` costs a lookup.

Usage::

    with work.interest(request_is_open), work.listening(progress=task.detail):
        ...
        work.checkpoint("35 of 120 MB", held_bytes=collector_bytes)   # in the decoder
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Optional, Protocol

from .errors import Cancelled


class Interest(Protocol):
    def wanted(self) -> bool: ...


class _Local(threading.local):
    interest: Optional[Interest] = None
    progress: Optional[Callable[[str], None]] = None
    holding: Optional[Callable[[int], None]] = None


_local = _Local()


@contextlib.contextmanager
def interest(who: Optional[Interest]) -> Iterator[None]:
    """Work on this thread is for ``who`` until the block ends."""
    previous, _local.interest = _local.interest, who
    try:
        yield
    finally:
        _local.interest = previous


def current_interest() -> Optional[Interest]:
    """Whom this thread works for (None: someone who never stops waiting)."""
    return _local.interest


def wanted(who: Optional[Interest] = None) -> bool:
    who = who if who is not None else _local.interest
    return who is None or who.wanted()


@contextlib.contextmanager
def listening(
    progress: Optional[Callable[[str], None]] = None,
    holding: Optional[Callable[[int], None]] = None,
) -> Iterator[None]:
    """Sends this thread's checkpoints' details to ``progress``, held bytes to ``holding``
    (the ones not given keep their outer listener)."""
    saved = (_local.progress, _local.holding)
    _local.progress = progress or _local.progress
    _local.holding = holding or _local.holding
    try:
        yield
    finally:
        _local.progress, _local.holding = saved


def checkpoint(detail: str = "", held_bytes: int = 0) -> None:
    """Reports progress and memory; raises ``Cancelled`` when nobody wants the work any more."""
    local: Any = _local
    if detail and local.progress is not None:
        local.progress(detail)
    if held_bytes and local.holding is not None:
        local.holding(held_bytes)
    if local.interest is not None and not local.interest.wanted():
        raise Cancelled(
            "Stopped: every request waiting for this work went away. Ask again to restart it."
        )


class AnyOf:
    """Wanted while any of its members is (members are added and removed as requests come
    and go; ``None`` stands for a caller that always waits)."""

    def __init__(self, first: Optional[Interest]):
        self._lock = threading.Lock()
        self._members: list = [first]

    def add(self, who: Optional[Interest]) -> None:
        with self._lock:
            self._members.append(who)

    def remove(self, who: Optional[Interest]) -> None:
        with self._lock:
            if who in self._members:
                self._members.remove(who)

    def wanted(self) -> bool:
        with self._lock:
            members = list(self._members)
        return any(m is None or m.wanted() for m in members)

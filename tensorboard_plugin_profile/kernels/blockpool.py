"""Large numpy buffers handed from one pass to the next during a cold conversion.

A cold conversion allocates several times its peak memory in short-lived event-sized
arrays; each is a fresh mapping that the kernel faults in and zeroes, which at ~10 M
events was about half of the conversion's CPU time. Inside ``reusing()``, a freed buffer
of 1 MiB or more is kept, and the next uninitialised allocation is made of kept blocks
(see ``kernels/_blockpool.c``): the process grows only when nothing is kept, so the peak does
not rise. A kept block that ``MAX_AGE`` large allocations in a row pass by is unmapped (it
would only sit beside a later peak); the rest when the outermost ``reusing()`` ends.

Without the compiled module (or with ``TBPROF_PURE_PYTHON=1``, see ``compiled``), off
Linux, or with ``TBPROF_NO_BLOCKPOOL=1`` (the pool alone off, to measure it), ``reusing()``
does nothing: numpy allocates as usual, and every result is the same either way.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

from . import compiled

_blockpool = compiled.load(__name__)

# At most this many freed bytes wait for reuse (the oldest are unmapped first).
KEEP_LIMIT_BYTES = 1 << 30
# Smaller buffers come from malloc as usual.
MIN_BLOCK_BYTES = 1 << 20
# A kept block that this many large allocations in a row did not take is unmapped.
MAX_AGE = 16


def available() -> bool:
    """Whether ``reusing()`` pools: the compiled pool is used, pools on this platform
    (Linux), and is not switched off."""
    return (
        compiled.use_compiled(_blockpool)
        and _blockpool.available()
        and os.environ.get("TBPROF_NO_BLOCKPOOL", "") in ("", "0")
    )


def configure(
    keep_limit: int = KEEP_LIMIT_BYTES, min_block: int = MIN_BLOCK_BYTES, max_age: int = MAX_AGE
) -> None:
    """Sets the pool's limits (tests use a small ``min_block`` to pool fixture-sized arrays;
    ``max_age`` 0 keeps blocks until the limit or the end of ``reusing()``)."""
    if _blockpool is not None:
        _blockpool.configure(keep_limit, min_block, max_age)


@contextlib.contextmanager
def reusing() -> Iterator[None]:
    """Within this block (this thread's context only), large numpy buffers are reused."""
    if not available():
        yield
        return
    assert _blockpool is not None
    previous = _blockpool.enter()
    try:
        yield
    finally:
        _blockpool.leave(previous)


def stats() -> dict[str, Any]:
    """Counters: reused and fresh allocations, their bytes, zeroed bytes, kept bytes now."""
    return dict(_blockpool.stats()) if _blockpool is not None else {}

# Interface of the optional compiled block pool (kernels/_blockpool.c), which mypy cannot read.
from typing import Any

def enter() -> Any:
    """Use the pool for this context's numpy buffers; returns the previous handler."""

def leave(previous: Any, /) -> None:
    """Restore the previous handler; the last one out unmaps the kept blocks."""

def configure(keep_limit_bytes: int, min_block_bytes: int, max_age: int = ..., /) -> None:
    """Limit on kept bytes, the smallest buffer the pool handles, and how many large
    allocations in a row may pass a kept block by before it is unmapped (0: no limit)."""

def stats() -> dict[str, int]:
    """Counters: reused, fresh, their bytes, zeroed_bytes, kept_bytes, most_kept, kept."""

def available() -> bool:
    """Whether this platform pools (Linux)."""

"""Cache and worker settings, from flags and environment variables: one definition for
every entry point.

``tbprof serve``, ``tbprof convert``, the standalone server and the TensorBoard
plugin all accept the same flags (``add_flags``) and fall back to the same
environment variables (``CacheConfig.from_flags``); docs/cache.md explains them.

==========================  ==========================  =================================
flag                        environment                 meaning
==========================  ==========================  =================================
``--cache_dir DIR``         ``TBPROF_CACHE_DIR``        where the disk cache lives
``--no_cache``              ``TBPROF_NO_CACHE=1``       no disk cache (memory only)
``--cache_bytes SIZE``      ``TBPROF_CACHE_BYTES``      memory budget (default: half the
                                                        memory, at least 4G if that leaves
                                                        a quarter free; ``default_memory_bytes``)
``--disk_cache_bytes SIZE`` ``TBPROF_DISK_CACHE_BYTES`` disk cache cap (default 10G)
(no flag)                   ``TBPROF_ADMISSION_TIMEOUT_S`` refuse (503) a request that waited
                                                        this long for memory with no progress
``--workers N``             ``TBPROF_WORKERS``          worker processes for per-host work
                                                        (default: the cores, at most 8)
``--dask_scheduler ADDR``   ``TBPROF_DASK_SCHEDULER``   run per-host work on this Dask
                                                        cluster (docs/pod_scale.md)
==========================  ==========================  =================================

SIZE is a number of bytes with an optional K, M, G or T suffix (powers of 1024).

Usage::

    add_flags(parser)
    config = CacheConfig.from_flags(parser.parse_args())
    service = ProfileService(logdir, config=config)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from typing import Any, Optional

from ..common.errors import InvalidArgument
from ..common.memsize import usable_memory_bytes
from .cache import DEFAULT_ADMISSION_TIMEOUT_S
from .disk_cache import DEFAULT_MAX_BYTES, default_cache_dir

# The memory budget's default: half of what the process may use (RAM, or its container's
# limit), but at least this much where that still leaves a quarter of it to the rest.
MIN_DEFAULT_MEMORY_BYTES = 4 << 30


def default_memory_bytes(usable: Optional[int]) -> int:
    """The default memory budget for ``usable`` bytes of memory (None: unknown, 4 GiB).

    A fixed 4 GiB was small beside 24 GB of RAM: a 2 GB profile keeps ~3.8 GB, ~4.3 GB with
    its trace index (docs/cache.md). Half leaves the other half for the working set above
    the budget (at most one request's) and for other programs."""
    if not usable:
        return MIN_DEFAULT_MEMORY_BYTES
    return max(usable // 2, min(MIN_DEFAULT_MEMORY_BYTES, usable * 3 // 4))


DEFAULT_MEMORY_BYTES = default_memory_bytes(usable_memory_bytes())
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, name: str = "size") -> int:
    """``"4G"`` → 4294967296; a clear error for anything else."""
    match = _SIZE.fullmatch(str(text))
    if not match:
        raise InvalidArgument(f"{name} must be a number of bytes like 512M or 4G, not {text!r}.")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclasses.dataclass(frozen=True)
class CacheConfig:
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    disk_dir: Optional[str] = None  # None: no disk cache
    disk_bytes: int = DEFAULT_MAX_BYTES
    admission_timeout_s: float = DEFAULT_ADMISSION_TIMEOUT_S
    workers: Optional[int] = None  # None: the cores, at most 8
    dask_scheduler: Optional[str] = None  # a Dask scheduler address, or None

    @classmethod
    def from_flags(cls, flags: Any = None) -> CacheConfig:
        """Flags first (None/absent = unset), then the environment, then defaults.

        An explicit ``--cache_dir`` turns the disk cache on even if ``TBPROF_NO_CACHE`` is set.
        """

        def flag(name: str) -> Any:
            return getattr(flags, name, None) if flags is not None else None

        no_cache = bool(flag("no_cache")) or (
            not flag("cache_dir") and os.environ.get("TBPROF_NO_CACHE", "") not in ("", "0")
        )
        cache_dir = flag("cache_dir") or default_cache_dir()
        memory = flag("cache_bytes") or os.environ.get("TBPROF_CACHE_BYTES")
        disk = flag("disk_cache_bytes") or os.environ.get("TBPROF_DISK_CACHE_BYTES")
        workers = flag("workers") or os.environ.get("TBPROF_WORKERS")
        dask = flag("dask_scheduler") or os.environ.get("TBPROF_DASK_SCHEDULER")
        return cls(
            memory_bytes=parse_size(memory, "--cache_bytes") if memory else DEFAULT_MEMORY_BYTES,
            disk_dir=None if no_cache else os.path.abspath(os.path.expanduser(cache_dir)),
            disk_bytes=parse_size(disk, "--disk_cache_bytes") if disk else DEFAULT_MAX_BYTES,
            admission_timeout_s=_seconds(os.environ.get("TBPROF_ADMISSION_TIMEOUT_S")),
            workers=_workers(workers) if workers else None,
            dask_scheduler=dask or None,
        )


def _seconds(text: Optional[str]) -> float:
    if not text:
        return DEFAULT_ADMISSION_TIMEOUT_S
    try:
        return float(text)
    except ValueError:
        raise InvalidArgument(
            f"TBPROF_ADMISSION_TIMEOUT_S must be a number of seconds, not {text!r}."
        ) from None


def _workers(text: Any) -> int:
    try:
        workers = int(text)
    except ValueError:
        workers = 0
    if not 1 <= workers <= 256:
        raise InvalidArgument(f"--workers must be a whole number from 1 to 256, not {text!r}.")
    return workers


def add_flags(parser: Any) -> None:
    """Adds the cache flags to an argparse parser or group (skips ones already defined)."""
    flags = (
        ("--cache_dir", dict(metavar="DIR", help="disk cache directory (env TBPROF_CACHE_DIR)")),
        ("--no_cache", dict(action="store_true", help="do not use the disk cache")),
        (
            "--cache_bytes",
            dict(
                metavar="SIZE",
                help="memory budget for profiles and results, e.g. 8G (default: half the "
                "memory, at least 4G)",
            ),
        ),
        ("--disk_cache_bytes", dict(metavar="SIZE", help="disk cache size cap, e.g. 10G")),
        (
            "--workers",
            dict(metavar="N", help="worker processes for per-host work (env TBPROF_WORKERS)"),
        ),
        (
            "--dask_scheduler",
            dict(
                metavar="ADDRESS",
                help="run per-host work on this Dask cluster, e.g. tcp://10.0.0.5:8786 "
                "(env TBPROF_DASK_SCHEDULER; pip install 'tensorboard-plugin-profile[dask]')",
            ),
        ),
    )
    for name, options in flags:
        try:
            parser.add_argument(name, default=None, **options)
        except argparse.ArgumentError:
            pass  # another plugin defined it already

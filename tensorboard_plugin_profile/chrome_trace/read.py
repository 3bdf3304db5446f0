"""``read_chrome_trace``: one Chrome-trace file → a ``Space`` (see the package docstring)."""

from __future__ import annotations

import logging
import os
from typing import IO, Callable, Optional

from ..common.errors import CorruptProfile, NotFound, ProfileTooLarge
from ..common.formats import PROFILER_HOOK, PYTORCH
from ..kernels import compiled
from ..xspace.limits import DECOMPRESS_RATIO, Limits
from ..xspace.model import Space
from . import collect
from .collect import Collector
from .names import parse_trace_file_name
from .raw import raw_space
from .stream import TraceFormatError, TraceStream
from .tables import space_from_raw

logger = logging.getLogger(__name__)

# The compiled scanner, collect.py's twin (_collect.c); collect.py alone gives the same
# columns, slower.
_collect = compiled.load(collect.__name__)

# Top-level keys kept in Space.extras (everything else PyTorch writes is small too, but
# these are the ones analyses read).
_CHECK_EVERY = 1 << 16  # events between limit checks
_PYTORCH_MARKERS = ("schemaVersion", "deviceProperties", "distributedInfo", "record_shapes")


def read_chrome_trace(path: str, opener: Optional[Callable[[], IO[bytes]]] = None) -> Space:
    """Streams and decodes one file; every failure names the file.

    ``opener`` opens the file instead of ``open(path)`` (the service passes logdir's checked
    open, so a file swapped for a link is never followed outside the logdir).
    """
    name = os.path.basename(path)
    stream = TraceStream(path, opener=opener)
    collector = Collector()
    limits = Limits.from_env()
    checked = [0]

    def check() -> None:
        if stream.count - checked[0] >= _CHECK_EVERY:
            checked[0] = stream.count
            _check_limits(name, path, stream, collector, limits)

    def scan(text: str, pos: int) -> tuple:
        assert _collect is not None
        done = _collect.scan(text, pos, collector)
        check()
        return done

    fast = compiled.use_compiled(_collect)
    try:
        for event in stream.events(scan if fast else None):
            collector.add(event)
            check()
    except FileNotFoundError:
        raise NotFound(f"Profile file {name} does not exist.") from None
    except OSError as e:
        raise CorruptProfile(f"Profile file {name} cannot be read: {e.strerror or e}.") from None
    except TraceFormatError as e:
        raise CorruptProfile(f"Profile file {name} is not a Chrome trace: {e}.") from None
    collector.finish()
    _check_limits(name, path, stream, collector, limits)
    if not len(collector.ev_begin):
        raise CorruptProfile(f"Profile file {name} holds no trace events.")
    raw = raw_space(collector)
    warnings = _warnings(name, stream, collector)
    raw["warnings"] = warnings
    for warning in warnings:
        logger.warning("%s", warning)
    extras = {
        "metadata": stream.metadata,
        "base_ns": raw["base_ns"],
        "truncated": stream.truncated,
        "skipped": dict(collector.skipped),
    }
    return space_from_raw(raw, name, _format_of(name, stream.metadata), extras)


def _check_limits(
    name: str, path: str, stream: TraceStream, collector: Collector, limits: Limits
) -> None:
    """The decoder's size limits (docs/decoder.md), checked while the file streams in."""
    events = len(collector.ev_begin)
    if events > limits.max_events:
        raise limits.too_many_events(name, events)
    size = os.path.getsize(path)
    inflated_limit = max(limits.max_decompressed_bytes, DECOMPRESS_RATIO * size)
    if stream.bytes_read > inflated_limit and stream.bytes_read > size:
        raise ProfileTooLarge(
            f"Profile file {name} inflates to more than {inflated_limit:,} bytes. "
            "Set TBPROF_MAX_DECOMPRESSED_BYTES to raise it."
        )
    limits.check_decoded(name, events, len(collector.st_key), size)


def _format_of(name: str, metadata: dict) -> str:
    parsed = parse_trace_file_name(name)
    if parsed is not None:
        return parsed.format
    return PYTORCH if any(k in metadata for k in _PYTORCH_MARKERS) else PROFILER_HOOK


def _warnings(name: str, stream: TraceStream, collector: Collector) -> list:
    out = []
    if stream.truncated:
        out.append(
            f"{name} ends before its last event: the {len(collector.ev_begin)} events "
            "read up to the cut are shown."
        )
    for what, count in sorted(collector.skipped.items()):
        out.append(f"{name}: {count} events not shown ({what}).")
    return out

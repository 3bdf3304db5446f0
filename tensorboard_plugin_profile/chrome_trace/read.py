"""``read_chrome_trace``: one Chrome-trace file → a ``Space`` (see the package docstring)."""

from __future__ import annotations

import json
import logging
import os
from typing import IO, Callable, Optional

from ..common import work
from ..common.errors import CorruptProfile, NotFound, ProfileTooLarge
from ..common.formats import PROFILER_HOOK, PYTORCH
from ..kernels import compiled
from ..xspace.limits import DECOMPRESS_RATIO, Limits, decoded_estimate
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


def read_chrome_trace(
    path: str,
    opener: Optional[Callable[[], IO[bytes]]] = None,
    threads: Optional[int] = None,
    size: Optional[int] = None,
) -> Space:
    """Streams and decodes one file; every failure names the file.

    ``opener`` opens the file instead of ``open(path)`` (the service passes logdir's checked
    open, so a file swapped for a link is never followed outside the logdir; a remote trace
    is read while it downloads). ``threads``: how many threads the compiled scanner splits
    each window of text across (default ``compiled.pass_threads`` of the window's
    characters); the result is the same for any. ``size``: the file's size when ``path``
    is not on this machine (a URL: ``opener`` reads it), else asked of the file system.
    """
    name = os.path.basename(path)
    limits = Limits.from_env()
    collector = Collector()
    try:
        budget = _Budget(name, os.path.getsize(path) if size is None else size, limits, collector)
    except FileNotFoundError:
        raise NotFound(f"Profile file {name} does not exist.") from None
    except OSError as e:
        raise CorruptProfile(f"Profile file {name} cannot be read: {e.strerror or e}.") from None
    stream = TraceStream(
        path, opener=opener, on_block=budget.block, max_value_chars=limits.max_json_value_bytes
    )
    budget.stream = stream
    checked = [0]

    def check() -> None:
        if stream.count - checked[0] >= _CHECK_EVERY:
            checked[0] = stream.count
            budget.check()

    def scan(text: str, pos: int) -> tuple:
        assert _collect is not None
        parts = compiled.pass_threads(len(text) - pos, threads)
        done = _collect.scan(text, pos, collector, limits.max_json_value_bytes, parts)
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
    budget.check()
    if not len(collector.ev_begin):
        raise CorruptProfile(f"Profile file {name} holds no trace events.")
    raw = raw_space(collector)
    warnings = _warnings(name, stream, collector)
    raw["warnings"] = warnings
    for warning in warnings:
        logger.warning("%s", warning)
    extras = {
        "metadata": json.loads(json.dumps(stream.metadata)),  # plain floats (exact_times.py)
        "base_ns": raw["base_ns"],
        "truncated": stream.truncated,
        "skipped": {**collector.skipped, **stream.skipped},
    }
    return space_from_raw(raw, name, _format_of(name, stream.metadata), extras)


class _Budget:
    """The decoder's limits (docs/decoder.md), checked while the file streams in, and its
    checkpoints (``common/work.py``): progress, the memory it holds, cancellation."""

    def __init__(self, name: str, size: int, limits: Limits, collector: Collector):
        self.name, self.size, self.limits, self.collector = name, size, limits, collector
        self.stream: Optional[TraceStream] = None
        self._pids: set = set()
        self._lines_seen = 0

    def block(self) -> None:
        """After every block of text: the inflate cap, then a checkpoint."""
        stream = self.stream
        assert stream is not None
        inflated_limit = max(self.limits.max_decompressed_bytes, DECOMPRESS_RATIO * self.size)
        if stream.bytes_read > inflated_limit and stream.bytes_read > self.size:
            raise ProfileTooLarge(
                f"Profile file {self.name} inflates to more than {inflated_limit:,} bytes. "
                "Set TBPROF_MAX_DECOMPRESSED_BYTES to raise it."
            )
        self.check()

    def check(self) -> None:
        """Events, decoded size (lines and processes too), then a checkpoint."""
        c, limits = self.collector, self.limits
        events = len(c.ev_begin)
        if events > limits.max_events:
            raise limits.too_many_events(self.name, events)
        lines = c.lines.values
        self._pids.update(pid for pid, _ in lines[self._lines_seen :])
        self._lines_seen = len(lines)
        stats, planes = len(c.st_key), len(self._pids)
        limits.check_decoded(self.name, events, stats, self.size, len(lines), planes)
        stream = self.stream
        done = stream.file_position if stream is not None else 0
        work.checkpoint(
            f"{done / 1e6:,.0f} of {self.size / 1e6:,.0f} MB read",
            held_bytes=decoded_estimate(events, stats, len(lines), planes)
            + (stream.window_chars if stream is not None else 0),
        )


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
    for what, count in sorted(stream.skipped.items()):
        out.append(f"{name}: {count} {what} not read.")
    if stream.trailing_bytes:
        out.append(f"{name}: {stream.trailing_bytes:,} bytes after the gzip data were ignored.")
    if collector.negative_durations:
        out.append(
            f"{name}: {collector.negative_durations} events with a negative duration "
            "are shown with duration 0."
        )
    return out

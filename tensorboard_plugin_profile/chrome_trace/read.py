"""``read_chrome_trace``: one Chrome-trace file → a ``Space`` (see the package docstring)."""

from __future__ import annotations

import logging
import os

from ..errors import CorruptProfile, NotFound
from ..xspace.model import Space
from .collect import Collector
from .names import PROFILER_HOOK, PYTORCH, parse_trace_file_name
from .raw import raw_space
from .stream import TraceFormatError, TraceStream
from .tables import space_from_raw

logger = logging.getLogger(__name__)

# Top-level keys kept in Space.extras (everything else PyTorch writes is small too, but
# these are the ones analyses read).
_PYTORCH_MARKERS = ("schemaVersion", "deviceProperties", "distributedInfo", "record_shapes")


def read_chrome_trace(path: str) -> Space:
    """Streams and decodes one file; every failure names the file."""
    name = os.path.basename(path)
    stream = TraceStream(path)
    collector = Collector()
    try:
        for event in stream.events():
            collector.add(event)
    except FileNotFoundError:
        raise NotFound(f"Profile file {name} does not exist.") from None
    except OSError as e:
        raise CorruptProfile(f"Profile file {name} cannot be read: {e.strerror or e}.") from None
    except TraceFormatError as e:
        raise CorruptProfile(f"Profile file {name} is not a Chrome trace: {e}.") from None
    collector.finish()
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


def _format_of(name: str, metadata: dict) -> str:
    parsed = parse_trace_file_name(name)
    if parsed is not None:
        return parsed.kind
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

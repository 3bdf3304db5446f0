"""Size limits of the decoder, so that a small hostile file cannot take the machine.

Three bounds, each refused with ``ProfileTooLarge`` (HTTP 413) naming the limit
and the environment variable that raises it:

- ``TBPROF_MAX_DECOMPRESSED_BYTES``: a gzip-compressed profile is inflated as
  a stream and stopped at this many bytes (default 1 GiB) or 32x the
  compressed size, whichever is more — real profiles compress about 5-10x;
- ``TBPROF_MAX_EVENTS``: events in one file (default 1,000,000,000);
- ``TBPROF_MAX_DECODED_BYTES``: the decoded tables' estimated size (default
  1 GiB) or 16x the serialized size, whichever is more — real profiles decode
  to 5-10x their size, a file of empty events (2 bytes each) to 50x. Lines and
  planes count too (``LINE_BYTES``, ``PLANE_BYTES``: a Chrome trace of a million
  one-event threads or processes is small on disk and large in tables).

Chrome-trace JSON also has ``TBPROF_MAX_JSON_VALUE_BYTES``: one event or top-level
value longer than this (default 64 MiB) is skipped, not kept (``chrome_trace/stream.py``).

See docs/decoder.md.
"""

from __future__ import annotations

import dataclasses
import os
import zlib

from ..common.errors import CorruptProfile, ProfileTooLarge

_GIB = 1 << 30
DECOMPRESS_RATIO = 32
DECODE_RATIO = 16
# Estimated decoded bytes of one event and of one stat row (see docs/decoder.md).
EVENT_BYTES = 96
STAT_BYTES = 40
# ... of one line (its row, name and index entries) and of one plane (its tables, metadata
# and the per-plane work every tool does: 7 KB of tables and ~10 ms of CPU measured).
LINE_BYTES = 256
PLANE_BYTES = 64 << 10
_PIECE = 1 << 24  # inflate in 16 MB pieces


@dataclasses.dataclass(frozen=True)
class Limits:
    max_events: int = 1_000_000_000
    max_decompressed_bytes: int = _GIB
    max_decoded_bytes: int = _GIB
    max_json_value_bytes: int = 64 << 20

    @classmethod
    def from_env(cls) -> Limits:
        default = cls()
        return cls(
            max_events=_env_int("TBPROF_MAX_EVENTS", default.max_events),
            max_decompressed_bytes=_env_int(
                "TBPROF_MAX_DECOMPRESSED_BYTES", default.max_decompressed_bytes
            ),
            max_decoded_bytes=_env_int("TBPROF_MAX_DECODED_BYTES", default.max_decoded_bytes),
            max_json_value_bytes=_env_int(
                "TBPROF_MAX_JSON_VALUE_BYTES", default.max_json_value_bytes
            ),
        )

    def too_many_events(self, source: str, events: int) -> ProfileTooLarge:
        return ProfileTooLarge(
            f"Profile file {source} holds {events:,} events, more than the limit of "
            f"{self.max_events:,}. Set TBPROF_MAX_EVENTS to raise it."
        )

    def check_decoded(
        self, source: str, events: int, stats: int, serialized: int, lines: int = 0, planes: int = 0
    ) -> None:
        estimate = decoded_estimate(events, stats, lines, planes)
        limit = max(self.max_decoded_bytes, DECODE_RATIO * serialized)
        if estimate > limit:
            held = f"{events:,} events"
            if lines or planes:
                held += f" on {lines:,} lines of {planes:,} processes"
            raise ProfileTooLarge(
                f"Profile file {source} would decode to about {_mb(estimate)} MB "
                f"({held} in {_mb(serialized)} MB), more than the limit of "
                f"{_mb(limit)} MB. Set TBPROF_MAX_DECODED_BYTES to raise it."
            )


def decoded_estimate(events: int, stats: int, lines: int = 0, planes: int = 0) -> int:
    """Estimated bytes of the decoded tables."""
    return events * EVENT_BYTES + stats * STAT_BYTES + lines * LINE_BYTES + planes * PLANE_BYTES


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip().replace("_", "")
    return int(value) if value.isdigit() else default


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


def gunzip(data: bytes | bytearray | memoryview, source: str, limits: Limits) -> bytearray:
    """Inflates gzip members as a stream, refusing to go past the limit."""
    cap = max(limits.max_decompressed_bytes, DECOMPRESS_RATIO * len(data))
    out = bytearray()
    pending: bytes | memoryview = memoryview(data)
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        while True:
            out += inflater.decompress(pending, _PIECE)
            if len(out) > cap:
                raise ProfileTooLarge(
                    f"Profile file {source} inflates to more than {_mb(cap)} MB "
                    f"({_mb(len(data))} MB compressed). Set TBPROF_MAX_DECOMPRESSED_BYTES "
                    "to raise the limit."
                )
            pending = inflater.unconsumed_tail
            if inflater.eof:
                rest = bytes(inflater.unused_data).lstrip(b"\x00")
                if not rest:
                    return out
                if rest[:2] != b"\x1f\x8b":
                    raise zlib.error("trailing garbage")
                inflater, pending = zlib.decompressobj(16 + zlib.MAX_WBITS), memoryview(rest)
            elif not pending:
                raise zlib.error("truncated")
    except zlib.error:
        raise CorruptProfile(f"Profile file {source} is a damaged gzip file.") from None

"""Mutated XSpace files for the decoder fuzz tests (deterministic, small, every fixture kind).

Seeds are the real fixtures cut down to a few events per line (with the event
metadata those events use), so that thousands of mutations decode in seconds.
Each case is (label, bytes, gzipped?): mutations of a seed, of its gzip form,
and gzip of a mutation.

Used by ``test_decode_fuzz.py`` (in-process and under a sanitizer build).
"""

from __future__ import annotations

import gzip
import random
from typing import Iterator

import numpy as np
from conftest import all_host_files

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace.columns import code_dtype
from tensorboard_plugin_profile.xspace.filebytes import _private_pages

_EVENTS_PER_LINE = 6
_MAX_STAT_BYTES = 256


def seeds() -> list:
    """One small real XSpace per fixture host file: (fixture name, bytes)."""
    out = []
    for path in all_host_files():
        space = xplane_pb2.XSpace.FromString(path.read_bytes())
        for plane in space.planes:
            _shrink(plane)
        out.append((path.parent.parent.parent.parent.name, space.SerializeToString()))
    return out


def _shrink(plane) -> None:
    used = set()
    for line in plane.lines:
        del line.events[_EVENTS_PER_LINE:]
        used.update(ev.metadata_id for ev in line.events)
    for mid in [m for m in plane.event_metadata if m not in used][:-3]:
        del plane.event_metadata[mid]
    for md in plane.event_metadata.values():
        for st in md.stats:
            if st.WhichOneof("value") == "bytes_value":
                st.bytes_value = st.bytes_value[:_MAX_STAT_BYTES]
    if len(plane.stats) > 8:
        plane.ClearField("stats")


_SPECIAL = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x12, 0x22, 0x1A)


def mutate(data: bytes, rng: random.Random, other: bytes) -> bytes:
    """One to three random edits: flips, special bytes, cuts, copies, splices, big varints."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not buf:
            buf = bytearray(rng.randbytes(rng.randint(1, 8)))
        op = rng.randrange(9)
        at = rng.randrange(len(buf))
        if op == 0:
            buf[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[at] = rng.choice(_SPECIAL)
        elif op == 2:
            del buf[at : at + rng.randint(1, 16)]
        elif op == 3:
            buf[at:at] = rng.randbytes(rng.randint(1, 8))
        elif op == 4:
            end = min(len(buf), at + rng.randint(1, 64))
            buf[end:end] = buf[at:end]  # a repeated field, or a repeated map key
        elif op == 5:
            del buf[rng.randrange(len(buf) + 1) :]
        elif op == 6:
            cut = rng.randrange(len(other) + 1)
            buf[at:] = other[cut:]
        elif op == 7:
            buf[at : at + 1] = varint(rng.choice((1 << 29, 1 << 32, (1 << 35) + 10, 1 << 63)))
        else:
            buf[at] = (buf[at] & 0xF8) | rng.randrange(8)  # another wire type
    return bytes(buf)


def varint(n: int) -> bytes:
    """``n`` as a protobuf varint."""
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field, written by hand (for files protobuf would not write)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def cases(count: int, seed: int = 16) -> Iterator[tuple]:
    """``count`` mutated files, cycling through every seed and the three gzip forms."""
    rng = random.Random(seed)
    pool = seeds()
    for i in range(count):
        name, data = pool[i % len(pool)]
        other = pool[rng.randrange(len(pool))][1]
        form = i // len(pool) % 8
        if form == 6:
            yield f"{name}:gzip-of-mutation", gzip.compress(mutate(data, rng, other), 1), True
        elif form == 7:
            yield f"{name}:mutated-gzip", mutate(gzip.compress(data, 1), rng, other), True
        else:
            yield f"{name}:mutation", mutate(data, rng, other), False


def anonymous_copy(data: bytes) -> memoryview:
    """The bytes in anonymous memory of their own, as ``FileBytes`` reads a file: what the
    compiled reader may hand back page by page (``discard``)."""
    if not data:
        return memoryview(bytearray())
    view = memoryview(_private_pages(len(data)))
    view[:] = data
    return view


def raw_digest(raw: dict) -> tuple:
    """A comparable form of a reader's raw output in the final layout (NaN-safe for doubles)."""

    def stats(t: tuple) -> tuple:
        raw_floats = isinstance(t[4], bytearray) or _numpy_bytes(t[4])
        floats = np.frombuffer(t[4], np.float64) if raw_floats else t[4]
        cols = [_bytes(c, d) for c, d in zip(t[:6], ("i8", "i8", "i1", "i8", "f8", "i4"))]
        if floats is None:  # the compiled reader's float column when every value is 0.0
            floats = np.zeros(len(cols[0]) // 8)
        cols[4] = np.nan_to_num(np.asarray(floats, np.float64), nan=7.5).tobytes()
        return (*cols, tuple(t[6]))

    def names(t: tuple) -> tuple:
        widths = [code_dtype(len(strings)) for strings in t[2:]]
        return (*(_bytes(c, d) for c, d in zip(t[:2], widths)), tuple(t[2]), tuple(t[3]))

    planes = []
    for p in raw["planes"]:
        events = tuple(
            None if c is None else _bytes(c, d)
            for c, d in zip(p["events"], ("i4", "", "i8", "i8", "i8"))
        )
        planes.append(
            (
                p["id"],
                p["name"],
                tuple(p["lines"]),
                events,
                names(p["names"]),
                stats(p["stats"]),
                tuple(p["event_metadata"]),
                stats(p["metadata_stats"]),
                tuple(sorted(p["stat_metadata"].items())),
                stats(p["plane_stats"]),
            )
        )
    return (
        tuple(planes),
        tuple(raw["hostnames"]),
        tuple(raw["errors"]),
        tuple(raw["warnings"]),
        raw["time_base_ns"],
    )


def _bytes(column, dtype: str) -> bytes:
    """The column's bytes in this dtype ("": its own, for metadata ids: int32 or int64)."""
    if isinstance(column, (bytes, bytearray)) or _numpy_bytes(column):
        return bytes(column)
    return np.asarray(column, dtype=dtype or None).tobytes()


def _numpy_bytes(column) -> bool:
    """A compiled reader's column made by ``alloc`` (``decode._raw_bytes``): raw bytes."""
    return isinstance(column, np.ndarray) and column.dtype == np.uint8

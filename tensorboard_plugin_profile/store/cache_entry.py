"""The file format of a disk cache entry: a checksum over all of it, a header, raw arrays.

::

    b"TBPROFC3" | header length (uint64 LE) | checksum (uint64 LE) | header JSON
                | zero padding to 64 | payload (arrays, each 64-byte aligned)

The checksum (CRC-32: 3.1 GB/s on our 2-core test machine, against 0.7 GB/s for
BLAKE2b) covers every byte after the magic but itself: the header length,
the header, the padding and the payload. One flipped bit anywhere makes the entry a
miss, so a damaged layout or value tree can never turn into another value (before, it
covered the payload only: a flipped digit in the header changed an answer). It detects
damage, not forgery: whoever can write the folder can write a valid entry (though
never code: see ``frames_codec``), so every field is still checked before use.

An entry is read into memory, never mapped: a map of a file that another process
truncates kills the reader with SIGBUS at the next touch of a lost page, while a read
is over when it returns (a file that shrinks or grows meanwhile does not verify). Each
array gets a buffer of its own, so one that a decode consumes is freed with it. Only a
regular file is read: opened without following links and without blocking, then
checked (``fstat``), so a FIFO, a device or a link at an entry path is a miss, not a
hang.

The header holds the format version, the full key, the payload's length, the layout of
its arrays (``[offset, dtype, shape]``) and ``meta`` / ``tree`` for the caller.

Usage::

    layout, payload_bytes = layout_of(arrays)
    write(f, dict(header, arrays=layout, payload_bytes=payload_bytes), arrays)
    header, arrays = read(path, max_bytes)        # ValueError / OSError if it does not verify
"""

from __future__ import annotations

import json
import math
import os
import stat
import struct
import zlib
from typing import Any

import numpy as np

FORMAT_VERSION = 3
MAGIC = b"TBPROFC3"
_PREFIX = struct.Struct("<QQ")  # after the magic: header length, checksum
_HEADER_AT = len(MAGIC) + _PREFIX.size
_ALIGN = 64
_MAX_HEADER_BYTES = 1 << 30
_NUMERIC_KINDS = "biufc"  # the dtypes frames_codec stores as raw arrays


def layout_of(arrays: list) -> tuple:
    """([[offset, dtype, shape]] per array, payload bytes): each array 64-byte aligned."""
    layout, offset = [], 0
    for array in arrays:
        offset = aligned(offset)
        layout.append([offset, array.dtype.str, list(array.shape)])
        offset += array.nbytes
    return layout, offset


def aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _count(shape: list) -> int:
    return math.prod(shape)  # Python integers: a forged shape cannot overflow into a small one


def write(f: Any, header: dict, arrays: list) -> int:
    """Writes an entry, ``header`` (with ``arrays``: their layout) and the arrays; returns
    its size in bytes."""
    layout = header["arrays"]
    head = json.dumps(header, separators=(",", ":")).encode()
    length = struct.pack("<Q", len(head))
    padding = bytes(aligned(_HEADER_AT + len(head)) - _HEADER_AT - len(head))
    checksum = zlib.crc32(padding, zlib.crc32(head, zlib.crc32(length)))
    position = 0
    for array, (offset, _, _) in zip(arrays, layout):  # the payload, gaps included
        checksum = zlib.crc32(bytes(offset - position), checksum)
        checksum = zlib.crc32(memoryview(array).cast("B"), checksum)
        position = offset + array.nbytes
    f.write(MAGIC + length + struct.pack("<Q", checksum) + head + padding)
    position = 0
    for array, (offset, _, _) in zip(arrays, layout):
        f.write(bytes(offset - position))
        f.write(memoryview(array).cast("B"))
        position = offset + array.nbytes
    return _HEADER_AT + len(head) + len(padding) + position


def read(path: str, max_bytes: int) -> tuple:
    """(header, arrays) of the entry at ``path``; ValueError when it does not verify.

    Only a regular file is opened (no link followed, no waiting on a FIFO). Each array is
    read into a buffer of its own (one that a decode consumes is freed with it), and
    nothing is returned before the checksum over every byte read matches.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if not _HEADER_AT <= st.st_size <= max(max_bytes, _HEADER_AT):
            raise ValueError(f"{st.st_size} bytes: not an entry of this cache")
        start = _read_exactly(f, _HEADER_AT).tobytes()
        if start[: len(MAGIC)] != MAGIC:
            raise ValueError("not a cache entry of this format")
        head_len, checksum = _PREFIX.unpack_from(start, len(MAGIC))
        base = aligned(_HEADER_AT + head_len)
        if head_len > _MAX_HEADER_BYTES or base > st.st_size:
            raise ValueError("implausible header length")
        head = _read_exactly(f, base - _HEADER_AT).tobytes()
        crc = zlib.crc32(head, zlib.crc32(start[len(MAGIC) : len(MAGIC) + 8]))
        # Parsed before the checksum is known only to split the payload into arrays; a
        # damaged layout still splits every byte, so the checksum still sees the damage.
        header = json.loads(head[:head_len])
        _check_header(header, st.st_size - base)
        arrays, crc = _read_arrays(f, header["arrays"], header["payload_bytes"], crc)
        if f.read(1):
            raise ValueError("the file grew while it was read")
    if crc != checksum:
        raise ValueError("checksum mismatch")
    return header, arrays


def _read_exactly(f: Any, size: int) -> Any:
    """The file's next ``size`` bytes, in a uint8 array of their own (ValueError if it ends
    first: truncated meanwhile by another writer or process). Typed ``Any``: numpy's
    stubs do not say that arrays are buffers, which ``crc32`` and ``memoryview`` take."""
    data: Any = np.empty(size, dtype=np.uint8)  # not zeroed: every byte is read into it
    view, filled = memoryview(data), 0
    while filled < size:
        got = f.readinto(view[filled:])
        if not got:
            raise ValueError("the file shrank while it was read")
        filled += got
    return data


def _check_header(header: Any, payload_bytes: int) -> None:
    """The header's fields have the types the reader uses (a checksum is no proof of
    who wrote it); raises ValueError otherwise."""
    if not isinstance(header, dict):
        raise ValueError("the header is not an object")
    if header.get("format") != FORMAT_VERSION:
        raise ValueError(f"format {header.get('format')!r}")
    if header.get("payload_bytes") != payload_bytes:
        raise ValueError("truncated or padded")
    if not (isinstance(header.get("key"), str) and isinstance(header.get("meta"), dict)):
        raise ValueError("no key or meta")
    if "tree" not in header or not isinstance(header.get("arrays"), list):
        raise ValueError("no tree or arrays")


def _read_arrays(f: Any, layout: list, payload_bytes: int, crc: int) -> tuple:
    """(arrays, checksum continued over the payload): the arrays of ``layout``, which must
    follow each other inside the payload, each read into its own buffer."""
    arrays, position = [], 0
    for where in layout:
        offset, dtype, shape = _array_layout(where)
        nbytes = _count(shape) * dtype.itemsize
        if offset < position or offset + nbytes > payload_bytes:
            raise ValueError("arrays overlap or lie past the end of the payload")
        crc = zlib.crc32(_read_exactly(f, offset - position), crc)
        data = _read_exactly(f, nbytes)
        crc = zlib.crc32(data, crc)
        arrays.append(data.view(dtype).reshape(shape))
        position = offset + nbytes
    return arrays, zlib.crc32(_read_exactly(f, payload_bytes - position), crc)


def _array_layout(where: Any) -> tuple:
    """(offset, dtype, shape) of one array of the header, checked."""
    if not (isinstance(where, list) and len(where) == 3):
        raise ValueError(f"bad array layout {where!r}")
    offset, dtype_str, shape = where
    dtype = np.dtype(str(dtype_str))
    if dtype.kind not in _NUMERIC_KINDS or dtype.shape:
        raise ValueError(f"arrays of dtype {dtype} are not stored")
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"bad shape {shape!r}")
    if type(offset) is not int or offset < 0:
        raise ValueError(f"bad offset {offset!r}")
    return offset, dtype, shape

"""A profile file's bytes in anonymous memory of their own, for the decoder to give back early.

Read with ``f.read()``, a file's bytes are a ``bytes`` object that lives until the whole
decode returns, beside everything the decoder builds (a 48 MB file is a third of the decode's
peak). ``FileBytes`` reads the file into an anonymous mapping instead and hands it to
``decode_xspace``, which takes it: the compiled reader gives each walked chunk's pages back
to the OS during its walk (``madvise(MADV_DONTNEED)``), and the rest goes as soon as the
walk ends, before the tables are built (docs/decoder.md, "Memory").

Usage::

    with open(path, "rb") as f:
        data = FileBytes(f)
    space = decode_xspace(data, name)  # data is empty afterwards
"""

from __future__ import annotations

import mmap
import os
from typing import IO, Optional, Union

Buffer = Union[bytes, memoryview]


class FileBytes:
    """The bytes of an open file; ``take`` gives them away once."""

    def __init__(self, f: IO[bytes]) -> None:
        self._buffer: Optional[Buffer] = _read_all(f)

    @classmethod
    def of_memory(cls, memory: memoryview) -> FileBytes:
        """Bytes already in ``private_memory`` (a download), handed over like a read file's."""
        data = cls.__new__(cls)
        data._buffer = memory
        return data

    def __len__(self) -> int:
        return len(self._buffer) if self._buffer is not None else 0

    @property
    def discardable(self) -> bool:
        """The bytes are anonymous memory that only their taker reads."""
        return isinstance(self._buffer, memoryview)

    def take(self) -> Buffer:
        buffer, self._buffer = self._buffer, None
        if buffer is None:
            raise ValueError("FileBytes were already taken")
        return buffer


def _read_all(f: IO[bytes]) -> Buffer:
    size = os.fstat(f.fileno()).st_size
    if size <= 0:  # empty, or not a regular file: as it comes
        return f.read()
    view = memoryview(_private_pages(size))
    got = 0
    while got < size:  # a file that grew since is read up to its size then
        n = f.readinto(view[got:])  # type: ignore[attr-defined]
        if not n:
            break
        got += n
    return view[:got] if got < size else view


def private_memory(size: int) -> memoryview:
    """Writable memory of ``size`` bytes that ``FileBytes.of_memory`` can hand over."""
    return memoryview(_private_pages(size))


def _private_pages(size: int) -> mmap.mmap:
    """Private anonymous memory: a page handed back is freed (a shared mapping's pages would
    stay in its shared-memory object, only unmapped from the process)."""
    if hasattr(mmap, "MAP_PRIVATE"):  # Unix (Python adds MAP_ANONYMOUS for fileno -1)
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    return mmap.mmap(-1, size)

"""A profile file's bytes in anonymous memory of their own, for the decoder to give back early.

Read with ``f.read()``, a file's bytes are a ``bytes`` object that lives until the whole
decode returns, beside everything the decoder builds (a 48 MB file is a third of the decode's
peak). ``FileBytes`` reads the file into an anonymous mapping instead and hands it to
``decode_xspace``, which takes it: the compiled reader gives each walked chunk's pages back
to the OS during its walk (``madvise(MADV_DONTNEED)``), and the rest goes as soon as the
walk ends, before the tables are built (docs/decoder.md, "Memory").

A download can be decoded while it arrives: ``Arrival`` is its memory, filled in order by
the downloader (``store/remote.py``), and ``FileBytes.arriving`` hands it to
``decode_xspace``, whose compiled walk follows the bytes as they come (docs/decoder.md,
"Streaming") and whose result is returned only once the download has ended well.

Usage::

    with open(path, "rb") as f:
        data = FileBytes(f)
    space = decode_xspace(data, name)  # data is empty afterwards
"""

from __future__ import annotations

import array
import errno
import mmap
import os
import threading
from typing import IO, Optional, Union

Buffer = Union[bytes, memoryview]


class Arrival:
    """A file of ``size`` bytes arriving in order into ``memory``: the writer calls
    ``arrived(n)`` each time the first ``n`` bytes are in place and ``end(error)`` once at the
    end; readers wait with ``wait_for`` and ``finish``, the compiled walk through
    ``progress`` (two int64 that ``_decode.arrive`` publishes; docs/decoder.md)."""

    def __init__(self, size: int, in_memory: bool = True) -> None:
        self.size = size
        # None: the bytes go only to the writer's file (a reader follows them there).
        self.memory = private_memory(size) if in_memory else None
        self.progress = array.array("q", (0, 0))  # aligned, as _decode.arrive wants
        self._changed = threading.Condition()
        self._available = 0
        self._ended = False
        self._error: Optional[BaseException] = None

    def arrived(self, available: int) -> None:
        """The first ``available`` bytes of ``memory`` are written (call it after writing)."""
        with self._changed:
            self._available = max(self._available, available)
            _publish(self.progress, self._available)
            self._changed.notify_all()

    def end(self, error: Optional[BaseException] = None) -> None:
        """No more bytes will come: all of them, or, with ``error``, not all."""
        with self._changed:
            if error is None:
                self._available = self.size
                _publish(self.progress, self.size)
            else:
                self._error = error
                _publish(self.progress, 0, failed=True)
            self._ended = True
            self._changed.notify_all()

    def wait_for(self, available: int) -> None:
        """Until the first ``available`` bytes are there; raises the writer's error."""
        with self._changed:
            self._changed.wait_for(lambda: self._available >= available or self._ended)
            if self._error is not None:
                raise self._error

    def finish(self) -> None:
        """Until the writer has ended; raises its error if it failed."""
        with self._changed:
            self._changed.wait_for(lambda: self._ended)
            if self._error is not None:
                raise self._error


def _publish(progress: array.array, available: int, failed: bool = False) -> None:
    from .decode import _decode  # the compiled walk reads it (none: it waits for finish)

    if _decode is not None and hasattr(_decode, "arrive"):
        _decode.arrive(progress, available, failed)


class FileBytes:
    """The bytes of an open file; ``take`` gives them away once."""

    def __init__(self, f: IO[bytes]) -> None:
        self._buffer: Optional[Buffer] = _read_all(f)
        self.arrival: Optional[Arrival] = None

    @classmethod
    def of_memory(cls, memory: memoryview) -> FileBytes:
        """Bytes already in ``private_memory`` (a download), handed over like a read file's."""
        data = cls.__new__(cls)
        data._buffer = memory
        data.arrival = None
        return data

    @classmethod
    def arriving(cls, arrival: Arrival) -> FileBytes:
        """The memory of a download still under way (``decode_xspace`` walks it as it comes)."""
        assert arrival.memory is not None, "an arrival into a file only has no memory to walk"
        data = cls.of_memory(arrival.memory)
        data.arrival = arrival
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
    try:
        if hasattr(mmap, "MAP_PRIVATE"):  # Unix (Python adds MAP_ANONYMOUS for fileno -1)
            return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        return mmap.mmap(-1, size)
    except OSError as e:  # refused by a memory or address-space limit: as numpy says it
        if e.errno == errno.ENOMEM:
            raise MemoryError(f"cannot map {size} bytes for a profile file") from None
        raise

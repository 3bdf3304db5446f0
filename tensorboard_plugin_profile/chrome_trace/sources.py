"""The bytes of a Chrome-trace file for ``stream.TraceStream``: a plain file as is, or a gzip
file inflated as a stream (members one after the other, padding and trailing bytes counted) on
a thread of its own a few blocks ahead of the reader (zlib releases the GIL, so the inflate and
the scanner use both cores)."""

from __future__ import annotations

import queue
import threading
import zlib
from typing import IO, Any, Optional

GZIP_MAGIC = b"\x1f\x8b"
COMPRESSED_CHUNK = 1 << 18
AHEAD_BLOCKS = 2  # blocks of text a gzip file is inflated ahead of the reader (Ahead)


class Plain:
    """A plain file, read as is."""

    def __init__(self, raw: IO[bytes]):
        self._raw = raw

    def read(self, n: int) -> bytes:
        return self._raw.read(n)

    def position(self) -> int:
        return self._raw.tell()

    def __enter__(self) -> Plain:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._raw.close()


class Ahead:
    """A gzip file inflated on a thread of its own, up to ``AHEAD_BLOCKS`` blocks ahead of
    the reader: zlib releases the GIL while it inflates, so the inflate and the scanner use
    both cores. Each block comes with the file position and trailing bytes after it, and an
    error reaches the reader at the block where it happened, as if read in place."""

    def __init__(self, inflated: Inflated, block: int):
        self._inflated = inflated
        self._blocks: queue.Queue = queue.Queue(maxsize=AHEAD_BLOCKS)
        self._stop = threading.Event()
        self._last: Optional[tuple] = None  # the final item (end or error), kept for re-reads
        self._position = 0
        self.trailing_bytes = 0
        self._thread = threading.Thread(
            target=self._fill, args=(block,), name="tbprof-inflate", daemon=True
        )
        self._thread.start()

    def _fill(self, block: int) -> None:
        while not self._stop.is_set():
            item: tuple
            try:
                data = self._inflated.read(block)
                item = (data, self._inflated.position(), self._inflated.trailing_bytes, None)
            except BaseException as e:  # handed to the reader, raised where it reads this block
                item = (b"", 0, 0, e)
            while not self._stop.is_set():
                try:
                    self._blocks.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if item[3] is not None or not item[0]:
                return

    def read(self, n: int) -> bytes:
        """The next block (``n`` is the block size the thread was started with)."""
        item = self._last or self._blocks.get()
        data, position, trailing, error = item
        if error is not None or not data:
            self._last = item
        if error is not None:
            raise error
        self._position, self.trailing_bytes = position or self._position, trailing
        return data

    def position(self) -> int:
        return self._position

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self._inflated.__exit__(*exc)


class Inflated:
    """A gzip file inflated as a stream: members one after the other, zero padding skipped,
    anything else after the last member ignored and counted (``trailing_bytes``)."""

    def __init__(self, raw: IO[bytes]):
        self._raw = raw
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = b""
        self._done = False
        self.trailing_bytes = 0

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n and not self._done:
            if not self._pending:
                self._pending = self._raw.read(COMPRESSED_CHUNK)
                if not self._pending and not self._inflater.eof:
                    raise EOFError("the gzip data ends before its end marker")
            if self._inflater.eof:
                self._next_member()
                continue
            out += self._inflater.decompress(self._pending, n - len(out))
            self._pending = self._inflater.unconsumed_tail or self._inflater.unused_data
        return bytes(out)

    def _next_member(self) -> None:
        rest = self._pending.lstrip(b"\x00")
        while not rest:
            more = self._raw.read(COMPRESSED_CHUNK)
            if not more:
                self._done = True
                return
            rest = more.lstrip(b"\x00")
        if len(rest) < 2:
            rest += self._raw.read(1)
        if rest[:2] != GZIP_MAGIC:
            self.trailing_bytes = len(rest) + self._bytes_left()
            self._done = True
            return
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = rest

    def _bytes_left(self) -> int:
        try:
            here = self._raw.tell()
            return self._raw.seek(0, 2) - here
        except (OSError, ValueError):  # not seekable: what was read is what is known
            return 0

    def position(self) -> int:
        return self._raw.tell() - len(self._pending)

    def __enter__(self) -> Inflated:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._raw.close()

"""Streams the events of a Chrome-trace JSON file without building its whole tree.

A Chrome trace is either ``{"traceEvents": [...], <other keys>}`` or a bare ``[...]``
array of events. ``TraceStream`` reads the file in blocks (gzip or plain, detected
by the magic bytes), keeps only an unparsed text window, and decodes one event
object at a time with the C JSON scanner: every event dict is handed to the caller
and dropped, so memory stays at one block plus what the caller collects.

A file cut short (a crashed job, an interrupted copy) is read up to its last
complete event and reported as ``truncated``; the events before the cut are kept.

Usage::

    stream = TraceStream(path)
    for event in stream.events():
        ...
    stream.metadata      # the other top-level keys (deviceProperties, ...)
    stream.truncated     # True when the file ended inside the event list

``events(scan=...)`` lets a compiled scanner consume the events it handles straight from
the text window (``scan(text, pos) -> (pos, count)``, see ``read.py``); only the others
are decoded into dicts and yielded.
"""

from __future__ import annotations

import codecs
import gzip
import json
import zlib
from typing import IO, Any, Callable, Iterator, Optional

BLOCK_CHARS = 1 << 20
_WHITESPACE = " \t\n\r"


class TraceFormatError(ValueError):
    """The text is not a Chrome trace (the message says where and why)."""


class TraceStream:
    def __init__(
        self,
        path: str,
        block_chars: int = BLOCK_CHARS,
        opener: Optional[Callable[[], IO[bytes]]] = None,
    ):
        self.path = path
        self._opener = opener  # e.g. store/safe_open's checked open; default: open(path)
        self.block_chars = block_chars
        self.metadata: dict = {}
        self.truncated = False
        self.bytes_read = 0
        self._decoder = json.JSONDecoder()
        self._file: Optional[IO[bytes]] = None
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._scan: Optional[Callable[[str, int], tuple]] = None
        self.count = 0  # events read so far (yielded or scanned)

    # --- the buffer -----------------------------------------------------------
    def _open(self) -> IO[bytes]:
        raw = self._opener() if self._opener is not None else open(self.path, "rb")
        magic = raw.read(2)
        raw.seek(0)
        if magic == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
        return raw

    def _more(self) -> bool:
        """Appends one block of text; False at the end of the file."""
        if self._eof:
            return False
        assert self._file is not None
        try:
            data = self._file.read(self.block_chars)
        except (OSError, EOFError, zlib.error):
            if not self.bytes_read:
                raise TraceFormatError("it is a damaged gzip file") from None
            data = b""  # a damaged or cut gzip stream ends here; what came before is kept
            self.truncated = True
        self.bytes_read += len(data)
        text = self._text.decode(data, final=not data)
        if not data:
            self._eof = True
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(data)

    def _skip_ws(self) -> str:
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            buf, pos = self._buf, self._pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            self._pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._more():
                return ""

    def _expect(self, chars: str) -> str:
        found = self._skip_ws()
        if not found or found not in chars:
            raise TraceFormatError(
                f"expected one of {chars!r} but found {found or 'the end of the file'!r}"
            )
        self._pos += 1
        return found

    def _value(self) -> Any:
        """Decodes the next JSON value, reading more text until it is complete."""
        self._skip_ws()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as e:
                if _incomplete(e, len(self._buf)) and self._more():
                    continue  # the value goes on in the next block
                raise TraceFormatError(f"bad JSON ({e.msg})") from None
            if end == len(self._buf) and not self._eof and self._buf[self._pos] not in '{["':
                # A number at the very end of the text may go on in the next block.
                if self._more():
                    continue
            self._pos = end
            return value

    # --- the structure --------------------------------------------------------
    def events(self, scan: Optional[Callable[[str, int], tuple]] = None) -> Iterator[dict]:
        """Every event of the file, in file order (but those ``scan`` consumed)."""
        self._scan = scan
        with self._open() as f:
            self._file = f
            try:
                first = self._expect("{[")
                for event in self._array() if first == "[" else self._object():
                    self.count += 1
                    yield event
            except TraceFormatError:
                if not (self._eof and self.count):
                    raise
                self.truncated = True  # cut inside the keys after the events: keep them

    def _object(self) -> Iterator[dict]:
        if self._skip_ws() == "}":
            return
        while True:
            key = self._value()
            if not isinstance(key, str):
                raise TraceFormatError("an object key is not a string")
            self._expect(":")
            if key == "traceEvents":
                if self._expect("[") == "[":
                    yield from self._array()
                if self.truncated:
                    return
            else:
                self.metadata[key] = self._value()
            if self._next_in("}") is None:
                return

    def _array(self) -> Iterator[dict]:
        if self._skip_ws() == "]":
            self._pos += 1
            return
        scan = self._scan
        while True:
            if scan is not None and self._skip_ws() == "{":
                self._pos, count = scan(self._buf, self._pos)
                if count:
                    self.count += count
                    if self._next_in("]") is None:
                        return
                    continue
            value = self._value()
            if isinstance(value, dict):
                yield value
            if self._next_in("]") is None:
                return

    def _next_in(self, closer: str) -> Optional[str]:
        """After a member: ',' → more to come; the closer (or the end of a cut file) → None."""
        found = self._skip_ws()
        if found == ",":
            self._pos += 1
            # Trailing commas before the closer are tolerated (some writers emit them).
            if self._skip_ws() == closer:
                self._pos += 1
                return None
            return ","
        if found == closer:
            self._pos += 1
            return None
        if not found:
            self.truncated = True
            return None
        raise TraceFormatError(f"expected ',' or {closer!r} but found {found!r}")


def _incomplete(error: json.JSONDecodeError, length: int) -> bool:
    """Whether a decode error may only mean that the text stops inside the value."""
    # A literal (true, null, a number) cut by the block end fails a few characters before it.
    return error.pos >= length - 8 or error.msg.startswith("Unterminated string")

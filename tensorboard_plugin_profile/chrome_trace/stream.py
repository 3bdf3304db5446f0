"""Streams the events of a Chrome-trace JSON file without building its whole tree.

A Chrome trace is either ``{"traceEvents": [...], <other keys>}`` or a bare ``[...]``
array of events. ``TraceStream`` reads the file in blocks (gzip or plain, detected
by the magic bytes), keeps only an unparsed text window, and decodes one event
object at a time with the C JSON scanner: every event dict is handed to the caller
and dropped, so memory stays at one block plus what the caller collects.

A value longer than the window (a huge string, a big ``deviceProperties`` list) is not
re-decoded after every block, which made one 100 MB string cost minutes: ``_ValueEnd``
finds where it ends, block by block, in one linear pass (regular expressions skip string
bodies at C speed), and the value is decoded once. A value longer than
``max_value_chars`` is skipped without being kept (``skipped`` counts it); one nested
deeper than ``MAX_NESTING`` levels is refused (Python's decoder would recurse ~1,000
levels and fail with a RecursionError; the tools would fail on far less).

A file cut short (a crashed job, an interrupted copy) is read up to its last
complete event and reported as ``truncated``; the events before the cut are kept.
A gzip file is inflated on a thread of its own a few blocks ahead (``sources.Ahead``: zlib releases
the GIL, so the inflate overlaps the scan). A UTF-8 byte-order mark, gzip members one after
the other, zero padding and other bytes after the last gzip member (``trailing_bytes``) are
accepted, as other trace viewers do.

Usage::

    stream = TraceStream(path, on_block=check)   # check() runs after every block read
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
import json
import re
import zlib
from typing import IO, Any, Callable, Iterator, Optional

from .exact_times import json_float
from .sources import GZIP_MAGIC, Ahead, Inflated, Plain

BLOCK_CHARS = 1 << 20
# Deepest nesting of one event or top-level value (real traces nest fewer than 10 levels).
MAX_NESTING = 100
# Longest single event or top-level value kept; longer ones are skipped and counted.
MAX_VALUE_CHARS = 64 << 20
OVERSIZED_EVENT = "events of more than {} of JSON"
OVERSIZED_KEY = "top-level keys of more than {} of JSON"
_NON_BLANK = re.compile(r"[^ \t\n\r]")
_STRUCTURE = re.compile(r'["\[\]{}]')
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # stops at '"' or a final '\'
_SCALAR_END = re.compile(r"[ \t\n\r,\]}:]")
_TOO_DEEP = f"a value is nested more than {MAX_NESTING} levels deep"
SKIPPED: Any = object()  # what ``_value`` returns for a value over ``max_value_chars``


class TraceFormatError(ValueError):
    """The text is not a Chrome trace (the message says where and why)."""


class TraceStream:
    def __init__(
        self,
        path: str,
        block_chars: int = BLOCK_CHARS,
        opener: Optional[Callable[[], IO[bytes]]] = None,
        on_block: Optional[Callable[[], None]] = None,
        max_value_chars: int = MAX_VALUE_CHARS,
    ):
        self.path = path
        self._opener = opener  # e.g. store/safe_open's checked open; default: open(path)
        self._on_block = on_block  # limits, progress, cancellation (read.py)
        self.block_chars = block_chars
        self.max_value_chars = max_value_chars
        self.metadata: dict = {}
        self.truncated = False
        self.bytes_read = 0  # of text (inflated)
        self.trailing_bytes = 0  # ignored after the last gzip member
        self.skipped: dict = {}  # reason -> count of values skipped (OVERSIZED_*)
        self._decoder = json.JSONDecoder(parse_float=json_float)  # exact times: exact_times.py
        self._file: Optional[Any] = None
        self._text = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._scan: Optional[Callable[[str, int], tuple]] = None
        self.count = 0  # events read so far (yielded or scanned)
        self._position = 0

    @property
    def window_chars(self) -> int:
        """Characters of text held in the window."""
        return len(self._buf)

    @property
    def file_position(self) -> int:
        """Bytes of the file (compressed, for gzip) consumed so far."""
        return self._position

    # --- the buffer -----------------------------------------------------------
    def _open(self) -> Any:
        raw = self._opener() if self._opener is not None else open(self.path, "rb")
        magic = raw.read(2)
        raw.seek(0)
        return Ahead(Inflated(raw), self.block_chars) if magic == GZIP_MAGIC else Plain(raw)

    def _read_text(self) -> str:
        """The next block of text; '' at the end of the file only."""
        text = ""
        while not text and not self._eof:  # a block may end inside a UTF-8 sequence
            text = self._read_block()
        return text

    def _read_block(self) -> str:
        assert self._file is not None
        try:
            data = self._file.read(self.block_chars)
        except (OSError, EOFError, zlib.error):
            if not self.bytes_read:
                raise TraceFormatError("it is a damaged gzip file") from None
            data = b""  # a damaged or cut gzip stream ends here; what came before is kept
            self.truncated = True
        self.bytes_read += len(data)
        self._position = self._file.position()
        self.trailing_bytes = getattr(self._file, "trailing_bytes", 0)
        text = self._text.decode(data, final=not data)
        if not data:
            self._eof = True
        if self._on_block is not None:
            self._on_block()
        return text

    def _more(self) -> bool:
        """Appends one block of text; False at the end of the file."""
        text = self._read_text()
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return not self._eof

    def _skip_ws(self) -> str:
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            found = _NON_BLANK.search(self._buf, self._pos)
            if found is not None:
                self._pos = found.start()
                return self._buf[self._pos]
            self._pos = len(self._buf)
            if not self._more() and self._pos >= len(self._buf):
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
        """Decodes the next JSON value (``SKIPPED`` for one over ``max_value_chars``)."""
        self._skip_ws()
        buf, start = self._buf, self._pos
        try:
            value, end = self._decoder.raw_decode(buf, start)
        except json.JSONDecodeError as e:
            if self._eof or not _incomplete(e, len(buf)):
                raise TraceFormatError(f"bad JSON ({e.msg})") from None
            return self._long_value()  # the value goes on in the next blocks
        except RecursionError:
            return self._long_value()  # too deep for the decoder: measured and refused there
        if not self._eof and buf[start] not in '{["' and not _SCALAR_END.search(buf, end):
            # A number at the end of the text may go on ("1." parses as 1 until "1.5" comes).
            return self._long_value()
        self._pos = end
        if end - start > self.max_value_chars:
            return SKIPPED
        if buf.count("{", start, end) + buf.count("[", start, end) > MAX_NESTING:
            finder = _ValueEnd(buf[start])
            finder.feed(buf, start + (buf[start] == '"'))
            _check_nesting(finder)
        return value

    def _long_value(self) -> Any:
        """A value that goes past the window: its end found in one pass, decoded once."""
        head = self._buf[self._pos :]
        finder = _ValueEnd(head[0])
        chunks, size = [head], len(head)
        end = finder.feed(head, 1 if head[0] == '"' else 0)
        while end < 0:
            text = self._read_text()
            if not text:
                if not finder.scalar:
                    raise TraceFormatError("the file ends inside a value")
                end = len(chunks[-1])  # a number or literal that ends the file
                break
            if size > self.max_value_chars:
                chunks = []  # skipped: nothing of it is kept
            chunks.append(text)
            size += len(text)
            end = finder.feed(text, 0)
        rest = chunks[-1][end:]
        if size - len(rest) > self.max_value_chars:
            self._buf, self._pos = rest, 0
            return SKIPPED
        _check_nesting(finder)
        self._buf, self._pos = "".join(chunks), 0
        try:
            value, self._pos = self._decoder.raw_decode(self._buf, 0)
        except json.JSONDecodeError as e:
            raise TraceFormatError(f"bad JSON ({e.msg})") from None
        except RecursionError:  # only when the stack is already deep: same answer
            raise TraceFormatError(_TOO_DEEP) from None
        return value

    def _skipped(self, reason: str) -> None:
        limit = self.max_value_chars
        reason = reason.format(f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit:,} characters")
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

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
            if not isinstance(key, str) and key is not SKIPPED:
                raise TraceFormatError("an object key is not a string")
            self._expect(":")
            if key == "traceEvents":
                if self._expect("[") == "[":
                    yield from self._array()
                if self.truncated:
                    return
            else:
                value = self._value()
                if key is SKIPPED or value is SKIPPED:
                    self._skipped(OVERSIZED_KEY)
                else:
                    self.metadata[key] = value
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
            elif value is SKIPPED:
                self._skipped(OVERSIZED_EVENT)
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


def _check_nesting(finder: _ValueEnd) -> None:
    if finder.deepest > MAX_NESTING:
        raise TraceFormatError(_TOO_DEEP)


class _ValueEnd:
    """Where one JSON value ends, fed block by block; how deep it nests on the way.

    It does not check the value (the decoder does, once the value is whole); it only tracks
    strings (with their escapes) and brackets, so each character is looked at once.
    """

    def __init__(self, first: str):
        self.scalar = first not in '"[{'
        self.in_string = first == '"'
        self.escaped = False  # the last block ended with a backslash inside a string
        self.depth = 0
        self.deepest = 0

    def feed(self, text: str, i: int) -> int:
        """The end of the value in ``text`` (from ``i``), or -1 when it goes on."""
        if self.scalar:
            found = _SCALAR_END.search(text, i)
            return found.start() if found else -1
        n = len(text)
        while i < n:
            if self.in_string:
                if self.escaped:
                    i, self.escaped = i + 1, False
                    continue
                j = _STRING_BODY.match(text, i).end()  # type: ignore[union-attr]
                if j >= n:
                    return -1
                if text[j] == "\\":  # the escaped character is in the next block
                    self.escaped = True
                    return -1
                self.in_string, i = False, j + 1
                if self.depth == 0:
                    return i
                continue
            found = _STRUCTURE.search(text, i)
            if found is None:
                return -1
            c, i = found.group(), found.end()
            if c == '"':
                self.in_string = True
            elif c in "[{":
                self.depth += 1
                self.deepest = max(self.deepest, self.depth)
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return i
        return -1

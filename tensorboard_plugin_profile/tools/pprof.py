"""The code and scope views as a pprof profile (profile.proto, gzip-compressed).

``go tool pprof`` and speedscope read this format. Each op record is one sample:
its path (scopes or Python frames, the op last) is the stack, leaf first, and its
values are the op's self time in nanoseconds and its run count. Each distinct path
part is one function and one location; Python frames (``file.py:12 fn`` from HLO
metadata, ``$file.py:12 fn`` from XLA's tracer, ``file.py(12): fn`` from PyTorch's)
keep their file and line.

The encoder writes the wire format directly (a few field types): one pass over the
records, one over the distinct names, no per-event work.

Usage::

    data = pprof_bytes(records, paths)     # gzip bytes for ``go tool pprof``
"""

from __future__ import annotations

import gzip
import re
from typing import Dict, Iterable, List, Sequence, Tuple

import pandas as pd

CONTENT_TYPE = "application/vnd.google.protobuf+gzip"
SAMPLE_TYPES = (("time", "nanoseconds"), ("occurrences", "count"))
MAPPING_NAME = "tensorboard-plugin-profile"
_XLA_FRAME = re.compile(r"^\$?(?P<file>.+?):(?P<line>\d+) (?P<name>.+)$")
_TORCH_FRAME = re.compile(r"^(?P<file>\S+\.py)\((?P<line>\d+)\): (?P<name>.+)$")


def pprof_bytes(records: pd.DataFrame, paths: Iterable[Sequence[str]]) -> bytes:
    """The gzip-compressed ``Profile`` message of the records along their paths."""
    strings = _Strings()
    sample_types = b"".join(
        _message(1, _varint_field(1, strings[t]) + _varint_field(2, strings[u]))
        for t, u in SAMPLE_TYPES
    )
    location_of: Dict[str, int] = {}
    samples: List[bytes] = []
    times = (records["self_time_ps"].to_numpy() // 1000).tolist()
    counts = records["occurrences"].to_numpy().tolist()
    for path, time_ns, count in zip(paths, times, counts):  # once per distinct op
        stack = [location_of.setdefault(str(p), len(location_of) + 1) for p in reversed(path)]
        samples.append(_message(2, _packed(1, stack) + _packed(2, [time_ns, count])))
    functions, locations = [], []
    for part, ident in location_of.items():  # once per distinct name
        name, file, line = _frame(part)
        function = _varint_field(1, ident) + _varint_field(2, strings[name])
        function += _varint_field(3, strings[name]) + _varint_field(4, strings[file])
        functions.append(_message(5, function))
        line_message = _varint_field(1, ident) + _varint_field(2, line)
        location = _varint_field(1, ident) + _varint_field(2, 1) + _message(4, line_message)
        locations.append(_message(4, location))
    # One mapping that says the functions are already named (pprof looks for no binary).
    mapping = _varint_field(1, 1) + _varint_field(5, strings[MAPPING_NAME])
    mapping += _varint_field(7, 1) + _varint_field(8, 1) + _varint_field(9, 1)
    body = sample_types + b"".join(samples) + _message(3, mapping)
    body += b"".join(locations) + b"".join(functions)
    body += b"".join(_message(6, s.encode("utf-8", "replace")) for s in strings.table)
    body += _varint_field(14, strings["time"])  # default_sample_type
    return gzip.compress(body, mtime=0)


def once(data: bytes):
    """A ``ToolOutput.chunks`` callable that yields ``data``."""
    return lambda: iter((data,))


def _frame(part: str) -> Tuple[str, str, int]:
    """(function name, file name, line) of a path part; a scope has no file or line."""
    found = _XLA_FRAME.match(part) or _TORCH_FRAME.match(part)
    if found:
        return found["name"], found["file"], int(found["line"])
    return part, "", 0


class _Strings:
    """profile.proto's string table: index 0 is the empty string."""

    def __init__(self) -> None:
        self.table: List[str] = [""]
        self._index: Dict[str, int] = {"": 0}

    def __getitem__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.table)
            self.table.append(text)
        return found


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 as two's complement, as protobuf does
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value) if value else b""


def _message(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _packed(number: int, values: Sequence[int]) -> bytes:
    return _message(number, b"".join(_varint(v) for v in values))

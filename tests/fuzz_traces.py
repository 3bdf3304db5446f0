"""Mutated Chrome-trace and PyTorch JSON files for the service fuzz test (deterministic).

Seeds are the real JSON fixtures (``tests/data``: a ProfilerHook timeline and three
PyTorch traces), the larger ones cut down to a few dozen events per category so that a
case decodes in a fraction of a second. Each case is one of these mutation families
applied to a seed, chosen round-robin so that every family and seed is exercised:

- ``bytes``: the byte edits of the XSpace corpus (``fuzz_corpus.mutate``: flips, special
  bytes, cuts, inserts, repeats, splices of another seed);
- ``truncate``: the file cut at any byte;
- ``types``: a known key (every key the seeds use, in events, in ``args``, at the top
  level; taken in turn) given a value of another type;
- ``numbers``: a number in the text replaced by a huge, tiny, negative or non-finite one;
- ``nesting``: a value replaced by arrays or objects nested 64 to 100,000 levels deep;
- ``strings``: lone surrogates, escaped NULs, bad escapes and invalid UTF-8 in a string;
- ``bom``: a UTF-8 byte order mark (and whitespace) before the text;
- ``gzip``: the gzip form damaged (body, header flags, CRC, length, cut, trailing bytes,
  a second member, gzip of gzip);
- ``shape``: the top level changed (a bare array, ``traceEvents`` of another type, a
  repeated key, events without ``ph``).

Usage::

    for case in cases(300):
        write(case.file_name, case.data)
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
import re
import struct
from collections import Counter
from typing import Any, Iterator

from conftest import FIXTURES
from fuzz_corpus import mutate

SOURCES = (
    ("profiler_hook", "profiler_hook/train/timeline-4.json", "timeline-4.json"),
    ("pytorch_cpu_only", "pytorch_cpu_only/run/rank-34.1074.pt.trace.json.gz", "w.1.pt.trace.json"),
    ("pytorch_amd", "pytorch_amd_mi250/run/worker0.1.pt.trace.json.gz", "w.1.pt.trace.json"),
    ("pytorch_ranks", "pytorch_two_ranks/run/rank0.1.pt.trace.json.gz", "w.1.pt.trace.json"),
)
FAMILIES = ("bytes", "truncate", "types", "numbers", "nesting", "strings", "bom", "gzip", "shape")
_EVENTS_PER_CATEGORY = 25
_WRONG_VALUES = (
    None,
    True,
    "",
    "x",
    "\ud800",
    -1,
    0,
    2**64,
    -(2**63) - 1,
    1e308,
    -1.5,
    [],
    [1, "a", None],
    {},
    {"a": {"b": [1]}},
    "1e400",
    "x" * 5000,
)
_NUMBERS = (
    "1e400",
    "-1e400",
    "1e308",
    "-1e308",
    "1e-400",
    "-0",
    "0.0000000000000000000001",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775809",
    "1" * 400,
    "NaN",
    "Infinity",
    "-Infinity",
)
_DEPTHS = (64, 600, 3000, 100_000)
_STRING_EDITS = (
    "\\ud800",
    "\\udfff",
    "\\ud800\\udc00",
    "\\udc00\\ud800",
    "\\u0000",
    "\\u12",
    "\\x41",
    "\\",
    "\ufffd",
)
_RAW_BYTES = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00")
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


@dataclasses.dataclass(frozen=True)
class Case:
    label: str  # "<seed>:<family>:<index>", stable for a given count and seed
    file_name: str
    data: bytes
    nesting_depth: int = 0  # of the ``nesting`` family's deep value


def seeds() -> list:
    """(name, file name, parsed trace) per source, cut to a few dozen events per category."""
    out = []
    for name, path, file_name in SOURCES:
        data = (FIXTURES / path).read_bytes()
        trace = json.loads(gzip.decompress(data) if path.endswith(".gz") else data)
        kept: Counter = Counter()
        events = []
        for event in trace["traceEvents"]:
            category = (event.get("ph"), event.get("cat"))
            if event.get("ph") == "M" or kept[category] < _EVENTS_PER_CATEGORY:
                events.append(event)
                kept[category] += 1
        out.append((name, file_name, dict(trace, traceEvents=events)))
    return out


def known_keys(pool: list) -> list:
    """Every key the seeds use: ("top", key), ("event", key), ("args", key), sorted."""
    keys = set()
    for _, _, trace in pool:
        keys.update(("top", k) for k in trace)
        for event in trace["traceEvents"]:
            keys.update(("event", k) for k in event)
            args = event.get("args")
            if isinstance(args, dict):
                keys.update(("args", k) for k in args)
    return sorted(keys)


def cases(count: int, seed: int = 24) -> Iterator[Case]:
    """``count`` cases; family ``i % len(FAMILIES)``, seed ``i // len(FAMILIES) % seeds``."""
    rng = random.Random(seed)
    pool = seeds()
    texts = [json.dumps(trace).encode() for _, _, trace in pool]
    keys = known_keys(pool)
    for i in range(count):
        family = FAMILIES[i % len(FAMILIES)]
        k = i // len(FAMILIES) % len(pool)
        name, file_name, trace = pool[k]
        other = texts[rng.randrange(len(texts))]
        key = keys[i // len(FAMILIES) % len(keys)]
        depth = rng.choice(_DEPTHS) if family == "nesting" else 0
        data = _mutated(family, trace, texts[k], rng, other, key, depth)
        gzipped = data[:2] == b"\x1f\x8b"
        if gzipped and not file_name.endswith(".gz"):
            file_name += ".gz"
        yield Case(f"{name}:{family}:{i}", file_name, data, depth)


def _mutated(
    family: str, trace: dict, text: bytes, rng: random.Random, other: bytes, key, depth: int
) -> bytes:
    if family == "bytes":
        return mutate(text, rng, other)
    if family == "truncate":
        return text[: rng.randrange(len(text))]
    if family == "types":
        return _dumps(_wrong_type(trace, key, rng))
    if family == "numbers":
        return _replace_match(text, _NUMBER, rng, rng.choice(_NUMBERS).encode())
    if family == "nesting":
        return _nested(trace, rng, depth)
    if family == "strings":
        return _string_edit(text, rng)
    if family == "bom":
        return b"\xef\xbb\xbf" + rng.choice((b"", b" ", b"\n", b"\xef\xbb\xbf")) + text
    if family == "gzip":
        return _gzip_damage(text, rng)
    return _shape(trace, rng)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: a lone surrogate is written \ud800


def _events_with(trace: dict, where: str, name: str) -> list:
    """The dicts holding ``name`` at ``where`` ("event" or "args")."""
    out = []
    for event in trace["traceEvents"]:
        holder = event if where == "event" else event.get("args")
        if isinstance(holder, dict) and name in holder:
            out.append(holder)
    return out


def _wrong_type(trace: dict, key: tuple, rng: random.Random) -> dict:
    where, name = key
    trace = json.loads(json.dumps(trace))  # a copy to edit
    value = rng.choice(_WRONG_VALUES)
    if where == "top":
        trace[name] = value
        return trace
    holders = _events_with(trace, where, name)
    for holder in rng.sample(holders, min(len(holders), rng.choice((1, 1, 3, len(holders))))):
        holder[name] = value if type(value) is not type(holder[name]) else None
    return trace


def _replace_match(text: bytes, pattern: re.Pattern, rng: random.Random, new: bytes) -> bytes:
    """``text`` with one or a few of ``pattern``'s matches replaced by ``new``."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text + new
    chosen = rng.sample(matches, min(len(matches), rng.choice((1, 1, 4))))
    for match in sorted(chosen, key=lambda m: m.start(), reverse=True):
        text = text[: match.start()] + new + text[match.end() :]
    return text


def _nested(trace: dict, rng: random.Random, depth: int) -> bytes:
    opening, closing = rng.choice((("[", "]"), ('{"a":', "}")))
    deep = opening * depth + "1" + closing * depth
    marker = "\u0001DEEP\u0001"
    trace = json.loads(json.dumps(trace))
    events = trace["traceEvents"]
    where = rng.randrange(3)
    if where == 0:
        trace["deepMetadata"] = marker
    elif where == 1:
        rng.choice(events)["args"] = marker
    else:
        events.insert(rng.randrange(len(events) + 1), marker)
    return _dumps(trace).replace(json.dumps(marker).encode(), deep.encode(), 1)


def _string_edit(text: bytes, rng: random.Random) -> bytes:
    matches = list(_STRING.finditer(text))
    match = rng.choice(matches)
    at = rng.randrange(match.start() + 1, match.end())
    edit = rng.choice(_STRING_EDITS + _RAW_BYTES)
    insert = edit if isinstance(edit, bytes) else edit.encode()
    return text[:at] + insert + text[at:]


def _gzip_damage(text: bytes, rng: random.Random) -> bytes:
    packed = bytearray(gzip.compress(text, 1, mtime=0))
    kind = rng.randrange(9)
    if kind == 0:  # the deflate stream
        packed[rng.randrange(10, len(packed) - 8)] ^= 1 << rng.randrange(8)
    elif kind == 1:  # cut anywhere
        del packed[rng.randrange(2, len(packed)) :]
    elif kind == 2:  # the CRC or the length of the trailer
        packed[len(packed) - rng.randrange(1, 9)] ^= 0xFF
    elif kind == 3:  # trailing bytes after the member
        packed += rng.choice((b"\0" * 8, b"garbage", rng.randbytes(40)))
    elif kind == 4:  # a second member, whole or cut
        second = gzip.compress(rng.choice((text, b"]}", b"")), 1, mtime=0)
        packed += second[: rng.randrange(1, len(second) + 1)]
    elif kind == 5:  # header flags announcing fields that are not there
        packed[3] = rng.choice((0x04, 0x08, 0x10, 0x02, 0xE0))
    elif kind == 6:  # FEXTRA with a huge length
        packed[3] = 0x04
        packed[10:10] = struct.pack("<H", 0xFFFF) + b"x" * 5
    elif kind == 7:  # gzip of gzip
        return gzip.compress(bytes(packed), 1, mtime=0)
    else:  # another compression method
        packed[2] = rng.choice((0, 7, 9))
    return bytes(packed)


def _shape(trace: dict, rng: random.Random) -> bytes:
    events = trace["traceEvents"]
    kind = rng.randrange(7)
    if kind == 0:
        return _dumps(events)  # the bare-array form
    if kind == 1:
        return _dumps(dict(trace, traceEvents=rng.choice((None, {}, "x", 5, [[]], [None, 1]))))
    if kind == 2:  # a second traceEvents key, later in the object
        return _dumps(trace)[:-1] + b', "traceEvents": ' + _dumps(events[:3]) + b"}"
    if kind == 3:
        stripped = [{k: v for k, v in e.items() if k != "ph"} for e in events]
        return _dumps(dict(trace, traceEvents=stripped))
    if kind == 4:
        unknown = [dict(e, ph=rng.choice(("", "XX", "Z", "\u00e9", 1))) for e in events]
        return _dumps(dict(trace, traceEvents=unknown))
    if kind == 5:
        return rng.choice((b"", b"{}", b"[]", b"null", b'{"traceEvents": []}', b"{" * 10))
    return _dumps(dict(trace, traceEvents=events * 4))  # every event repeated

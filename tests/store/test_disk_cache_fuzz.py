"""Fuzz: a damaged disk-cache entry is ignored and recomputed, or gives the same answer.

A real cache is written once per module by the service (``store/disk_cache.py``,
``store/frames_codec.py``) for two sessions: an XSpace (``jax_cpu_train``, cut to 60 events
per line, HLO modules kept) and a PyTorch trace (``pytorch_amd_mi250``). It holds each
session's decoded Space and the results of ``run_tools`` and a few tools. Each case restores
that cache, damages one entry, starts a new service on it and asks the questions that entry
answers (for a Space entry: a trace window no entry holds, so the Space itself must be
read). The answer must be the one computed before the damage, byte for byte (or the same
error); nothing may raise, hang (60 s) or answer differently, nor raise the process's peak
memory by more than 512 MiB.

Damage families, each applied to every entry in turn:

- ``payload``: bytes of the payload edited (the checksum covers them);
- ``cut``: the file cut short or given trailing bytes;
- ``prefix``: the magic, the header length or the checksum edited;
- ``header``: bytes of the header JSON edited in place (outside the key, whose text holds
  the temporary path), the length and the (now stale) checksum kept;
- ``fields``: one header field changed and the entry rewritten: the payload length, the
  format or the key, or a length or mode inside a compact column of the tree
  (``store/column_codec.py``: ``$int``, ``$runs``, ``$bits``, ``$z``) (with a checksum that
  verifies: a forged entry's fields are still checked before use), or a dtype, shape or
  offset, the metadata, array layouts or two ``$a`` references of the tree swapped (with
  the stale checksum: those can make a consistent entry of other data, a forgery the cache
  does not claim to detect, docs/security.md);
- ``nested``: a header field replaced by arrays nested 100 to 100,000 levels deep (with a
  checksum that verifies);
- ``swap``: the entry replaced by another whole entry.

``TBPROF_FUZZ_CACHE_CASES`` sets the number of cases (default 84: each of the 12 entries under
every family at least once); ``TBPROF_FUZZ_CACHE_CASES=2000`` runs a longer campaign.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import random
import struct
import threading
import traceback
import zlib
from typing import Optional

import pytest
from conftest import FIXTURES
from fuzz_traces import seeds as json_seeds
from peak_memory import peak_growth

from tensorboard_plugin_profile.common.errors import ProfileError
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.store.cache_entry import FORMAT_VERSION, MAGIC

CASES = int(os.environ.get("TBPROF_FUZZ_CACHE_CASES", "84"))
FAMILIES = ("payload", "cut", "prefix", "header", "fields", "nested", "swap")
CASE_TIMEOUT_S = 60.0
MEMORY_LIMIT_BYTES = 512 << 20
_FIXED_MTIME_NS = 1_700_000_000_123_456_789  # keys (path, size, mtime) without a clock
_EVENTS_PER_LINE = 60
# The questions asked of each session; a tool is asked only where run_tools lists it.
TOOLS = (
    "overview_page",
    "framework_op_stats",
    "hlo_stats",
    "op_profile",
    "op_types",
    "pytorch_overview",
    "pytorch_operators",
)
PROBE = {"format": "columnar", "resolution": "777"}  # kept out of the cache: reads the Space
_HEAD_START = len(MAGIC) + 16  # magic | header length | checksum | header
FOLDER = f"v{FORMAT_VERSION}"
_NESTED_DEPTHS = (100, 5000, 100_000)
# ``fields`` changes rewritten with a checksum that verifies, as a forger would: those the
# header checks refuse (payload length, format, key). The others (a swap, a dtype, shape,
# offset or the metadata) can describe a consistent entry of other data, a forgery the cache
# does not claim to detect (docs/security.md): they keep the stale checksum, as damage on
# disk would, and must be detected by it.
_FORGED = (6, 7, 8)
_FIELD_CHANGES = 9
# Tags of compact columns (store/column_codec.py), and where their length or mode sits.
_PACKED = {"$int": 1, "$runs": 0, "$bits": 0, "$z": 1}


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str  # file name in the cache's version folder
    run: str
    queries: tuple  # (route, tool, params) answered by this entry


def _params() -> list:
    out = []
    for i in range(CASES):
        label = f"{FAMILIES[i % len(FAMILIES)]}:{i}"
        out.append(pytest.param(label, id=label))
    return out


# --- the cache every case starts from ---------------------------------------------------
def _small_xspace() -> bytes:
    path = next((FIXTURES / "jax_cpu_train").glob("plugins/profile/*/*.xplane.pb"))
    space = xplane_pb2.XSpace.FromString(path.read_bytes())
    for plane in space.planes:
        if plane.name == "/host:metadata":  # the HLO modules
            continue
        used = set()
        for line in plane.lines:
            del line.events[_EVENTS_PER_LINE:]
            used.update(event.metadata_id for event in line.events)
        for unused in [m for m in plane.event_metadata if m not in used]:
            del plane.event_metadata[unused]
    return space.SerializeToString()


def _logdir(root: pathlib.Path) -> pathlib.Path:
    logdir = root / "logs"
    session = logdir / "jax" / "plugins" / "profile" / "s"
    session.mkdir(parents=True)
    files = [session / "vm.xplane.pb", logdir / "torch" / "w.1.pt.trace.json"]
    files[0].write_bytes(_small_xspace())
    files[1].parent.mkdir()
    _, _, amd = next(s for s in json_seeds() if s[0] == "pytorch_amd")
    files[1].write_text(json.dumps(amd))
    for f in files:
        os.utime(f, ns=(_FIXED_MTIME_NS, _FIXED_MTIME_NS))
    return logdir


def _service(logdir: pathlib.Path, cache: pathlib.Path) -> ProfileService:
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=str(cache), workers=1))


def _answer(service: ProfileService, query: tuple) -> tuple:
    route, run, tool, params = query
    try:
        if route == "run_tools":
            return ("ok", json.dumps(service.run_tools(run)).encode())
        result = service.tool_data(run, tool, params=dict(params))
        return ("ok", result.content_type, b"".join(result.chunks()))
    except ProfileError as e:
        return ("error", type(e).__name__, e.message)


def _entries(dir_: pathlib.Path) -> set:
    return {p.name for p in dir_.iterdir() if p.name.endswith(".bin")}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """(logdir, cache dir, {entry name: bytes}, [Entry], {query: good answer})."""
    root = tmp_path_factory.mktemp("cache_fuzz")
    logdir, cache = _logdir(root), root / "cache"
    service = _service(logdir, cache)
    good, entries = {}, []

    def ask(query: tuple) -> list:
        """The names of the entries answering ``query`` made."""
        before = _entries(cache / FOLDER) if (cache / FOLDER).is_dir() else set()
        good[query] = _answer(service, query)
        service.disk.flush()
        return sorted(_entries(cache / FOLDER) - before)

    for run in service.runs():
        probe = ("data", run, "trace_viewer@", tuple(PROBE.items()))
        listing = ("run_tools", run, "", ())
        for name in ask(listing):  # the Space (decoded for the listing) and the listing
            entries.append(Entry(name, run, (probe if name.startswith("space-") else listing,)))
        listed = json.loads(good[listing][1])
        for query in [("data", run, tool, ()) for tool in TOOLS if tool in listed]:
            entries += [Entry(name, run, (query,)) for name in ask(query)]
        for name in ask(probe):  # the probe stays uncached: it must read the Space
            (cache / FOLDER / name).unlink()
    service.close()
    assert sorted(e.name.split("-")[0] for e in entries).count("space") == 2, entries
    # 2 Spaces, 2 listings, 7 tool results (TF stats is not listed for JAX: no TF ops).
    assert len(entries) == 11, entries
    data = {e.name: (cache / FOLDER / e.name).read_bytes() for e in entries}
    spaces = [_parts(content)[0]["tree"] for name, content in data.items() if "space-" in name]
    for tag in _PACKED:  # the damage reaches every compact encoding of column_codec
        assert any(_nodes(tree, lambda node, t=tag: t in node) for tree in spaces), tag
    return logdir, cache, data, entries, good


def _restore(cache: pathlib.Path, data: dict) -> None:
    folder = cache / FOLDER
    for name in os.listdir(folder):
        if name not in data and name.endswith(".bin") or name.startswith(".tmp"):
            os.unlink(folder / name)
    for name, content in data.items():
        (folder / name).write_bytes(content)


# --- the damage -------------------------------------------------------------------------
def _parts(entry: bytes) -> tuple:
    """(header dict, header bytes, payload bytes) of a well-formed entry."""
    (length,) = struct.unpack("<Q", entry[len(MAGIC) : len(MAGIC) + 8])
    head = entry[_HEAD_START : _HEAD_START + length]
    base = -(-(_HEAD_START + length) // 64) * 64
    return json.loads(head), head, entry[base:]


def _entry_bytes(head: bytes, payload: bytes, checksum: Optional[bytes] = None) -> bytes:
    """An entry laid out as the cache writes one (the header padded to 64 bytes), with
    ``checksum`` (the stale one of a damaged entry), else one that verifies (a forged entry:
    its fields must still be checked before use)."""
    length = struct.pack("<Q", len(head))
    padding = bytes(-(_HEAD_START + len(head)) % 64)
    if checksum is None:
        crc = zlib.crc32(payload, zlib.crc32(padding, zlib.crc32(head, zlib.crc32(length))))
        checksum = struct.pack("<Q", crc)
    return MAGIC + length + checksum + head + padding + payload


def _edit(buf: bytearray, at: int, rng: random.Random) -> None:
    """A bit flipped, a digit changed into another, or a character JSON cares about."""
    kind = rng.randrange(3)
    if kind == 0:
        buf[at] ^= 1 << rng.randrange(8)
    elif kind == 1 and chr(buf[at]).isdigit():
        buf[at] = rng.choice([d for d in b"0123456789" if d != buf[at]])
    else:
        buf[at] = rng.choice(b'0129{}[]",:\x00\xff -e')


def damage(entry: bytes, family: str, rng: random.Random, others: list, turn: int) -> bytes:
    """``entry`` damaged by ``family``; ``turn`` picks which field ``fields`` changes."""
    header, head, payload = _parts(entry)
    stale = entry[len(MAGIC) + 8 : _HEAD_START]
    if family == "payload":
        buf = bytearray(entry)
        for _ in range(rng.choice((1, 1, 3))):
            if payload:
                _edit(buf, len(entry) - len(payload) + rng.randrange(len(payload)), rng)
        return bytes(buf)
    if family == "cut":
        cut = entry[: rng.randrange(len(entry))] if rng.random() < 0.7 else entry
        return cut + (rng.randbytes(rng.randint(1, 100)) if rng.random() < 0.4 else b"")
    if family == "prefix":
        buf = bytearray(entry)
        _edit(buf, rng.randrange(_HEAD_START), rng)
        return bytes(buf)
    if family == "header":
        return _entry_bytes(_header_bytes_edited(head, rng), payload, stale)
    if family == "fields":
        changed = json.dumps(_field_changed(header, rng, turn)).encode()
        forged = turn % _FIELD_CHANGES in _FORGED
        return _entry_bytes(changed, payload, None if forged else stale)
    if family == "nested":
        depth = rng.choice(_NESTED_DEPTHS)
        field = rng.choice(("arrays", "tree", "meta", "key"))
        marker = "\u0001DEEP\u0001"
        text = json.dumps(dict(header, **{field: marker}))
        nested = "[" * depth + "0" + "]" * depth
        return _entry_bytes(text.replace(json.dumps(marker), nested, 1).encode(), payload)
    return rng.choice(others)  # swap


def _header_bytes_edited(head: bytes, rng: random.Random) -> bytes:
    """One to three in-place edits of the header text outside its key (same length), more
    often on a digit (an offset, a shape, a reference) than elsewhere."""
    key, key_end = head.index(b'"key":'), head.index(b'"arrays":')
    outside = [i for i in range(len(head)) if not key <= i < key_end]
    digits = [i for i in outside if chr(head[i]).isdigit()]
    buf = bytearray(head)
    for _ in range(rng.choice((1, 1, 3))):
        _edit(buf, rng.choice(digits if digits and rng.random() < 0.6 else outside), rng)
    return bytes(buf)


def _field_changed(header: dict, rng: random.Random, turn: int) -> dict:
    header = json.loads(json.dumps(header))
    arrays = header["arrays"]
    change = turn % _FIELD_CHANGES
    if change == 0 and len(arrays) > 1:  # two array layouts swapped
        i, j = rng.sample(range(len(arrays)), 2)
        arrays[i], arrays[j] = arrays[j], arrays[i]
    elif change == 1:
        rng.choice(arrays)[1] = rng.choice(("<i8", "<f8", "<i4", "|u1", "|b1", "<c16", "|O"))
    elif change == 2:
        layout = rng.choice(arrays)
        layout[2] = [max(0, (layout[2] or [1])[0] + rng.choice((-1, 1, -(10**6), 10**18)))]
    elif change == 3:
        rng.choice(arrays)[0] += rng.choice((-64, 64, 8, -(10**9)))
    elif change == 4:  # two references of the tree swapped
        refs = _array_refs(header["tree"])
        if len(refs) > 1:
            a, b = rng.sample(refs, 2)
            a["$a"], b["$a"] = b["$a"], a["$a"]
    elif change == 5:
        header["meta"] = rng.choice(
            ({"not_applicable": True}, {"content_type": "text/plain"}, {}, None, [])
        )
    elif change == 6:
        header["payload_bytes"] = rng.choice((0, -1, header["payload_bytes"] + 1, 2**64, "1"))
    elif change == 7:
        header[rng.choice(("format", "key"))] = rng.choice((2, 0, None, "x"))
    else:  # a compact column's length or mode, which its stored arrays contradict
        _packed_node_changed(header["tree"], rng)
    return header


def _packed_node_changed(tree, rng: random.Random) -> None:
    nodes = _nodes(tree, lambda node: len(node) == 1 and next(iter(node)) in _PACKED)
    if not nodes:
        return
    (tag, body), *_ = rng.choice(nodes).items()
    at = _PACKED[tag]
    if tag == "$int":
        body[at] = rng.choice(("x", "runs", None, 3))  # no such mode
    else:  # another length: more or fewer bytes than the stored ones hold, or far too many
        body[at] = rng.choice((body[at] + 64, max(body[at] - 64, 0) or 1 << 40, 1 << 50, -1))


def _array_refs(tree) -> list:
    """Every ``{"$a": i}`` node of a tree."""
    return _nodes(tree, lambda node: set(node) == {"$a"})


def _nodes(tree, wanted) -> list:
    """Every dict node of a tree that is ``wanted``, depth first (iteratively: trees are
    deep)."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if wanted(node):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


# --- the cases --------------------------------------------------------------------------
@pytest.mark.parametrize("label", _params())
def test_a_damaged_entry_is_recomputed_or_gives_the_same_answer(pristine, label):
    logdir, cache, data, entries, good = pristine
    family, i = label.split(":")[0], int(label.split(":")[1])
    entry = entries[i // len(FAMILIES) % len(entries)]
    rng = random.Random(label)
    others = [content for name, content in sorted(data.items()) if name != entry.name]
    _restore(cache, data)
    damaged = damage(data[entry.name], family, rng, others, i // len(FAMILIES))
    (cache / FOLDER / entry.name).write_bytes(damaged)
    result: dict = {}

    def ask() -> None:
        try:
            service = _service(logdir, cache)
            try:
                result["answers"] = {q: _answer(service, q) for q in entry.queries}
            finally:
                service.close()
        except BaseException:  # reported below, with the entry that caused it
            result["raised"] = traceback.format_exc(limit=-3)

    with peak_growth() as grown:
        worker = threading.Thread(target=ask, daemon=True, name=f"cache fuzz {label}")
        worker.start()
        worker.join(CASE_TIMEOUT_S)
    assert not worker.is_alive(), f"{label} ({entry.name}): no answer in {CASE_TIMEOUT_S} s"
    assert "answers" in result, f"{label} ({entry.name}): the service raised\n{result['raised']}"
    for query, answer in result["answers"].items():
        assert answer == good[query], f"{label}: {entry.name} damaged, {query} answers differently"
    if grown.bytes is not None:
        assert grown.bytes <= MEMORY_LIMIT_BYTES, f"{label}: peak grew {grown.bytes >> 20} MiB"

"""Hostile Chrome-trace JSON (issue 24, items 6, 7, 11 and 12): values that span many
blocks, inflate caps inside a value, deep nesting, oversized values, a million threads,
a byte-order mark, bytes after the gzip data and negative durations. Every case is read by
the compiled scanner and by the pure-Python path, which must agree."""

from __future__ import annotations

import gzip
import json
import random
import time
import zlib

import pytest

from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.chrome_trace.stream import MAX_NESTING, TraceStream
from tensorboard_plugin_profile.common.errors import CorruptProfile, ProfileTooLarge
from tensorboard_plugin_profile.common.memsize import deep_size

EVENT = {"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}


@pytest.fixture(params=["compiled", "pure"])
def paths(request, monkeypatch):
    """Both readers: the compiled scanner and the pure-Python definition."""
    if request.param == "pure":
        monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    return request.param


def _write(path, text: str, gz: bool = False):
    data = text.encode()
    path.write_bytes(gzip.compress(data, 1) if gz else data)
    return str(path)


def _durations(space) -> list:
    return sorted(d for p in space.planes for d in p.events["duration_ps"].tolist())


# --- item 6: one huge value -----------------------------------------------------------
def test_a_long_string_decodes_in_linear_time(tmp_path):
    """4 MB in 4 KB blocks: the old reader decoded the growing value again after every
    block (1,000 times, ~2 GB scanned); now its end is found in one pass."""
    name = "x" * (4 << 20)
    path = _write(tmp_path / "s.json", json.dumps({"traceEvents": [{**EVENT, "name": name}]}))
    started = time.perf_counter()
    events = list(TraceStream(path, block_chars=4096).events())
    assert time.perf_counter() - started < 2.0
    assert events[0]["name"] == name


def test_a_big_metadata_list_decodes_in_linear_time(tmp_path):
    """A large ``deviceProperties`` (the report's 100 MB case took more than 90 s)."""
    props = [{"id": i, "name": f"GPU {i}", "totalGlobalMem": 1 << 34} for i in range(40_000)]
    text = json.dumps({"deviceProperties": props, "traceEvents": [EVENT]})
    path = _write(tmp_path / "p.json", text)
    started = time.perf_counter()
    stream = TraceStream(path, block_chars=4096)
    assert len(list(stream.events())) == 1
    assert time.perf_counter() - started < 2.0
    assert stream.metadata["deviceProperties"] == props


def test_values_cut_anywhere_by_blocks_decode_as_json_does(tmp_path):
    """Escapes, backslash runs, numbers and nested lists cut at every block size."""
    rng = random.Random(24)
    pieces = ['\\"', "\\\\", "\\n", "\\u00e9", "\u4e2d", "a", '"', "[", "]", "{", "}", ","]
    events = []
    for i in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 60)))
        nested: list = [i, -1.5e-3, text]
        for _ in range(rng.randrange(0, 5)):
            nested = [nested, {"k": nested}]
        events.append({**EVENT, "ts": 12345678901234 + i, "name": text, "args": {"v": nested}})
    meta = {"big": 10**30, "f": 1.000000000001, "s": "\\" * 33}
    doc = {**meta, "traceEvents": events}
    path = _write(tmp_path / "e.json", json.dumps(doc, ensure_ascii=False))
    for block in (1, 2, 3, 7, 61, 4096, 1 << 20):
        stream = TraceStream(path, block_chars=block)
        assert list(stream.events()) == events, block
        assert stream.metadata == meta, block


def _string_bomb(path, inflated: int) -> str:
    """A gzip file holding one event whose name is ``inflated`` bytes of 'a'."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"a" * (1 << 20)
    parts = [z.compress(b'{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"')]
    parts += [z.compress(chunk) for _ in range(inflated >> 20)]
    parts += [z.compress(b'"}]}'), z.flush()]
    path.write_bytes(b"".join(parts))
    return str(path)


def test_the_inflate_cap_stops_inside_a_value(tmp_path, monkeypatch, paths):
    """A 200 KB gzip holding a 200 MB string: refused (413) after about one block past the
    cap, not after the whole string was inflated and decoded (quadratically, before)."""
    monkeypatch.setenv("TBPROF_MAX_DECOMPRESSED_BYTES", str(8 << 20))
    path = _string_bomb(tmp_path / "bomb.json.gz", 200 << 20)
    started = time.perf_counter()
    with pytest.raises(ProfileTooLarge, match="TBPROF_MAX_DECOMPRESSED_BYTES"):
        read_chrome_trace(path)
    assert time.perf_counter() - started < 10.0


def test_a_value_over_the_value_cap_is_skipped_and_said(tmp_path, monkeypatch, paths):
    monkeypatch.setenv("TBPROF_MAX_JSON_VALUE_BYTES", "1000")
    big = {**EVENT, "name": "b" * 5000}
    doc = {"huge": ["m" * 3000], "small": 1, "traceEvents": [EVENT, big, {**EVENT, "ts": 3}]}
    for block in (1 << 20, 100):
        path = _write(tmp_path / "v.json", json.dumps(doc))
        stream = TraceStream(path, block_chars=block, max_value_chars=1000)
        assert [e["ts"] for e in stream.events()] == [1, 3]
        assert stream.metadata == {"small": 1}
    space = read_chrome_trace(path)
    assert space.num_events == 2
    assert space.extras["metadata"] == {"small": 1}
    assert any(
        "1 events of more than 1,000 characters of JSON not read" in w for w in space.warnings
    )
    assert any("1 top-level keys of more than" in w for w in space.warnings)


# --- item 11: nesting ------------------------------------------------------------------
def _nested(depth: int) -> str:
    """JSON text nested ``depth`` levels (written by hand: json.dumps itself recurses)."""
    text = "1"
    for i in range(depth):
        text = f"[{text}]" if i % 2 else f'{{"k":{text}}}'
    return text


def _event_with_args(args: str) -> str:
    return json.dumps(EVENT)[:-1] + f', "args": {args}}}'


@pytest.mark.parametrize("where", ["args", "metadata"])
def test_deep_nesting_is_a_clear_422_at_any_block_size(tmp_path, paths, where):
    """Past ~990 levels Python's decoder raised RecursionError (an opaque 500); 500 levels
    in the metadata broke the cache's size walk. Now past MAX_NESTING: CorruptProfile."""
    for depth in (MAX_NESTING + 1, 995, 5000):
        deep = _nested(depth)
        text = '{"traceEvents": [' + _event_with_args('{"d": ' + deep + "}") + "]}"
        if where == "metadata":
            text = '{"deviceProperties": ' + deep + ', "traceEvents": [' + json.dumps(EVENT) + "]}"
        path = _write(tmp_path / "deep.json", text)
        with pytest.raises(CorruptProfile, match=f"nested more than {MAX_NESTING} levels"):
            read_chrome_trace(path)
        for block in (7, 4096):
            with pytest.raises(ValueError, match="nested more than"):
                list(TraceStream(path, block_chars=block).events())


def test_nesting_up_to_the_limit_is_read(tmp_path, paths):
    """The event itself and its args object take two of the levels."""
    event = _event_with_args('{"d": ' + _nested(MAX_NESTING - 2) + "}")
    text = '{"deviceProperties": ' + _nested(MAX_NESTING) + ', "traceEvents": [' + event + "]}"
    space = read_chrome_trace(_write(tmp_path / "ok.json", text))
    assert space.num_events == 1
    assert deep_size(space) > 0  # the cache's size walk meets the nested metadata too


# --- item 7: memory per thread line ------------------------------------------------------
def _threads(path, lines: int, processes: int) -> str:
    events = (
        f'{{"ph":"X","name":"a","ts":{i},"dur":1,"pid":{i % processes},"tid":{i}}}'
        for i in range(lines)
    )
    path.write_bytes(gzip.compress(("[" + ",".join(events) + "]").encode(), 1))
    return str(path)


def test_memory_per_thread_line_follows_the_events(tmp_path, paths):
    """20,000 one-event threads in 200 processes. Each process's columns used to be slices
    of its own sorted copy of every column (16 KB per line on 1 M lines, 5.2 GB reached)."""
    space = read_chrome_trace(_threads(tmp_path / "t.json.gz", 20_000, 200))
    assert space.num_events == 20_000 and len(space.planes) == 200
    per_line = deep_size(space) / 20_000
    assert per_line < 1500, per_line  # ~700 B now (mostly each process's fixed tables)


def test_a_million_processes_are_refused_before_they_are_built(tmp_path, monkeypatch, paths):
    """Every process is a plane with its own tables (~10 ms each): counted in the decoded
    size, so a small file of many one-event processes is a 413, not hours of work."""
    monkeypatch.setenv("TBPROF_MAX_DECODED_BYTES", str(64 << 20))
    path = _threads(tmp_path / "p.json.gz", 5000, 5000)
    started = time.perf_counter()
    with pytest.raises(ProfileTooLarge, match="5,000 processes"):
        read_chrome_trace(path)
    assert time.perf_counter() - started < 10.0


# --- item 12: what other tools accept ---------------------------------------------------
def test_a_byte_order_mark_is_accepted(tmp_path, paths):
    text = "\ufeff" + json.dumps({"traceEvents": [EVENT]})
    for gz in (False, True):
        space = read_chrome_trace(_write(tmp_path / f"bom{int(gz)}.json", text, gz))
        assert space.num_events == 1


def test_bytes_after_the_gzip_data_are_ignored_and_said(tmp_path, paths):
    text = json.dumps({"traceEvents": [EVENT, {**EVENT, "ts": 5}]}).encode()
    half = len(text) // 2
    two_members = gzip.compress(text[:half]) + gzip.compress(text[half:])
    cases = {
        "garbage": (gzip.compress(text) + b"garbage\n", 8),
        "zeros": (gzip.compress(text) + b"\0" * 512, 0),
        "members": (two_members + b"\0\0", 0),
    }
    for name, (data, trailing) in cases.items():
        path = tmp_path / f"{name}.json.gz"
        path.write_bytes(data)
        space = read_chrome_trace(str(path))
        assert space.num_events == 2, name
        assert not space.extras["truncated"], name
        said = [w for w in space.warnings if "after the gzip data were ignored" in w]
        assert len(said) == (1 if trailing else 0), name
        if trailing:
            assert f"{trailing:,} bytes" in said[0]


def test_a_damaged_gzip_is_still_refused(tmp_path, paths):
    data = bytearray(gzip.compress(json.dumps({"traceEvents": [EVENT]}).encode()))
    data[12:20] = b"\xff" * 8
    path = tmp_path / "bad.json.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptProfile, match="damaged gzip"):
        read_chrome_trace(str(path))


def test_a_negative_duration_is_drawn_as_zero_and_said(tmp_path, paths):
    events = [EVENT, {**EVENT, "ts": 5, "dur": -3}, {**EVENT, "ts": 6, "dur": -0.0000001}]
    space = read_chrome_trace(_write(tmp_path / "neg.json", json.dumps(events)))
    assert _durations(space) == [0, 0, 2_000_000]
    assert any("1 events with a negative duration" in w for w in space.warnings)

"""The compiled scanner (chrome_trace/_collect.c) against the pure-Python reader: identical
columns, interned tables and times on every fixture and on edge cases, at any block size."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.chrome_trace import collect
from tensorboard_plugin_profile.chrome_trace import read as chrome_read
from tensorboard_plugin_profile.chrome_trace.collect import Collector
from tensorboard_plugin_profile.chrome_trace.stream import TraceStream
from tensorboard_plugin_profile.kernels import compiled

SCANNER = compiled.load(collect.__name__)
pytestmark = pytest.mark.skipif(SCANNER is None, reason="built without a C compiler")

COLUMNS = ("ev_line", "ev_name", "ev_cat", "ev_begin", "ev_dur", "st_event", "st_key", "st_kind",
           "st_int", "st_float", "flow_line", "flow_ts", "flow_key", "flow_phase")  # fmt: skip
TABLES = ("strings", "stat_keys", "lines", "flow_keys")
FILES = sorted(FIXTURES.glob("pytorch_*/run/*.pt.trace.json.gz")) + sorted(
    FIXTURES.glob("profiler_hook/train/timeline-*.json")
)


def _collect(path, fast: bool, block: int = 1 << 20, threads: int = 1):
    stream, collector, scanned = TraceStream(str(path), block_chars=block), Collector(), [0]

    def scan(text, pos):
        pos, count = SCANNER.scan(text, pos, collector, 1 << 62, threads)
        scanned[0] += count
        return pos, count

    for event in stream.events(scan if fast else None):
        collector.add(event)
    collector.finish()
    return collector, stream, scanned[0]


def _state(c: Collector, stream: TraceStream) -> dict:
    state = {name: getattr(c, name).tobytes() for name in COLUMNS}
    state.update({name: getattr(c, name).values for name in TABLES})
    state.update(base=c.base_us, end=c.end_ps, skipped=c.skipped, processes=c.process_meta,
                 threads=c.thread_meta, truncated=stream.truncated, count=stream.count)  # fmt: skip
    return state


def _assert_same(path, blocks=(1 << 20, 4096, 61, 7), threads: int = 1) -> int:
    pure = _state(*_collect(path, False)[:2])
    scanned = 0
    for block in blocks:
        c, stream, n = _collect(path, True, block, threads)
        assert _state(c, stream) == pure, block
        scanned = max(scanned, n)
    return scanned


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_fixtures_read_the_same(path):
    scanned = _assert_same(path, blocks=(1 << 20, 4096))
    if "pytorch" in str(path):  # the hot path is the scanner's: Python sees metadata only
        stream = TraceStream(str(path))
        data_events = sum(e.get("ph") != "M" for e in stream.events())
        assert scanned >= 0.99 * data_events


EDGE_EVENTS = [
    {
        "ph": "X",
        "name": "plain",
        "cat": "cpu_op",
        "pid": 1,
        "tid": 2,
        "ts": 1000.5,
        "dur": 2.5,
        "args": {
            "Input Dims": [[1, 3], [], [2]],
            "Input type": ["float", ""],
            "n": 7,
            "f": 1.25,
            "t": True,
            "no": False,
            "none": None,
            "e": 1e5,
            "neg0": -0.0,
            "big": 2**70,
        },
    },
    {
        "ph": "X",
        "name": 'esc"aped \u00e9',
        "cat": "c",
        "pid": "Spans",
        "tid": "t",
        "ts": 1001,
        "dur": 3,
        "args": {"k\\ey": "v\u00e9", "uni": "\u4e2d"},
    },
    {"ph": "X", "name": 12, "cat": "c", "pid": 1, "tid": 2, "ts": 1002, "dur": 0},
    {
        "ph": "X",
        "name": "floats in arrays",
        "pid": 1,
        "tid": 2.0,
        "ts": 1003,
        "dur": None,
        "args": {"a": [1.5, 2], "o": {"x": 1}, "s": [" spaced ", "a,b"]},
    },
    {"ph": "X", "name": "no ts", "pid": 1, "tid": 2},
    {"ph": "X", "name": "half", "pid": 1, "tid": 3, "ts": 1004.0000005, "dur": 0.0000005},
    {"ph": "i", "name": "instant", "pid": 1, "tid": 2, "ts": 1005, "dur": 9, "s": "t"},
    {"ph": "I", "name": "instant2", "pid": 1, "ts": 1005.25},
    {"ph": "R", "name": "mark", "pid": 1, "tid": 2, "ts": 1006, "args": []},
    {"ph": "s", "id": 5, "cat": "ac2g", "pid": 1, "tid": 2, "ts": 1001, "bp": "e"},
    {"ph": "f", "id": 5, "cat": "ac2g", "pid": 1, "tid": 3, "ts": 1004.5, "bp": "e"},
    {"ph": "t", "id": "str-id", "cat": "fwdbwd", "pid": 1, "tid": 2, "ts": 1003},
    {"ph": "s", "bind_id": 9, "pid": 1, "tid": 2, "ts": 1003},
    {"ph": "s", "id": None, "pid": 1, "tid": 2, "ts": 1003},
    {"ph": "s", "id": 1.5, "pid": 1, "tid": 2, "ts": 1003},
    {"ph": "B", "name": "outer", "pid": 1, "tid": 4, "ts": 1000, "args": {"a": 1}},
    {"ph": "E", "pid": 1, "tid": 4, "ts": 1010, "args": {"b": 2}},
    {"ph": "C", "name": "mem", "pid": 1, "ts": 1002, "args": {"used": 10, "free": 2.5}},
    {"ph": "N", "name": "obj", "id": "0x1", "pid": 1, "tid": 2, "ts": 1001},
    {"ph": "D", "name": "obj", "id": "0x1", "pid": 1, "tid": 2, "ts": 1003},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "proc"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main"}},
    {"ph": "Q", "name": "unknown phase", "pid": 1, "ts": 1000},
    {},
    {"name": "no phase", "ts": 1},
    {"ph": "X", "name": "late", "pid": 1, "tid": 2, "ts": 99999999999, "dur": 1e400},
]
EDGE_TEXT_TIMES = [
    # Times read from their text to the picosecond (chrome_trace/exact_times.py): epoch
    # microseconds (1e12) with three decimals, seven and more (half to even), negative, long.
    '{"ph": "X", "name": "ns", "pid": 1, "tid": 5, "ts": 1000000000000.123, "dur": 9.876}',
    '{"ph": "X", "name": "7dp", "pid": 1, "tid": 5, "ts": 1000.0000015, "dur": 0.0000025}',
    '{"ph": "X", "name": "8dp", "pid": 1, "tid": 5, "ts": 1000.00000150001, "dur": 2.1234565}',
    '{"ph": "X", "name": "neg", "pid": 1, "tid": 5, "ts": -5.25, "dur": -0.5}',
    '{"ph": "X", "name": "long", "pid": 1, "tid": 5, "ts": 99999999999999999999.5}',
    '{"ph": "i", "name": "inst", "pid": 1, "tid": 5, "ts": 1000000000000.999}',
    '{"ph": "s", "id": 7, "cat": "ac2g", "pid": 1, "tid": 5, "ts": 1000000000000.124}',
]
EDGE_TEXT = [
    # Written by hand: a repeated key (last wins), -0, NaN, blanks and a big ts.
    '{"ph": "X", "name": "dup", "name": "dup2", "pid": 1, "tid": 2, "ts": 1007, "dur": 1}',
    '{"ph": "X", "name": "dup args", "pid": 1, "tid": 2, "ts": 1007, "args": {"a": 1, "a": 2}}',
    '{"ph":"X","name":"neg0","pid":1,"tid":2,"ts":1008,"dur":-0,"args":{"z":-0,"l":[-0]}}',
    '{"ph": "X", "name": "nan", "pid": 1, "tid": 2, "ts": 1009, "args": {"x": NaN}}',
    '{ "ph" : "X" , "name" : "blanks" , "pid" : 1 , "tid" : 2 , "ts" : 1010 ,\n'
    '  "args" : { "l" : [ 1 , [ 2 , 3 ] , "x" , true , null ] } }',
    '{"ph": "X", "name": "huge ts", "pid": 1, "tid": 2, "ts": 123456789012345678901234}',
    '{"ph": "X", "name": "exp", "pid": 1, "tid": 2, "ts": 1.011E3, "dur": 1e-6}',
    "1",
    '"not an event"',
]


def _edge_file(tmp_path, wrap: bool, tail: str = "]}"):
    body = ",\n".join([json.dumps(e) for e in EDGE_EVENTS] + EDGE_TEXT + EDGE_TEXT_TIMES)
    text = ('{"schemaVersion": 1, "traceEvents": [' if wrap else "[") + body + ",\n"
    text += tail if wrap else tail[:1]
    path = tmp_path / ("edge.json.gz" if wrap else "edge.json")
    data = text.encode()
    path.write_bytes(gzip.compress(data) if wrap else data)
    return path


@pytest.mark.parametrize("wrap", [True, False])
def test_edge_cases_read_the_same(tmp_path, wrap):
    path = _edge_file(tmp_path, wrap)
    assert _assert_same(path) > 0
    c, stream, _ = _collect(path, True)
    names = c.strings.values
    assert 'esc"aped \u00e9' in names and "12" in names and "dup2" in names
    # two are not objects
    assert stream.count == len(EDGE_EVENTS) + len(EDGE_TEXT) + len(EDGE_TEXT_TIMES) - 2
    pure, _, _ = _collect(path, False)
    ns = pure.strings.ids["ns"]
    row = list(pure.ev_name).index(ns)  # read from the text, to the picosecond
    assert pure.ev_begin[row] == 1000000000000123000 - pure.base_us * 1_000_000
    assert pure.ev_dur[row] == 9_876_000


def test_cut_file_reads_the_same(tmp_path):
    whole = _edge_file(tmp_path, False).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: len(whole) * 2 // 3])
    _assert_same(cut)
    assert _collect(cut, True)[1].truncated


def test_read_chrome_trace_uses_the_scanner_unless_told(monkeypatch):
    path = FILES[0]
    fast = chrome_read.read_chrome_trace(str(path))
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    pure = chrome_read.read_chrome_trace(str(path))
    assert fast.num_events == pure.num_events
    assert [p.name for p in fast.planes] == [p.name for p in pure.planes]


def test_a_first_time_beyond_int64_reads_the_same(tmp_path):
    path = tmp_path / "huge.json"
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10**23, "dur": 1}]
    events += [
        {"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1} for i in range(5)
    ]
    path.write_text(json.dumps(events))
    _assert_same(path)
    assert _collect(path, True)[0].skipped  # the later events' times are out of range


def test_text_beyond_latin1_reads_the_same(tmp_path):
    """A window holding such text is left to Python whole (the scanner reads 1-byte text)."""
    path = tmp_path / "utf8.json"
    events = [
        {"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1} for i in range(50)
    ]
    events[25]["name"] = "raw utf-8 中 é"
    path.write_text(json.dumps(events, ensure_ascii=False), encoding="utf-8")
    _assert_same(path)

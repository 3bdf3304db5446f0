"""The Chrome-trace reader on real ProfilerHook and PyTorch files, and on damaged input."""

from __future__ import annotations

import gzip
import json
import threading

import numpy as np
import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.analysis.chrome_events import events_of
from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.chrome_trace.stream import TraceStream
from tensorboard_plugin_profile.common.errors import CorruptProfile
from tensorboard_plugin_profile.preprocessing import flows
from tensorboard_plugin_profile.xspace import schema

TIMELINE = FIXTURES / "profiler_hook" / "train" / "timeline-4.json"
PYTORCH_FILES = sorted(FIXTURES.glob("pytorch_*/run/*.pt.trace.json.gz"))


def _json_events(path) -> list:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)["traceEvents"]


def _flow_rows(plane) -> np.ndarray:
    st = plane.stats
    return st[st["stat"] == schema.FLOW_STAT]


def test_timeline_events_planes_and_values_are_the_files():
    raw = _json_events(TIMELINE)
    space = read_chrome_trace(str(TIMELINE))
    assert space.source_format == "profiler_hook"
    names = {p.name for p in space.planes}
    assert names == {e["args"]["name"] for e in raw if e["ph"] == "M"}
    ev = events_of(space, strings=("op", "name"))
    ops = ev[ev["cat"] == "Op"]
    x = [e for e in raw if e["ph"] == "X"]
    assert len(ops) == len(x)
    assert sorted(ops["op"]) == sorted(e["args"]["op"] for e in x)
    # Durations are the files' microseconds, exactly.
    assert sorted(ops["duration_ps"] // 1_000_000) == sorted(e["dur"] for e in x)
    tensors = ev[ev["cat"] == "Tensor"]
    assert len(tensors) == sum(e["ph"] == "N" for e in raw)
    counters = ev[ev["cat"] == "counter"]
    assert len(counters) == sum(e["ph"] == "C" for e in raw)


def test_timeline_dataflow_flows_join_producer_and_consumer_threads():
    raw = _json_events(TIMELINE)
    space = read_chrome_trace(str(TIMELINE))
    compute = next(p for p in space.planes if p.name.endswith("Compute"))
    rows = _flow_rows(compute)
    values = rows["int_value"].to_numpy().view(np.uint64)
    ids = (values >> np.uint64(2)) & np.uint64((1 << 56) - 1)
    direction = values & np.uint64(3)
    flow_ids = {e["id"] for e in raw if e["ph"] == "s"}
    assert len(np.unique(ids)) == len(flow_ids)
    assert (direction == flows.FLOW_OUT).sum() == sum(e["ph"] == "s" for e in raw)
    assert (direction == flows.FLOW_IN | flows.FLOW_OUT).sum() == sum(e["ph"] == "t" for e in raw)
    # Every flow starts and ends on different executor threads (tid 0 <-> tid 1).
    lines = compute.events["line"].to_numpy()[rows["event"].to_numpy()]
    for flow in np.unique(ids):
        assert len(set(lines[ids == flow].tolist())) == 2


@pytest.mark.parametrize("path", PYTORCH_FILES, ids=lambda p: p.parent.parent.name)
def test_pytorch_every_complete_event_is_kept(path):
    raw = _json_events(path)
    space = read_chrome_trace(str(path))
    assert space.source_format == "pytorch"
    expected = sum(e.get("ph") in ("X", "i") for e in raw)
    assert space.num_events == expected
    ev = events_of(space, numbers=("correlation",))
    kernels = ev[ev["cat"] == "kernel"]
    assert len(kernels) == sum(e.get("cat") == "kernel" for e in raw)
    assert (
        "deviceProperties" in space.extras["metadata"]
        or "distributedInfo" in space.extras["metadata"]
    )


def test_pytorch_launch_flows_tie_runtime_calls_to_kernels():
    path = FIXTURES / "pytorch_amd_mi250" / "run" / "worker0.1.pt.trace.json.gz"
    space = read_chrome_trace(str(path))
    ends = []
    for plane in space.planes:
        rows = _flow_rows(plane)
        values = rows["int_value"].to_numpy().view(np.uint64)
        category = (values >> np.uint64(58)).astype(int)
        names = plane.events["name"].astype(object).to_numpy()[rows["event"].to_numpy()]
        ends += [(plane.name, n) for n, c in zip(names, category) if c == 9]
    assert any(name.startswith("GPU") for name, _ in ends)
    assert any(name.startswith("hip") for _, name in ends)


def test_old_kineto_traces_get_flows_from_correlation_ids():
    path = FIXTURES / "pytorch_two_ranks" / "run" / "rank0.1.pt.trace.json.gz"
    space = read_chrome_trace(str(path))
    gpu = next(p for p in space.planes if p.name.startswith("GPU"))
    assert len(_flow_rows(gpu)) == len(gpu.events)  # every kernel/memcpy/memset has its launch


def test_gzip_and_plain_give_the_same_tables(tmp_path):
    plain = tmp_path / "timeline-4.json.gz"
    plain.write_bytes(gzip.compress(TIMELINE.read_bytes()))
    a, b = read_chrome_trace(str(TIMELINE)), read_chrome_trace(str(plain))
    for pa, pb in zip(a.planes, b.planes):
        assert pa.events.equals(pb.events)


def test_small_blocks_parse_like_one_block():
    whole = list(TraceStream(str(TIMELINE)).events())
    tiny = list(TraceStream(str(TIMELINE), block_chars=7).events())
    assert whole == tiny


def test_a_cut_file_keeps_the_events_before_the_cut(tmp_path):
    text = TIMELINE.read_text()
    cut = tmp_path / "timeline-9.json"
    cut.write_text(text[: len(text) // 2])
    space = read_chrome_trace(str(cut))
    assert space.extras["truncated"]
    assert 0 < space.num_events
    assert any("ends before its last event" in w for w in space.warnings)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not a Chrome trace"),
        (b"hello", "not a Chrome trace"),
        (b'{"traceEvents": [}', "not a Chrome trace"),
        (b'{"traceEvents": []}', "holds no trace events"),
        (b"\x1f\x8b\x08\x00garbage", "damaged gzip"),
    ],
)
def test_bad_files_raise_a_clear_error(tmp_path, content, message):
    path = tmp_path / "timeline-1.json"
    path.write_bytes(content)
    with pytest.raises(CorruptProfile, match=message):
        read_chrome_trace(str(path))


def test_bare_arrays_begin_end_pairs_and_instants(tmp_path):
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "main"}},
        {"ph": "B", "name": "outer", "pid": 1, "tid": 2, "ts": 10, "args": {"a": 1}},
        {"ph": "X", "name": "inner", "pid": 1, "tid": 2, "ts": 11, "dur": 2},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 20, "args": {"b": "x"}},
        {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 15, "s": "t"},
        {"ph": "b", "name": "async", "pid": 1, "tid": 2, "ts": 15, "id": 1},
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(events))
    space = read_chrome_trace(str(path))
    ev = events_of(space, numbers=("a",), strings=("b",))
    outer = ev[ev["name"] == "outer"].iloc[0]
    assert outer["duration_ps"] == 10_000_000 and outer["a"] == 1 and outer["b"] == "x"
    assert set(ev["name"]) == {"outer", "inner", "mark"}
    assert space.extras["skipped"] == {"phase 'b'": 1}


def test_the_disk_cache_codec_keeps_what_makes_a_space_a_chrome_trace():
    from tensorboard_plugin_profile.store.frames_codec import decode, encode

    space = read_chrome_trace(str(PYTORCH_FILES[0]))
    tree, arrays = encode(space)
    same = decode(tree, arrays)
    assert same.source_format == "pytorch" and same.preprocessed
    assert same.extras == space.extras
    for a, b in zip(space.planes, same.planes):
        assert a.events.equals(b.events) and a.stats.equals(b.stats)


def test_the_decoder_limits_apply(tmp_path, monkeypatch):
    from tensorboard_plugin_profile.common.errors import ProfileTooLarge

    monkeypatch.setenv("TBPROF_MAX_EVENTS", "10")
    with pytest.raises(ProfileTooLarge, match="TBPROF_MAX_EVENTS"):
        read_chrome_trace(str(TIMELINE))


def _inflate_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "tbprof-inflate"]


def test_a_gzip_trace_is_inflated_on_its_own_thread_ahead_of_the_reader(tmp_path):
    """Issue 30: the inflate (zlib releases the GIL) runs beside the scanner, a few blocks
    ahead; the events are those of the plain file, and the thread ends with the stream,
    also when the reader stops early."""
    events = [
        {"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1} for i in range(3000)
    ]
    text = json.dumps({"traceEvents": events})
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    stream = TraceStream(str(packed), block_chars=1000)
    seen, alive = [], []
    for event in stream.events():
        seen.append(event)
        alive.append(len(_inflate_threads()))
    assert seen == list(TraceStream(str(plain), block_chars=1000).events()) == events
    assert alive[0] == 1 and not _inflate_threads()  # it ends after the last block
    assert stream.file_position == packed.stat().st_size
    early = TraceStream(str(packed), block_chars=1000).events()
    next(early)
    assert len(_inflate_threads()) == 1
    early.close()
    assert not _inflate_threads()

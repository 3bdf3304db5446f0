"""Call-stack drill-down of the operator view and the allocator memory track of the trace
viewer, on small traces in the format torch.profiler writes (no fixture recorded
``with_stack=True`` stacks or ``profile_memory=True`` ``[memory]`` events)."""

from __future__ import annotations

import gzip
import json

import pytest

from tensorboard_plugin_profile.analysis.chrome_events import events_of
from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService

PID, TID = 100, 100
STACK_A = "train.py(10): step;model.py(5): forward"
STACK_B = "train.py(12): step;model.py(9): loss"


def _op(name, ts, dur, ext, dims, stack):
    args = {"External id": ext, "Input Dims": dims, "Input type": ["float"] * len(dims),
            "Call stack": stack}  # fmt: skip
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": TID, "ts": ts,
            "dur": dur, "args": args}  # fmt: skip


def _memory(ts, nbytes, allocated, reserved, device_type=0, device_id=-1):
    args = {"Total Reserved": reserved, "Total Allocated": allocated, "Bytes": nbytes,
            "Addr": 1000 + ts, "Device Type": device_type, "Device Id": device_id}  # fmt: skip
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": PID,
            "tid": TID, "ts": ts, "args": args}  # fmt: skip


def _trace(tmp_path):
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": PID, "tid": TID,
         "ts": 0, "dur": 100, "args": {"External id": 1}},
        _op("aten::mm", 10, 10, 2, [[2, 3], [3, 4]], STACK_A),
        _op("aten::mm", 30, 20, 3, [[2, 3], [3, 4]], STACK_A),
        _op("aten::mm", 60, 5, 4, [[8, 8], [8, 8]], STACK_B),
        _op("aten::add", 70, 5, 5, [[8], [8]], ""),
        _memory(11, 4096, 4096, 2 << 20),
        _memory(31, 8192, 12288, 2 << 20),
        _memory(50, -4096, 8192, 2 << 20),
        _memory(61, 512, 1024, 1 << 20, device_type=1, device_id=0),
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python"}},
    ]  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    data = {"schemaVersion": 1, "traceEvents": events}
    (run / "worker0.1.pt.trace.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    return ProfileService(str(tmp_path))


def _rows(table):
    labels = [c["label"] for c in table["cols"]]
    return [dict(zip(labels, (c["v"] for c in r["c"]))) for r in table["rows"]]


def test_operators_say_which_have_call_stacks(tmp_path):
    service = _trace(tmp_path)
    (table,) = service.tool_data("run/1", "pytorch_operators").json()
    recorded = {r["Name"]: r["Call stack recorded"] for r in _rows(table)}
    assert recorded == {"aten::mm": "Yes", "aten::add": "No"}


def test_call_stacks_of_one_operator(tmp_path):
    service = _trace(tmp_path)
    params = {"op_name": "aten::mm"}
    (table,) = service.tool_data("run/1", "pytorch_operators", params=params).json()
    rows = {r["Call stack"]: r for r in _rows(table)}
    assert table["p"]["title"] == "Call stacks of aten::mm"
    assert set(rows) == {STACK_A, STACK_B}
    assert rows[STACK_A]["Calls"] == 2 and rows[STACK_A]["Host self duration (us)"] == 30
    assert rows[STACK_B]["Calls"] == 1 and rows[STACK_B]["Host self duration (us)"] == 5


def test_call_stacks_of_one_operator_and_input_shape(tmp_path):
    service = _trace(tmp_path)
    params = {"op_name": "aten::mm", "group_by": "input_shape", "input_shape": "[[8, 8], [8, 8]]"}
    (table,) = service.tool_data("run/1", "pytorch_operators", params=params).json()
    rows = _rows(table)
    assert [(r["Input shape"], r["Call stack"], r["Calls"]) for r in rows] == [
        ("[[8, 8], [8, 8]]", STACK_B, 1)
    ]
    with pytest.raises(NotApplicable):
        service.tool_data("run/1", "pytorch_operators", params={"op_name": "aten::nothing"})


def test_memory_events_become_allocator_series(tmp_path):
    service = _trace(tmp_path)
    space = service.space(service.logdir.session("run/1").host_files[0])
    (plane,) = space.planes
    line_names = dict(zip(plane.lines["id"], plane.lines["name"]))
    ev = events_of(space, numbers=("value",))
    ev = ev.assign(line=ev["tid"].map(line_names)).sort_values("begin_ps", kind="stable")
    memory = ev[ev["line"].str.startswith("Memory")]
    samples = {name: g["value"].tolist() for name, g in memory.groupby("line")}
    assert samples == {
        "Memory (CPU) Allocated (bytes)": [4096, 12288, 8192],
        "Memory (CPU) Reserved (bytes)": [2 << 20] * 3,
        "Memory (GPU 0) Allocated (bytes)": [1024],
        "Memory (GPU 0) Reserved (bytes)": [1 << 20],
    }
    assert (ev["name"] == "[memory]").sum() == 4  # the events stay, with their args

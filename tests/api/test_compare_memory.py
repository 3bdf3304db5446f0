"""Comparing memory peaks beyond XSpace: ProfilerHook timelines (``tensor_memory``) and
PyTorch traces recorded with ``profile_memory=True`` (``pytorch_memory``, from their
``[memory]`` events). Each side equals its own tool; a side without memory data says so.

No fixture recorded ``[memory]`` events, so the PyTorch traces are written here in the
format torch.profiler writes (as tests/chrome_trace/test_pytorch_stacks_memory.py does)."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.api.compare import compare_in_logdir
from tensorboard_plugin_profile.api.compare_table import to_datatable
from tensorboard_plugin_profile.api.tables import table_frame, tables_of
from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService

PID = TID = 7


def _memory(ts, allocated, reserved, device_type=0, device_id=-1):
    args = {"Total Reserved": reserved, "Total Allocated": allocated, "Bytes": 64, "Addr": ts,
            "Device Type": device_type, "Device Id": device_id}  # fmt: skip
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": PID,
            "tid": TID, "ts": ts, "args": args}  # fmt: skip


def _write(root, name, memory_events):
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": PID, "tid": TID,
         "ts": 0, "dur": 100, "args": {}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": PID, "tid": TID, "ts": 10,
         "dur": 50, "args": {"External id": 1}},
        *memory_events,
    ]  # fmt: skip
    run = root / name / "run"
    run.mkdir(parents=True)
    data = {"schemaVersion": 1, "traceEvents": events}
    (run / "worker0.1.pt.trace.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))


@pytest.fixture(scope="module")
def pytorch_logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("memory")
    _write(root, "before", [
        _memory(11, 4096, 1 << 20), _memory(20, 12288, 2 << 20), _memory(30, 8192, 2 << 20),
        _memory(40, 1000, 1 << 20, device_type=1, device_id=0),
    ])  # fmt: skip
    _write(root, "after", [
        _memory(11, 2048, 1 << 20), _memory(25, 6144, 1 << 20),
        _memory(40, 3000, 4 << 20, device_type=1, device_id=0),
        _memory(50, 500, 4 << 20, device_type=1, device_id=1),
    ])  # fmt: skip
    _write(root, "no_memory", [])
    service = ProfileService(str(root))
    yield service
    service.close()


def test_pytorch_memory_peaks_compare_per_device(pytorch_logdir):
    s = pytorch_logdir
    frame = compare_in_logdir(s, "after/run/1", "before/run/1", "pytorch_memory")
    rows = frame.set_index("device")
    assert rows.loc["CPU", "peak_allocated_bytes_base"] == 12288
    assert rows.loc["CPU", "peak_allocated_bytes_exp"] == 6144
    assert rows.loc["CPU", "peak_allocated_bytes_delta"] == 6144 - 12288
    assert rows.loc["CPU", "peak_reserved_bytes_base"] == 2 << 20
    assert rows.loc["GPU 0", "peak_reserved_bytes_delta_pct"] == pytest.approx(300.0)
    assert rows.loc["GPU 1", "status"] == "added"
    assert frame.attrs["summary"].startswith("peak allocated memory (bytes) in all rows 13,288.0")
    # each side is that run's own tool answer
    for run, side in (("before/run/1", "base"), ("after/run/1", "exp")):
        own = table_frame(tables_of(s.tool_data(run, "pytorch_memory").json())[0])
        own = own.set_index("device")
        for device in own.index:
            got = rows.loc[device, f"peak_allocated_bytes_{side}"]
            assert got == own.loc[device, "peak_allocated_bytes"], (run, device)
    labels = {c["id"]: c["label"] for c in to_datatable(frame)["cols"]}
    assert labels["peak_allocated_bytes_base"] == "Peak allocated (bytes) — baseline"


def test_a_pytorch_side_without_memory_data_says_so(pytorch_logdir):
    s = pytorch_logdir
    assert "pytorch_memory" not in s.run_tools("no_memory/run/1")
    with pytest.raises(NotApplicable, match=r"The baseline run 'no_memory/run/1': .*memory"):
        compare_in_logdir(s, "after/run/1", "no_memory/run/1", "pytorch_memory")
    with pytest.raises(NotApplicable, match=r"The experiment run 'no_memory/run/1': .*memory"):
        compare_in_logdir(s, "no_memory/run/1", "after/run/1", "pytorch_memory")


def test_profiler_hook_tensor_memory_compares_per_allocator():
    service = ProfileService(str(FIXTURES))
    try:
        base, exp = "profiler_hook/train/timeline-4", "profiler_hook/train/timeline-8"
        frame = compare_in_logdir(service, exp, base, "tensor_memory").set_index("allocator")
        assert len(frame) and frame.attrs["summary"].startswith("peak of live tensors (bytes)")
        for run, side in ((base, "base"), (exp, "exp")):
            own = table_frame(tables_of(service.tool_data(run, "tensor_memory").json())[0])
            for row in own.itertuples():
                for value in ("peak_bytes", "counter_peak_bytes", "live_tensors"):
                    want, got = getattr(row, value), frame.loc[row.allocator, f"{value}_{side}"]
                    assert (want != want and got != got) or got == want, (run, row.allocator)
        with pytest.raises(NotApplicable, match="The baseline run 'jax_cpu_train/session_1'"):
            compare_in_logdir(service, exp, "jax_cpu_train/session_1", "tensor_memory")
    finally:
        service.close()

"""memory_profile against upstream on every fixture host, and on hand-made allocators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import FIXTURES, fixture_names, load_reference

from tensorboard_plugin_profile.analysis.memory import allocator as memory
from tensorboard_plugin_profile.common.errors import InvalidArgument, NotApplicable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import memory_profile

from .compare_tables import fixture_hosts
from .synthetic_events import HostPlane, Uint

EMPTY = {"memoryProfilePerAllocator": {}, "numHosts": 1, "memoryIds": [], "version": 1}
EMPTY["hloModules"] = []
# Which of several identical allocations stands for their merged breakdown row is
# arbitrary upstream (an unstable sort over a hash map): compare only what they share.
_SHARED = ("memoryActivity", "requestedBytes", "allocationBytes", "tfOpName", "regionType")
_SHARED += ("dataType", "tensorShape")


def _host_cases():
    return [(name, host) for name in fixture_names() for host, _ in fixture_hosts(name)]


def _reference(name: str, host: str):
    return load_reference(name, f"memory_profile.{host}.json") or load_reference(
        name, "memory_profile.json"
    )


def differences(ours, ref, path="", out=None) -> list:
    """Structural differences: same keys in the same order, numbers within 0.5 %."""
    out = [] if out is None else out
    if isinstance(ref, dict):
        if not isinstance(ours, dict) or list(ours) != list(ref):
            out.append(f"{path}: keys {list(ours) if isinstance(ours, dict) else ours}")
            return out
        for key in ref:
            differences(ours[key], ref[key], f"{path}.{key}", out)
    elif isinstance(ref, list):
        if not isinstance(ours, list) or len(ours) != len(ref):
            out.append(f"{path}: {len(ours)} items != {len(ref)}")
        for i, (a, b) in enumerate(zip(ours, ref)):
            differences(a, b, f"{path}[{i}]", out)
    elif isinstance(ref, (int, float)) and not isinstance(ref, bool):
        ok = isinstance(ours, (int, float)) and not isinstance(ours, bool)
        if not ok or not math.isclose(ours, ref, rel_tol=0.005, abs_tol=1e-6):
            out.append(f"{path}: {ours!r} != {ref!r}")
    elif ours != ref:
        out.append(f"{path}: {ours!r} != {ref!r}")
    return out


def _mask_merged(profile: dict) -> dict:
    for allocator in profile["memoryProfilePerAllocator"].values():
        snapshots = allocator["memoryProfileSnapshots"]
        for active in allocator["activeAllocations"]:
            if int(active["numOccurrences"]) > 1 and int(active["snapshotIndex"]) >= 0:
                snap = snapshots[int(active["snapshotIndex"])]
                meta = snap["activityMetadata"]
                snapshots[int(active["snapshotIndex"])] = {
                    "activityMetadata": {k: meta[k] for k in _SHARED}
                }
    return profile


@pytest.mark.parametrize("name,host", _host_cases())
def test_data_matches_reference(name, host):
    space = dict(fixture_hosts(name))[host]
    ours = _mask_merged(memory_profile.memory_profile_json(space))
    ref = _mask_merged(_reference(name, host))
    # Upstream writes the allocator map in hash order; we sort its keys.
    allocators = ref["memoryProfilePerAllocator"]
    ref["memoryProfilePerAllocator"] = {k: allocators[k] for k in sorted(allocators)}
    problems = differences(ours, ref)
    assert not problems, "\n".join(problems[:20])


def test_profiles_without_allocator_events_are_upstreams_empty_profile():
    space = dict(fixture_hosts("jax_cpu_train"))["vm"]
    assert memory_profile.memory_profile_json(space) == EMPTY == _reference("jax_cpu_train", "vm")
    # The tool says why instead (docs/differences.md).
    with pytest.raises(NotApplicable, match=r"host_tracer_level=2"):
        memory_profile.convert([("vm", space)], {})


def test_timeline_is_bounded_and_says_so():
    space = dict(fixture_hosts("tf_memory"))["vm"]
    profile = memory_profile.convert([("vm", space)], {})
    allocator = profile["memoryProfilePerAllocator"]["bfc_cpu_allocator_for_gpu"]
    assert profile["maxTimelinePoints"] == memory.MAX_TIMELINE_POINTS == 1000
    assert len(allocator["sampledTimelineSnapshots"]) == 1000  # of 2551 events
    # The counts cover every event, not the sample (upstream's page counts 899 / 101).
    assert profile["allocatorEventCounts"]["bfc_cpu_allocator_for_gpu"] == {
        "allocations": 1304,
        "deallocations": 1247,
    }
    times = [int(s["timeOffsetPs"]) for s in allocator["sampledTimelineSnapshots"]]
    assert times == sorted(times)


def test_sampling_keeps_the_first_highest_point_of_each_window():
    # 7 points into 3 windows: widths 2, 2, 3.
    total = np.array([1, 5, 2, 2, 9, 3, 4])
    assert memory.sample_rows(total, 3).tolist() == [1, 2, 4]
    assert memory.sample_rows(total, 7).tolist() == list(range(7))


def _allocation(plane, line, t, kind, addr, nbytes, requested, heap, stack=0, **meta):
    name = "MemoryAllocation" if kind == "alloc" else "MemoryDeallocation"
    return plane.event(
        line,
        name,
        t,
        allocator_name=meta.pop("allocator", "GPU_0_bfc"),
        bytes_reserved=stack,
        bytes_allocated=heap,
        bytes_available=10_000 - heap - stack,
        peak_bytes_in_use=meta.pop("peak"),
        fragmentation=meta.pop("frag", 0.0),
        requested_bytes=requested,
        allocation_bytes=nbytes,
        addr=addr,
        data_type=meta.pop("dtype", 0),
        **meta,
    )


def synthetic_gpu_memory():
    """Two allocators; GPU_0_bfc peaks at 40 us with 1280 heap + 64 stack bytes."""
    plane = HostPlane()
    a, b = plane.line(1, "tf_gpu_a"), plane.line(2, "tf_gpu_b")
    op = {"tf_op": "dense/MatMul", "region_type": "output", "dtype": 1, "shape": "[8,8]"}
    _allocation(plane, a, 10, "alloc", 0x100, 256, 200, 256, peak=256, frag=0.5, group_id=1, **op)
    relu = {"tf_op": "dense/Relu", "region_type": "output", "dtype": 19, "shape": "[16,16]"}
    big = Uint(2**63 + 0x200)
    _allocation(plane, a, 30, "alloc", big, 512, 512, 1024, peak=1024, group_id=1, **relu)
    _allocation(plane, a, 50, "free", 0x100, 256, 200, 1024, 64, peak=1344, group_id=1)
    other = {"tf_op": "input", "dtype": 3, "shape": "[4]"}
    _allocation(plane, b, 20, "alloc", 0x300, 256, 100, 512, peak=512, **other)
    _allocation(plane, b, 40, "alloc", 0x400, 256, 200, 1280, 64, peak=1344, group_id=1, **op)
    plane.event(
        b, "MemoryAllocation", 5, device_ordinal=1, bytes_allocated=100, bytes_available=900,
        requested_bytes=100, allocation_bytes=100, addr=0x900, peak_bytes_in_use=100,
    )  # fmt: skip
    return plane.decode()


def test_synthetic_gpu_allocators_by_hand():
    profile = memory_profile.convert([("host", synthetic_gpu_memory())], {})
    assert profile["memoryIds"] == ["1", "GPU_0_bfc"]
    gpu = profile["memoryProfilePerAllocator"]["GPU_0_bfc"]
    assert gpu["profileSummary"] == {
        "peakBytesUsageLifetime": "1344",  # the last event's own counter
        "peakStats": {
            "stackReservedBytes": "64",
            "heapAllocatedBytes": "1280",
            "freeMemoryBytes": "8656",
            "fragmentation": 0,
            "peakBytesInUse": "1344",
        },
        "peakStatsTimePs": "40000000",
        "memoryCapacity": "10000",
    }
    timeline = gpu["sampledTimelineSnapshots"]
    assert [s["timeOffsetPs"] for s in timeline] == [str(t * 10**6) for t in (10, 20, 30, 40, 50)]
    # The ungrouped event at 20 us belongs to the step after the last known one.
    assert [s["activityMetadata"]["stepId"] for s in timeline] == ["1", "2", "1", "1", "1"]
    freed = timeline[4]["activityMetadata"]
    assert freed["memoryActivity"] == "DEALLOCATION"
    assert (freed["tfOpName"], freed["dataType"], freed["tensorShape"]) == (
        "dense/MatMul",
        "float",
        "[8,8]",
    )
    assert timeline[2]["activityMetadata"]["address"] == str(2**63 + 0x200)
    assert timeline[2]["activityMetadata"]["dataType"] == "half"
    # At the peak (step 1): 512 B Relu, 256 B unattributed heap, 2 x 256 B MatMul, 64 B stack.
    assert gpu["activeAllocations"] == [
        {"snapshotIndex": "0", "specialIndex": "-1", "numOccurrences": "1"},
        {"snapshotIndex": "-1", "specialIndex": "0", "numOccurrences": "1"},
        {"snapshotIndex": "1", "specialIndex": "-1", "numOccurrences": "2"},
        {"snapshotIndex": "-2", "specialIndex": "1", "numOccurrences": "1"},
    ]
    ops = [s["activityMetadata"]["tfOpName"] for s in gpu["memoryProfileSnapshots"]]
    assert ops == ["dense/Relu", "dense/MatMul"]
    specials = [
        (s["tfOpName"], s["allocationBytes"], s["regionType"]) for s in gpu["specialAllocations"]
    ]
    assert specials == [
        ("unused preallocated device memory", "256", "persist/dynamic"),
        ("stack", "64", "stack"),
    ]
    by_ordinal = profile["memoryProfilePerAllocator"]["1"]
    assert by_ordinal["activeAllocations"] == [
        {"snapshotIndex": "0", "specialIndex": "-1", "numOccurrences": "1"}
    ]
    assert by_ordinal["specialAllocations"] == []


def test_tables_view_for_csv():
    breakdown, timeline = memory_profile.convert(
        [("host", synthetic_gpu_memory())], {"view": "tables", "memory_id": "GPU_0_bfc"}
    )
    rows = [[c["v"] for c in r["c"]] for r in breakdown["rows"]]
    assert [r[0] for r in rows] == [
        "dense/Relu",
        "unused preallocated device memory",
        "dense/MatMul",
        "stack",
    ]
    assert rows[2][3] == 2.0
    assert timeline["p"]["max_timeline_points"] == "1000" and len(timeline["rows"]) == 5
    with pytest.raises(InvalidArgument, match="No allocator 'x'"):
        memory_profile.convert(
            [("host", synthetic_gpu_memory())], {"view": "tables", "memory_id": "x"}
        )


def test_csv_through_the_service():
    service = ProfileService(str(FIXTURES / "tf_memory"))
    run = service.runs()[0]
    filename, text = service.tool_csv(run, "memory_profile", host="vm", params={"view": "tables"})
    assert text.splitlines()[0].startswith('"Op name","Allocation size (MiB)"')
    assert len(text.splitlines()) == 1 + 9  # 8 tensors and the unattributed heap
    _, text = service.tool_csv(
        run, "memory_profile", host="vm", params={"view": "tables", "table": "1"}
    )
    assert len(text.splitlines()) == 1 + 1000
    with pytest.raises(InvalidArgument, match="no table"):
        service.tool_csv(run, "memory_profile", host="vm")

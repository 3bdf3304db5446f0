"""PyTorch analyses against torch-tb-profiler 0.4.3's answers (tests/data/reference/pytorch_*).

``pytorch_cpu_train_ns`` is a trace recorded by torch 2.13's profiler
(``bench/record_pytorch_trace.py``) whose ``ts``/``dur`` carry nanoseconds (three decimals):
its operator table and overview must match torch-tb-profiler with either reader, and would
not if the times were whole microseconds (issue 28, item 3).
"""

from __future__ import annotations

import gzip
import re

import pytest
from conftest import FIXTURES, load_reference

from tensorboard_plugin_profile.analysis.pytorch import events as E
from tensorboard_plugin_profile.analysis.pytorch.distributed import (
    communication_ops,
    overlap_by_step,
)
from tensorboard_plugin_profile.analysis.pytorch.kernels import kernel_stats, tensor_core_share
from tensorboard_plugin_profile.analysis.pytorch.operators import operator_stats
from tensorboard_plugin_profile.analysis.pytorch.overview import step_overview
from tensorboard_plugin_profile.analysis.pytorch.wait_time import NO_STEP, wait_time
from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.service import ProfileService

TOLERANCE = 0.005
# Recorded by torch 2.13 (bench/record_pytorch_trace.py): CPU activities, nanosecond times.
NANOSECONDS = ("pytorch_cpu_train_ns", "pytorch_ddp_ns")
WORKERS = [
    (path.parent.parent.name, path.name.split(".")[0], path)
    for path in sorted(FIXTURES.glob("pytorch_*/run/*.pt.trace.json.gz"))
]
_SPACES: dict = {}
DISTRIBUTED = ["pytorch_two_ranks", "pytorch_diff_control", "pytorch_cpu_only", "pytorch_ddp_ns"]
NS_WORKERS = [(n, w, p) for n, w, p in WORKERS if n in NANOSECONDS]


def _space(path):
    if path not in _SPACES:
        _SPACES[path] = read_chrome_trace(str(path))
    return _SPACES[path]


def _reference(name: str, tool: str, worker: str):
    ref = next((FIXTURES / "reference" / name).glob(f"{tool}.{worker}.*.json"), None)
    return load_reference(name, ref.name) if ref else None


def _close(expected: float, actual: float, absolute: float = 1.0) -> bool:
    return abs(expected - actual) <= max(absolute, TOLERANCE * abs(expected))


def _overview_mismatches(ref: dict, ov) -> list:
    """What differs between torch-tb-profiler's overview and our step overview ([] if none)."""
    out = []
    perf = ref["performance"][0]
    if not _close(perf["value"], ov.average["Total"] / 1e6):
        out.append(f"average step time {perf['value']} vs {ov.average['Total'] / 1e6}")
    for part in perf["children"]:
        if not _close(part["value"], ov.average[part["name"]] / 1e6):
            out.append(f"{part['name']} {part['value']} vs {ov.average[part['name']] / 1e6}")
    if [row[0] for row in ref["steps"]["rows"]] != list(ov.steps["step"]):
        out.append(f"steps {[row[0] for row in ref['steps']['rows']]} vs {list(ov.steps['step'])}")
    metrics = {d["title"]: d["value"] for d in (ref.get("gpu_metrics") or {}).get("data", [])}
    for g in ov.gpu.to_dict("records"):
        if not _close(float(metrics["GPU Utilization"].rstrip(" %")), 100 * g["utilization"], 0.01):
            out.append(f"GPU utilization {metrics['GPU Utilization']} vs {g['utilization']}")
        if "Est. SM Efficiency" in metrics:
            expected = float(metrics["Est. SM Efficiency"].rstrip(" %"))
            if not _close(expected, 100 * g["sm_efficiency"], 0.01):
                out.append(f"SM efficiency {expected} vs {g['sm_efficiency']}")
    return out


def _operator_mismatches(ref: list, table) -> list:
    """What differs between torch-tb-profiler's operator table and ours ([] if none): the
    same operators, calls exactly, host self and total time within 0.5 % (or 1 us)."""
    ours = {r["name"]: r for r in table.to_dict("records")}
    out = [f"operators {len(ref)} vs {len(ours)}"] if len(ours) != len(ref) else []
    for row in ref:
        op = ours.get(row["name"])
        if op is None:
            out.append(f"{row['name']}: missing")
            continue
        if row["calls"] != op["calls"]:
            out.append(f"{row['name']}: calls {row['calls']} vs {op['calls']}")
        for theirs, mine in (("host_self_duration", "host_self_us"),
                             ("host_total_duration", "host_total_us")):  # fmt: skip
            if not _close(row[theirs], op[mine]):
                out.append(f"{row['name']}: {theirs} {row[theirs]} vs {op[mine]:.3f}")
        if (row["tc_eligible"] == "Yes") != op["tc_eligible"]:
            out.append(f"{row['name']}: tc_eligible {row['tc_eligible']} vs {op['tc_eligible']}")
    return out


@pytest.mark.parametrize("name, worker, path", WORKERS, ids=lambda x: str(x))
def test_overview_breakdown_and_steps_match(name, worker, path):
    ref = _reference(name, "overview", worker)
    assert _overview_mismatches(ref, step_overview(_space(path))) == []


@pytest.mark.parametrize("name, worker, path", WORKERS, ids=lambda x: str(x))
def test_kernel_table_matches(name, worker, path):
    ref = _reference(name, "kernel_table", worker)
    table = kernel_stats(_space(path))
    if ref is None:
        assert table.empty
        return
    ours = {r["name"]: r for r in table.to_dict("records")}
    assert len(ours) == len(ref["data"]["rows"])
    for row in ref["data"]["rows"]:
        k = ours[row[0]]
        assert (row[1] == "Yes") == k["tensor_cores"]
        assert row[2] == k["calls"]
        for expected, column in zip(row[3:7], ("total_us", "mean_us", "max_us", "min_us")):
            assert _close(expected, k[column]), column
        if len(row) > 7:
            assert _close(row[7], k["blocks_per_sm"], 0.01)
            assert _close(row[8], k["occupancy"], 0.01)
    pie = _reference(name, "kernel_tc_pie", worker)["total"]["rows"]
    assert _close(pie[0][1], tensor_core_share(table), 1e-6)


@pytest.mark.parametrize("name, worker, path", WORKERS, ids=lambda x: str(x))
def test_operator_table_host_times_match(name, worker, path):
    ref = _reference(name, "operation_table", worker)["data"]
    table = operator_stats(_space(path))
    assert _operator_mismatches(ref, table) == []
    # Device times differ on purpose (docs/differences.md): 0.4.3 reports 0; ours add up.
    assert (table["device_self_us"] <= table["device_total_us"] + 1e-6).all()


@pytest.mark.parametrize("name, worker, path", WORKERS, ids=lambda x: str(x))
def test_operator_device_time_is_the_launched_kernels(name, worker, path):
    space = _space(path)
    table = operator_stats(space)
    ev = E.trace_events(space)
    device = ev[ev["type"].isin(E.DEVICE_TYPES)]
    device_us = (device["end_ps"] - device["begin_ps"]).sum() / 1e6
    # Each device activity is counted once, by the op that launched it (never more than exists).
    assert table["device_self_us"].sum() <= device_us + 1e-6
    if name in NANOSECONDS:  # recorded with CPU activities only: no device work at all
        assert device_us == 0 and table["device_total_us"].sum() == 0
    elif name != "pytorch_cpu_only":
        assert table["device_self_us"].sum() > 0.5 * device_us


def test_input_shape_grouping_splits_calls():
    path = FIXTURES / "pytorch_amd_mi250" / "run" / "worker0.1.pt.trace.json.gz"
    by_name = operator_stats(_space(path))
    by_shape = operator_stats(_space(path), by_input_shape=True)
    assert by_shape["calls"].sum() == by_name["calls"].sum()
    assert len(by_shape) >= len(by_name)
    assert by_shape["input_shape"].str.startswith("[").all()


@pytest.mark.parametrize("name", DISTRIBUTED)
def test_distributed_overlap_and_collectives_match(name):
    hosts = [(w, _space(p)) for n, w, p in WORKERS if n == name]
    ref = load_reference(name, "distributed_overlap.json")["data"]
    overlap = overlap_by_step(hosts)
    for step, workers in ref.items():
        for worker, values in workers.items():
            row = overlap[(overlap["worker"] == worker) & (overlap["step"] == step)].iloc[0]
            ours = [row[c] / 1e6 for c in ("computation", "overlapping", "communication", "other")]
            for expected, actual in zip(values, ours):
                assert _close(expected, actual), (step, worker)
    commops = load_reference(name, "distributed_commops.json")["data"]
    for worker, space in hosts:
        ops = communication_ops(space).set_index("name")
        for row in commops.get(worker, {"rows": []})["rows"]:
            assert ops.loc[row[0], "calls"] == row[1]
            assert ops.loc[row[0], "total_bytes"] == row[2]
            assert _close(row[4], ops.loc[row[0], "latency_ps"] / 1e6)


@pytest.mark.parametrize("name", DISTRIBUTED)
def test_synchronizing_time_and_data_transfer_match(name):
    """Per step and rank: data transfer and synchronizing time; per collective: transfer."""
    hosts = [(w, _space(p)) for n, w, p in WORKERS if n == name]
    waits = wait_time(hosts)
    assert waits.problem is None
    by_step = waits.by_step.set_index(["worker", "step"])
    ref = load_reference(name, "distributed_waittime.json")["data"]
    for step, workers in ref.items():
        for worker, (transfer, synchronizing) in workers.items():
            row = by_step.loc[(worker, NO_STEP if step == "null" else step)]
            assert _close(transfer, row["transfer_ps"] / 1e6), (step, worker)
            assert _close(synchronizing, row["synchronizing_ps"] / 1e6), (step, worker)
    assert len(by_step) == sum(len(w) for w in ref.values())
    by_op = waits.by_op.set_index(["worker", "name"])
    for worker, table in load_reference(name, "distributed_commops.json")["data"].items():
        for row in table["rows"]:
            assert _close(row[4], by_op.loc[(worker, row[0]), "latency_ps"] / 1e6)
            assert _close(row[6], by_op.loc[(worker, row[0]), "transfer_ps"] / 1e6)


def test_synchronizing_time_needs_matching_collectives():
    two = [(w, _space(p)) for n, w, p in WORKERS if n == "pytorch_two_ranks"]
    other = [(w, _space(p)) for n, w, p in WORKERS if n == "pytorch_diff_control"]
    waits = wait_time([two[0], other[0]])  # 4 collectives against 18
    assert waits.problem is not None and "different numbers" in waits.problem
    assert waits.by_step.empty


@pytest.fixture(params=["compiled", "pure_python"])
def reader(request, monkeypatch):
    if request.param == "pure_python":
        monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    return request.param


def test_the_recorded_traces_are_here():
    found = [f"{n}/{w}" for n, w, _ in NS_WORKERS]
    assert found == ["pytorch_cpu_train_ns/worker0", "pytorch_ddp_ns/rank0", "pytorch_ddp_ns/rank1"]


@pytest.mark.parametrize("name, worker, path", NS_WORKERS, ids=lambda x: str(x))
def test_the_recorded_trace_has_nanosecond_times(name, worker, path):
    """Every ``ts`` and ``dur`` of the torch 2.13 traces has three decimals, and some calls
    nest in their parents only at that resolution: cut to whole microseconds, they end
    after the parent or start before it."""
    text = gzip.decompress(path.read_bytes()).decode()
    times = re.findall(r'"(ts|dur)": *(-?[0-9.]+)', text)
    assert len(times) > 1000
    assert all(len(value.partition(".")[2]) == 3 for _, value in times)
    ev = E.trace_events(read_chrome_trace(str(path)))
    ev = ev[ev["type"].isin([E.OPERATOR, E.USER_ANNOTATION, E.PROFILER_STEP])]
    ev = ev.sort_values(["tid", "begin_ps", "end_ps"], ascending=[True, True, False])
    us, only_in_ns = 1_000_000, 0
    for _, line in ev.groupby("tid", sort=False):
        stack: list = []
        for b, e in zip(line["begin_ps"].tolist(), line["end_ps"].tolist()):
            while stack and b >= stack[-1][1]:
                stack.pop()
            if stack:
                pb, pe = stack[-1]
                assert pb <= b and e <= pe  # the file nests well in nanoseconds
                # Truncated as ts and dur: begin // us and begin // us + dur // us.
                ends_after = b // us + (e - b) // us > pb // us + (pe - pb) // us
                only_in_ns += ends_after or b // us < pb // us
            stack.append((b, e))
    assert only_in_ns >= 5


@pytest.mark.parametrize("name, worker, path", NS_WORKERS, ids=lambda x: str(x))
def test_nanosecond_trace_matches_torch_tb_profiler(name, worker, path, reader):
    """Operator table (calls exact; host self and total time within 0.5 %) and overview
    (step time breakdown, steps) equal torch-tb-profiler 0.4.3's on the real torch traces,
    with the compiled reader and with the pure-Python one."""
    space = read_chrome_trace(str(path))
    table = operator_stats(space)
    assert _operator_mismatches(_reference(name, "operation_table", worker)["data"], table) == []
    # 0.4.3 reports no device columns for a CPU trace; ours are zero there.
    assert table["device_self_us"].sum() == 0 and table["device_total_us"].sum() == 0
    overview = _reference(name, "overview", worker)
    assert _overview_mismatches(overview, step_overview(space)) == []


@pytest.mark.parametrize("name, worker, path", NS_WORKERS, ids=lambda x: str(x))
def test_the_same_trace_in_whole_microseconds_no_longer_matches(
    name, worker, path, tmp_path, reader
):
    """The comparison has teeth: with ``ts``/``dur`` truncated to whole microseconds (what a
    reader keeping only the integer part would see), calls that nest only in nanoseconds
    fall out of their parents and the table no longer matches."""
    text = gzip.decompress(path.read_bytes()).decode()
    truncated = tmp_path / f"{worker}.1.pt.trace.json"
    truncated.write_text(re.sub(r'"(ts|dur)": *(\d+)\.\d+', r'"\1": \2', text))
    ref = _reference(name, "operation_table", worker)["data"]
    mismatches = _operator_mismatches(ref, operator_stats(read_chrome_trace(str(truncated))))
    assert any(": calls " in m for m in mismatches), mismatches


def test_the_ddp_ranks_are_one_run_with_torch_tb_profilers_distributed_view():
    """The two ranks of the DDP recording (spans stamped apart by each process) are one run
    of two hosts, as torch-tb-profiler shows them, and pytorch_distributed answers for both."""
    service = ProfileService(str(FIXTURES / "pytorch_ddp_ns"))
    try:
        (run,) = service.runs()
        hosts = [h["hostname"] for h in service.hosts(run, "pytorch_operators")]
        assert hosts == ["rank0", "rank1"]
        assert "pytorch_distributed" in service.run_tools(run)
        overlap = service.tool_data(run, "pytorch_distributed").json()[0]
        assert overlap["cols"][0]["id"] == "worker"
        assert {row["c"][0]["v"] for row in overlap["rows"]} == {"rank0", "rank1"}
    finally:
        service.close()

"""op_types, scope_view and code_view on PyTorch traces and ProfilerHook timelines."""

from __future__ import annotations

import collections
import gzip
import json

import pytest
from conftest import FIXTURES, load_reference

from tensorboard_plugin_profile.analysis.ops.attribution import op_records
from tensorboard_plugin_profile.analysis.pytorch.operators import operator_stats
from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import code_view, framework_op_stats, op_types, scope_view

from .test_tree_views import MS, rows

WORKERS = sorted(FIXTURES.glob("pytorch_*/run/*.pt.trace.json.gz"))
TIMELINES = sorted((FIXTURES / "profiler_hook" / "train").glob("timeline-*.json"))
_SPACES: dict = {}


def hosts_of(path) -> list:
    if path not in _SPACES:
        _SPACES[path] = read_chrome_trace(str(path))
    return [(path.name.split(".")[0], _SPACES[path])]


def by_type(table: dict) -> dict:
    return {r["name"]: r for r in rows(table) if r["kind"] == "type"}


@pytest.mark.parametrize("path", WORKERS, ids=lambda p: f"{p.parents[1].name}-{p.name[:5]}")
def test_pytorch_op_types_are_the_operator_table(path):
    hosts = hosts_of(path)
    operators = operator_stats(hosts[0][1])
    ours = by_type(op_types.convert(hosts, {}))
    assert set(ours) == set(operators["name"])
    for op in operators.to_dict("records"):
        row = ours[op["name"]]
        assert row["occurrences"] == op["calls"], op["name"]
        assert row["host_time_us"] == pytest.approx(op["host_self_us"], abs=MS), op["name"]
        assert row["device_time_us"] == pytest.approx(op["device_self_us"], abs=MS), op["name"]
    # ...and so torch-tb-profiler's own Operator view (calls, host self time).
    name, worker = path.parents[1].name, path.name.split(".")[0]
    ref_file = next((FIXTURES / "reference" / name).glob(f"operation_table.{worker}.*"))
    ref = load_reference(name, ref_file.name.removesuffix(".gz"))["data"]
    for op in ref:
        assert ours[op["name"]]["occurrences"] == op["calls"]
        assert ours[op["name"]]["host_time_us"] == pytest.approx(op["host_self_duration"], abs=1.0)
    total = operators["host_self_us"].sum() + operators["device_self_us"].sum()
    assert rows(op_types.convert(hosts, {}))[0]["total_time_us"] == pytest.approx(total, rel=1e-9)


def assert_tree_adds_up(table: list, op_total_us: float) -> None:
    assert table[0]["kind"] == "root"
    assert table[0]["total_time_us"] == pytest.approx(op_total_us, rel=1e-9)
    children: dict = collections.defaultdict(float)
    for r in table[1:]:
        children[r["parent"]] += r["total_time_us"]
    for r in table:
        expected = r["self_time_us"] + children[r["id"]]
        assert r["total_time_us"] == pytest.approx(expected, abs=MS), r["path"]
    assert sum(r["self_time_us"] for r in table) == pytest.approx(op_total_us, rel=1e-6)


@pytest.mark.parametrize(
    "path", WORKERS + TIMELINES, ids=lambda p: f"{p.parents[1].name}-{p.name[:10]}"
)
def test_scope_totals_add_up_to_the_op_totals(path):
    hosts = hosts_of(path)
    op_total_us = rows(op_types.convert(hosts, {}))[0]["total_time_us"]
    assert op_total_us == pytest.approx(op_records(hosts)["self_time_ps"].sum() / 1e6)
    assert_tree_adds_up(rows(scope_view.convert(hosts, {})), op_total_us)


def test_pytorch_scopes_are_the_enclosing_operators_and_annotations():
    table = rows(scope_view.convert(hosts_of(WORKERS[0]), {}))  # pytorch_amd_mi250
    by_path = {r["path"]: r for r in table}
    addmm = by_path["aten::linear / aten::addmm"]
    assert addmm["self_time_us"] > 0  # its own time; what it calls hangs below it
    assert by_path["aten::linear"]["total_time_us"] >= addmm["total_time_us"]
    # The optimizer step is a scope (the Operator view leaves it out); steps are not scopes.
    assert by_path["Optimizer.step#SGD.step"]["kind"] == "scope"
    assert not any(r["name"].startswith("ProfilerStep#") for r in table)


def test_two_ranks_combine_and_code_view_is_not_applicable_without_stacks():
    service = ProfileService(str(FIXTURES / "pytorch_two_ranks"))
    tools = service.run_tools("run/1")
    assert {"op_types", "scope_view", "advisor"} <= set(tools) and "code_view" not in tools
    both = rows(service.tool_data("run/1", "op_types", host="ALL_HOSTS").json())
    each = [rows(service.tool_data("run/1", "op_types", host=h).json()) for h in ("rank0", "rank1")]
    assert both[0]["total_time_us"] == pytest.approx(sum(t[0]["total_time_us"] for t in each))
    with pytest.raises(NotApplicable, match="Python"):
        code_view.convert(hosts_of(WORKERS[-1]), {})


@pytest.mark.parametrize("path", TIMELINES, ids=lambda p: p.name)
def test_profiler_hook_op_types_are_its_tf_stats(path):
    hosts = hosts_of(path)
    stats = rows(framework_op_stats.convert(hosts, {})[1])  # without IDLE
    expected: dict = collections.defaultdict(float)
    for r in stats:
        expected[r["type"]] += r["total_self_time"]
    ours = by_type(op_types.convert(hosts, {}))
    assert set(ours) == set(expected)
    for op_type, time_us in expected.items():
        assert ours[op_type]["total_time_us"] == pytest.approx(time_us, abs=MS)
    # Types are the nodes' `args.op`, scopes their `args.name` paths.
    raw = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert set(ours) == {e["args"]["op"] for e in raw if e.get("cat") == "Op"}
    scopes = {r["path"]: r for r in rows(scope_view.convert(hosts, {}))}
    assert "gradients / conv1 / Conv2D_grad / Conv2DBackpropFilter" in scopes
    # Bytes: what the tensors each node made requested (show_memory=True).
    made: dict = collections.defaultdict(int)
    for e in raw_all(path):
        if e.get("ph") == "O" and e.get("cat") == "Tensor":
            text = e["args"]["snapshot"]["tensor_description"]
            node = e["name"].rsplit(":", 1)[0] if ":" in e["name"] else e["name"]  # output :1
            made[node] += int(text.split("requested_bytes: ")[1].split()[0])
    bytes_of = dict(zip(op_records(hosts)["name"], op_records(hosts)["bytes"]))
    assert bytes_of["conv1/Conv2D"] == made["conv1/Conv2D"] > 0
    nodes = {e["args"]["name"] for e in raw if e.get("cat") == "Op"}
    assert scopes[""]["bytes"] == sum(b for n, b in made.items() if n in nodes)


def raw_all(path) -> list:
    return json.loads(path.read_text())["traceEvents"]


def _python_trace(tmp_path):
    """A PyTorch trace recorded with_stack and with_modules: frames and modules nest the ops."""

    def x(name, cat, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
                "args": args}  # fmt: skip

    def memory(ts, size):
        return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                "tid": 1, "ts": ts, "args": {"Bytes": size, "Addr": 1}}  # fmt: skip

    events = [
        x("ProfilerStep#1", "user_annotation", 0, 100),
        x("train.py(20): <module>", "python_function", 0, 100),
        x("train.py(12): step", "python_function", 1, 90),
        x("nn.Module: Net_0", "python_function", 2, 60),
        x("nn.Module: Linear_0", "python_function", 3, 30),
        x("aten::linear", "cpu_op", 4, 25),
        x("aten::addmm", "cpu_op", 6, 20),
        x("model.py(7): forward", "python_function", 40, 20),
        x("aten::relu", "cpu_op", 41, 10),
        x("aten::relu", "cpu_op", 52, 5),
        x("Optimizer.step#SGD.step", "cpu_op", 70, 20),
        x("aten::add_", "cpu_op", 71, 8),
        # profile_memory=True: allocations (and a free) inside the calls that made them.
        memory(6, 4096),
        memory(7, 1024),
        memory(42, 512),
        memory(72, -4096),
    ]

    path = tmp_path / "run" / "worker0.1.pt.trace.json.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    return path


def test_pytorch_modules_are_scopes_and_python_functions_are_code(tmp_path):
    hosts = hosts_of(_python_trace(tmp_path))
    scopes = {r["path"]: r for r in rows(scope_view.convert(hosts, {}))}
    addmm = scopes["Net_0 / Linear_0 / aten::linear / aten::addmm"]
    assert addmm["self_time_us"] == pytest.approx(20.0)
    assert scopes["Net_0 / Linear_0"]["total_time_us"] == pytest.approx(25.0)
    assert scopes["Net_0 / aten::relu"]["occurrences"] == 2
    assert scopes["Optimizer.step#SGD.step / aten::add_"]["self_time_us"] == pytest.approx(8.0)
    assert addmm["bytes"] == 4096 + 1024  # the one at addmm's first moment is inside it
    assert scopes["Net_0 / aten::relu"]["bytes"] == 512
    assert scopes[""]["bytes"] == 4096 + 1024 + 512  # frees are not requests
    code = {r["path"]: r for r in rows(code_view.convert(hosts, {}))}
    step = "train.py(20): <module> / train.py(12): step"
    assert code[f"{step} / model.py(7): forward"]["total_time_us"] == pytest.approx(15.0)
    add = code[f"{step} / Optimizer.step#SGD.step/aten::add_ (Host)"]
    assert add["self_time_us"] == pytest.approx(8.0)
    assert code[step]["total_time_us"] == pytest.approx(5 + 20 + 15 + 8)
    service = ProfileService(str(tmp_path))
    assert "code_view" in service.run_tools("run/1")

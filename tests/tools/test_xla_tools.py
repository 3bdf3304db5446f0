"""The XLA tools against upstream's references and hand-computed synthetic profiles.

memory_viewer and graph_viewer must equal upstream for every module of every JAX
fixture; on XLA:CPU (where upstream's op tools are empty) hlo_stats and op_profile
must agree with a direct count over the trace's XLA op events; device planes are
checked on a synthetic GPU profile whose numbers are worked out in its docstring.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import REFERENCE, host_files

from tensorboard_plugin_profile.analysis.hlo import buffers, cxx_sort, modules, printer
from tensorboard_plugin_profile.common.errors import InvalidArgument, NotApplicable, NotFound
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import (
    TOOLS,
    graph_viewer,
    hlo_stats,
    memory_viewer,
    op_profile,
    roofline_model,
)
from tensorboard_plugin_profile.xspace import read_xspace

from .synthetic import gpu_space, gpu_xla_space

JAX_FIXTURES = ("jax_cpu_train", "jax_remote_capture", "jax_two_hosts")
XLA_TOOLS = ("memory_viewer", "graph_viewer", "op_profile", "hlo_stats", "roofline_model")


def _space(fixture):
    return read_xspace(str(host_files(fixture)[0]))


def _module_cases():
    return [
        (fixture, name)
        for fixture in JAX_FIXTURES
        for name in (REFERENCE / fixture / "module_list.txt").read_text().strip().split(",")
    ]


def _same(ours, ref, path=""):
    """Differences between two JSON values (floats to 1e-12 relative)."""
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and set(ours) == set(ref), (path, set(ours) ^ set(ref))
        for key in ref:
            _same(ours[key], ref[key], f"{path}/{key}")
    elif isinstance(ref, list):
        assert isinstance(ours, list) and len(ours) == len(ref), path
        for i, (a, b) in enumerate(zip(ours, ref)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(ref, float) or isinstance(ours, float):
        assert math.isclose(ours, ref, rel_tol=1e-12, abs_tol=1e-15), (path, ours, ref)
    else:
        assert ours == ref, (path, ours, ref)


@pytest.mark.parametrize("fixture", JAX_FIXTURES)
def test_module_list_is_upstreams(fixture):
    service = ProfileService(str(REFERENCE.parent / fixture))
    (run,) = service.runs()
    expected = (REFERENCE / fixture / "module_list.txt").read_text().strip()
    assert ",".join(service.module_list(run)) == expected


@pytest.mark.parametrize("fixture, module", _module_cases())
def test_memory_viewer_matches_upstream_cell_by_cell(fixture, module):
    ours = memory_viewer.convert([("h", _space(fixture))], {"module_name": module})
    ref = json.loads((REFERENCE / fixture / f"memory_viewer.{module}.json").read_text())
    _same(json.loads(json.dumps(ours)), ref)


@pytest.mark.parametrize("fixture, module", _module_cases())
def test_graph_viewer_text_matches_upstream_line_by_line(fixture, module):
    output = graph_viewer.convert([("h", _space(fixture))], {"module_name": module})
    ours = b"".join(output.chunks()).decode().splitlines()
    ref = (REFERENCE / fixture / f"graph_viewer.{module}.txt").read_text().splitlines()
    assert ours == ref


def test_memory_viewer_peak_table_lists_the_peak_buffers_largest_first():
    hosts = [("h", _space("jax_cpu_train"))]
    full = memory_viewer.convert(hosts, {"module_name": "jit_train_step(32)"})
    (table,) = memory_viewer.convert(hosts, {"module_name": "jit_train_step(32)", "view": "tables"})
    sizes = [r["c"][2]["v"] for r in table["rows"]]
    assert len(sizes) == len(full["maxHeap"]) and sizes == sorted(sizes, reverse=True)
    assert math.isclose(sum(sizes), sum(o["logicalBufferSizeMib"] for o in full["maxHeap"]))
    assert table["rows"][0]["c"][1]["v"] == full["maxHeapBySize"][0]["instructionName"]


def test_module_errors_say_what_is_missing():
    hosts = [("h", _space("jax_two_hosts"))]
    with pytest.raises(InvalidArgument):
        memory_viewer.convert(hosts, {})
    with pytest.raises(NotFound):
        graph_viewer.convert(hosts, {"module_name": "no_such_module"})
    with pytest.raises(InvalidArgument):
        graph_viewer.convert(hosts, {"module_name": "jit_step(8)", "type": "graph"})


def test_graph_viewer_graph_walks_operands_and_users_to_the_depth():
    hosts = [("h", _space("jax_two_hosts"))]
    params = {"module_name": "jit_step(8)", "type": "graph", "node_name": "ynn_fusion.1"}
    near = graph_viewer.convert(hosts, {**params, "graph_width": "1"})
    far = graph_viewer.convert(hosts, {**params, "graph_width": "3"})
    names = {n["name"] for n in near["nodes"]}
    assert "ynn_fusion.1" in names and {n["depth"] for n in near["nodes"]} <= {0, 1}
    assert names < {n["name"] for n in far["nodes"]}
    for edge in near["edges"]:
        assert edge["from"] in names and edge["to"] in names
    fusions = [n for n in far["nodes"] if n["opcode"] == "fusion"]
    assert fusions and all(n["fusion"]["nodes"] for n in fusions)
    ops = graph_viewer.convert(hosts, {"module_name": "jit_step(8)", "type": "ops"})
    assert {"ynn_fusion.1", "dot"} <= {o["name"] for o in ops["ops"]}


def test_long_text_adds_operand_shapes_and_metadata():
    proto = modules.find_module([("h", _space("jax_two_hosts"))], "jit_step(8)")
    long = printer.module_text(proto.hlo_module, long=True)
    assert "metadata={" in long and "dot(f32[" in long


def _direct_count(space):
    """(program_id, hlo_op) -> (events, total ps), counted straight from the host plane."""
    host = space.plane("/host:CPU")  # the stats read per event, not through typed columns
    ev = host.events.assign(
        hlo_op=host.event_stat("hlo_op"), program_id=host.event_stat("program_id")
    )
    ops = ev[ev["hlo_op"].notna() & ev["program_id"].notna()]
    grouped = ops.groupby(["program_id", "hlo_op"], observed=True).duration_ps.agg(["size", "sum"])
    return {(int(p), str(o)): (int(n), int(t)) for (p, o), (n, t) in grouped.iterrows()}


@pytest.mark.parametrize("fixture", JAX_FIXTURES)
def test_hlo_stats_on_xla_cpu_equal_a_direct_count_of_the_events(fixture):
    space = _space(fixture)
    expected = _direct_count(space)
    assert expected, "the fixture's XLA:CPU thunk events carry hlo_op and program_id"
    table = hlo_stats.convert([("h", space)], {})
    rows = [[c["v"] for c in r["c"]] for r in table["rows"]]
    ours = {(int(r[1]), r[3]): (int(r[6]), round(r[7] * 1e6)) for r in rows}
    assert ours == expected
    top = sorted(expected, key=lambda k: -expected[k][1])[:10]
    assert [(int(r[1]), r[3]) for r in rows[:10]] == top
    assert math.isclose(rows[-1][12], 1.0) and all(r[2] != "unknown" for r in rows)


def test_op_profile_on_xla_cpu_sums_to_the_direct_count():
    space = _space("jax_cpu_train")
    total = sum(t for _, t in _direct_count(space).values())
    by_program = op_profile.convert([("h", space)], {})
    by_category = op_profile.convert([("h", space)], {"group_by": "category"})
    assert by_program["deviceType"] == "CPU_ONLY"
    for tree in (by_program["byProgram"], by_category["byCategory"]):
        assert tree["metrics"]["rawTime"] == total
        assert sum(c["metrics"]["rawTime"] for c in tree["children"]) == total
    program = by_program["byProgram"]["children"][0]
    assert program["name"] == "jit_train_step(32)"
    leaf = program["children"][0]["children"][0]
    assert leaf["xla"]["op"] and leaf["xla"]["expression"].startswith(leaf["xla"]["op"] + " = ")
    assert by_program["byProgramExcludeIdle"] == by_program["byProgram"]  # no idle on a CPU


def test_roofline_on_a_cpu_is_listed_with_the_ops_of_the_other_xla_tools():
    service = ProfileService(str(REFERENCE.parent / "jax_cpu_train"))
    (run,) = service.runs()
    assert {"memory_viewer", "graph_viewer", "op_profile", "hlo_stats", "roofline_model"} <= set(
        service.run_tools(run)
    )


def _roofline_rows(ops):
    names = [c["id"] for c in ops["cols"]]
    return names, {r["c"][3]["v"]: [c["v"] for c in r["c"]] for r in ops["rows"]}


def test_roofline_on_a_cpu_with_the_users_peaks_by_hand():
    params = {"peak_gflops": "100", "peak_gib_s": "10"}
    ops, diagnostics = roofline_model.convert([("h", _space("jax_cpu_train"))], params)
    assert ops["p"]["peak_source"] == "given by the user" and ops["p"]["device_type"] == "CPU"
    assert float(ops["p"]["hbm_ridge_point"]) == pytest.approx(10.0)  # 100 GFLOP/s / 10 GiB/s
    names, rows = _roofline_rows(ops)
    dot = rows["dot"]
    # dot: 12 runs of 2*784*128*64 FLOPs, reading and writing (64*784 + 64*128 + 784*128) floats.
    flops, nbytes = 12 * 2 * 784 * 128 * 64, 12 * 4 * (64 * 784 + 64 * 128 + 784 * 128)
    self_us = dot[names.index("total_self_time")]
    assert dot[names.index("measured_flop_rate")] == pytest.approx(flops / (self_us * 1e3))
    intensity = flops / nbytes  # 77.4 FLOP/byte, past the ridge of 10
    assert dot[names.index("operational_intensity")] == pytest.approx(intensity)
    assert dot[names.index("bound_by")] == "Compute"
    assert dot[names.index("roofline_efficiency")] == pytest.approx(flops / (self_us * 1e3) / 100)
    assert rows["wrapped_iota"][names.index("bound_by")] == "Memory"  # no FLOPs, only bytes
    assert "given by the user" in diagnostics["rows"][0]["c"][1]["v"]


def test_roofline_on_a_cpu_measures_this_machine_and_says_so():
    ops, diagnostics = roofline_model.convert([("h", _space("jax_cpu_train"))], {})
    assert ops["p"]["peak_source"] == "measured on this machine"
    assert float(ops["p"]["peak_flop_rate"]) > 0 and float(ops["p"]["peak_hbm_bw"]) > 0
    assert "measured on this machine" in diagnostics["rows"][0]["c"][1]["v"]


@pytest.mark.parametrize(
    "params",
    [
        {"peak_gflops": "100"},
        {"peak_gib_s": "10"},
        {"peak_gflops": "nan", "peak_gib_s": "10"},
        {"peak_gflops": "-1", "peak_gib_s": "10"},
        {"peak_gflops": "1e300", "peak_gib_s": "10"},
        {"peak_gflops": "fast", "peak_gib_s": "10"},
    ],
)
def test_roofline_refuses_half_or_bad_peaks(params):
    with pytest.raises(InvalidArgument, match="peak_g"):
        roofline_model.convert([("h", _space("jax_cpu_train"))], params)


def test_no_xla_ops_no_xla_tools():
    space = gpu_space()  # TensorFlow kernels, no HLO
    assert not any(TOOLS[name].listed_for(space) for name in XLA_TOOLS)
    with pytest.raises(NotApplicable):
        hlo_stats.convert([("h", space)], {})


def test_gpu_hlo_stats_by_hand():
    table = hlo_stats.convert([("h", gpu_xla_space())], {})
    rows = [[c["v"] for c in r["c"]] for r in table["rows"]]
    assert [r[3] for r in rows] == ["dot.2", "fusion.1"]
    dot, fusion = rows
    assert dot[1:3] == ["7", "dot"] and fusion[2] == "loop fusion"
    assert dot[4].startswith("dot.2 = f32[4,4]{1,0} dot(fusion.1, fusion.1)")
    assert dot[5] == "jit(step)/dot.2"
    assert dot[6:11] == [1, 10, 10, 10, 10] and fusion[6:11] == [2, 8, 4, 8, 4]
    assert dot[11] == pytest.approx(10 / 18) and fusion[12] == pytest.approx(1.0)
    assert dot[14] == pytest.approx(2000) and fusion[14] == pytest.approx(250)  # GFLOP/s
    assert dot[16] == pytest.approx(2e5 / 10e-6 / 2**30)  # GiB/s
    assert dot[20] == pytest.approx(100) and fusion[20] == pytest.approx(10)


def test_gpu_op_profile_idle_and_utilisation_by_hand():
    profile = op_profile.convert([("h", gpu_xla_space())], {})
    with_idle, without = profile["byProgram"], profile["byProgramExcludeIdle"]
    assert profile["deviceType"] == "GPU"
    assert with_idle["metrics"]["rawTime"] == 25e6 and without["metrics"]["rawTime"] == 18e6
    assert [c["name"] for c in with_idle["children"]] == ["jit_step(7)", "IDLE"]
    program = without["children"][0]
    assert [c["name"] for c in program["children"]] == ["dot", "loop fusion"]
    fusion = program["children"][1]["children"][0]
    assert fusion["metrics"]["occurrences"] == 2 and fusion["metrics"]["rawTime"] == 8e6
    assert fusion["metrics"]["flops"] == pytest.approx(250e9 / 10e12)
    assert fusion["metrics"]["bandwidthUtils"][0] == pytest.approx(2e5 / 8e-6 / 1e12)


def test_gpu_roofline_by_hand():
    ops, diagnostics = roofline_model.convert([("h", gpu_xla_space())], {})
    assert float(ops["p"]["peak_flop_rate"]) == pytest.approx(10_000)
    ridge = 10_000 / (1e12 / 2**30)
    assert float(ops["p"]["hbm_ridge_point"]) == pytest.approx(ridge)
    rows = {r["c"][3]["v"]: [c["v"] for c in r["c"]] for r in ops["rows"]}
    assert rows["dot.2"][9] == "Compute" and rows["fusion.1"][9] == "Memory"
    assert rows["dot.2"][10] == pytest.approx(2000 / 10_000)
    assert rows["fusion.1"][10] == pytest.approx(250 / (10 * 1e12 / 2**30))
    assert diagnostics["rows"] == []


@pytest.mark.parametrize("n", [0, 1, 5, 16, 17, 40, 200])
def test_cxx_sort_order_is_a_valid_sort(n):
    rng = np.random.default_rng(n)
    keys = rng.integers(0, 4, n).tolist()
    order = cxx_sort.introsort_order(keys, less=lambda a, b: a > b)
    assert sorted(order) == list(range(n))
    assert [keys[i] for i in order] == sorted(keys, reverse=True)


def test_unpadded_and_padding_columns_add_up():
    hosts = [("h", _space("jax_cpu_train"))]
    result = buffers.preprocess(modules.find_module(hosts, "jit_train_step(32)"))
    frame = pd.DataFrame(result["maxHeap"])
    assert (frame["logicalBufferSizeMib"] >= frame["unpaddedShapeMib"].fillna(0)).all()


def test_routes_serve_module_list_and_hlo_text():
    from conftest import FIXTURES
    from werkzeug.test import Client

    from tensorboard_plugin_profile.web.server import StandaloneApp

    client = Client(StandaloneApp(str(FIXTURES)))
    run = "jax_two_hosts/multi_jax2__xprof_client"
    listed = client.get(f"/data/plugin/profile/module_list?run={run}")
    assert listed.status_code == 200 and listed.mimetype == "text/plain"
    expected = (REFERENCE / "jax_two_hosts" / "module_list.txt").read_text().strip()
    assert listed.get_data(as_text=True) == expected
    text = client.get(
        f"/data/plugin/profile/data?run={run}&tag=graph_viewer&module_name=jit_add(12)"
    )
    assert text.mimetype == "text/plain"
    assert text.get_data(as_text=True).startswith("HloModule jit_add, is_scheduled=true")


def test_a_corrupt_hlo_proto_is_a_clear_error():
    from xspace_builder import SpaceBuilder, set_stat_value

    from tensorboard_plugin_profile.common.errors import CorruptProfile

    space = SpaceBuilder("broken")
    meta = space.plane(1, "/host:metadata")
    program = meta.plane.event_metadata[meta.event_id("jit_f(1)")]
    stat = program.stats.add()
    set_stat_value(stat, b"\x0a\xff\xff\xff\xff\x0f")  # a length running past the end
    stat.metadata_id = meta.stat_id("Hlo Proto")
    decoded = space.decode()
    assert modules.module_names(decoded) == ["jit_f(1)"]
    with pytest.raises(CorruptProfile, match="jit_f"):
        memory_viewer.convert([("h", decoded)], {"module_name": "jit_f(1)"})

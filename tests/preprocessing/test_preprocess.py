"""Preprocessing on small hand-built XSpaces: grouping, flows, regions, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
from xspace_builder import Uint, space_from_tables

from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace
from tensorboard_plugin_profile.xspace.event_stats import typed_column
from tensorboard_plugin_profile.xspace.model import Space

# Stat values written as uint64; ``make_space`` takes the nested-tuple form of the one builder.
U64 = Uint
make_space = space_from_tables


def column(plane, name: str) -> list:
    """An event column, or a stat's typed column (``typed_column``: stats kept as rows)."""
    values = plane.events[name] if name in plane.events else typed_column(plane, name)
    return [None if pd.isna(v) else v for v in values.tolist()]


def by_name(plane, event_name: str, col: str) -> list:
    named = (plane.events["name"] == event_name).to_numpy()
    return [v for v, hit in zip(column(plane, col), named) if hit]


def test_jax_step_annotations_make_named_groups():
    python = [
        ("train", 0, 100, {"_r": 1, "step_num": 3}),
        ("PjitFunction(step)", 10, 50, {}),
        ("train", 200, 100, {"_r": 1, "step_num": 4}),
        ("PjitFunction(step)", 210, 50, {}),
        ("after", 400, 10, {}),
    ]
    space = preprocess(make_space([(0, "/host:CPU", [(1, "python", python)])]))
    host = space.plane("/host:CPU")
    assert column(host, "group_id") == [0, 0, 1, 1, None]
    assert column(host, "step_name") == ["train 3", None, "train 4", None, None]
    assert space.group_names == {0: "train 3", 1: "train 4"}
    assert space.preprocessed


def test_tf_function_run_groups_its_executor_thread():
    python = [("FunctionRun", 0, 100, {"_r": 1, "_pt": 2, "_p": 77, "id": 5})]
    executor = [
        ("ExecutorState::Process", 20, 50, {"_ct": 2, "_c": 77, "id": 5, "iter_num": 0}),
        ("dense/MatMul:MatMul", 25, 10, {}),
        ("unrelated", 300, 10, {}),
    ]
    lines = [(1, "python", python), (2, "tf_Compute", executor)]
    space = preprocess(make_space([(0, "/host:CPU", lines)]))
    host = space.plane("/host:CPU")
    assert column(host, "group_id") == [0, 0, 0, None]
    # FunctionRun is an implicit root: the name is the step number, no step_name stat.
    assert space.group_names == {0: "0"}
    assert column(host, "step_name") == [None] * 4
    assert by_name(host, "dense/MatMul:MatMul", "is_eager") == [0]
    # Producer and consumer share one flow id, out on one side and in on the other.
    flows = host.stats[host.stats["stat"] == "flow"]
    values = flows["int_value"].to_numpy().view(np.uint64)
    assert flows["event"].tolist() == [0, 1]
    assert (values >> np.uint64(2)).tolist()[0] == (values >> np.uint64(2)).tolist()[1]
    assert [int(v) & 3 for v in values] == [2, 1]
    assert [int(v) >> 58 for v in values] == [2, 2]


def test_gpu_kernel_joins_the_group_of_its_launch():
    python = [
        ("train", 0, 1000, {"_r": 1, "step_num": 7}),
        ("LaunchKernel", 100, 20, {"correlation_id": U64(42), "device_id": 0}),
    ]
    stream = [("gemm_kernel", 300, 200, {"correlation_id": U64(42), "kernel_details": "regs:8"})]
    planes = [
        (0, "/host:CPU", [(1, "python", python)]),
        (0, "/device:GPU:0", [(5, "Stream #5(Compute)", stream)]),
    ]
    space = preprocess(make_space(planes))
    gpu = space.plane("/device:GPU:0")
    kernel = gpu.events[gpu.events["name"] == "gemm_kernel"]
    assert kernel["group_id"].tolist() == [0]
    assert kernel["is_eager"].tolist() == [0]
    host, device = (
        p.stats[p.stats["stat"] == "flow"]["int_value"].to_numpy().view(np.uint64)
        for p in (space.plane("/host:CPU"), gpu)
    )
    assert len(host) == len(device) == 1
    assert int(host[0]) >> 2 == int(device[0]) >> 2
    assert (int(host[0]) & 3, int(device[0]) & 3) == (2, 1)
    assert int(host[0]) >> 58 == 9  # gpu_launch


def test_nested_roots_of_one_level_group_at_the_outer_root():
    python = [
        ("outer", 0, 100, {"_r": 1, "step_num": 1}),
        ("inner", 10, 20, {"_r": 1, "step_num": 2}),
    ]
    space = preprocess(make_space([(0, "/host:CPU", [(1, "python", python)])]))
    assert column(space.plane("/host:CPU"), "group_id") == [0, 0]
    assert space.group_names == {0: "outer 1"}


def test_tf_while_loop_iterations_become_groups():
    executor = [
        ("ExecutorState::Process", 0, 10, {"id": 9, "iter_num": 0}),
        ("ExecutorState::Process", 20, 10, {"id": 9, "iter_num": 1}),
        ("ExecutorState::Process", 25, 2, {"id": 9, "iter_num": 0}),
    ]
    space = preprocess(make_space([(0, "/host:CPU", [(1, "tf_Compute", executor)])]))
    assert column(space.plane("/host:CPU"), "group_id") == [0, 1, 0]
    assert space.group_names == {0: "0", 1: "1"}


def test_threadpool_regions_span_start_to_stop():
    worker = [
        ("ThreadpoolListener::StartRegion", 10, 0, {"_ct": 15, "_c": 5}),
        ("work", 12, 3, {}),
        ("ThreadpoolListener::StopRegion", 20, 0, {}),
    ]
    space = preprocess(make_space([(0, "/host:CPU", [(1, "tf_XLAEigen", worker)])]))
    host = space.plane("/host:CPU")
    assert host.events["name"].tolist()[:2] == [
        "ThreadpoolListener::Region",
        "ThreadpoolListener::StartRegion",
    ]
    region = host.events.iloc[0]
    assert (region.begin_ps, region.duration_ps) == (10_000, 10_000)
    assert column(host, "_c")[0] == 5 and pd.isna(region["group_id"])
    # The original input is untouched.
    assert len(make_space([(0, "/host:CPU", [(1, "t", worker)])]).planes[0].events) == 3


def test_already_grouped_space_is_left_as_is():
    python = [("step", 0, 10, {"group_id": 4, "step_name": "step 4"})]
    space = make_space([(0, "/host:CPU", [(1, "python", python)])])
    out = preprocess(space)
    assert out.group_names == {4: "step 4"}
    assert out.planes[0].events is space.planes[0].events


def test_bad_input_is_handled():
    empty = Space(source="x", planes=[], hostnames=[], errors=[], warnings=[])
    assert preprocess(empty).group_names == {}
    no_lines = make_space([(0, "/host:CPU", []), (1, "/device:GPU:0", [])])
    assert [len(p.events) for p in preprocess(no_lines).planes] == [0, 0]
    proto = xplane_pb2.XSpace(hostnames=["h"])
    line = proto.planes.add(name="/host:CPU").lines.add(id=1, name="t")
    line.events.add(metadata_id=99, offset_ps=5, duration_ps=1)
    unknown = preprocess(decode_xspace(proto.SerializeToString()))
    assert unknown.planes[0].events["name"].tolist() == [""]
    assert unknown.group_names == {}


def derived_lines_space():
    """A named step launching two kernels on a compute stream, and a copy it does not reach."""
    python = [
        ("train", 0, 1000, {"_r": 1, "step_num": 7}),
        ("LaunchKernel", 100, 20, {"correlation_id": U64(1), "device_id": 0}),
        ("LaunchKernel", 150, 40, {"correlation_id": U64(2), "device_id": 0}),
    ]
    kernel = {"kernel_details": "regs:8", "tf_op": "dense/MatMul:MatMul", "hlo_module": "m"}
    stream = [
        ("k1", 300, 100, {**kernel, "correlation_id": U64(1), "program_id": 3, "hlo_op": "f::dot"}),
        ("k2", 420, 50, {**kernel, "correlation_id": U64(2), "program_id": 3, "hlo_op": "f::add"}),
    ]
    copy = [("MemcpyH2D", 480, 10, {"correlation_id": U64(9)})]
    planes = [
        (0, "/host:CPU", [(1, "python", python)]),
        (
            0,
            "/device:GPU:0",
            [(9, "Stream #9(MemcpyH2D)", copy), (5, "Stream #5(Compute)", stream)],
        ),
    ]
    return make_space(planes)


def test_gpu_planes_get_derived_lines():
    gpu = preprocess(derived_lines_space()).plane("/device:GPU:0")
    lines = gpu.lines.set_index("name")
    ev = gpu.events.assign(line_name=gpu.lines["name"].to_numpy()[gpu.events["line"]])

    def on(line):
        rows = ev[ev["line_name"] == line]
        return list(zip(rows["name"], rows["begin_ps"] // 1000, rows["duration_ps"] // 1000))

    # Compute stream first: display ids 1 (stream), 2.. (its derived rows), then 8.
    assert lines.loc["Stream #5(Compute)", "tid"] == 1
    assert lines.loc["Stream #9(MemcpyH2D)", "tid"] == 8
    assert lines.loc["Framework Ops - from #5", "tid"] == 3
    assert on("Steps") == [("0", 300, 190)]  # the copy inherits group 0
    assert by_name(gpu, "0", "step_name") == ["train 7"]
    assert on("Framework Name Scope - from #5") == [("dense", 300, 170)]
    assert on("Framework Ops - from #5") == [("dense/MatMul:MatMul", 300, 170)]
    assert by_name(gpu, "dense/MatMul:MatMul", "display_name") == ["MatMul"]
    assert on("XLA Modules - from #5") == [("m(3)", 300, 170)]
    assert on("XLA Ops - from #5") == [("3/f", 300, 170), ("3/dot", 300, 100), ("3/add", 420, 50)]
    assert on("Launch Stats") == [("Launch Stats for train 7", 100, 90)]
    stats = gpu.stats[gpu.stats["stat"] == "num_launches"]
    assert stats["int_value"].tolist() == [2]

"""tbp.open(path): the notebook facade answers with the tools' own numbers, on every format."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES, REPO

import tensorboard_plugin_profile as tbp
from tensorboard_plugin_profile.api.events import concat_batches
from tensorboard_plugin_profile.api.tables import column_name, table_frame, tables_of
from tensorboard_plugin_profile.common.errors import InvalidArgument, NotFound

# One fixture per input format: XSpace from JAX and TensorFlow (one and two hosts), a GPU
# XSpace, a ProfilerHook timeline, PyTorch traces of two ranks.
FORMATS = ["jax_cpu_train", "tf_keras2_fit", "tf_two_hosts", "profiler_hook", "pytorch_two_ranks"]
NOT_TABLES = {"trace_viewer@", "graph_viewer", "memory_viewer", "op_profile", "pod_viewer"}


@pytest.fixture(scope="module")
def profiles():
    opened = {}
    yield lambda name: opened.setdefault(name, tbp.open(str(FIXTURES / name)))
    for p in opened.values():
        p.close()


def assert_frame_is_table(frame: pd.DataFrame, table: dict) -> None:
    """Every cell of the DataFrame is the JSON cell; the columns are typed by the JSON type."""
    cols = table["cols"]
    assert len(frame.columns) == len(cols)
    assert len(frame) == len(table["rows"])
    for i, (name, col) in enumerate(zip(frame.columns, cols)):
        assert frame.attrs["labels"][name] == col["label"]
        cells = [r["c"][i] for r in table["rows"]]
        values = [c.get("v") if c else None for c in cells]
        got = frame[name].tolist()
        if col["type"] == "number":
            assert frame[name].dtype == np.float64
            assert all((v is None and math.isnan(g)) or g == v for g, v in zip(got, values)), name
        else:
            assert frame[name].dtype == {"string": "string", "boolean": "boolean"}[col["type"]]
            assert [None if g is pd.NA else g for g in got] == values, name
    assert frame.attrs["properties"] == table.get("p", {})


@pytest.mark.parametrize("fixture", FORMATS)
def test_every_table_equals_the_tools_json(profiles, fixture):
    p = profiles(fixture)
    checked = 0
    for tool in p.tools:
        if tool in NOT_TABLES:
            continue
        for host in [h["hostname"] for h in p.service.hosts(p.run, tool)]:
            tables = tables_of(p.data(tool, host=host))
            frames = p.tables(tool, host=host)
            assert len(frames) == len(tables)
            for frame, table in zip(frames, tables):
                assert_frame_is_table(frame, table)
                checked += 1
    assert checked >= 4


def test_kernel_stats_of_a_gpu_profile_equal_the_tool(profiles):
    p = profiles("gpu_multi_worker")
    host = p.hosts[0]
    frame = p.table("kernel_stats", host=host)
    assert_frame_is_table(frame, tables_of(p.data("kernel_stats", host=host))[0])
    assert len(frame) > 10
    kernels = p.kernels()
    assert list(kernels["host"].unique()) == p.hosts
    assert len(kernels) == 2 * len(frame)


def test_column_names_carry_units():
    assert column_name("total_time", "Total time (us)") == "total_time_us"
    assert column_name("deviceComputeTimeMs", "Device compute") == "device_compute_time_ms"
    assert column_name("hostTimeMs", "Host time (in ms)") == "host_time_ms"
    assert column_name("utilization", "GPU utilization (%)") == "utilization_percent"
    assert column_name("tc_self_percent", "Tensor Cores self (%)") == "tc_self_percent"
    assert column_name("model_flop_rate", "Model FLOP Rate (GFLOP/s)") == (
        "model_flop_rate_gflop_per_s"
    )


def test_a_table_with_missing_and_short_rows():
    table = {
        "cols": [
            {"id": "n", "label": "N", "type": "number"},
            {"id": "s", "label": "S", "type": "string"},
            {"id": "s", "label": "S again", "type": "string"},
        ],
        "rows": [{"c": [{"v": 1.0}, None, {"v": "x"}]}, {"c": [{"v": None}]}],
    }
    frame = table_frame(table, "t")
    assert list(frame.columns) == ["n", "s", "s_2"]
    assert frame["n"].tolist()[0] == 1.0 and math.isnan(frame["n"].tolist()[1])
    assert frame["s_2"].isna().tolist() == [False, True]
    assert table_frame({"cols": [], "rows": []}).empty


def test_runs_hosts_tools_and_reprs(profiles):
    p = profiles("profiler_hook")
    # Three timelines, and the run of all three steps together (issue 28 item 10).
    assert len(p.runs) == 4 and "train/all_steps" in p.runs and p.run in p.runs
    assert p.hosts == [p.run.rsplit("/", 1)[-1]]
    assert "framework_op_stats" in p.tools
    other = p.with_run(p.runs[1])
    assert other.run == p.runs[1] and other.service is p.service
    assert p.run in repr(p)
    html = p._repr_html_()
    assert "<table>" in html and "framework_op_stats" in html


def test_errors_are_clear(profiles, tmp_path):
    p = profiles("jax_cpu_train")
    with pytest.raises(NotFound, match="Unknown tool"):
        p.table("no_such_tool")
    with pytest.raises(InvalidArgument, match="no table"):
        p.table("op_profile")
    with pytest.raises(InvalidArgument, match="Table 9 does not exist"):
        p.table("hlo_stats", table=9)
    with pytest.raises(NotFound, match="No profile for host"):
        p.events(host="elsewhere")
    with pytest.raises(InvalidArgument, match="regular expression"):
        p.events(names="(")
    with pytest.raises(NotFound, match="No run 'nope'; the runs are session_1"):
        tbp.open(str(FIXTURES / "jax_cpu_train"), run="nope")
    with pytest.raises(NotFound, match="No profile"):
        tbp.open(str(tmp_path))


def test_events_are_the_decoded_columns(profiles):
    p = profiles("jax_cpu_train")
    events = p.events()
    space = p.service.space(p.service.logdir.session(p.run).host_files[0])
    assert len(events) == space.num_events
    assert list(events.columns[:6]) == ["host", "plane", "line", "name", "start_ps", "duration_ps"]
    for column in ("host", "plane", "line", "name"):
        assert isinstance(events[column].dtype, pd.CategoricalDtype)  # no object per event
    plane = space.plane("/host:CPU")
    mine = events[events["plane"] == "/host:CPU"]
    assert mine["start_ps"].tolist() == plane.events["begin_ps"].tolist()
    assert mine["name"].astype(str).tolist() == plane.events["name"].astype(str).tolist()
    assert mine["duration_ps"].sum() == plane.events["duration_ps"].sum()


def test_event_filters(profiles):
    p = profiles("jax_cpu_train")
    events = p.events()
    dots = p.events(names=r"^dot")
    assert len(dots) and dots["name"].astype(str).str.startswith("dot").all()
    assert len(dots) == events["name"].astype(str).str.contains("^dot").sum()
    exact = p.events(names=["dot", "train"])
    assert set(exact["name"].astype(str)) == {"dot", "train"}
    start, end = 2_000_000_000, 3_000_000_000
    window = p.events(start_ps=start, end_ps=end)
    ends = events["start_ps"] + events["duration_ps"]
    assert len(window) == ((events["start_ps"] < end) & (ends >= start)).sum()


def test_events_stream_in_batches_of_the_size_asked(profiles):
    p = profiles("tf_two_hosts")
    whole = p.events()
    batches = list(p.iter_events(batch_rows=500))
    assert max(len(b) for b in batches) == 500
    assert set(whole["host"].astype(str)) == set(p.hosts)
    again = concat_batches(batches)
    assert len(again) == len(whole)
    pd.testing.assert_frame_equal(again, whole)
    with pytest.raises(InvalidArgument, match="batch_rows"):
        next(p.iter_events(batch_rows=0))


def test_pytorch_events_carry_the_stats_asked(profiles):
    p = profiles("pytorch_two_ranks")
    events = p.events(host="rank0", stats=["correlation", "stream", "Input type", "nope"])
    assert set(events["host"].astype(str)) == {"rank0"}
    assert "nope" not in events.columns
    space = p.service.space(p.service.logdir.session(p.run).host_file("rank0"))
    for plane in space.planes:
        mine = events[events["plane"] == plane.name].reset_index(drop=True)
        for stat in ("correlation", "stream", "Input type"):
            expected = plane.event_stat(stat)  # the model's own reading, one object per event
            got = mine[stat].astype(object).where(mine[stat].notna(), None).tolist()
            assert got == expected.tolist(), (plane.name, stat)
    assert events["correlation"].dtype == "Int64"
    assert isinstance(events["Input type"].dtype, pd.CategoricalDtype)


@pytest.mark.parametrize(
    "fixture,tool", [("tf_keras2_fit", "overview_page"), ("pytorch_two_ranks", "pytorch_overview")]
)
def test_steps_are_the_overview_step_table(profiles, fixture, tool):
    p = profiles(fixture)
    steps = p.steps()
    assert list(steps.columns[:3]) == ["host", "step", "step_time_ms"]
    assert set(steps["host"]) == set(p.hosts)
    host = p.hosts[0]
    table = next(
        t
        for t in tables_of(p.data(tool, host=host))
        if {"stepnum", "step"} & {c["id"] for c in t["cols"]}
    )
    rows = [r for r in table["rows"] if r["c"][0]["v"] != "Average"]
    mine = steps[steps["host"] == host]
    assert mine["step"].tolist() == [r["c"][0]["v"] for r in rows]
    ids = [c["id"] for c in table["cols"]]
    column = ids.index("stepTimeMs" if "stepTimeMs" in ids else "total_us")
    scale = 1.0 if "stepTimeMs" in ids else 1e3
    assert mine["step_time_ms"].tolist() == [r["c"][column]["v"] / scale for r in rows]


def test_a_profile_without_steps_has_an_empty_step_table(profiles):
    steps = profiles("profiler_hook").steps()
    assert list(steps.columns) == ["host", "step", "step_time_ms"] and steps.empty


def test_op_stats_of_every_host(profiles):
    p = profiles("tf_two_hosts")
    ops = p.op_stats()
    for host in p.hosts:
        one = p.table("framework_op_stats", host=host)
        mine = ops[ops["host"] == host].drop(columns="host").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, one, check_like=False)


def test_advice_as_objects_and_frame(profiles):
    advice = profiles("tf_keras2_fit").advise()
    assert len(advice) >= 1
    assert advice.frame["check"].tolist() == [f.check for f in advice]
    assert advice.framework == "TensorFlow"
    assert "findings" in repr(advice) and "<caption>" in advice._repr_html_()


def test_importing_the_package_loads_nothing_heavy():
    code = (
        "import sys, tensorboard_plugin_profile as tbp;"
        "heavy = [m for m in ('pandas', 'numpy', 'tensorboard_plugin_profile.service') "
        "if m in sys.modules]; print(heavy); assert callable(tbp.open)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

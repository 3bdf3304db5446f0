"""op_types, scope_view and code_view on the real fixtures (and one hand-made trace)."""

from __future__ import annotations

import collections

import pytest
from conftest import fixture_names
from tools.compare_tables import fixture_hosts

from tensorboard_plugin_profile.analysis.ops.attribution import op_records
from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.tools import code_view, framework_op_stats, op_types, scope_view
from tensorboard_plugin_profile.tools.datatable import to_csv

from .python_trace import python_traced_space

TF_WITH_OPS = ["gpu_multi_worker", "tf_keras2_fit", "tf_keras_fit", "tf_memory", "tf_two_hosts"]
MS = 1e-3  # tolerance in us for sums of doubles


def rows(table: dict) -> list:
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (cell["v"] for cell in r["c"]))) for r in table["rows"]]


@pytest.mark.parametrize("name", TF_WITH_OPS)
def test_op_types_agree_with_tf_stats(name, monkeypatch):
    monkeypatch.setattr(framework_op_stats, "MAX_ROWS", 10**9)  # every op, not the top 500
    hosts = list(fixture_hosts(name))
    stats = rows(framework_op_stats.convert(hosts, {})[1])  # the table without IDLE
    expected: dict = collections.defaultdict(float)
    for r in stats:
        side = "device_time_us" if r["host_or_device"] == "Device" else "host_time_us"
        expected[(r["type"] or "unknown", side)] += r["total_self_time"]
    ours = {r["name"]: r for r in rows(op_types.convert(hosts, {})) if r["kind"] == "type"}
    for (op_type, side), time_us in expected.items():
        assert ours[op_type][side] == pytest.approx(time_us, abs=MS), (op_type, side)
    stats_count = collections.Counter(r["type"] or "unknown" for r in stats)
    for op_type, count in stats_count.items():
        assert ours[op_type]["ops"] == count  # ops defined
    total = sum(r["total_self_time"] for r in stats)
    assert rows(op_types.convert(hosts, {}))[0]["total_time_us"] == pytest.approx(total, abs=MS)


@pytest.mark.parametrize("name", fixture_names())
def test_scope_totals_add_up_to_op_totals(name):
    hosts = list(fixture_hosts(name))
    records = op_records(hosts)
    try:
        table = rows(scope_view.convert(hosts, {}))
    except NotApplicable:
        assert records["self_time_ps"].sum() == 0
        return
    op_total_us = records["self_time_ps"].sum() / 1e6
    assert table[0]["kind"] == "root"
    assert table[0]["total_time_us"] == pytest.approx(op_total_us, rel=1e-9)
    children = collections.defaultdict(float)
    for r in table[1:]:
        children[r["parent"]] += r["total_time_us"]
    for r in table:
        assert r["total_time_us"] == pytest.approx(r["self_time_us"] + children[r["id"]], abs=MS), (
            r["path"]
        )
    # Self time sits on ops, and on scopes that are ops themselves (TF names nest).
    assert sum(r["self_time_us"] for r in table) == pytest.approx(op_total_us, rel=1e-6)


def test_scopes_are_the_tf_name_scopes():
    table = rows(scope_view.convert(list(fixture_hosts("tf_keras2_fit")), {}))
    by_path = {r["path"]: r for r in table}
    conv = by_path["gradient_tape / sequential / conv2d_1"]
    assert conv["kind"] == "scope" and conv["total_time_us"] > 0
    assert by_path["gradient_tape / sequential"]["total_time_us"] >= conv["total_time_us"]


def test_code_view_attributes_jax_op_time_to_the_python_lines():
    hosts = list(fixture_hosts("jax_cpu_train"))
    records = op_records(hosts)
    with_source = records[records["frames"].map(bool)]
    assert len(with_source) > 10
    table = rows(code_view.convert(hosts, {}))
    by_path = {r["path"]: r for r in table}
    # The recording script's path is part of the fixture's data (as in any user's profile).
    top = (r["name"] for r in table if r["depth"] == 1)
    outer = next(name for name in top if name.endswith(":107 <module>"))
    script = outer[: -len(":107 <module>")]
    assert script.endswith("gen_jax_cpu_train.py")
    # Every op with a recorded call stack hangs under the script's frames...
    attributed = sum(r["total_time_us"] for r in table if r["depth"] == 1 and r["name"] == outer)
    assert attributed == pytest.approx(with_source["self_time_ps"].sum() / 1e6, rel=1e-9)
    # ...down to the function that traced it: the forward pass in loss_fn in train_step.
    frames = [r for r in table if r["kind"] == "frame" and r["name"].endswith(" forward")]
    assert frames and all(r["path"].startswith(outer) for r in frames)
    assert any(f"{script}:57 train_step" in r["path"] for r in frames)
    # Ops XLA kept no source for stay visible, under one node.
    assert by_path[code_view.NO_SOURCE]["total_time_us"] == pytest.approx(
        records[~records["frames"].map(bool)]["self_time_ps"].sum() / 1e6, rel=1e-9
    )


def test_code_view_nests_ops_under_python_tracer_frames():
    table = rows(code_view.convert([("vm", python_traced_space())], {}))
    by_path = {r["path"]: r for r in table}
    step = by_path["train.py:10 step"]
    layer = by_path["train.py:10 step / layers.py:3 dense"]
    matmul = by_path["train.py:10 step / layers.py:3 dense / dense/MatMul (Host)"]
    assert matmul["self_time_us"] == pytest.approx(30.0)  # two calls of 10 and 20 us
    assert layer["total_time_us"] == pytest.approx(30.0)
    relu = by_path["train.py:10 step / dense/Relu (Host)"]
    assert relu["self_time_us"] == pytest.approx(5.0)
    assert step["total_time_us"] == pytest.approx(35.0)


def test_code_view_says_why_when_no_source_is_recorded():
    with pytest.raises(NotApplicable, match="Python tracer"):
        code_view.convert(list(fixture_hosts("tf_keras2_fit")), {})


def test_tree_tables_export_as_csv_with_their_tree_columns():
    table = scope_view.convert(list(fixture_hosts("jax_cpu_train")), {})
    text = to_csv(table)
    header = text.splitlines()[0]
    assert '"Parent id"' in header and '"Path"' in header
    assert len(text.splitlines()) == len(table["rows"]) + 1

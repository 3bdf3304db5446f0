"""framework_op_stats against upstream's output on every fixture."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import fixture_names, load_reference

from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.tools import datatable, framework_op_stats

from .compare_tables import fixture_hosts, table_differences

# Fixtures whose GPU kernels get the TF op of their host launch (analysis/ops/launches.py):
# upstream has no device rows there, so only the host rows are compared (docs/differences.md).
LAUNCH_ATTRIBUTED = {"gpu_multi_worker"}


# Fixtures without a TensorFlow op: upstream answers one IDLE row of zeros (and nothing
# without idle); we answer NOT_APPLICABLE and do not list the tool (docs/differences.md).
NO_FRAMEWORK_OPS = {"jax_cpu_train", "jax_remote_capture", "jax_two_hosts", "tf_idle_capture"}


@pytest.mark.parametrize("name", sorted(set(fixture_names()) - NO_FRAMEWORK_OPS))
def test_matches_reference(name):
    ref = load_reference(name, "framework_op_stats.json")
    ours = framework_op_stats.convert(list(fixture_hosts(name)), {})
    assert len(ours) == 2
    problems = []
    for label, a, b in zip(("with_idle", "without_idle"), ours, ref):
        if name in LAUNCH_ATTRIBUTED:
            a, b = _host_rows(a), _host_rows(b)
        problems += table_differences(a, b, f"{name} {label}")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(NO_FRAMEWORK_OPS))
def test_a_profile_without_tensorflow_ops_is_not_applicable(name):
    """Upstream's whole answer there is at most an IDLE row of zeros (checked), which said
    "0 of 0 operations" next to the XLA ops HLO stats lists; ours says where they are."""
    ref = load_reference(name, "framework_op_stats.json")
    for idle in ref[0]["rows"]:  # tf_idle_capture: not even that row
        assert [c["v"] for c in idle["c"][1:4]] == ["Host", "IDLE", "IDLE"]
        assert not any(c["v"] for c in idle["c"][4:17])
    assert len(ref[0]["rows"]) <= 1 and ref[1]["rows"] == []
    with pytest.raises(NotApplicable, match="no TensorFlow ops.*hlo_stats and op_profile"):
        framework_op_stats.convert(list(fixture_hosts(name)), {})


def _host_rows(table: dict) -> dict:
    """The host side of a table, ranks dropped (the device rows before them differ)."""
    rows = [{"c": [{"v": None}] + r["c"][1:]} for r in table["rows"] if r["c"][1]["v"] == "Host"]
    return {**table, "rows": rows}


def test_device_side_of_launch_attributed_fixture_is_new():
    ref = load_reference("gpu_multi_worker", "framework_op_stats.json")
    ours = framework_op_stats.convert(list(fixture_hosts("gpu_multi_worker")), {})
    sides = lambda t: {r["c"][1]["v"] for r in t["rows"] if r["c"][2]["v"] != "IDLE"}  # noqa: E731
    assert sides(ref[1]) == {"Host"} and sides(ours[1]) == {"Host", "Device"}


def test_json_is_upstream_shape():
    ours = framework_op_stats.convert(list(fixture_hosts("tf_memory")), {})
    text = datatable.dumps(ours)
    assert text.startswith('[{"cols":[{"id":"rank","label":"Rank","type":"number"}')
    assert json.loads(text) == ours


def test_csv_of_with_idle_table():
    ours = framework_op_stats.convert(list(fixture_hosts("tf_remote_capture")), {})
    text = datatable.to_csv(ours[0])  # what data_csv exports by default
    lines = text.split("\n")
    assert lines[0].startswith('"Rank","Host/device","Operation Type","Operation Name"')
    assert lines[1].startswith('"1","Host","IDLE","IDLE","0","3275791.724","0"')  # integers
    keras = framework_op_stats.convert(list(fixture_hosts("tf_keras2_fit")), {})[0]
    parsed = list(csv.reader(io.StringIO(datatable.to_csv(keras))))
    assert parsed[0][11] == "Total self-time on Host (%)"
    fractions = [row["c"][11]["v"] for row in keras["rows"]]
    assert any(fractions)
    assert [float(r[11]) for r in parsed[1:]] == pytest.approx([100 * f for f in fractions])

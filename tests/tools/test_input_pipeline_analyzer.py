"""input_pipeline_analyzer against upstream's output on every fixture."""

from __future__ import annotations

import json

import pytest
from conftest import fixture_names, load_reference

from tensorboard_plugin_profile.analysis.input_pipeline import host_ops as input_ops
from tensorboard_plugin_profile.analysis.ops.metrics import OpMetricsDb, _ops_frame
from tensorboard_plugin_profile.common import errors
from tensorboard_plugin_profile.tools import TOOLS, canonical_name, input_pipeline_analyzer
from tensorboard_plugin_profile.tools.datatable import dumps
from tensorboard_plugin_profile.xspace.model import Space

from .compare_tables import fixture_hosts, table_differences
from .test_overview_page import GUESSED


def _problems(name):
    ref = load_reference(name, "input_pipeline_analyzer.json")
    ours = input_pipeline_analyzer.convert(list(fixture_hosts(name)), {})
    assert len(ours) == len(ref) == 5
    problems = []
    for i, (a, b) in enumerate(zip(ours, ref)):
        problems += table_differences(a, b, f"{name} table {i}")
    return problems


@pytest.mark.parametrize("name", sorted(set(fixture_names()) - GUESSED))
def test_matches_reference(name):
    problems = _problems(name)
    assert not problems, "\n".join(problems[:20])


def test_guessed_steps_differ_only_in_the_step_table_and_diagnostics():
    ref = load_reference("tf_keras_fit", "input_pipeline_analyzer.json")
    ours = input_pipeline_analyzer.convert(list(fixture_hosts("tf_keras_fit")), {})
    assert ref[1]["rows"] == [] and ours[1]["p"]["steps_guessed_from"] == "Profiled batch"
    assert len(ours[1]["rows"]) == 4
    assert ours[1]["p"]["input_conclusion"].startswith("Your program is HIGHLY input-bound")
    assert ours[4]["rows"][0] == ref[4]["rows"][0]  # upstream's "No step marker" warning
    assert "step_num=i" in ours[4]["rows"][1]["c"][1]["v"]
    # The host input ops do not depend on steps (no host-to-device time here).
    assert ours[0] == ref[0] and ours[3] == ref[3]
    assert not table_differences(ours[2], ref[2])


def test_json_text_has_upstreams_shape():
    ours = input_pipeline_analyzer.convert(list(fixture_hosts("tf_keras2_fit")), {})
    text = json.dumps(ours, separators=(",", ":"), ensure_ascii=False)
    assert text.startswith('[{"cols":[],"rows":[]},{"cols":[{"id":"stepnum"')
    assert text == "[" + ",".join(dumps(t) for t in ours) + "]"  # keys already sorted
    assert '"p":{"advanced_file_read_us":"0.000","demanded_file_read_us"' in text


def test_registered_with_legacy_name():
    assert canonical_name("input_pipeline") == "input_pipeline_analyzer"
    assert TOOLS["input_pipeline_analyzer"].hosts_mode == "each_or_all"


def test_space_without_planes_is_not_applicable():
    empty = Space(source="x", planes=[], hostnames=[], errors=[], warnings=[])
    with pytest.raises(errors.NotApplicable):
        input_pipeline_analyzer.convert([("h", empty)], {})


def _db(rows):
    names, types, self_ps = zip(*rows)
    n = len(names)
    frame = _ops_frame(
        name=list(names),
        category=list(types),
        occurrences=[1] * n,
        time_ps=list(self_ps),
        self_time_ps=list(self_ps),
    )
    return OpMetricsDb(frame)


def test_categories_and_breakdown_by_hand():
    import pandas as pd

    db = _db(
        [
            ("Iterator::Prefetch::ParallelMap::TFRecord", "Dataset", 4_000_000),  # 4 µs ahead
            ("Iterator::Map::TFRecord", "Dataset", 3_000_000),  # on demand
            ("Iterator::Map", "Dataset", 2_000_000),  # preprocessing
            ("stage", "Enqueue", 1_000_000),  # input-pipeline stage category
            ("dense/MatMul", "MatMul", 9_000_000),  # not an input op
        ]
    )
    ops = input_ops.input_ops(db)
    assert ops["category"].tolist() == [
        "Advanced file read",
        "Demanded file read",
        "Preprocessing",
        "Enqueue",
    ]
    no_transfer = pd.DataFrame({"step_time_ms": [1.0], "host_to_device_ms": [0.0]})
    b = input_ops.input_time_breakdown(ops, no_transfer)
    assert (b.enqueue_us, b.advanced_file_read_us, b.demanded_file_read_us) == (1.0, 4.0, 3.0)
    assert (b.preprocessing_us, b.unclassified_non_enqueue_us) == (2.0, 0.0)
    # A quarter of the step is host-to-device: non-enqueue time = 1 µs × 3/4 / 1/4 = 3 µs,
    # shared in proportion 4:3:2.
    quarter = pd.DataFrame({"step_time_ms": [1.0], "host_to_device_ms": [0.25]})
    b = input_ops.input_time_breakdown(ops, quarter)
    assert b.advanced_file_read_us == pytest.approx(4 / 3)
    assert b.preprocessing_us == pytest.approx(2 / 3) and b.tf_data_in_use


def test_every_table_exports_as_csv_through_the_service():
    from conftest import FIXTURES, host_files
    from werkzeug.test import Client

    from tensorboard_plugin_profile.web.server import StandaloneApp

    client = Client(StandaloneApp(str(FIXTURES)))
    run = "tf_keras2_fit/" + host_files("tf_keras2_fit")[0].parent.name
    url = f"/data/plugin/profile/data_csv?run={run}&tag=input_pipeline_analyzer&host=vm"
    headers = []
    for table in range(5):
        response = client.get(f"{url}&table={table}")
        assert response.status_code == 200, response.get_data(as_text=True)
        headers.append(response.get_data(as_text=True).split("\n", 1)[0])
    assert headers[1].startswith('"Step number","Device compute"')
    assert headers[2].startswith('"Input Op","Count","Total Time (in ms)"')
    assert headers[3] == '"link"' and headers[4] == '"Severity","Message"'
    assert client.get(f"{url}&table=5").status_code == 400

"""Issue 28 item 9: the pod viewer counts two steps more than the overview, on purpose.

The pod viewer keeps the first and last step; the overview and the input pipeline leave them
out when there are more than ``MAX_STEPS_KEPT_WHOLE``. The page explains the difference with
a note whose threshold is a copy of that constant (frontend/src/models/pod-step-note.ts):
this test keeps the copy equal to the source.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES, REPO

from tensorboard_plugin_profile.analysis.steps.step_db import MAX_STEPS_KEPT_WHOLE
from tensorboard_plugin_profile.service import ProfileService

RUNS = (
    "jax_remote_capture/jax_server__xprof_client",
    "jax_two_hosts/multi_jax2__xprof_client",
    "jax_cpu_train/session_1",
)


def _answer(service, run, tool):
    return json.loads(b"".join(service.tool_data(run, tool).chunks()))


def _step_rows(tables):
    (table,) = [t for t in tables if t.get("cols") and t["cols"][0]["id"] == "stepnum"]
    return len(table["rows"])


@pytest.mark.parametrize("run", RUNS)
def test_pod_viewer_has_the_first_and_last_step_the_overview_leaves_out(run):
    service = ProfileService(str(FIXTURES))
    pod = _answer(service, run, "pod_viewer")["podStatsSequence"]["podStatsMap"]
    overview = _step_rows(_answer(service, run, "overview_page"))
    pipeline = _step_rows(_answer(service, run, "input_pipeline_analyzer"))
    assert len(pod) > MAX_STEPS_KEPT_WHOLE
    assert overview == pipeline == len(pod) - 2
    # the ones left out are the pod viewer's first and last step
    first, last = pod[0]["stepNum"], pod[-1]["stepNum"]
    assert [p["stepNum"] for p in pod[1:-1]] == list(range(first + 1, last))


def test_the_pages_threshold_is_the_analysis_constant():
    source = (REPO / "frontend" / "src" / "models" / "pod-step-note.ts").read_text()
    (value,) = re.findall(r"export const STEPS_KEPT_WHOLE = (\d+);", source)
    assert int(value) == MAX_STEPS_KEPT_WHOLE

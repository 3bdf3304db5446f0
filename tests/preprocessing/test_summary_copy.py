"""The copy of a host made only to be summarised (``preprocess_decoded(..., with_flows=False)``)
leaves out what only the trace viewer reads, and changes no summary.

``tests/pod/test_host_map.py`` checks every merging tool's bytes against the full copy on
fixtures that have both (``tf_two_hosts``, ``jax_two_hosts``); here, that the parts are in
fact left out, so that check compares something.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.analysis.host_summary import summarize
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess_decoded
from tensorboard_plugin_profile.service import _to_result
from tensorboard_plugin_profile.tools import TOOLS
from tensorboard_plugin_profile.xspace import read_xspace, schema


def _count(space, name: str) -> int:
    return sum(int((p.events["name"] == name).sum()) for p in space.planes if len(p.events))


def _flows(space) -> int:
    return sum(int((p.stats["stat"] == schema.FLOW_STAT).sum()) for p in space.planes)


@pytest.mark.parametrize("fixture", ["tf_two_hosts", "jax_two_hosts"])
def test_the_summarised_copy_has_no_flows_nor_regions_and_the_same_summary(fixture):
    path = sorted((FIXTURES / fixture).glob("plugins/profile/*/*.xplane.pb"))[0]
    full = preprocess_decoded(read_xspace(str(path)))
    lean = preprocess_decoded(read_xspace(str(path)), with_flows=False)
    assert _count(full, schema.THREADPOOL_REGION) > 0 and _flows(full) > 0
    assert _count(lean, schema.THREADPOOL_REGION) == 0 and _flows(lean) == 0
    # TF stats has no TensorFlow op to show on the JAX profile: its XLA ops are in hlo_stats.
    ops_tool = "framework_op_stats" if fixture.startswith("tf") else "hlo_stats"
    for name in ("overview_page", "input_pipeline_analyzer", ops_tool):
        answers = [
            b"".join(_to_result(TOOLS[name].reduce([("h", summarize(s))], {})).chunks())
            for s in (full, lean)
        ]
        assert answers[0] == answers[1], name

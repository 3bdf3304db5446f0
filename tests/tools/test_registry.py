"""The tool registry's order is the display order; docs/http_api.md names it."""

from __future__ import annotations

import re

from conftest import FIXTURES, REPO

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import TOOL_ORDER, TOOLS, sort_tools


def test_tool_order_is_the_registry_order():
    assert TOOL_ORDER == tuple(TOOLS)
    assert sort_tools(["zeta", "advisor", "alpha", "overview_page"]) == [
        "overview_page",
        "advisor",
        "alpha",
        "zeta",
    ]


def test_the_documented_order_is_the_registry_order():
    doc = (REPO / "docs" / "http_api.md").read_text(encoding="utf-8")
    section = doc.split("## Tool list", 1)[1].split("\n## ", 1)[0]
    named = [n for n in re.findall(r"`([a-z_@]+)`", section) if n in TOOLS]
    assert len(named) >= 10
    assert named == sorted(named, key=TOOL_ORDER.index)


def test_run_tools_lists_in_that_order():
    service = ProfileService(str(FIXTURES / "jax_cpu_train"))
    try:
        assert service.run_tools("session_1") == [
            "overview_page",
            "trace_viewer@",
            "graph_viewer",
            "op_profile",
            "input_pipeline_analyzer",
            "memory_viewer",
            "roofline_model",
            "pod_viewer",
            "hlo_stats",
            "model_view",
            "advisor",
            "op_types",
            "scope_view",
            "code_view",
        ]
    finally:
        service.close()

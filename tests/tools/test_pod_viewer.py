"""pod_viewer against upstream on every fixture, and a hand-made two-host profile."""

from __future__ import annotations

import json

import pytest
from conftest import fixture_names, load_reference
from xspace_builder import SpaceBuilder

from tensorboard_plugin_profile.common import errors
from tensorboard_plugin_profile.tools import TOOLS, pod_viewer
from tensorboard_plugin_profile.xspace.model import Space

from .compare_tables import fixture_hosts, same_value
from .test_overview_page import GUESSED


def _differences(ours, ref, path="", out=None) -> list:
    out = [] if out is None else out
    if isinstance(ref, dict) and isinstance(ours, dict):
        if set(ours) != set(ref):
            out.append(f"{path} keys {sorted(ours)} != {sorted(ref)}")
        for key in ref.keys() & ours.keys():
            _differences(ours[key], ref[key], f"{path}.{key}", out)
    elif isinstance(ref, list) and isinstance(ours, list):
        if len(ours) != len(ref):
            out.append(f"{path} length {len(ours)} != {len(ref)}")
        for i, (a, b) in enumerate(zip(ours, ref)):
            _differences(a, b, f"{path}[{i}]", out)
    elif not same_value(ours, ref):
        out.append(f"{path}: ours {ours!r} != ref {ref!r}")
    return out


def _convert(hosts):
    out = pod_viewer.convert(list(hosts), {})
    text = b"".join(out.chunks()).decode()
    assert json.loads(text) == json.loads(json.dumps(out.json_obj))
    return text, json.loads(text)


@pytest.mark.parametrize("name", sorted(set(fixture_names()) - GUESSED))
def test_matches_reference(name):
    _, ours = _convert(fixture_hosts(name))
    problems = _differences(ours, load_reference(name, "pod_viewer.json"))
    assert not problems, "\n".join(problems[:20])


def test_text_has_upstreams_field_order_and_number_style():
    text, _ = _convert(fixture_hosts("tf_keras2_fit"))
    ref = json.dumps(load_reference("tf_keras2_fit", "pod_viewer.json"), separators=(",", ":"))
    # Upstream's map order is a hash order; ours is sorted. Everything else is the same text.
    assert text[:60] == ref[:60]
    assert '"chipId":0,"nodeId":0,"stepNum":1,"totalDurationUs":' in text
    assert '"stepBreakdownUs":{"1":0,"2":0,' in text
    assert text.endswith('{"id":9,"name":"All others"}],"deviceType":"CPU"}')


def test_guessed_steps_are_shown_with_upstreams_warning_first():
    ref = load_reference("tf_keras_fit", "pod_viewer.json")
    _, ours = _convert(fixture_hosts("tf_keras_fit"))
    assert ref["podStatsSequence"]["podStatsMap"] == []
    steps = ours["podStatsSequence"]["podStatsMap"]
    assert len(steps) == 6  # the pod viewer keeps the first and last step
    assert ours["diagnostics"]["warnings"][0] == ref["diagnostics"]["warnings"][0]
    assert "step_num=i" in ours["diagnostics"]["warnings"][1]


def test_registered_for_all_hosts_only():
    assert TOOLS["pod_viewer"].hosts_mode == "combined"


def test_space_without_planes_is_not_applicable():
    empty = Space(source="x", planes=[], hostnames=[], errors=[], warnings=[])
    with pytest.raises(errors.NotApplicable):
        pod_viewer.convert([("h", empty)], {})


# --- a hand-made two-host CPU profile -------------------------------------------------
def _host(hostname: str, step_begins_us, step_us: float, compute_us: float, input_us: float):
    """Steps ``train <n>`` (``_r=1``) holding one compute op and one input wait each."""
    space = SpaceBuilder(hostname)
    host = space.plane(1, "/host:CPU")
    thread = host.line(1, "python")
    for n, begin in enumerate(step_begins_us):
        host.event(thread, "train", begin, step_us, _r=1, step_num=10 + n)
        host.event(thread, "compute", begin + 10, compute_us)
        if input_us:
            host.event(thread, "IteratorGetNext", begin + 10 + compute_us, input_us)
    return space.decode(hostname)


def test_two_hosts_by_hand():
    a = _host("a", [0, 100, 200], step_us=80, compute_us=30, input_us=20)
    # Host b has one step more; aligning to host a (the shorter span) drops it.
    b = _host("b", [5, 105, 205, 305], step_us=90, compute_us=60, input_us=0)
    _, db = _convert([("host_a", a), ("host_b", b)])
    steps = db["podStatsSequence"]["podStatsMap"]
    assert [s["stepNum"] for s in steps] == [0, 1, 2]
    for step in steps:
        assert list(step["podStatsPerCore"]) == ["1", "1001"]
        core_a, core_b = step["podStatsPerCore"]["1"], step["podStatsPerCore"]["1001"]
        assert (core_a["hostName"], core_b["hostName"]) == ("a", "b")
        assert core_a["totalDurationUs"] == 80 and core_b["totalDurationUs"] == 90
        # a: 30 compute, 20 input, 30 other; a tie goes to the greatest name.
        assert core_a["stepBreakdownUs"] == {
            "1": 0, "2": 0, "3": 0, "4": 30, "5": 0, "6": 20, "7": 0, "8": 0, "9": 30
        }  # fmt: skip
        assert core_a["bottleneck"] == "Host compute"
        assert core_b["stepBreakdownUs"]["4"] == 60 and core_b["stepBreakdownUs"]["9"] == 30
        assert core_b["bottleneck"] == "Host compute"
    assert db["deviceType"] == "CPU"
    assert db["diagnostics"] == {"info": [], "warnings": [], "errors": []}


def test_one_host_keeps_its_step_numbers_and_all_steps():
    a = _host("a", [0, 100, 200, 300, 400, 500, 600], step_us=80, compute_us=70, input_us=0)
    _, db = _convert([("host_a", a)])
    steps = db["podStatsSequence"]["podStatsMap"]
    assert [s["stepNum"] for s in steps] == list(range(7))  # no first/last dropped
    assert {s["podStatsPerCore"]["1"]["bottleneck"] for s in steps} == {"Host compute"}

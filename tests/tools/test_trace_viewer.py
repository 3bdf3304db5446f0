"""trace_viewer against upstream's output on every real fixture, and small cases."""

from __future__ import annotations

import collections
import gzip
import json
import re

import pytest
from conftest import REFERENCE, all_host_files

from tensorboard_plugin_profile.tools import TOOLS
from tensorboard_plugin_profile.tools.trace_viewer import (
    trace_events_json,
    trace_events_multi_host,
)
from tensorboard_plugin_profile.xspace import read_xspace
from tensorboard_plugin_profile.xspace.model import Space

_FLOW = re.compile(r'"flow": "\d+"')


def _fixture(path):
    return path.parents[3].name, path.name[: -len(".xplane.pb")]


def _reference_text(name: str, host: str) -> str:
    for filename in (f"trace_viewer.{host}.json", "trace_viewer.json"):
        for path in (REFERENCE / name / filename, REFERENCE / name / (filename + ".gz")):
            if path.exists():
                data = path.read_bytes()
                return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
    pytest.skip(f"no trace_viewer reference for {name}")


def _events(trace) -> list:
    return [e for e in trace["traceEvents"] if e.get("ph") in ("X", "i")]


def _flow_partition(events) -> list:
    """Which events share a flow value (values themselves are salted upstream)."""
    groups = collections.defaultdict(list)
    for e in events:
        flow = e.get("args", {}).get("flow")
        if flow is not None:
            groups[flow].append((e["pid"], e["tid"], e["ts"], e["name"]))
    return sorted(tuple(sorted(v)) for v in groups.values())


@pytest.fixture(scope="module", params=all_host_files(), ids=lambda p: "-".join(_fixture(p)))
def traces(request):
    name, host = _fixture(request.param)
    text = "".join(trace_events_json(read_xspace(str(request.param))))
    ref_text = _reference_text(name, host)
    return text, json.loads(text), json.loads(ref_text), ref_text


def test_processes_threads_and_metadata_match(traces):
    _, ours, ref, _ = traces
    meta = [e for e in ours["traceEvents"] if e.get("ph") == "M"]
    assert meta == [e for e in ref["traceEvents"] if e.get("ph") == "M"]


def test_events_match_per_thread(traces):
    _, ours, ref, _ = traces

    def per_thread(trace):
        rows = collections.defaultdict(list)
        for e in _events(trace):
            rows[(e["pid"], e["tid"])].append((e["ts"], e["name"], e.get("dur")))
        return {k: sorted(v) for k, v in rows.items()}

    assert per_thread(ours) == per_thread(ref)


def test_args_match_except_flow_ids(traces):
    _, ours, ref, _ = traces

    def args(trace):
        out = []
        for e in _events(trace):
            a = dict(e.get("args", {}))
            a.pop("flow", None)
            out.append((e["pid"], e["tid"], e["ts"], e["name"], sorted(a.items())))
        return sorted(out)

    assert args(ours) == args(ref)
    assert _flow_partition(_events(ours)) == _flow_partition(_events(ref))


def test_text_is_upstreams_byte_for_byte_but_flow_ids(traces):
    text, _, _, ref_text = traces
    assert _FLOW.sub('"flow": "F"', text) == _FLOW.sub('"flow": "F"', ref_text)


def test_multi_host_offsets_pids_and_prefixes_names():
    path = all_host_files()[0]
    space = read_xspace(str(path))
    trace = json.loads("".join(trace_events_multi_host([("a", space), ("b", space)])))
    names = {
        e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"
    }
    assert names[1701] == "a /host:CPU" and names[2701] == "b /host:CPU"
    single = _events(json.loads("".join(trace_events_json(space))))
    assert len(_events(trace)) == 2 * len(single)


def test_empty_space_gives_an_empty_trace():
    empty = Space(source="x", planes=[], hostnames=[], errors=[], warnings=[])
    text = "".join(trace_events_json(empty))
    assert json.loads(text)["traceEvents"] == [{}]


def test_registered_tool_streams_bytes():
    path = all_host_files()[0]
    output = TOOLS["trace_viewer"].convert([("h", read_xspace(str(path)))], {})
    body = b"".join(output.chunks())
    assert output.content_type == "application/json"
    assert json.loads(body)["traceEvents"][-1] == {}

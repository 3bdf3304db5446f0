"""trace_viewer@: the full envelope against upstream's, windows, search, details, caching."""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest
from conftest import FIXTURES, fixture_names, host_files, load_reference

from tensorboard_plugin_profile.analysis.trace import plane_events
from tensorboard_plugin_profile.analysis.trace import trace_window as tw
from tensorboard_plugin_profile.analysis.trace.trace_index import build_index
from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import TOOLS, trace_details
from tensorboard_plugin_profile.tools import trace_viewer_at as at
from tensorboard_plugin_profile.tools.trace_envelope import envelope_chunks
from tensorboard_plugin_profile.xspace import read_xspace

TOOL = TOOLS["trace_viewer@"]


def _hosts(name: str) -> list:
    return [(f.name[: -len(".xplane.pb")], read_xspace(str(f))) for f in host_files(name)]


@pytest.fixture(scope="module", params=fixture_names())
def traced(request):
    hosts = _hosts(request.param)
    envelope = json.loads(b"".join(TOOL.convert(hosts, {}).chunks()))
    return request.param, hosts, envelope, load_reference(request.param, "trace_viewer@.json")


def _events(trace) -> list:
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def _per_thread(trace) -> dict:
    rows = collections.defaultdict(list)
    for e in _events(trace):
        rows[(e["pid"], e["tid"])].append((round(e["ts"], 3), e["name"], round(e["dur"], 3)))
    return {k: sorted(v) for k, v in rows.items()}


def _flow_partition(trace) -> list:
    """Events grouped by flow, per host: upstream's ids of two hosts may collide."""
    groups = collections.defaultdict(list)
    for e in _events(trace):
        if "bind_id" in e:
            kind = ("in" if e.get("flow_in") else "") + ("out" if e.get("flow_out") else "")
            groups[(e["pid"] // 1000, e["bind_id"])].append(
                (e["pid"], e["tid"], round(e["ts"], 3), kind)
            )
    return sorted(tuple(sorted(v)) for v in groups.values())


def test_envelope_has_upstreams_events_per_thread(traced):
    _, _, ours, ref = traced
    assert _per_thread(ours) == _per_thread(ref)
    assert ours["returnedEventsSize"] == ref["returnedEventsSize"]
    assert ours["fullTimespan"] == ref["fullTimespan"]


def test_envelope_metadata_and_keys_match(traced):
    _, _, ours, ref = traced
    meta = [e for e in ours["traceEvents"] if e.get("ph") == "M"]
    assert meta == [e for e in ref["traceEvents"] if e.get("ph") == "M"]
    assert list(ours) == list(ref)


def test_envelope_flows_match_by_structure(traced):
    _, _, ours, ref = traced
    assert _flow_partition(ours) == _flow_partition(ref)


def test_envelope_tiny_chunks_give_the_same_text(traced):
    _, hosts, _, _ = traced
    index = at.trace_index_of(hosts)
    assert b"".join(envelope_chunks(index, chunk_events=3)) == b"".join(envelope_chunks(index))


def _window(hosts, **params) -> dict:
    return json.loads(TOOL.convert(hosts, {k: str(v) for k, v in params.items()}))


def test_full_window_without_merging_returns_every_event(traced):
    _, hosts, envelope, _ = traced
    answer = _window(hosts, resolution=0, format="columnar")
    assert answer["returned"] == answer["visible"] == answer["events"] == len(_events(envelope))
    assert answer["merged"] == 0 and not answer["truncated"]
    got = collections.defaultdict(list)
    for row in answer["rows"]:
        for ts, name in zip(row["ts"], row["name"]):
            t = (answer["origin_ns"] + ts) / 1000
            got[(row["pid"], row["tid"])].append((round(t, 3), answer["strings"][name]))
    want = {k: sorted((t, n) for t, n, _ in v) for k, v in _per_thread(envelope).items()}
    assert {k: sorted(v) for k, v in got.items()} == want


def test_zoomed_out_window_merges_and_counts_add_up(traced):
    name, hosts, _, _ = traced
    answer = _window(hosts, resolution=50)
    merged = sum(m for row in answer["rows"] for m in row["merged"])
    assert merged == answer["visible"] == answer["events"]
    assert answer["merged"] == sum(m for row in answer["rows"] for m in row["merged"] if m > 1)
    if answer["merged"]:
        assert "zoom in" in answer["hint"]
    for key in ("from_row", "to_row"):
        assert all(0 <= r < len(answer["rows"]) for r in answer["flows"][key])


def test_window_filters_rows_and_caps():
    hosts = _hosts("jax_two_hosts")
    answer = _window(hosts, pids=2701, resolution=0)
    assert {row["pid"] for row in answer["rows"]} == {2701}
    capped = _window(hosts, resolution=0, max_events=10, max_flows=3)
    assert capped["truncated"] and capped["returned"] <= 10
    assert len(capped["flows"]["from_row"]) <= 3 and capped["flows_truncated"]


@pytest.mark.parametrize(
    "params, limit",
    [
        ({"max_events": "100000000"}, at.MAX_EVENTS_LIMIT),
        ({"format": "columnar", "max_flows": "100000000"}, at.MAX_FLOWS_LIMIT),
        ({"search": "fusion", "max_results": "100000000"}, at.MAX_RESULTS_LIMIT),
    ],
    ids=["max_events", "max_flows", "max_results"],
)
def test_caps_above_their_hard_maximum_are_refused_naming_it(params, limit):
    hosts = _hosts("jax_cpu_train")
    name = next(k for k in params if k.startswith("max_"))
    with pytest.raises(InvalidArgument, match=f"{name}.*at most {limit:,}"):
        TOOL.convert(hosts, params)
    assert TOOL.convert(hosts, dict(params, **{name: str(limit)}))  # the maximum itself is fine


def test_a_huge_max_events_gets_a_400_json_error_from_the_server():
    from werkzeug.test import Client

    from tensorboard_plugin_profile.web.server import StandaloneApp

    client = Client(StandaloneApp(str(FIXTURES / "jax_cpu_train")))
    for query in ("max_events=100000000", "search=fusion&max_results=100000000"):
        response = client.get(f"/data?run=session_1&tag=trace_viewer@&host=vm&{query}")
        assert response.status_code == 400, response.get_data(as_text=True)[:300]
        error = json.loads(response.get_data())["error"]
        assert error["code"] == "INVALID_ARGUMENT" and "at most" in error["message"]


def test_window_is_clamped_and_relative_to_its_start():
    hosts = _hosts("jax_cpu_train")
    full = _window(hosts, format="columnar")
    lo, hi = full["fullTimespan"]
    mid = (lo + hi) / 2
    answer = _window(hosts, start_time_ms=mid, end_time_ms=hi + 100, resolution=0)
    assert answer["window"][0] == pytest.approx(mid) and answer["window"][1] <= hi + 1e-6
    for row in answer["rows"]:
        ends = np.array(row["ts"]) + np.array(row["dur"])
        assert np.all(ends >= 0)  # everything returned reaches into the window
    with pytest.raises(InvalidArgument):
        TOOL.convert(hosts, {"start_time_ms": "soon"})


def test_search_by_substring_and_regex():
    hosts = _hosts("jax_cpu_train")
    envelope = json.loads(b"".join(TOOL.convert(hosts, {}).chunks()))
    want = sorted(e["ts"] for e in _events(envelope) if "thunk" in e["name"].lower())
    answer = json.loads(TOOL.convert(hosts, {"search": "THUNK", "max_results": "5"}))
    assert answer["total"] == len(want) and answer["truncated"]
    assert answer["matches"]["ts"] == pytest.approx(want[:5])
    names = {answer["strings"][i] for i in answer["matches"]["name"]}
    assert all("thunk" in n.lower() for n in names)
    regex = json.loads(TOOL.convert(hosts, {"search_regex": "^Thunk"}))
    assert 0 < regex["total"] <= len(want)
    with pytest.raises(InvalidArgument):
        TOOL.convert(hosts, {"search_regex": "("})


def test_search_finds_string_arguments():
    hosts = _hosts("tf_keras2_fit")
    answer = json.loads(TOOL.convert(hosts, {"search": "Iterator::", "max_results": "0"}))
    assert answer["total"] > 0 and answer["matches"]["event"] == []


def test_details_show_args_and_flows():
    hosts = _hosts("jax_cpu_train")
    index = at.trace_index_of(hosts)
    pos = int(index.flows.arrow_from[0])
    answer = json.loads(TOOL.convert(hosts, {"details": str(pos)}))
    assert answer["event"] == pos and answer["name"] == index.strings[index.name_id[pos]]
    assert "group_id" in answer["args"] or answer["args"] is not None
    assert answer["flows"] and any(
        e["event"] == int(index.flows.arrow_to[0]) for f in answer["flows"] for e in f["events"]
    )
    with pytest.raises(InvalidArgument):
        TOOL.convert(hosts, {"details": str(index.num_events)})


def test_service_builds_the_index_once_per_session(monkeypatch):
    built = []
    real = at.build_index
    monkeypatch.setattr(at, "build_index", lambda shown: built.append(1) or real(shown))
    service = ProfileService(str(FIXTURES / "jax_cpu_train"))
    run = service.runs()[0]
    assert "trace_viewer@" in service.run_tools(run)
    for start in ("0", "10", "20"):
        result = service.tool_data(run, "trace_viewer@", params={"start_time_ms": start})
        assert json.loads(b"".join(result.chunks()))["version"] == 1
    service.tool_data(run, "trace_viewer@", params={"search": "x"})
    assert len(built) == 1


@pytest.mark.parametrize("name", ["gpu_multi_worker", "tf_keras_fit", "jax_two_hosts"])
def test_columns_made_on_first_use_point_back_at_each_event(name):
    # Several planes, hidden events (async XLA ops lines) or two hosts: every position's
    # plane, event row and group id are those of the plane event it was made from.
    index = at.trace_index_of(_hosts(name))
    assert "group_id" not in index.lazy  # nothing made before it is asked
    for k, tp in enumerate(index.planes):
        mine = np.flatnonzero(index.plane_no == k)
        rows = index.event_row[mine]
        events = tp.plane.events
        assert events["begin_ps"].to_numpy()[rows].tolist() == index.begin_ps[mine].tolist()
        group = events["group_id"] if "group_id" in events else None
        expected = -np.ones(len(rows)) if group is None else group.fillna(-1).to_numpy()[rows]
        assert index.group_id[mine].tolist() == expected.astype(np.int64).tolist()
        positions = index.positions_of(k)
        assert positions[rows].tolist() == mine.tolist()
        assert np.count_nonzero(positions >= 0) == len(mine)
    assert np.array_equal(np.sort(index.source), np.arange(index.num_events))


@pytest.mark.parametrize("name", ["gpu_multi_worker", "tf_keras_fit", "jax_two_hosts"])
def test_values_looked_up_at_positions_equal_the_whole_columns(name):
    # The index stores no row, depth, break key or name per position: windows look them up
    # at their items, through the segments and each event's plane; then made whole.
    index = at.trace_index_of(_hosts(name))
    some = np.random.default_rng(0).integers(0, index.num_events, 500)
    looked_up = [f(some) for f in (index.rows_at, index.depths_at, index.names_at)]
    keys = index.break_keys_at(some)
    times = [f(some) for f in (index.begins_at, index.durations_at, index.ends_at)]
    made = {"row", "depth", "name_id", "break_key", "begin_ps", "event_row", "plane_no"}
    assert not made & set(index.lazy)
    # Begin and duration are each event's own, in its plane (the index keeps neither).
    for k, tp in enumerate(index.planes):
        mine = index.plane_no[some] == k
        rows = index.event_row[some[mine]]
        for got, column in zip(times, ("begin_ps", "duration_ps")):
            assert got[mine].tolist() == tp.plane.events[column].to_numpy()[rows].tolist()
    assert times[2].tolist() == (times[0] + times[1]).tolist()
    for got, whole in zip(looked_up, (index.row, index.depth, index.name_id)):
        assert got.dtype == whole.dtype == np.int32 and got.tolist() == whole[some].tolist()
    assert keys.tolist() == index.break_key[some].tolist()
    parts = [plane_events.plane_events(tp.plane) for tp in index.planes]
    strings, per_event = plane_events.event_names(parts)  # one table lookup per event
    assert strings == index.strings
    assert index.name_id.tolist() == per_event[index.source].tolist()
    assert index.row.tolist() == np.repeat(index.seg_row, np.diff(index.seg_bounds)).tolist()


@pytest.mark.parametrize("name", ["gpu_multi_worker", "tf_keras_fit", "jax_two_hosts"])
def test_windows_with_edges_on_event_edges_hold_every_overlapping_event(name):
    # The index keeps no ends: a window finds events by their begins, plus the one event
    # of each (row, depth) that began before the window and may still run. Windows that
    # start or end exactly at an event's begin or end, zero-width ones included, against
    # the definition (begin <= window end and end >= window start), at full resolution.
    index = at.trace_index_of(_hosts(name))
    every = np.arange(index.num_events)
    begin, end = index.begins_at(every), index.ends_at(every)
    rng = np.random.default_rng(1)
    for p, q in rng.integers(0, index.num_events, (40, 2)).tolist():
        edges = sorted(rng.choice([begin[p], end[p], begin[q], end[q]], 2).tolist())
        for start, stop in (edges, (edges[0], edges[0]), (edges[1], edges[1])):
            items = tw.query_window(index, start, stop, 0.0, max_events=10**9)
            want = np.flatnonzero((begin <= stop) & (end >= start))
            assert np.sort(items.first).tolist() == want.tolist(), (start, stop)
            assert items.begin_ps.tolist() == begin[items.first].tolist()
            assert items.end_ps_.tolist() == end[items.first].tolist()


@pytest.mark.parametrize("name", fixture_names())
def test_answers_are_the_same_with_the_numpy_passes(name, monkeypatch):
    # The index built by the compiled passes and by their numpy fallbacks answers every
    # kind of request with the same bytes (windows zoomed out and in, search, details).
    hosts = _hosts(name)
    shown = at.shown_planes(hosts)
    answers = []
    for pure in ("0", "1"):
        monkeypatch.setenv("TBPROF_PURE_PYTHON", pure)
        index = build_index(shown)
        lo, hi = index.span_ps
        middle = f"{(lo + hi) / 2e9:.6f}"
        requests = ({"resolution": "2000"}, {"resolution": "0", "start_time_ms": middle})
        got = [at._json(at.window_json(index, r)) for r in requests]
        got.append(at._json(at.search_json(index, {"search": "a"})))
        if index.num_events:
            got.append(at._json(trace_details.details(index, index.num_events // 2)))
        answers.append(got)
    assert answers[0] == answers[1]

"""Issue 28 item 10: the ProfilerHook timelines of one folder also make one run, ``all_steps``.

Each ``timeline-N.json`` stays its own run; ``<folder>/all_steps`` holds all of them, each a
"host" named after its file, in step order. It lists the trace viewer only and opens on every
step (``ALL_HOSTS``): one time line, each step's processes named after its timeline. Checked
against the single-step runs' own traces.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import formats
from tensorboard_plugin_profile.store.logdir import LogDir
from tensorboard_plugin_profile.tools import ALL_HOSTS

HOOK = FIXTURES / "profiler_hook"
STEPS = ["timeline-4", "timeline-8", "timeline-12"]


def _trace(service, run, host=None):
    return json.loads(b"".join(service.tool_data(run, "trace_viewer", host=host).chunks()))


def test_the_folders_timelines_are_one_more_run_in_step_order():
    session = LogDir(str(HOOK)).session("train/all_steps")
    assert session.all_steps and session.hosts() == STEPS
    assert formats.host_order("timeline-4") < formats.host_order("timeline-12")


def test_one_timeline_makes_no_combined_run(tmp_path):
    shutil.copyfile(HOOK / "train" / "timeline-4.json", tmp_path / "timeline-4.json")
    assert LogDir(str(tmp_path)).runs() == ["timeline-4"]


def test_it_offers_the_trace_viewer_on_every_step_at_once():
    service = ProfileService(str(HOOK))
    run = "train/all_steps"
    assert service.run_tools(run) == ["trace_viewer@"]
    hosts = [h["hostname"] for h in service.hosts(run, "trace_viewer@")]
    assert hosts == [ALL_HOSTS] + STEPS


def _first_ts_us(step):
    """The earliest timestamp in the timeline file itself (µs since the epoch)."""
    events = json.loads((HOOK / "train" / f"{step}.json").read_text())["traceEvents"]
    return min(e["ts"] for e in events if "ts" in e)


def test_the_combined_trace_is_each_steps_trace_on_one_time_line():
    service = ProfileService(str(HOOK))
    combined = _trace(service, "train/all_steps", ALL_HOSTS)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in combined if e.get("name") == "process_name"}
    spans = []
    for index, step in enumerate(STEPS):
        alone = [e for e in _trace(service, f"train/{step}")["traceEvents"] if e.get("ph") == "X"]
        offset = 1000 * (index + 1)
        mine = [e for e in combined if e.get("ph") == "X" and offset <= e["pid"] < offset + 1000]
        assert len(mine) == len(alone) > 0
        shift_us = _first_ts_us(step) - _first_ts_us(STEPS[0])  # as the files say they ran
        assert shift_us > 0 or index == 0
        moved_back = sorted((e["name"], round(e["ts"] - shift_us, 6), e["dur"]) for e in mine)
        assert moved_back == sorted((e["name"], e["ts"], e["dur"]) for e in alone)
        assert {names[e["pid"]].split(" ", 1)[0] for e in mine} == {step}
        spans.append((min(e["ts"] for e in mine), max(e["ts"] + e["dur"] for e in mine)))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # steps follow in time


def test_the_windowed_viewer_draws_every_step():
    service = ProfileService(str(HOOK))
    params = {"format": "columnar", "resolution": "400", "max_events": "5000"}
    answer = service.tool_data("train/all_steps", "trace_viewer@", host=ALL_HOSTS, params=params)
    processes = answer.json()["processes"]
    text = json.dumps(processes)
    assert all(step in text for step in STEPS)
    # from the first step's first event to the last step's end, as the files' times say
    last = _trace(service, f"train/{STEPS[-1]}")["traceEvents"]
    end_us = max(e["ts"] + e.get("dur", 0) for e in last if "ts" in e)
    shift_us = _first_ts_us(STEPS[-1]) - _first_ts_us(STEPS[0])
    assert answer.json()["fullTimespan"][1] * 1000 == pytest.approx(shift_us + end_us, abs=0.01)

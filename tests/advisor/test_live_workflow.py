"""tftracer's workflow, live: a timeline of one block of code, and the steps a process ran.

Real JAX child processes (skipped where JAX cannot be imported); the tests talk to the live
page only over HTTP, with its tokens, as the page does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

from .test_live import _get, _route, _status

pytestmark = pytest.mark.slow

JAX_STEP = """
import jax
import jax.numpy as jnp

@jax.jit
def step(x):
    return jnp.tanh(x @ x) * 0.5
"""

TIMELINE = r"""
import json, sys, time
try:
    exec(sys.argv[2])
except ImportError as e:
    print(json.dumps({"noimport": str(e)}), flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live
limits = json.loads(sys.argv[3])
sleep_s = limits.pop("sleep_s", 0)
x = jnp.ones((128, 128))
step(x).block_until_ready()
with live.timeline(logdir=sys.argv[1], **limits) as t:
    for _ in range(20):
        x = step(x)
    x.block_until_ready()
    time.sleep(sleep_s)
print(json.dumps({"session_dir": t.session_dir, "notes": list(t.result.notes)}), flush=True)
"""

STEPS = r"""
import os, sys, time
try:
    exec(sys.argv[3])
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live
logdir, stop_file = sys.argv[1], sys.argv[2]
with live.tracing(port=0, logdir=logdir, quiet=True, max_steps=50) as server:
    x = jnp.ones((128, 128))
    print("ready", server.url, flush=True)
    deadline = time.time() + 120
    while time.time() < deadline and not os.path.exists(stop_file):
        with server.step():
            x = step(x)
            x.block_until_ready()
        time.sleep(0.01)
print("done", flush=True)
"""

ENV = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")


def _timeline(tmp_path, **limits) -> dict:
    logdir = tmp_path / "logs"
    out = subprocess.run(
        [sys.executable, "-c", TIMELINE, str(logdir), JAX_STEP, json.dumps(limits)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    reply = json.loads(out.stdout.strip().splitlines()[-1])
    if "noimport" in reply:
        pytest.skip(f"JAX cannot be imported here: {reply['noimport']}")
    return reply


def test_a_timeline_of_one_block_is_written_into_the_logdir_as_a_session(tmp_path):
    reply = _timeline(tmp_path)
    assert reply["notes"] == []
    session = os.path.basename(reply["session_dir"])
    assert os.path.dirname(reply["session_dir"]) == str(tmp_path / "logs/plugins/profile")
    client = Client(StandaloneApp(str(tmp_path / "logs")))
    assert json.loads(client.get("/runs").data) == [session]
    trace = json.loads(client.get(f"/data?run={session}&tag=trace_viewer&host=").data)
    names = {e.get("name", "") for e in trace["traceEvents"]}
    assert any("PjitFunction(step)" in n for n in names)


def test_a_timeline_is_stopped_at_its_duration_limit_and_says_so(tmp_path):
    started = time.monotonic()
    reply = _timeline(tmp_path, max_duration_ms=300, sleep_s=3)
    assert reply["session_dir"] and "Stopped after 0.3 s" in reply["notes"][0], reply
    assert time.monotonic() - started < 120


def _post(link: str, route: str) -> dict:
    token = json.loads(_get(_route(link, "capture_token")))["token"]
    request = urllib.request.Request(
        _route(link, route), data=b"", headers={"X-TBProf-Token": token}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def test_the_live_page_lists_the_steps_and_captures_the_next_one_on_request(tmp_path):
    logdir, stop_file = tmp_path / "logs", tmp_path / "stop"
    child = subprocess.Popen(
        [sys.executable, "-c", STEPS, str(logdir), str(stop_file), JAX_STEP],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    try:
        first = child.stdout.readline()
        if first.startswith("noimport"):
            pytest.skip(first)
        assert first.startswith("ready"), first + child.stderr.read()[-2000:]
        link = first.split()[1]
        deadline = time.monotonic() + 60
        while json.loads(_get(_route(link, "live_steps")))["total"] <= 50:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        listed = json.loads(_get(_route(link, "live_steps")))
        # Bounded: the last max_steps=50 steps, oldest first, numbered from 0; the total counts
        # every step.
        assert len(listed["steps"]) == 50 and listed["total"] > 50
        numbers = [s["step"] for s in listed["steps"]]
        assert numbers == list(range(listed["total"] - 50, listed["total"]))
        assert all(s["duration_ms"] > 0 and s["session"] is None for s in listed["steps"])
        assert listed["capture"] == {"state": "idle"}
        # Guarded as capture_profile: a POST with the capture token; a GET is refused.
        assert _status(_route(link, "live_capture_step")) == (405, "METHOD_NOT_ALLOWED")
        assert _status(_route(link, "live_capture_step"), b"") == (403, "FORBIDDEN")
        asked = _post(link, "live_capture_step")
        assert asked["capture"]["state"] in ("armed", "tracing", "done")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = json.loads(_get(_route(link, "live_steps")))
            if state["capture"]["state"] in ("done", "failed"):
                break
            time.sleep(0.05)
        assert state["capture"]["state"] == "done", state["capture"]
        session = state["capture"]["session"]
        traced = [s for s in state["steps"] if s["session"] == session]
        assert [s["step"] for s in traced] == [state["capture"]["step"]]
        assert json.loads(_get(_route(link, "runs"))) == [session]
    finally:
        stop_file.write_text("stop")
        child.communicate(timeout=60)
    assert child.returncode == 0
    # The saved session holds that one step, marked: the overview finds it.
    client = Client(StandaloneApp(str(logdir)))
    overview = json.loads(client.get(f"/data?run={session}&tag=overview_page").data)
    step_rows = overview[1]["rows"]
    assert [r["c"][0]["v"] for r in step_rows] == [f"train {traced[0]['step']}"]

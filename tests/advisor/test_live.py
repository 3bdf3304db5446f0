"""Live tracing inside a real training loop (JAX, TensorFlow): capture through the page, reopen.

The child process runs a compiled step in a loop inside ``live.tracing(...)``; the test
talks to it only over HTTP, as the page does. Each framework's case is skipped where it
cannot be imported (the CI's TensorFlow stage runs that case in a venv of its own).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

pytestmark = pytest.mark.slow

# One jitted (JAX) or tf.function (TensorFlow) step, run until the test writes the stop file.
MODELS = {
    "JAX": """
import jax
import jax.numpy as jnp

@jax.jit
def step(x):
    return jnp.tanh(x @ x) * 0.5

def ones():
    return jnp.ones((128, 128))

def wait(x):
    x.block_until_ready()
""",
    "TensorFlow": """
import tensorflow as tf

@tf.function
def step(x):
    return tf.tanh(tf.matmul(x, x)) * 0.5

def ones():
    return tf.ones((128, 128))

def wait(x):
    x.numpy()
""",
}
# What the reopened trace must show of that step.
STEP_EVENT = {"JAX": "PjitFunction(step)", "TensorFlow": "__inference_step"}

LOOP = r"""
import os, sys, time
try:
    exec(sys.argv[3])
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live

logdir, stop_file = sys.argv[1], sys.argv[2]
with live.tracing(port=0, logdir=logdir, quiet=True) as server:
    x = ones()
    wait(step(x))
    print("ready", server.url, server.profiler_address, flush=True)
    deadline = time.time() + 120  # never outlive a broken test
    steps = 0
    while time.time() < deadline and not os.path.exists(stop_file):
        x = step(x)
        wait(x)
        steps += 1
        time.sleep(0.002)
print("done", steps, flush=True)
"""


def _get(url: str, timeout: float = 60) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def _post_capture(url: str, query: str, timeout: float = 60) -> bytes:
    """POSTs a capture as the page does: with the token the page reads from capture_token."""
    token = json.loads(_get(url + "capture_token"))["token"]
    request = urllib.request.Request(
        url + "capture_profile", data=query.encode(), headers={"X-TBProf-Token": token}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def _status(url: str, **headers: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60):
            return 200
    except urllib.error.HTTPError as e:
        return e.code


def _port_is_closed(url: str) -> bool:
    host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


@pytest.mark.parametrize("framework", sorted(MODELS))
def test_capture_a_training_loop_through_the_live_page_and_reopen_it(tmp_path, framework):
    logdir, stop_file = tmp_path / "logs", tmp_path / "stop"
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2")
    child = subprocess.Popen(
        [sys.executable, "-c", LOOP, str(logdir), str(stop_file), MODELS[framework]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        first = child.stdout.readline()
        if first.startswith("noimport"):
            if os.environ.get("TBPROF_REQUIRE_LIVE") == framework:
                pytest.fail(f"{framework} must be importable in this stage: {first}")
            pytest.skip(f"{framework} cannot be imported here: {first}")
        assert first.startswith("ready"), first + child.stderr.read()
        _, url, profiler = first.split()
        # The page learns what to capture from /config: this process's profiler.
        config = json.loads(_get(url + "config"))
        assert config["live"]["service_addr"] == profiler
        assert config["live"]["framework"] == framework
        assert config["live"]["pid"] == child.pid
        # The live page is guarded as tbprof serve is: its own host names, POST with the token.
        assert _status(url + "runs", Host="rebind.attacker.example") == 403
        assert _status(url + f"capture_profile?service_addr={profiler}") == 405
        # Capture through the page's route while the loop keeps running.
        query = f"service_addr={profiler}&duration=800&num_retry=2"
        reply = json.loads(_post_capture(url, query))
        assert reply.get("result", "").startswith("Capture profile successfully"), reply
        (session,) = json.loads(_get(url + "runs"))  # shown as soon as it is written
        tools = json.loads(_get(url + f"run_tools?run={session}"))
        assert "trace_viewer@" in tools and "advisor" in tools
    finally:
        stop_file.write_text("stop")
        out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.startswith("done"), out
    assert _port_is_closed(url)  # the page stopped with the training loop
    # Reopen the saved session as `tbprof serve LOGDIR` would.
    client = Client(StandaloneApp(str(logdir)))
    assert json.loads(client.get("/runs").data) == [session]
    trace = client.get(f"/data?run={session}&tag=trace_viewer&host=")
    assert trace.status_code == 200
    names = {e.get("name", "") for e in json.loads(trace.data)["traceEvents"]}
    assert any(STEP_EVENT[framework] in n for n in names)
    advice = json.loads(client.get(f"/data?run={session}&tag=advisor").data)
    assert advice["p"]["framework"] == framework


def test_tbprof_serve_takes_the_path_as_its_argument():
    from tensorboard_plugin_profile.web.cli import build_parser

    args = build_parser().parse_args(["serve", "some/dir", "--port", "0", "--host", "::1"])
    assert (args.path, args.logdir, args.port, args.host) == ("some/dir", None, 0, "::1")
    args = build_parser().parse_args(["serve", "--logdir", "other"])
    assert args.logdir == "other" and args.path is None


SERVE_AND_EXIT = r"""
import sys
try:
    import jax
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live

server = live.serve(port=0, logdir=sys.argv[1], quiet=True)
print("ready", server.url, flush=True)
# No stop(): leaving the script must still shut everything down.
"""


def test_a_script_that_never_stops_the_server_still_exits_promptly(tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    result = subprocess.run(
        [sys.executable, "-c", SERVE_AND_EXIT, str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    if result.stdout.startswith("noimport"):
        pytest.skip(result.stdout)
    assert result.returncode == 0, result.stderr
    _, url = result.stdout.split()
    assert _port_is_closed(url)
    assert (tmp_path / "logs" / "plugins" / "profile").is_dir()

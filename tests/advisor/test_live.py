"""Live tracing inside a real training loop (JAX, TensorFlow): capture through the page, reopen.

The child process runs a compiled step in a loop inside ``live.tracing(...)``; the test
talks to it only over HTTP, as the page does. Each framework's case is skipped where it
cannot be imported (the CI's TensorFlow stage runs that case in a venv of its own).
The security promises (docs/security.md) are checked from outside too: the child's
listening sockets read from /proc, and a client running as another user (uid 65534).
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import time
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
import json, os, sys, time
try:
    exec(sys.argv[3])
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live

logdir, stop_file = sys.argv[1], sys.argv[2]
limits = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
with live.tracing(port=0, logdir=logdir, quiet=True, **limits) as server:
    x = ones()
    wait(step(x))
    print("ready", server.url, server.capture_target, flush=True)
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


def _post_capture(link: str, form: str, timeout: float = 60) -> bytes:
    """POSTs a capture as the page does: the capture token it reads from capture_token in
    ``X-TBProf-Token``, the link's access token in the query, the parameters as a form."""
    token = json.loads(_get(_route(link, "capture_token")))["token"]
    request = urllib.request.Request(
        _route(link, "capture_profile"), data=form.encode(), headers={"X-TBProf-Token": token}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def _status(url: str, data: bytes | None = None, **headers: str) -> tuple:
    """(HTTP status, error code or ``""``) of one request."""
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, ""
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())["error"]["code"]


def _port_is_closed(url: str) -> bool:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


def _start_loop(tmp_path, framework: str, limits: str = "{}") -> tuple:
    """The child training loop: (process, the page's link, its capture target); skips if no
    framework."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2")
    logdir, stop_file = tmp_path / "logs", tmp_path / "stop"
    child = subprocess.Popen(
        [sys.executable, "-c", LOOP, str(logdir), str(stop_file), MODELS[framework], limits],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    first = child.stdout.readline()
    if first.startswith("noimport"):
        child.communicate(timeout=60)
        if os.environ.get("TBPROF_REQUIRE_LIVE") == framework:
            pytest.fail(f"{framework} must be importable in this stage: {first}")
        pytest.skip(f"{framework} cannot be imported here: {first}")
    if not first.startswith("ready"):
        stop_file.write_text("stop")
        pytest.fail(first + child.communicate(timeout=60)[1])
    _, link, target = first.split()
    return child, link, target


def _stop_loop(tmp_path, child) -> str:
    """Stops the child's loop; its stdout (it exited cleanly)."""
    (tmp_path / "stop").write_text("stop")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.startswith("done"), out
    return out


def _route(link: str, route: str) -> str:
    """``route`` (with its query) on the live page, carrying the link's token."""
    base, token = link.split("?token=")
    return f"{base}{route}{'&' if '?' in route else '?'}token={token}"


@pytest.mark.parametrize("framework", sorted(MODELS))
def test_capture_a_training_loop_through_the_live_page_and_reopen_it(tmp_path, framework):
    logdir = tmp_path / "logs"
    child, link, target = _start_loop(tmp_path, framework)
    try:
        # The page learns what to capture from /config: this very process.
        config = json.loads(_get(_route(link, "config")))
        assert config["live"]["service_addr"] == target == "this-process"
        assert config["live"]["framework"] == framework
        assert config["live"]["pid"] == child.pid
        # The live page is guarded as tbprof serve is: its own host names (even with the access
        # token), a capture only as a POST with the capture token, besides the access token.
        rebound = _status(_route(link, "runs"), Host="rebind.attacker.example")
        assert rebound == (403, "HOST_NOT_ALLOWED")
        capture = f"capture_profile?service_addr={target}"
        assert _status(_route(link, capture)) == (405, "METHOD_NOT_ALLOWED")
        form = f"service_addr={target}&duration=100".encode()
        assert _status(_route(link, "capture_profile"), form) == (403, "FORBIDDEN")
        no_access = link.split("?token=")[0] + "capture_profile"
        token = json.loads(_get(_route(link, "capture_token")))["token"]
        refused = _status(no_access, form, **{"X-TBProf-Token": token})
        assert refused == (403, "PERMISSION_DENIED")
        # Capture through the page's route while the loop keeps running.
        query = f"service_addr={target}&duration=800&num_retry=2"
        reply = json.loads(_post_capture(link, query))
        assert reply.get("result", "").startswith("Capture profile successfully"), reply
        (session,) = json.loads(_get(_route(link, "runs")))  # shown as soon as it is written
        tools = json.loads(_get(_route(link, f"run_tools?run={session}")))
        assert "trace_viewer@" in tools and "advisor" in tools
    finally:
        _stop_loop(tmp_path, child)
    assert _port_is_closed(link)  # the page stopped with the training loop
    # Reopen the saved session as `tbprof serve LOGDIR` would.
    client = Client(StandaloneApp(str(logdir)))
    assert json.loads(client.get("/runs").data) == [session]
    trace = client.get(f"/data?run={session}&tag=trace_viewer&host=")
    assert trace.status_code == 200
    names = {e.get("name", "") for e in json.loads(trace.data)["traceEvents"]}
    assert any(STEP_EVENT[framework] in n for n in names)
    advice = json.loads(client.get(f"/data?run={session}&tag=advisor").data)
    assert advice["p"]["framework"] == framework


def _listening_sockets(pid: int) -> list:
    """(address, port) of every TCP socket the process ``pid`` listens on, from /proc."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    listening = []
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            next(f)  # the header
            for line in f:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A: LISTEN
                    listening.append(_proc_address(local))
    return sorted(listening)


def _proc_address(hex_address: str) -> tuple:
    """``0100007F:1F90`` -> ('127.0.0.1', 8080); IPv6 in four little-endian words."""
    hex_ip, hex_port = hex_address.split(":")
    raw = bytes.fromhex(hex_ip)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words)), int(hex_port, 16)


ANOTHER_USER_CLIENT = r"""
import sys, urllib.error, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
for arg in sys.argv[1:]:
    method, _, url = arg.rpartition(" ")  # "POST URL": a POST with a guessed capture token
    headers = {"X-TBProf-Token": "guessed"} if method == "POST" else {}
    request = urllib.request.Request(url, data=b"" if method else None, headers=headers)
    try:
        print(opener.open(request, timeout=30).status)
    except urllib.error.HTTPError as e:
        print(e.code)
"""


def _statuses_as_another_user(urls: list) -> list:
    """The HTTP status of each URL, asked by a process running as uid/gid 65534."""
    command = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    command += [sys.executable, "-c", ANOTHER_USER_CLIENT, *urls]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return [int(line) for line in out.stdout.split()]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("framework", sorted(MODELS))
def test_the_live_process_listens_only_for_its_page_and_only_its_user_can_use_it(
    tmp_path, framework
):
    child, link, target = _start_loop(tmp_path, framework)
    try:
        # No profiler port: the only listening socket is the page's, on loopback (before:
        # the framework's profiler server on [::]:PORT, reachable from the network).
        page_port = int(link.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        assert _listening_sockets(child.pid) == [("127.0.0.1", page_port)]
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            pytest.skip("needs root and setpriv to run a client as another user")
        base = link.split("?token=")[0]
        capture = f"capture_profile?service_addr={target}&duration=500"
        statuses = _statuses_as_another_user(
            [
                base,  # the page's code is served: the port is reachable ...
                base + "runs",  # ... but no route without the link's token
                base + "data/plugin/profile/config",
                base + "capture_token",  # nor the capture token
                base + capture,
                base + capture + "&token=guessed",
                "POST " + base + capture,  # a capture as the page makes it: POST, same answer
                "POST " + base + capture + "&token=guessed",
            ]
        )
        assert statuses == [200, 403, 403, 403, 403, 403, 403, 403]
        assert json.loads(_get(_route(link, "runs"))) == []  # nothing was captured
    finally:
        _stop_loop(tmp_path, child)


def test_a_live_capture_is_bounded_in_duration_and_in_memory(tmp_path):
    limits = json.dumps({"max_duration_ms": 60_000, "max_trace_bytes": 24 << 20})
    child, link, target = _start_loop(tmp_path, "JAX", limits)
    try:
        capture = f"service_addr={target}"
        with pytest.raises(urllib.error.HTTPError) as refused:  # past the limit: 400 at once
            _post_capture(link, capture + "&duration=60001")
        assert refused.value.code == 400
        assert "at most 60000 ms" in json.loads(refused.value.read())["error"]["message"]
        # The Python tracer on a busy loop grows the process by tens of MB a second: the
        # trace stops once it has grown by 24 MB, long before the minute asked, and is kept.
        started = time.monotonic()
        reply = json.loads(_post_capture(link, capture + "&duration=60000&python_tracer_level=1"))
        elapsed_s = time.monotonic() - started
        assert "Stopped after" in reply.get("result", ""), reply
        assert elapsed_s < 40, elapsed_s
        assert len(json.loads(_get(_route(link, "runs")))) == 1
    finally:
        _stop_loop(tmp_path, child)


SERVE_WITH_PROFILER_PORT = r"""
import sys
try:
    import jax
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
from tensorboard_plugin_profile import live

with live.tracing(port=0, logdir=sys.argv[1], quiet=True, profiler_port=0) as server:
    print("ready", server.url, server.profiler_address, flush=True)
    sys.stdin.readline()
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc (Linux)")
def test_a_profiler_port_is_opened_only_on_request_and_with_a_warning(tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    child = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITH_PROFILER_PORT, str(tmp_path / "logs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    first = child.stdout.readline()
    try:
        if first.startswith("noimport"):
            pytest.skip(first)
        assert first.startswith("ready"), first
        _, _, profiler = first.split()
        port = int(profiler.rsplit(":", 1)[1])
        # JAX's server binds every interface (its API takes no address): that is why it is opt-in.
        assert ("::", port) in _listening_sockets(child.pid)
    finally:
        _, err = child.communicate("\n", timeout=60)
    assert child.returncode == 0, err
    assert f"profiler server on port {port} listens on all interfaces" in err


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

"""Fixtures: in-process fake profiler servers, and a real JAX profiler server in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import grpc
import pytest

from .capture_fakes import FakeServer, unused_port

JAX_LOOP = r"""
import sys, time
try:
    import jax
    import jax.numpy as jnp
except ImportError as e:
    print("noimport", e, flush=True)
    sys.exit(0)
port, limit_s = int(sys.argv[1]), float(sys.argv[2])
server = jax.profiler.start_server(port)  # keep the reference: dropping it stops the server

@jax.jit
def step(x):
    return jnp.tanh(x @ x) * 0.5

x = jnp.ones((128, 128))
step(x).block_until_ready()
print("ready", flush=True)
end = time.time() + limit_s
while time.time() < end:
    x = step(x)
    x.block_until_ready()
    time.sleep(0.002)  # leave CPU for the test process on small machines
"""
JAX_LIFETIME_S = 120  # the child exits by itself after this, even if teardown never runs
JAX_START_TIMEOUT_S = 90


@pytest.fixture
def fake_servers():
    """Call ``fake_servers(profiler=..., analysis=...)`` to start one; all stop at teardown."""
    started: list[FakeServer] = []

    def start(profiler=None, analysis=None, host="127.0.0.1") -> FakeServer:
        server = FakeServer(profiler, analysis, host)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def jax_server():
    """Address (127.0.0.1:port) of a child process running a jit loop under jax.profiler."""
    port = unused_port()
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    child = subprocess.Popen(
        [sys.executable, "-c", JAX_LOOP, str(port), str(JAX_LIFETIME_S)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        first_line = _read_line(child, JAX_START_TIMEOUT_S)
        if first_line.startswith("noimport"):
            pytest.skip(f"import jax failed ({first_line[9:].strip()}); pip install jax jaxlib")
        assert first_line.strip() == "ready", f"JAX child did not start: {first_line!r}"
        address = f"127.0.0.1:{port}"
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        yield address
    finally:
        child.kill()
        child.wait(timeout=30)


def _read_line(child: subprocess.Popen, timeout_s: float) -> str:
    """First stdout line of the child, or fail after ``timeout_s``."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(child.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    if not lines:
        raise AssertionError(f"JAX child printed nothing in {timeout_s} s")
    return lines[0]


@pytest.fixture
def timer():
    """``with timer() as t: ...`` then ``t.elapsed`` in seconds."""

    class Timer:
        def __enter__(self):
            self.start = time.monotonic()
            return self

        def __exit__(self, *exc):
            self.elapsed = time.monotonic() - self.start

    return Timer

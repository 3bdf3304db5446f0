"""The frontend's own checks (tsc --noEmit, eslint, Vitest) and the browser test.

The browser test starts the real standalone server on the fixtures in tests/data and
runs ``frontend/e2e/*.e2e.mjs`` in headless Debian Chromium (playwright-core);
screenshots land in ``tests/artifacts/``. The cross-origin test runs
``frontend/e2e/cross-origin.mjs`` against a server on an empty logdir and a profiler server
that answers every capture, then checks that only the page's own capture got through.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest
from capture.capture_fakes import FakeProfiler, FakeServer, files_under
from conftest import FIXTURES, REPO
from werkzeug.serving import make_server

from tensorboard_plugin_profile.web.server import StandaloneApp

FRONTEND = REPO / "frontend"
ARTIFACTS = REPO / "tests" / "artifacts"


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is required for the frontend tests")
    if not (FRONTEND / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    return npm


def _run(args: list, env: dict = None) -> None:
    result = subprocess.run(
        args, cwd=FRONTEND, capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, (
        f"{' '.join(args)} failed:\n{result.stdout[-6000:]}\n{result.stderr[-4000:]}"
    )


def test_typecheck_lint_and_unit_tests():
    _run([_npm(), "run", "check"])


@pytest.fixture(scope="module")
def built():
    _run([_npm(), "run", "build"])  # always test the current sources


def _serve(logdir: str):
    server = make_server("127.0.0.1", 0, StandaloneApp(logdir), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def server_url(built):
    server = _serve(str(FIXTURES))
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.mark.parametrize("script", sorted(p.name for p in (FRONTEND / "e2e").glob("*.e2e.mjs")))
def test_browser(server_url, script):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PROFILE_E2E_URL": server_url, "PROFILE_E2E_ARTIFACTS": str(ARTIFACTS)}
    _run(["node", f"e2e/{script}"], env=env)


def test_pages_of_other_origins_cannot_capture_nor_read(built, tmp_path):
    """The <img>/form/fetch attacks and a DNS-rebound page leave the logdir untouched."""
    profiler = FakeProfiler()
    grpc_server = FakeServer(profiler)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    server = _serve(str(logdir))
    env = {
        **os.environ,
        "PROFILE_E2E_URL": f"http://127.0.0.1:{server.server_port}/",
        "PROFILE_ATTACK_PROFILER": grpc_server.address,
    }
    try:
        result = subprocess.run(
            ["node", "e2e/cross-origin.mjs"],
            cwd=FRONTEND,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    finally:
        server.shutdown()
        grpc_server.stop()
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    (session,) = [
        line.split()[1] for line in result.stdout.splitlines() if line.startswith("captured")
    ]
    # Only the page's own capture reached the profiler and the logdir.
    assert len(profiler.requests) == 1
    assert files_under(str(logdir)) == [
        "plugins",
        "plugins/profile",
        f"plugins/profile/{session}",
        f"plugins/profile/{session}/127.0.0.1_{grpc_server.port}.xplane.pb",
    ]

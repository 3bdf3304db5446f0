"""The frontend's own checks (tsc --noEmit, eslint, Vitest) and the browser test.

The browser test starts the real standalone server on the fixtures in tests/data and
runs ``frontend/e2e/*.e2e.mjs`` in headless Debian Chromium (playwright-core);
screenshots land in ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest
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
def server_url():
    _run([_npm(), "run", "build"])  # always test the current sources
    server = make_server("127.0.0.1", 0, StandaloneApp(str(FIXTURES)), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.mark.parametrize("script", sorted(p.name for p in (FRONTEND / "e2e").glob("*.e2e.mjs")))
def test_browser(server_url, script):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PROFILE_E2E_URL": server_url, "PROFILE_E2E_ARTIFACTS": str(ARTIFACTS)}
    _run(["node", f"e2e/{script}"], env=env)

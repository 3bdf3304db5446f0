"""The frontend's own checks (tsc --noEmit, eslint, Vitest) and the browser test.

The browser test starts the real standalone server on the fixtures in tests/data (and a
second one that needs an access token, as the live page does) and runs
``frontend/e2e/*.e2e.mjs`` in headless Debian Chromium (playwright-core); screenshots land
in ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest
from conftest import FIXTURES, REPO
from werkzeug.serving import make_server

from tensorboard_plugin_profile.web.access_token import new_token
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


def _start(app) -> tuple:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


@pytest.fixture(scope="module")
def server_urls():
    """The plain server's root, and the link (with its token) of one that needs a token."""
    _run([_npm(), "run", "build"])  # always test the current sources
    plain, url = _start(StandaloneApp(str(FIXTURES)))
    token = new_token()
    gated, gated_url = _start(StandaloneApp(str(FIXTURES), access_token=token))
    yield url, f"{gated_url}?token={token}"
    plain.shutdown()
    gated.shutdown()


@pytest.mark.parametrize("script", sorted(p.name for p in (FRONTEND / "e2e").glob("*.e2e.mjs")))
def test_browser(server_urls, script):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    url, live_url = server_urls
    env = {
        **os.environ,
        "PROFILE_E2E_URL": url,
        "PROFILE_E2E_LIVE_URL": live_url,
        "PROFILE_E2E_ARTIFACTS": str(ARTIFACTS),
    }
    _run(["node", f"e2e/{script}"], env=env)

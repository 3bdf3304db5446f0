"""The frontend's own checks (tsc --noEmit, eslint, Vitest) and the browser test.

The browser test starts the real standalone server on the fixtures in tests/data (and a
second one that needs an access token, as the live page does) and runs
``frontend/e2e/*.e2e.mjs`` in headless Debian Chromium (playwright-core); screenshots land
in ``tests/artifacts/``. The cross-origin test runs ``frontend/e2e/cross-origin.mjs``
against a server on an empty logdir (plain, and with an access token as the live page has)
and a profiler server that answers every capture, then checks that only the page's own
capture got through.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
from capture.capture_fakes import FakeProfiler, FakeServer, files_under
from conftest import FIXTURES, REPO
from werkzeug.serving import make_server

from tensorboard_plugin_profile.protobuf import profiler_service_pb2
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
def built():
    _run([_npm(), "run", "build"])  # always test the current sources


@pytest.fixture(scope="module")
def server_urls(built):
    """The plain server's root, and the link (with its token) of one that needs a token."""
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


@pytest.mark.parametrize("access_token", [False, True], ids=["plain", "live-token"])
def test_pages_of_other_origins_cannot_capture_nor_read(built, tmp_path, access_token):
    """The <img>/form/fetch attacks and a DNS-rebound page leave the logdir untouched.

    With an access token (as the live page has) the attack page is even given the token, as if
    it had leaked: the capture token and the Host guard still stop it, and the page's own
    capture sends both tokens.
    """
    profiler = FakeProfiler()
    grpc_server = FakeServer(profiler)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    token = new_token() if access_token else None
    server, url = _start(StandaloneApp(str(logdir), access_token=token))
    env = {
        **os.environ,
        "PROFILE_E2E_URL": f"{url}?token={token}" if token else url,
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


def test_the_capture_dialog_cancels_a_capture_of_a_hanging_server(built, tmp_path):
    """Issue 24, item 5: a capture of a server that hangs held its place for the whole
    duration, with no way to stop it from the page. The dialog's Cancel stops it: the
    profiler sees its call cancelled and nothing reaches the logdir."""
    seen_cancel: list = []
    profiler = FakeProfiler()

    def hang(request, context):
        while context.is_active() and not profiler.release.wait(0.05):
            pass
        seen_cancel.append(not context.is_active())
        return profiler_service_pb2.ProfileResponse(empty_trace=True)

    profiler.profile_handler = hang
    grpc_server = FakeServer(profiler)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    server, url = _start(StandaloneApp(str(logdir)))
    env = {**os.environ, "PROFILE_E2E_URL": url, "PROFILE_HANGING_PROFILER": grpc_server.address}
    try:
        result = subprocess.run(
            ["node", "e2e/capture-cancel.mjs"],
            cwd=FRONTEND,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        deadline = time.monotonic() + 10
        while not seen_cancel and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        server.shutdown()
        grpc_server.stop()
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert len(profiler.requests) == 1 and seen_cancel == [True]
    assert files_under(str(logdir)) == []


def test_the_live_page_lists_steps_captures_one_and_downloads_it(built, tmp_path):
    """Issue 29: the live page lists the steps a real JAX loop ran; "Capture next step" saves
    one as a session, which the page selects; "Download session" answers its zip."""
    from advisor.test_live_workflow import ENV, JAX_STEP, STEPS

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
        assert first.startswith("ready"), first
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PROFILE_E2E_LIVE_URL": first.split()[1],
            "PROFILE_E2E_ARTIFACTS": str(ARTIFACTS),
        }
        result = subprocess.run(
            ["node", "e2e/live-steps.mjs"],
            cwd=FRONTEND,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    finally:
        stop_file.write_text("stop")
        child.communicate(timeout=60)
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    (session,) = [
        line.split()[1] for line in result.stdout.splitlines() if line.startswith("captured")
    ]
    assert files_under(str(logdir / "plugins/profile")) == [
        session,
        f"{session}/{os.listdir(logdir / 'plugins/profile' / session)[0]}",
    ]

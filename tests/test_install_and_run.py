"""install_and_run.py: the URL only once the server listens; a summary of every stage."""

from __future__ import annotations

import contextlib
import io
import socket
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO))
import install_and_run  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _late_server(port: int, delay_s: float) -> list:
    """A real server process that starts listening only after ``delay_s`` (as TensorBoard
    does after loading its plugins), then serves for two seconds."""
    code = (
        f"import socket, time; time.sleep({delay_s!r}); s = socket.socket(); "
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(2)"
    )
    return [sys.executable, "-c", code]


class _Checking(io.StringIO):
    """stdout that notes, as each line is written, whether the port accepts connections."""

    def __init__(self, port: int):
        super().__init__()
        self.port = port
        self.listening_when_written: list = []

    def write(self, text: str) -> int:
        if text.strip():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                self.listening_when_written.append(True)
            except OSError:
                self.listening_when_written.append(False)
        return super().write(text)


def test_the_url_is_printed_only_once_the_server_listens():
    """Before, the URL came before TensorBoard was started: opened at once, it was refused."""
    port = _free_port()
    out = _Checking(port)
    with contextlib.redirect_stdout(out):
        status = install_and_run.serve_and_announce(
            _late_server(port, 1.5), "127.0.0.1", port, f"http://127.0.0.1:{port}/#profile"
        )
    assert status == 0
    assert out.getvalue().count(f"Open http://127.0.0.1:{port}/#profile") == 1
    assert out.listening_when_written == [True]


def test_no_url_for_a_server_that_exits_without_listening():
    port = _free_port()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = install_and_run.serve_and_announce(
            [sys.executable, "-c", "raise SystemExit(3)"], "127.0.0.1", port, "http://x/"
        )
    assert status == 3 and "Open" not in out.getvalue()


def test_the_test_command_ends_with_a_summary_of_every_stage():
    """Before, it ended on the last stage's own line ("1 passed, 3 deselected")."""
    stages = install_and_run.Stages()
    assert stages.run("lint", lambda: subprocess.call([sys.executable, "-c", "pass"])) == 0
    assert stages.run("oldest", lambda: install_and_run.skipped("no Python 3.9")) == 0
    failing = [sys.executable, "-c", "raise SystemExit(5)"]
    assert stages.run("pytest", lambda: subprocess.call(failing)) == 5
    assert stages.run("build", lambda: subprocess.run(failing, check=True)) == 5
    lines = stages.summary(["live tracing"]).splitlines()
    assert lines[1] == "==> summary of the test command"
    rows = {line.split()[0]: line for line in lines[2:]}
    assert " ok " in rows["lint"] and "skipped: no Python 3.9" in rows["oldest"]
    assert "FAILED (exit 5)" in rows["pytest"] and "FAILED (exit 5)" in rows["build"]
    assert "not run" in rows["live"]


def test_a_stage_that_stops_with_a_message_is_a_failure_in_the_summary():
    stages = install_and_run.Stages()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = stages.run("packages", lambda: sys.exit("python -m build failed"))
    assert status == 1 and "python -m build failed" in out.getvalue()
    assert "FAILED (exit 1)" in stages.summary()

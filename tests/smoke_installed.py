"""Smoke test of an installed package (not collected by pytest; install_and_run.py runs it).

Run with the Python of a fresh virtualenv that installed the wheel or sdist, from a
folder outside the repository so that only the installed copy can be imported:
starts the standalone server on the bundled demo profile, loads the page and its
script, lists the runs and asks one tool for data. Exits non-zero with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return response.read()


def wait_for(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the server exited with {server.returncode} before answering")
        try:
            get(url)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"the server did not answer {url} within {TIMEOUT_S} s")


def main() -> None:
    import tensorboard_plugin_profile
    import tensorboard_plugin_profile.demo as demo

    where = os.path.dirname(tensorboard_plugin_profile.__file__)
    if "site-packages" not in where:
        sys.exit(f"imported the package from {where}, not from an installed copy")
    for tool in ("node", "npm"):
        if shutil.which(tool):
            sys.exit(f"{tool} is on PATH: this check must run without Node.js")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logdir = os.path.dirname(demo.__file__)
    command = [sys.executable, "-m", "tensorboard_plugin_profile.web.server", "--logdir", logdir]
    server = subprocess.Popen(
        command + ["--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(f"{base}/version", server)
        page = get(f"{base}/").decode()
        assert "<title>Profile</title>" in page, "the page did not load"
        for asset in ("app.js", "app.css", "data/plugin/profile/index.js"):
            assert asset.rsplit("/", 1)[-1] in page or asset.endswith("index.js")
            assert get(f"{base}/{asset}"), f"{asset} is empty"
        runs = json.loads(get(f"{base}/data/plugin/profile/runs"))
        assert runs, "the demo profile has no runs"
        query = f"run={runs[0]}&tag=overview_page&host=demo"
        answer = json.loads(get(f"{base}/data/plugin/profile/data?{query}"))
        assert isinstance(answer, list) and answer, "overview_page gave no tables"
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"smoke test passed on Python {sys.version.split()[0]} ({where})")


if __name__ == "__main__":
    main()

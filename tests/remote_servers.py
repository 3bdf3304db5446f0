"""Real object-store servers on loopback for the remote-logdir tests.

``moto_server`` (moto's standalone S3 server) runs as its own process, from the first of
``$TBPROF_MOTO_SERVER``, ``<repo>/.venv-moto/bin/moto_server``, ``.venv-moto`` beside the
running venv, or ``moto_server`` on the PATH
(moto pins versions our venv must not take, so it lives in a venv of its own; ``.ci/run``
makes it). A counting proxy in front of it tells how many requests reached the store.
"""

from __future__ import annotations

import http.client
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def moto_server_command() -> Optional[str]:
    for candidate in (
        os.environ.get("TBPROF_MOTO_SERVER"),
        os.path.join(REPO, ".venv-moto", "bin", "moto_server"),
        os.path.join(os.path.dirname(sys.prefix), ".venv-moto", "bin", "moto_server"),
        shutil.which("moto_server"),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoServer:
    """A moto S3 server process on a free loopback port."""

    def __init__(self, command: str):
        self.port = free_port()
        self.process = subprocess.Popen(
            [command, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto_server did not start in 30 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class CountingProxy:
    """Forwards HTTP to ``target_port`` and records (method, path?query) of each request."""

    def __init__(self, target_port: int):
        self.requests: list = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.requests.append((self.command, self.path))
                upstream = http.client.HTTPConnection("127.0.0.1", target_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
                self.send_response(reply.status)
                length = reply.getheader("Content-Length") if self.command == "HEAD" else None
                for key, value in reply.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

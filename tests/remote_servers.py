"""Real object-store servers on loopback for the remote-logdir tests.

Each runs as its own process, found as the first of an environment variable, the repository's
own folder, the same folder beside the running venv, or the PATH (``.ci/run`` makes them):

- ``moto_server``, moto's standalone S3 server: ``$TBPROF_MOTO_SERVER``, ``<repo>/.venv-moto/bin``
  (moto pins Werkzeug and boto versions our venv must not take);
- ``gcp-storage-emulator``, a GCS emulator: ``$TBPROF_GCS_EMULATOR``, ``<repo>/.venv-gcs/bin``;
- ``azurite-blob``, Microsoft's Azure Storage emulator (npm): ``$TBPROF_AZURITE``,
  ``<repo>/.azurite/node_modules/.bin``.

A counting proxy in front of a server tells how many requests reached the store;
``tool_answers`` is every tool's bytes of a service, to compare remote with local.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _find(variable: str, folder: str, name: str) -> Optional[str]:
    for candidate in (
        os.environ.get(variable),
        os.path.join(REPO, folder, name),
        os.path.join(os.path.dirname(sys.prefix), folder, name),
        shutil.which(name),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def moto_server_command() -> Optional[str]:
    return _find("TBPROF_MOTO_SERVER", os.path.join(".venv-moto", "bin"), "moto_server")


def gcs_emulator_command() -> Optional[str]:
    return _find("TBPROF_GCS_EMULATOR", os.path.join(".venv-gcs", "bin"), "gcp-storage-emulator")


def azurite_command() -> Optional[str]:
    return _find("TBPROF_AZURITE", os.path.join(".azurite", "node_modules", ".bin"), "azurite-blob")


@contextlib.contextmanager
def environ(**values: str):
    """These environment variables set for the block, then each back as it was."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def upload(client, bucket: str, data: str, fixtures) -> None:
    """Makes ``bucket`` and copies each fixture folder of ``data`` to ``<bucket>/logs/<name>``."""
    client.mkdir(bucket)
    for name in fixtures:
        client.put(os.path.join(data, name), f"{bucket}/logs/{name}", recursive=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A store server process on a free loopback port, started by ``arguments(port)``."""

    def __init__(self, arguments, env: Optional[dict] = None, cwd: Optional[str] = None):
        self.port = free_port()
        self.process = subprocess.Popen(
            arguments(self.port),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
            cwd=cwd,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{arguments(self.port)[0]} did not start in 60 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


class MotoServer(ServerProcess):
    """moto's S3 server; ``env`` adds to its environment (``INITIAL_NO_AUTH_ACTION_COUNT``)."""

    def __init__(self, command: str, env: Optional[dict] = None):
        super().__init__(lambda port: [command, "-H", "127.0.0.1", "-p", str(port)], env=env)


class GcsEmulator(ServerProcess):
    """gcp-storage-emulator, in memory; clients find it through ``STORAGE_EMULATOR_HOST``."""

    def __init__(self, command: str):
        super().__init__(
            lambda port: [command, "start", "-H", "127.0.0.1", "--port", str(port), "-M", "-q"]
        )
        self.url = f"http://127.0.0.1:{self.port}"


class Azurite(ServerProcess):
    """Azurite's blob service, in memory, serving one account named by ``AZURITE_ACCOUNTS``."""

    def __init__(self, command: str, account: str, key: str, cwd: str):
        def arguments(port: int) -> list:
            return [command, "--blobHost", "127.0.0.1", "--blobPort", str(port),
                    "--inMemoryPersistence", "--silent", "--skipApiVersionCheck"]  # fmt: skip

        super().__init__(arguments, env={"AZURITE_ACCOUNTS": f"{account}:{key}"}, cwd=cwd)
        self.connection_string = (
            f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
            f"BlobEndpoint=http://127.0.0.1:{self.port}/{account};"
        )


def tool_answers(service) -> dict:
    """Every tool's bytes for every run and host of ``service``, as a comparable dict."""
    from tensorboard_plugin_profile.common.errors import ProfileError

    answers = {}
    for run in service.runs():
        for tool in service.run_tools(run):
            for host in service.hosts(run, tool):
                try:
                    result = service.tool_data(run, tool, host=host["hostname"])
                    answer = b"".join(result.chunks())
                except ProfileError as e:  # the same refusal either way (graph_viewer's)
                    answer = f"{type(e).__name__}: {e.message}".encode()
                answers[(run, tool, host["hostname"])] = answer
    return answers


class CountingProxy:
    """Forwards HTTP to ``target_port`` and records (method, path?query) of each request;
    ``delay_s`` holds each answer back that long (a slow store), and ``refuse(method, path)``
    may answer a request itself, with (status, JSON body), instead of forwarding it."""

    def __init__(self, target_port: int, delay_s: float = 0.0, refuse: Optional[Callable] = None):
        self.requests: list = []
        self.delay_s = delay_s
        self.target_port = target_port
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.requests.append((self.command, self.path))
                refusal = refuse(self.command, self.path) if refuse else None
                if refusal is not None:
                    self._answer(*refusal)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", target_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
                time.sleep(proxy.delay_s)
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

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def local_answers(data: str, fixtures, folder: str) -> dict:
    """``tool_answers`` of the ``fixtures`` folders of ``data``, copied into ``folder``."""
    from tensorboard_plugin_profile.service import ProfileService
    from tensorboard_plugin_profile.store.cache_config import CacheConfig

    for name in fixtures:
        shutil.copytree(os.path.join(data, name), os.path.join(folder, name))
    service = ProfileService(folder, config=CacheConfig(workers=1))
    try:
        return tool_answers(service)
    finally:
        service.close()

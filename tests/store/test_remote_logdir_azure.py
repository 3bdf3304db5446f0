"""Logdirs in Azure Blob Storage (``az://``, ``abfs://``), against Azurite on loopback.

Azurite, Microsoft's storage emulator, is an npm package; ``.ci/run`` installs it into the
``.azurite`` folder (tests/remote_servers.py says where else it is looked for) and it runs as
its own process, serving one account with a random key. adlfs is the client, given the account by
``AZURE_STORAGE_CONNECTION_STRING`` as a user would (docs/remote_logdirs.md). Skipped, with the
reason, without adlfs or Azurite.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time

import pytest
from remote_servers import (
    Azurite,
    CountingProxy,
    azurite_command,
    environ,
    free_port,
    local_answers,
    tool_answers,
    upload,
)

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import remote, remote_fetch
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.web.server import StandaloneApp

adlfs = pytest.importorskip(
    "adlfs", reason="adlfs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
AZURITE = azurite_command()
pytestmark = pytest.mark.skipif(
    AZURITE is None, reason="azurite-blob not found (.ci/run installs npm's azurite into .azurite)"
)
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
FIXTURES = ("jax_two_hosts", "pytorch_two_ranks", "profiler_hook")
KEY = base64.b64encode(os.urandom(32)).decode()


@pytest.fixture(scope="module")
def azure(tmp_path_factory):
    """(proxy, client): Azurite behind a counting proxy; the connection string names it."""
    server = Azurite(AZURITE, "tbproftest", KEY, cwd=str(tmp_path_factory.mktemp("azurite")))
    proxy = CountingProxy(server.port)
    connection = server.connection_string.replace(f":{server.port}/", f":{proxy.port}/")
    with environ(AZURE_STORAGE_CONNECTION_STRING=connection):
        remote.forget_filesystems()
        client = adlfs.AzureBlobFileSystem(skip_instance_cache=True, use_listings_cache=False)
        upload(client, "profiles", DATA, FIXTURES)
        yield proxy, client
    remote.forget_filesystems()
    proxy.stop()
    server.stop()


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    return local_answers(DATA, FIXTURES, str(tmp_path_factory.mktemp("local")))


@pytest.mark.parametrize("scheme", ["az", "abfs"])
def test_every_tool_answers_the_same_bytes_as_from_local_disk(azure, expected, scheme, tmp_path):
    proxy, client = azure
    before = sorted(client.find("profiles"))
    proxy.requests.clear()
    service = ProfileService(f"{scheme}://profiles/logs", config=CacheConfig(
        disk_dir=str(tmp_path), workers=1))  # fmt: skip
    try:
        got = tool_answers(service)
    finally:
        service.close()
    assert expected and set(got) == set(expected)
    assert [k for k in expected if got[k] != expected[k]] == []
    # Never written to the container: the same blobs as uploaded, and only reads reached it.
    assert sorted(client.find("profiles")) == before
    assert proxy.requests and [r for r in proxy.requests if r[0] not in ("GET", "HEAD")] == []
    assert not any(KEY in path for _, path in proxy.requests)


def test_a_wrong_account_key_is_a_403_naming_the_logdir(azure, monkeypatch, tmp_path, caplog):
    """Azurite refuses the signature (403 AuthorizationFailure). The Azure SDK's error is no
    PermissionError and its text holds no "403": it was answered as a 503 "cannot be reached
    now; try again in a moment", which no retry would ever change."""
    from werkzeug.test import Client

    wrong = base64.b64encode(os.urandom(32)).decode()
    connection = os.environ["AZURE_STORAGE_CONNECTION_STRING"]
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", connection.replace(KEY, wrong))
    remote.forget_filesystems()
    caplog.set_level(logging.DEBUG, logger="tensorboard_plugin_profile")
    app = StandaloneApp("az://profiles/logs", config=CacheConfig(
        disk_dir=str(tmp_path), workers=1))  # fmt: skip
    try:
        reply = Client(app).get("/data/plugin/profile/runs")
    finally:
        app.service.close()
        remote.forget_filesystems()
    body = json.loads(reply.get_data())
    assert reply.status_code == 403, body
    assert body["error"]["code"] == "PERMISSION_DENIED"
    message = body["error"]["message"]
    assert message.startswith("az://profiles/logs cannot be read: access denied. Check the")
    for text in (message, caplog.text):
        assert wrong not in text and KEY not in text and "Authorization" not in text


def test_a_refused_connection_is_a_503_naming_the_logdir_within_seconds(
    azure, monkeypatch, tmp_path, caplog
):
    """Nothing listens on the endpoint's port. The Azure SDK retried connecting 3 times per
    call with 15-27 s sleeps, over several calls: no answer after 120 s."""
    from werkzeug.test import Client

    connection = os.environ["AZURE_STORAGE_CONNECTION_STRING"]
    closed = connection.replace(f":{azure[0].port}/", f":{free_port()}/")
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", closed)
    remote.forget_filesystems()
    caplog.set_level(logging.DEBUG, logger="tensorboard_plugin_profile")
    started = time.monotonic()
    app = StandaloneApp("az://profiles/logs", config=CacheConfig(
        disk_dir=str(tmp_path), workers=1))  # fmt: skip
    try:
        reply = Client(app).get("/data/plugin/profile/runs")
    finally:
        app.service.close()
        remote.forget_filesystems()
    took = time.monotonic() - started
    body = json.loads(reply.get_data())
    assert reply.status_code == 503, body
    assert body["error"]["code"] == "UNAVAILABLE"
    message = body["error"]["message"]
    assert message.startswith("az://profiles/logs cannot be reached now")
    assert "try again" in message
    assert took < 5, f"answered after {took:.1f} s"
    for text in (message, caplog.text):
        assert KEY not in text


def test_a_slow_endpoint_that_answers_still_works(azure, monkeypatch, tmp_path):
    """Only connecting is not retried: a store that takes its time (here 1.5 s per answer)
    is waited for, as before."""
    proxy, _ = azure
    slow = CountingProxy(proxy.port, delay_s=1.5)
    connection = os.environ["AZURE_STORAGE_CONNECTION_STRING"]
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING", connection.replace(f":{proxy.port}/", f":{slow.port}/")
    )
    remote.forget_filesystems()
    try:
        folders, objects = remote.list_folder("az://profiles/logs")
        obj = remote.stat("az://profiles/logs/pytorch_two_ranks/run/rank0.1.pt.trace.json.gz")
        assert obj is not None
        local = remote_fetch.fetch(obj, str(tmp_path / remote.cache_name(obj)))
    finally:
        remote.forget_filesystems()
        slow.stop()
    assert folders == sorted(FIXTURES) and objects == []
    with open(local, "rb") as f:
        expected = os.path.join(DATA, "pytorch_two_ranks", "run", "rank0.1.pt.trace.json.gz")
        assert f.read() == open(expected, "rb").read()
    assert slow.requests

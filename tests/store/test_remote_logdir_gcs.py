"""Logdirs in Google Cloud Storage, against a GCS emulator on loopback (docs/remote_logdirs.md).

``gcp-storage-emulator`` runs as its own process (from ``.venv-gcs``, which ``.ci/run`` makes;
tests/remote_servers.py says where else it is looked for); gcsfs is the client, pointed at it
by ``STORAGE_EMULATOR_HOST`` as a user would. Skipped, with the reason, without gcsfs or the
emulator.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.parse

import pytest
from remote_servers import (
    CountingProxy,
    GcsEmulator,
    environ,
    gcs_emulator_command,
    local_answers,
    tool_answers,
    upload,
)

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import remote
from tensorboard_plugin_profile.store.cache_config import CacheConfig

gcsfs = pytest.importorskip(
    "gcsfs", reason="gcsfs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
EMULATOR = gcs_emulator_command()
pytestmark = pytest.mark.skipif(
    EMULATOR is None,
    reason="gcp-storage-emulator not found (.ci/run makes .venv-gcs with gcp-storage-emulator)",
)
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
FIXTURES = ("jax_two_hosts", "pytorch_two_ranks", "profiler_hook")


@pytest.fixture(scope="module")
def gcs():
    """(proxy, client): the emulator behind a counting proxy, named by STORAGE_EMULATOR_HOST."""
    from gcsfs.core import GCSFileSystem

    server = GcsEmulator(EMULATOR)
    proxy = CountingProxy(server.port)
    with environ(STORAGE_EMULATOR_HOST=f"http://127.0.0.1:{proxy.port}"):
        remote.forget_filesystems()
        client = GCSFileSystem(token="anon", skip_instance_cache=True, use_listings_cache=False)
        upload(client, "profiles", DATA, FIXTURES)
        yield proxy, client
    remote.forget_filesystems()
    proxy.stop()
    server.stop()


def test_an_emulator_is_answered_at_once_not_after_a_grpc_probe(gcs):
    """gcsfs's default class asked the emulator over gRPC what kind of bucket it holds and
    waited 60 s for each question to time out; the emulator speaks the JSON API only."""
    started = time.monotonic()
    folders, objects = remote.list_folder("gs://profiles/logs")
    obj = remote.stat("gs://profiles/logs/pytorch_two_ranks/run/rank0.1.pt.trace.json.gz")
    assert time.monotonic() - started < 10
    assert folders == sorted(FIXTURES) and objects == []
    assert obj is not None and obj.size > 0 and obj.version  # the generation


def test_every_tool_answers_the_same_bytes_as_from_local_disk(gcs, tmp_path):
    proxy, client = gcs
    before = sorted(client.find("profiles"))
    proxy.requests.clear()
    service = ProfileService("gs://profiles/logs", config=CacheConfig(
        disk_dir=str(tmp_path / "remote-cache"), workers=1))  # fmt: skip
    try:
        got = tool_answers(service)
    finally:
        service.close()
    expected = local_answers(DATA, FIXTURES, str(tmp_path / "local"))
    assert expected and set(got) == set(expected)
    assert [k for k in expected if got[k] != expected[k]] == []
    # Never written to the bucket: the same objects as uploaded, and only reads reached it.
    assert sorted(client.find("profiles")) == before
    assert proxy.requests and [r for r in proxy.requests if r[0] not in ("GET", "HEAD")] == []


# What GCS answers a caller without storage.objects.get (the JSON API's error format). The
# emulator takes no credentials and never refuses, so a proxy in front of it answers this
# for every download of an object's bytes (``alt=media``); listings and metadata pass.
DENIED_TEXT = "caller-7f3a does not have storage.objects.get access to the object"


def _deny_downloads(method: str, path: str):
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    if method == "GET" and query.get("alt") == ["media"]:
        error = {"message": DENIED_TEXT, "domain": "global", "reason": "forbidden"}
        return 403, {"error": {"code": 403, "message": DENIED_TEXT, "errors": [error]}}
    return None


def test_a_denied_object_download_is_a_403_naming_the_object(gcs, monkeypatch, tmp_path, caplog):
    """gcsfs raises a plain OSError("Forbidden: ...") for a 403, with no status on it: it was
    answered as a 503 "cannot be reached now; try again", which no retry would change."""
    from werkzeug.test import Client

    from tensorboard_plugin_profile.web.server import StandaloneApp

    proxy, _ = gcs
    denying = CountingProxy(proxy.port, refuse=_deny_downloads)
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{denying.port}")
    remote.forget_filesystems()
    caplog.set_level(logging.DEBUG, logger="tensorboard_plugin_profile")
    run = "jax_two_hosts/multi_jax2__xprof_client"
    app = StandaloneApp("gs://profiles/logs", config=CacheConfig(
        disk_dir=str(tmp_path), workers=1))  # fmt: skip
    try:
        http = Client(app)
        assert run in json.loads(http.get("/data/plugin/profile/runs").get_data())
        reply = http.get(f"/data/plugin/profile/data?run={run}&tag=overview_page")
    finally:
        app.service.close()
        remote.forget_filesystems()
        denying.stop()
    body = json.loads(reply.get_data())
    assert reply.status_code == 403, body
    assert body["error"]["code"] == "PERMISSION_DENIED"
    message = body["error"]["message"]
    session = "gs://profiles/logs/jax_two_hosts/plugins/profile/multi_jax2__xprof_client/"
    assert message.startswith(session) and ".xplane.pb cannot be read: access denied" in message
    assert "Check the credentials" in message
    assert any("alt=media" in path for _, path in denying.requests)  # the refusal was reached
    for text in (message, caplog.text):
        assert DENIED_TEXT not in text and "Forbidden" not in text
        assert "Authorization" not in text and "Bearer" not in text
    # Nothing was cached: no copy of the object, no decoded frames, no answer (only the
    # marker that says the folder is the cache's).
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["tbprof-cache.json"]

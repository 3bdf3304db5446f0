"""Logdirs in Google Cloud Storage, against a GCS emulator on loopback (docs/remote_logdirs.md).

``gcp-storage-emulator`` runs as its own process (from ``.venv-gcs``, which ``.ci/run`` makes;
tests/remote_servers.py says where else it is looked for); gcsfs is the client, pointed at it
by ``STORAGE_EMULATOR_HOST`` as a user would. Skipped, with the reason, without gcsfs or the
emulator.
"""

from __future__ import annotations

import os
import time

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

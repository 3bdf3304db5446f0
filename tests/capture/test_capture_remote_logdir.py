"""``tbprof capture --logdir s3://...``: captured locally, uploaded under a temporary name,
then moved into place (docs/remote_logdirs.md). Against moto's S3 server on loopback and the
in-process fake profiler server; skipped, with the reason, without s3fs or moto_server."""

from __future__ import annotations

import os

import pytest
from remote_servers import CountingProxy, MotoServer, moto_server_command

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.store import remote
from tensorboard_plugin_profile.web.cli import main

from .capture_fakes import FakeProfiler, small_xspace

s3fs = pytest.importorskip(
    "s3fs", reason="s3fs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
MOTO = moto_server_command()
pytestmark = pytest.mark.skipif(
    MOTO is None, reason="moto_server not found (.ci/run makes .venv-moto with moto[server])"
)


@pytest.fixture
def s3(monkeypatch):
    server = MotoServer(MOTO)
    proxy = CountingProxy(server.port)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing-key-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing-secret-value")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{proxy.port}")
    remote.forget_filesystems()
    client = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
    client.mkdir("captures")
    yield proxy, client
    remote.forget_filesystems()
    proxy.stop()
    server.stop()


def test_a_capture_into_s3_is_uploaded_under_a_temporary_name_then_moved(fake_servers, s3):
    proxy, client = s3
    server = fake_servers(FakeProfiler())
    proxy.requests.clear()
    argv = ["capture", f"grpc://{server.address}", "--logdir", "s3://captures/logs"]
    assert main(argv + ["--duration-ms", "500"]) == 0

    objects = client.find("captures/logs")
    (final,) = objects  # the temporary objects are gone
    stem = server.address.replace(":", "_")
    assert final.startswith("captures/logs/plugins/profile/") and final.endswith(
        f"/{stem}.xplane.pb"
    )
    assert xplane_pb2.XSpace.FromString(client.cat_file(final)) == small_xspace()
    puts = [path for method, path in proxy.requests if method == "PUT"]
    # The bytes went to a hidden .tmp- name first; the final name was a server-side copy.
    assert any("/plugins/profile/.tmp-" in path for path in puts), puts
    assert os.path.basename(final) in " ".join(puts)

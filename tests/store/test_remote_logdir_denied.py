"""A real 403 from the store: moto's S3 server with its authentication on (docs/remote_logdirs.md).

moto checks signatures and IAM policies once ``INITIAL_NO_AUTH_ACTION_COUNT`` requests have
been made: the fixture spends exactly those on making two users, ``writer`` (every S3 action)
and ``lister`` (ListBucket only), uploads a fixture as ``writer``, then the server is asked
through its real WSGI app with credentials that are wrong, or that may list but not read.
Every answer must be a 403 JSON error naming the URL, and neither the answer nor the log may
show a key, a secret or the store's own message. Skipped, with the reason, without s3fs or
``moto_server``.
"""

from __future__ import annotations

import json
import logging
import os

import pytest
from remote_servers import MotoServer, moto_server_command
from werkzeug.test import Client

from tensorboard_plugin_profile.store import remote
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.web.server import StandaloneApp

s3fs = pytest.importorskip(
    "s3fs", reason="s3fs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
MOTO = moto_server_command()
pytestmark = pytest.mark.skipif(
    MOTO is None, reason="moto_server not found (.ci/run makes .venv-moto with moto[server])"
)
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
PREFIX = "/data/plugin/profile"
RUN = "jax_two_hosts/multi_jax2__xprof_client"
POLICIES = {"writer": ["s3:*"], "lister": ["s3:ListBucket"]}


@pytest.fixture(scope="module")
def store():
    """(endpoint, {user: (key id, secret)}): moto with authentication, one fixture uploaded."""
    import botocore.session

    server = MotoServer(MOTO, env={"INITIAL_NO_AUTH_ACTION_COUNT": str(3 * len(POLICIES))})
    endpoint = f"http://127.0.0.1:{server.port}"
    iam = botocore.session.get_session().create_client(
        "iam", region_name="us-east-1", endpoint_url=endpoint,
        aws_access_key_id="setup", aws_secret_access_key="setup",
    )  # fmt: skip
    users = {}
    for user, actions in POLICIES.items():  # 3 requests each, the unauthenticated ones
        iam.create_user(UserName=user)
        statement = {"Effect": "Allow", "Action": actions, "Resource": "*"}
        document = {"Version": "2012-10-17", "Statement": [statement]}
        iam.put_user_policy(UserName=user, PolicyName="p", PolicyDocument=json.dumps(document))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        users[user] = (key["AccessKeyId"], key["SecretAccessKey"])
    writer = s3fs.S3FileSystem(
        key=users["writer"][0], secret=users["writer"][1], endpoint_url=endpoint,
        skip_instance_cache=True,
    )  # fmt: skip
    writer.mkdir("locked")
    writer.put(os.path.join(DATA, "jax_two_hosts"), "locked/logs/jax_two_hosts", recursive=True)
    yield endpoint, users
    remote.forget_filesystems()
    server.stop()


def _client(store, monkeypatch, tmp_path, key_id, secret):
    endpoint, _ = store
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    remote.forget_filesystems()
    app = StandaloneApp("s3://locked/logs", config=CacheConfig(disk_dir=str(tmp_path), workers=1))
    return app, Client(app)


def _get(client, route):
    reply = client.get(f"{PREFIX}/{route}")
    return reply.status_code, json.loads(reply.get_data())


def _assert_nothing_shown(texts, *secrets):
    for text in texts:
        for secret in secrets:
            assert secret not in text
        # The store's own words (they may hold request details) are not passed on.
        for words in ("does not exist in our records", "signature", "Access Denied"):
            assert words not in text


@pytest.mark.parametrize("wrong", ["unknown key", "wrong secret"])
def test_wrong_credentials_are_a_403_naming_the_logdir(store, monkeypatch, tmp_path, caplog, wrong):
    _, users = store
    key_id, secret = users["writer"]
    if wrong == "unknown key":
        key_id, secret = "AKIAUNKNOWNKEY000001", "unknown-secret-value-0001"
    else:
        secret = "wrong-secret-value-0002"
    app, client = _client(store, monkeypatch, tmp_path, key_id, secret)
    caplog.set_level(logging.DEBUG, logger="tensorboard_plugin_profile")
    try:
        status, body = _get(client, "runs")
    finally:
        app.service.close()
    assert status == 403, body
    assert body["error"]["code"] == "PERMISSION_DENIED"
    message = body["error"]["message"]
    assert "s3://locked/logs" in message and "access denied" in message
    assert "credentials" in message  # says what to check
    _assert_nothing_shown([message, caplog.text], key_id, secret)


def test_a_denied_get_object_is_a_403_naming_the_object(store, monkeypatch, tmp_path, caplog):
    """Listing is allowed, GetObject is not: the runs are listed, opening one is a 403."""
    _, users = store
    key_id, secret = users["lister"]
    app, client = _client(store, monkeypatch, tmp_path, key_id, secret)
    caplog.set_level(logging.DEBUG, logger="tensorboard_plugin_profile")
    try:
        status, runs = _get(client, "runs")
        assert status == 200 and runs == [RUN]
        status, body = _get(client, f"data?run={RUN}&tag=overview_page")
    finally:
        app.service.close()
    assert status == 403, body
    assert body["error"]["code"] == "PERMISSION_DENIED"
    message = body["error"]["message"]
    session = "s3://locked/logs/jax_two_hosts/plugins/profile/multi_jax2__xprof_client/"
    assert message.startswith(session) and ".xplane.pb cannot be read: access denied" in message
    _assert_nothing_shown([message, caplog.text], key_id, secret)
    assert [p for p in tmp_path.rglob("*") if p.is_file() and "remote-" in p.name] == []

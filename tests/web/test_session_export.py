"""A session as one .zip download: the route, the notebook API, bounds and the logdir fence."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile

import pytest
from conftest import FIXTURES
from werkzeug.test import Client

import tensorboard_plugin_profile as tbp
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
SESSION = "multi_jax2__xprof_client"
SOURCE = FIXTURES / "jax_two_hosts" / "plugins" / "profile" / SESSION


@pytest.fixture
def logdir(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(SOURCE, root / "plugins" / "profile" / SESSION)
    return root


def _zip_files(body: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_route_answers_the_session_s_files_as_one_zip(logdir):
    client = Client(StandaloneApp(str(logdir)))
    response = client.get(f"{PREFIX}/session_export?run={SESSION}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/zip"
    assert response.headers["Content-Disposition"] == f'attachment; filename="{SESSION}.zip"'
    files = _zip_files(response.get_data())
    expected = {f"{SESSION}/{p.name}": p.read_bytes() for p in SOURCE.glob("*.xplane.pb")}
    assert len(expected) == 2 and files == expected


def test_unknown_missing_or_escaping_runs_are_a_4xx_json_error(logdir):
    client = Client(StandaloneApp(str(logdir)))
    for query, status in (
        ("", 400),
        ("?run=nope", 404),
        ("?run=../../etc", 404),
        ("?run=%2e%2e%2fetc", 404),
        (f"?run={SESSION}/../../..", 404),
    ):
        response = client.get(f"{PREFIX}/session_export{query}")
        assert response.status_code == status, query
        assert json.loads(response.get_data())["error"]["message"]


def test_a_file_linked_from_outside_the_logdir_is_not_exported(logdir, tmp_path):
    secret = tmp_path / "secret.xplane.pb"
    secret.write_bytes(b"not yours")
    os.symlink(secret, logdir / "plugins" / "profile" / SESSION / "stolen.xplane.pb")
    response = Client(StandaloneApp(str(logdir))).get(f"{PREFIX}/session_export?run={SESSION}")
    assert response.status_code == 200
    files = _zip_files(response.get_data())
    assert len(files) == 2 and not any("stolen" in name for name in files)
    assert b"not yours" not in response.get_data()


def test_a_session_past_the_limit_is_refused_before_anything_is_read(logdir, monkeypatch):
    monkeypatch.setenv("TBPROF_EXPORT_MAX_BYTES", "1000")
    response = Client(StandaloneApp(str(logdir))).get(f"{PREFIX}/session_export?run={SESSION}")
    assert response.status_code == 413
    error = json.loads(response.get_data())["error"]
    assert error["code"] == "PROFILE_TOO_LARGE" and "TBPROF_EXPORT_MAX_BYTES" in error["message"]


def test_the_notebook_api_exports_and_the_zip_reopens_as_the_same_session(logdir, tmp_path):
    with tbp.open(str(logdir)) as profile:
        path = profile.export(str(tmp_path))
        hosts = profile.hosts
    assert path == str(tmp_path / f"{SESSION}.zip")
    elsewhere = tmp_path / "elsewhere" / "plugins" / "profile"
    with zipfile.ZipFile(path) as archive:
        archive.extractall(elsewhere)
    with tbp.open(str(tmp_path / "elsewhere")) as reopened:
        assert reopened.runs == [SESSION] and reopened.hosts == hosts
        assert not reopened.table("hlo_stats").empty
    assert not list(tmp_path.glob("*.partial"))

"""Every route through real WSGI (werkzeug's test client) on the standalone app."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile import __version__
from tensorboard_plugin_profile.web import http_api
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
JAX_RUN = "jax_cpu_train/session_1"
TWO_HOSTS = "jax_two_hosts/multi_jax2__xprof_client"


@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES)))


@pytest.fixture
def static_dir(tmp_path, monkeypatch):
    (tmp_path / "index.html").write_text("<!doctype html><title>Profile</title>")
    (tmp_path / "index.js").write_text("export async function render() {}")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path.parent / "secret.txt").write_text("secret")
    monkeypatch.setattr(http_api, "STATIC_DIR", str(tmp_path))
    return tmp_path


def get_json(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    return json.loads(response.get_data())


def test_runs_at_prefix_and_root(client):
    runs = get_json(client, f"{PREFIX}/runs")
    assert JAX_RUN in runs and runs == sorted(runs, reverse=True)
    assert get_json(client, "/runs") == runs
    assert get_json(client, f"{PREFIX}/runs/") == runs


def test_run_tools_and_hosts(client):
    tools = get_json(client, f"{PREFIX}/run_tools?run={JAX_RUN}")
    assert "trace_viewer@" in tools and "trace_viewer" not in tools  # still served by /data
    assert get_json(client, f"{PREFIX}/hosts?run={JAX_RUN}&tag=trace_viewer") == [
        {"hostname": "vm"}
    ]
    hosts = get_json(client, f"{PREFIX}/hosts?run={TWO_HOSTS}&tag=trace_viewer")
    assert [h["hostname"] for h in hosts] == ["127.0.0.1_19111", "127.0.0.1_19112"]


def test_data_streams_trace_json_gzipped_when_asked(client):
    url = f"{PREFIX}/data?run={JAX_RUN}&tag=trace_viewer&host=vm&unknown_param=1"
    plain = client.get(url)
    assert plain.status_code == 200
    trace = json.loads(plain.get_data())
    assert any(e.get("name") == "process_name" for e in trace["traceEvents"])
    zipped = client.get(url, headers={"Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(zipped.get_data())) == trace


@pytest.mark.parametrize(
    "query, status, code",
    [
        ("tag=trace_viewer", 400, "INVALID_ARGUMENT"),
        (f"run={JAX_RUN}", 400, "INVALID_ARGUMENT"),
        (f"run={JAX_RUN}&tag=no_such_tool", 404, "NOT_FOUND"),
        (f"run={JAX_RUN}&tag=trace_viewer&host=nohost", 404, "NOT_FOUND"),
        (f"run={JAX_RUN}&tag=trace_viewer&host=../vm", 404, "NOT_FOUND"),
        ("run=../../etc&tag=trace_viewer", 404, "NOT_FOUND"),
        ("run=%2e%2e%2f%2e%2e%2fetc&tag=trace_viewer", 404, "NOT_FOUND"),
        ("run=/etc/passwd&tag=trace_viewer", 404, "NOT_FOUND"),
        ("run=jax_cpu_train\\..\\..&tag=trace_viewer", 404, "NOT_FOUND"),
    ],
)
def test_bad_requests_get_a_json_error(client, query, status, code):
    body = get_json(client, f"{PREFIX}/data?{query}", status)
    assert body["error"]["code"] == code
    assert body["error"]["message"]


def test_corrupt_file_is_a_clear_error_not_a_crash(tmp_path):
    session = tmp_path / "plugins" / "profile" / "s"
    session.mkdir(parents=True)
    (session / "bad.xplane.pb").write_bytes(b"\x0a\xff\xff\xff")
    client = Client(StandaloneApp(str(tmp_path)))
    body = get_json(client, f"{PREFIX}/run_tools?run=s", 422)
    assert body["error"]["code"] == "CORRUPT_PROFILE"
    assert "bad.xplane.pb" in body["error"]["message"]
    assert get_json(client, f"{PREFIX}/runs") == ["s"]  # the server still answers


def test_empty_logdir_has_no_runs_and_a_diagnosis(tmp_path):
    client = Client(StandaloneApp(str(tmp_path)))
    assert get_json(client, f"{PREFIX}/runs") == []
    diagnosis = get_json(client, f"{PREFIX}/diagnose")
    assert diagnosis["sessions"] == 0 and diagnosis["exists"] is True


def test_config_and_version(client):
    config = get_json(client, f"{PREFIX}/config")
    assert set(config) == {
        "enableTabNameLabel",
        "hideCaptureProfileButton",
        "srcPathPrefix",
        "warnings",
    }
    assert config["warnings"] == []  # no other 'profile' plugin is installed here
    response = client.get(f"{PREFIX}/version")
    assert response.get_data(as_text=True) == __version__


def test_static_files_and_page_fallback(client, static_dir):
    page = client.get("/")
    assert page.status_code == 200 and b"<title>Profile</title>" in page.get_data()
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert client.get(f"{PREFIX}/overview_page").get_data() == page.get_data()
    script = client.get(f"{PREFIX}/index.js")
    assert script.headers["Content-Type"].startswith("application/javascript")
    assert client.get(f"{PREFIX}/assets/app.js").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/assets/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/assets/%2e%2e/%2e%2e/secret.txt",
        "/..%5csecret.txt",
        "/assets\\..\\..\\secret.txt",
        "/.hidden.js",
        "/nothing.js",
    ],
)
def test_static_paths_never_leave_the_bundle(client, static_dir, path):
    for prefix in ("", PREFIX):
        response = client.get(prefix + path)
        assert response.status_code == 404
        assert b"secret" not in response.get_data()


def test_unexpected_errors_are_opaque(client, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("/private/path leaked")

    monkeypatch.setattr(client.application.service, "runs", boom)
    body = get_json(client, f"{PREFIX}/runs", 500)
    assert "leaked" not in json.dumps(body)


def test_progress_lists_a_conversion_while_it_runs(monkeypatch):
    import threading

    from tensorboard_plugin_profile import tools

    release, entered = threading.Event(), threading.Event()
    original = tools.Tool.convert

    def slow_convert(self, hosts, params):
        entered.set()
        release.wait(10)
        return original(self, hosts, params)

    monkeypatch.setattr(tools.Tool, "convert", slow_convert)
    client = Client(StandaloneApp(str(FIXTURES)))
    url = f"{PREFIX}/data?run={JAX_RUN}&tag=trace_viewer&host=vm"
    worker = threading.Thread(target=client.get, args=(url,))
    worker.start()
    assert entered.wait(30)
    tasks = get_json(client, f"{PREFIX}/progress")["tasks"]
    assert [(t["run"], t["tool"], t["stage"]) for t in tasks] == [
        (JAX_RUN, "trace_viewer", "converting")
    ]
    release.set()
    worker.join(30)
    assert get_json(client, f"{PREFIX}/progress") == {"tasks": []}


def test_a_conflicting_upstream_install_is_named(monkeypatch):
    from tensorboard_plugin_profile.web import conflicts

    monkeypatch.setattr(conflicts, "_CACHED", [])
    monkeypatch.setattr(conflicts, "conflicting_distributions", lambda: ["xprof"])
    assert "pip uninstall xprof" in conflicts.conflict_warnings()[0]
    assert conflicts.warn_if_conflicting() == ["xprof"]


def test_gzip_follows_accept_encoding_q_values(client):
    url = f"{PREFIX}/data?run={JAX_RUN}&tag=overview_page&host=vm"
    for header, zipped in [
        ("gzip", True),
        ("gzip;q=0", False),
        ("deflate, gzip;q=0.0", False),
        ("*", True),
        ("identity", False),
        ("br;q=1, gzip;q=0.5", True),
    ]:
        response = client.get(url, headers={"Accept-Encoding": header})
        assert (response.headers.get("Content-Encoding") == "gzip") is zipped, header


def test_head_is_answered_other_methods_are_refused(client):
    head = client.head(f"{PREFIX}/runs")
    assert head.status_code == 200 and head.get_data() == b""
    assert head.headers["Content-Type"].startswith("application/json")
    for method in ("POST", "PUT", "DELETE"):
        response = client.open(f"{PREFIX}/runs", method=method)
        assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"
    # Starting a capture changes the logdir: POST only (tests/web/test_guard.py).
    for method in ("GET", "HEAD", "PUT"):
        response = client.open(f"{PREFIX}/capture_profile?service_addr=x:1", method=method)
        assert response.status_code == 405 and response.headers["Allow"] == "POST"


def test_data_responses_are_revalidated(client):
    for url in (f"{PREFIX}/runs", f"{PREFIX}/data?run={JAX_RUN}&tag=overview_page&host=vm"):
        assert client.get(url).headers["Cache-Control"] == "no-cache"

"""Logdirs in S3, against moto's real S3 server on loopback (docs/remote_logdirs.md).

Skipped, with the reason, when s3fs (the ``[cloud]`` extra) or ``moto_server`` is missing;
``.ci/run`` installs both, so CI runs them.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import threading

import pytest
from remote_servers import (
    CountingProxy,
    MotoServer,
    environ,
    moto_server_command,
    tool_answers,
    upload,
)

from tensorboard_plugin_profile.common.errors import NotFound, Unavailable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import remote, remote_fetch
from tensorboard_plugin_profile.store.cache_config import CacheConfig

s3fs = pytest.importorskip(
    "s3fs", reason="s3fs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
MOTO = moto_server_command()
pytestmark = pytest.mark.skipif(
    MOTO is None, reason="moto_server not found (.ci/run makes .venv-moto with moto[server])"
)
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
FIXTURES = ("jax_two_hosts", "pytorch_two_ranks", "profiler_hook")


@pytest.fixture(scope="module")
def s3():
    """(proxy, client): moto behind a counting proxy; the environment points s3fs at it."""
    server = MotoServer(MOTO)
    proxy = CountingProxy(server.port)
    endpoint = f"http://127.0.0.1:{proxy.port}"
    with environ(
        AWS_ACCESS_KEY_ID="testing-key-id",
        AWS_SECRET_ACCESS_KEY="testing-secret-value",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=endpoint,
    ):
        remote.forget_filesystems()
        client = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
        upload(client, "profiles", DATA, FIXTURES)
        yield proxy, client
    remote.forget_filesystems()
    proxy.stop()
    server.stop()


def _service(url, cache_dir):
    return ProfileService(url, config=CacheConfig(disk_dir=str(cache_dir), workers=1))


def test_every_tool_answers_the_same_bytes_as_from_local_disk(s3, tmp_path):
    proxy, client = s3
    before = sorted(client.find("profiles"))
    proxy.requests.clear()
    remote_service = _service("s3://profiles/logs", tmp_path / "remote-cache")
    local = tmp_path / "local"
    for name in FIXTURES:
        shutil.copytree(os.path.join(DATA, name), local / name)
    local_service = ProfileService(str(local), config=CacheConfig(workers=1))
    try:
        got, expected = tool_answers(remote_service), tool_answers(local_service)
    finally:
        remote_service.close()
        local_service.close()
    assert expected and set(got) == set(expected)
    assert [k for k in expected if got[k] != expected[k]] == []
    # Never written to the bucket: the same objects as uploaded.
    assert sorted(client.find("profiles")) == before
    writes = [r for r in proxy.requests if r[0] in ("PUT", "POST", "DELETE")]
    assert writes == [], "the bucket was written to"


def test_a_restarted_server_answers_from_the_cache_without_fetching_again(s3, tmp_path):
    proxy, _ = s3
    run = "jax_two_hosts/multi_jax2__xprof_client"
    first = _service("s3://profiles/logs", tmp_path)
    try:
        expected = b"".join(first.tool_data(run, "overview_page").chunks())
    finally:
        first.close()
    proxy.requests.clear()
    second = _service("s3://profiles/logs", tmp_path)
    try:
        assert b"".join(second.tool_data(run, "overview_page").chunks()) == expected
    finally:
        second.close()
    ranged_gets = [r for r in proxy.requests if r[0] == "GET" and "list-type" not in r[1]]
    assert ranged_gets == [], "the profile was downloaded again"


def test_listing_1000_sessions_takes_one_request_per_folder_level(s3, tmp_path):
    proxy, client = s3
    client.pipe({f"profiles/many/plugins/profile/s{i:04d}/h.xplane.pb": b"" for i in range(1000)})
    proxy.requests.clear()
    service = _service("s3://profiles/many", tmp_path)
    try:
        runs = service.runs()
    finally:
        service.close()
    assert len(runs) == 1000
    listings = [r for r in proxy.requests if r[0] == "GET"]
    # many/, many/plugins/, many/plugins/profile/: the sessions' folders are not opened.
    assert len(listings) == 3, listings
    assert len(proxy.requests) == 3


def _fetch_now(how: str, obj, local: str) -> None:
    if how == "fetch":
        remote_fetch.fetch(obj, local)
    else:
        remote_fetch.fetch_arriving(obj, local).finish()  # raises the download's error


@pytest.mark.parametrize("fetch", ["fetch", "fetch_arriving"])
@pytest.mark.parametrize("shorter", [True, False])
def test_an_object_changed_during_the_download_is_never_decoded(s3, tmp_path, fetch, shorter):
    """Shorter now, or the same size with other bytes (another ETag): refused either way."""
    _, client = s3
    client.pipe("profiles/changing/vm.xplane.pb", b"x" * 1000)
    listed = remote.stat("s3://profiles/changing/vm.xplane.pb")
    client.pipe("profiles/changing/vm.xplane.pb", b"x" * 10 if shorter else b"y" * 1000)
    local = str(tmp_path / remote.cache_name(listed))
    with pytest.raises(Unavailable, match="s3://profiles/changing/vm.xplane.pb changed"):
        _fetch_now(fetch, listed, local)  # no bytes handed out either
    assert os.listdir(tmp_path) == []  # no final file, no temporary one


def test_a_downloaded_profile_is_decoded_from_memory_and_its_copy_kept(s3, tmp_path, monkeypatch):
    """The decoder takes the downloaded bytes themselves (the parts land in memory and are
    written to the copy from there), and the copy is complete before they are handed over:
    a restart reads it and downloads nothing."""
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    proxy, client = s3
    data = os.urandom(3000)
    client.pipe("profiles/mem/plugins/profile/s/vm.xplane.pb", data)
    monkeypatch.setattr(remote_fetch, "MIN_PART_BYTES", 700)  # 4 parts of 750 bytes
    logdir = RemoteLogDir("s3://profiles/mem", str(tmp_path), start_listing=False)
    host_file = logdir.session("s").host_files[0]
    proxy.requests.clear()
    fresh = host_file.read_bytes()
    fresh.arrival.finish()
    assert len([r for r in proxy.requests if r[0] == "GET"]) == 4
    assert fresh.discardable and bytes(fresh.take()) == data
    with open(host_file.local, "rb") as f:
        assert f.read() == data
    assert os.listdir(tmp_path) == [os.path.basename(host_file.local)]  # no temporary file
    proxy.requests.clear()
    again = host_file.read_bytes()  # the copy, read; nothing fetched
    assert proxy.requests == [] and bytes(again.take()) == data


def _small_parts(monkeypatch) -> None:
    """A 1 MB profile in 4 parts of ~250 KB, 2 at a time, each body in 16 KiB pieces."""
    monkeypatch.setattr(remote_fetch, "MIN_PART_BYTES", 64 << 10)
    monkeypatch.setattr(remote_fetch, "STREAM_PIECE_BYTES", 16 << 10)


def test_a_profile_decoded_as_it_arrives_answers_as_from_local_disk(
    s3, tmp_path, monkeypatch, caplog
):
    """Several parts, each streamed in pieces, walked as they come: every tool's answer is
    byte-identical to the local one, the copy is kept, and progress is logged per part.
    (One host: a session of several is decoded in worker processes, beyond monkeypatch.)"""
    import logging

    proxy, client = s3
    _small_parts(monkeypatch)
    name = "jax_cpu_train"
    client.put(os.path.join(DATA, name), f"profiles/arriving/{name}", recursive=True)
    local = tmp_path / "local"
    shutil.copytree(os.path.join(DATA, name), local / name)
    local_service = ProfileService(str(local), config=CacheConfig(workers=1))
    remote_service = _service("s3://profiles/arriving", tmp_path / "c")
    proxy.requests.clear()
    try:
        with caplog.at_level(logging.INFO, logger=remote_fetch.__name__):
            got = tool_answers(remote_service)
        expected = tool_answers(local_service)
    finally:
        remote_service.close()
        local_service.close()
    assert len(got) == len(expected) and list(got.values()) == list(expected.values())
    object_gets = [r for r in proxy.requests if r[0] == "GET" and "list-type" not in r[1]]
    assert len(object_gets) == 4  # 4 ranged parts, once
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fetching")]
    assert len(progress) == 4 and "vm.xplane.pb" in progress[0], progress
    assert len(glob.glob(str(tmp_path / "c" / "**" / "remote-*.bin"), recursive=True)) == 1


def _refusing_the_third_get(proxy, part_of_path: str) -> tuple:
    """(a proxy in front of ``proxy``'s store that answers the third GET of an object whose
    path holds ``part_of_path`` with a 404, the list of those GETs): a part failing midway.
    Appending to the list after the third makes the store answer again (a retry)."""
    gets: list = []

    def refuse(method: str, path: str):
        if method == "GET" and "list-type" not in path and part_of_path in path:
            gets.append(path)
            if len(gets) == 3:
                return 404, {"error": "NoSuchKey"}
        return None

    return CountingProxy(proxy.target_port, refuse=refuse), gets


def test_a_part_failing_mid_walk_is_a_clear_error_and_nothing_is_cached(s3, tmp_path, monkeypatch):
    """The third ranged GET is refused (the object vanished): the decode, already walking
    the first parts, ends with the 404 naming the object; no copy, no temporary file and no
    decoded entry are left, and a retry after the store is back downloads and answers."""
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir
    from tensorboard_plugin_profile.xspace import decode_xspace

    proxy, client = s3
    _small_parts(monkeypatch)
    data_path = os.path.join(
        DATA, "jax_two_hosts", "plugins", "profile", "multi_jax2__xprof_client"
    )
    host = sorted(os.listdir(data_path))[0]
    client.put(os.path.join(data_path, host), f"profiles/midwalk/plugins/profile/s/{host}")
    failing, object_gets = _refusing_the_third_get(proxy, host)
    cache = tmp_path / "cache"
    try:
        with environ(AWS_ENDPOINT_URL=f"http://127.0.0.1:{failing.port}"):
            remote.forget_filesystems()
            logdir = RemoteLogDir("s3://profiles/midwalk", str(cache), start_listing=False)
            host_file = logdir.session("s").host_files[0]
            data = host_file.read_bytes()
            arrival = data.arrival
            with pytest.raises(NotFound, match=f"s3://profiles/midwalk/.*/{host} does not exist"):
                decode_xspace(data, host)
            assert 0 < arrival.progress[0] < host_file.size  # the walk had the first parts
            assert not cache.exists() or os.listdir(cache) == []  # no copy, no .tmp-

            service = _service("s3://profiles/midwalk", tmp_path / "service-cache")
            try:
                object_gets.clear()
                with pytest.raises(NotFound, match=f"s3://profiles/midwalk/.*/{host}"):
                    service.tool_data("s", "overview_page")
                object_gets.append("back")  # the store answers again: the retry works
                assert b"".join(service.tool_data("s", "overview_page").chunks())
            finally:
                service.close()
    finally:
        remote.forget_filesystems()
        failing.stop()


@pytest.mark.parametrize(
    "min_part, max_part, gets",
    [
        (2000, 3000, 3),  # size / 4 is below the smallest part: 2000-byte parts
        (100, 10_000, 4),  # in between: size / 4 (1252 bytes each)
        (100, 500, 11),  # above the largest part: 500-byte parts
    ],
)
def test_large_objects_come_in_parallel_ranged_parts_sized_by_the_object(
    s3, tmp_path, monkeypatch, min_part, max_part, gets
):
    proxy, client = s3
    data = os.urandom(5 * 1000 + 7)
    client.pipe("profiles/big/blob.xplane.pb", data)
    monkeypatch.setattr(remote_fetch, "MIN_PART_BYTES", min_part)
    monkeypatch.setattr(remote_fetch, "MAX_PART_BYTES", max_part)
    obj = remote.stat("s3://profiles/big/blob.xplane.pb")
    proxy.requests.clear()
    local = remote_fetch.fetch(obj, str(tmp_path / remote.cache_name(obj)))
    with open(local, "rb") as f:
        assert f.read() == data
    ranges = sorted(r[1] for r in proxy.requests if r[0] == "GET")
    assert len(ranges) == gets, ranges


def test_the_part_size_follows_the_object_size():
    """Each ranged GET costs a round trip (on moto, a read of the whole object): a 200 MB
    profile comes in 4 parts, not 13 of 16 MiB; parts stay within 8..64 MiB."""
    assert remote_fetch.part_bytes(202_000_000) == 50_500_000
    assert remote_fetch.part_bytes(20_000_000) == remote_fetch.MIN_PART_BYTES == 8 << 20
    assert remote_fetch.part_bytes(4_000_000_000) == remote_fetch.MAX_PART_BYTES == 64 << 20


def test_a_vanished_object_is_a_404_naming_the_url(s3, tmp_path):
    _, client = s3
    client.pipe("profiles/gone/vm.xplane.pb", b"x" * 100)
    obj = remote.stat("s3://profiles/gone/vm.xplane.pb")
    client.rm("profiles/gone/vm.xplane.pb")
    with pytest.raises(NotFound, match="s3://profiles/gone/vm.xplane.pb does not exist"):
        remote_fetch.fetch(obj, str(tmp_path / remote.cache_name(obj)))


def test_an_unreachable_store_is_a_503_naming_the_url_and_no_secret(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    remote.forget_filesystems()
    try:
        with pytest.raises(Unavailable) as caught:
            remote.list_folder("s3://profiles/logs")
    finally:
        remote.forget_filesystems()
    assert "s3://profiles/logs" in caught.value.message
    assert "testing-secret-value" not in caught.value.message


def test_a_missing_client_library_names_the_extra():
    code = (
        "import sys; sys.modules['s3fs'] = None\n"
        "from tensorboard_plugin_profile.store import remote\n"
        "try:\n    remote.list_folder('s3://b/logs')\n"
        "except Exception as e:\n    print(type(e).__name__, e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.startswith("Unavailable")
    assert "pip install 'tensorboard-plugin-profile[cloud]'" in out
    assert "s3fs" in out


def test_the_cli_and_notebooks_take_urls_of_single_files(s3, tmp_path):
    url = "s3://profiles/logs/pytorch_two_ranks/run/rank0.1.pt.trace.json.gz"
    local = os.path.join(DATA, "pytorch_two_ranks", "run", "rank0.1.pt.trace.json.gz")
    outputs = []
    for path in (url, local):
        out = tmp_path / f"out{len(outputs)}.json"
        command = ["convert", path, "--tool", "op_types", "--no_cache", "-o", str(out)]
        subprocess.run(
            [sys.executable, "-m", "tensorboard_plugin_profile", *command],
            check=True,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].startswith(b"{")
    import tensorboard_plugin_profile

    config = CacheConfig(disk_dir=str(tmp_path / "cache"), workers=1)
    profile = tensorboard_plugin_profile.open("s3://profiles/logs/jax_two_hosts", config=config)
    assert profile.run == "multi_jax2__xprof_client"
    profile.service.close()


def test_is_active_never_waits_on_the_network(tmp_path, monkeypatch):
    """A store that accepts connections and never answers: the probe returns at once."""
    import socket
    import time

    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
    remote.forget_filesystems()
    try:
        logdir = RemoteLogDir("s3://profiles/logs", str(tmp_path))
        started = time.monotonic()
        assert logdir.probe_has_runs() is None
        assert logdir.has_runs_cached() is None
        assert time.monotonic() - started < 0.2
    finally:
        remote.forget_filesystems()
        silent.close()


def test_the_tensorboard_plugin_serves_an_s3_logdir(s3, tmp_path):
    """TensorBoard's plugin object over real WSGI, given ``--logdir s3://...``."""
    import argparse
    import json
    import time

    from tensorboard.plugins import base_plugin
    from werkzeug.test import Client
    from werkzeug.wrappers import Response

    from tensorboard_plugin_profile.web.plugin import ProfilePlugin

    flags = argparse.Namespace(cache_dir=str(tmp_path), workers="1")
    context = base_plugin.TBContext(logdir="s3://profiles/logs", flags=flags)
    plugin = ProfilePlugin(context)
    try:
        deadline = time.monotonic() + 30
        while not plugin.is_active() and time.monotonic() < deadline:
            time.sleep(0.05)  # is_active answers at once; the listing runs behind it
        assert plugin.is_active()
        apps = plugin.get_plugin_apps()

        def get(route, query=""):
            reply = Client(apps[route], Response).get(f"{route}?{query}")
            return reply.status_code, json.loads(reply.get_data())

        status, runs = get("/runs")
        assert status == 200 and "jax_two_hosts/multi_jax2__xprof_client" in runs
        status, _ = get("/data", "run=jax_two_hosts/multi_jax2__xprof_client&tag=overview_page")
        assert status == 200
    finally:
        plugin.service.close()


def test_a_remote_host_file_lists_and_opens_the_event_files_beside_it(s3, tmp_path):
    # The same two methods as a file on disk (test_logdir), so the graph reader has one path.
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    local = os.path.join(DATA, "profiler_hook", "train")
    logdir = RemoteLogDir("s3://profiles/logs", str(tmp_path / "cache"), start_listing=False)
    runs = [r for r in logdir.runs() if r.startswith("profiler_hook/")]
    host_file = logdir.session(runs[0]).host_files[0]
    names = host_file.event_files_beside()
    assert names == sorted(n for n in os.listdir(local) if n.startswith("events.out.tfevents."))
    with host_file.open_beside(names[0]) as f:
        assert f.read() == open(os.path.join(local, names[0]), "rb").read()


def test_tbprof_diff_takes_urls_and_answers_as_on_local_disk(s3):
    """``tbprof diff`` of s3:// against local, and of s3:// against s3://: the same output."""
    _, client = s3
    sides = ("pytorch_diff_control", "pytorch_diff_test")
    for name in sides:
        client.put(os.path.join(DATA, name), f"profiles/diff/{name}", recursive=True)
    local = [os.path.join(DATA, name) for name in sides]
    url = [f"s3://profiles/diff/{name}" for name in sides]

    def diff(base, exp, output_format):
        command = ["diff", base, exp, "--tool", "pytorch_operators", "--format", output_format]
        return subprocess.run(
            [sys.executable, "-m", "tensorboard_plugin_profile", *command, "--no_cache"],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
        )

    for output_format in ("json", "text"):
        expected = diff(local[0], local[1], output_format)
        assert expected.returncode == 0, expected.stderr
        for base, exp in ((url[0], local[1]), (url[0], url[1])):
            got = diff(base, exp, output_format)
            assert got.returncode == 0, got.stderr
            assert got.stdout == expected.stdout, (base, exp, output_format)
    assert expected.stdout.startswith("pytorch_operators: run/1 (base) -> run/1 (exp)\n")


def test_diagnose_explains_every_skipped_object_and_folder_from_the_listing(s3, tmp_path):
    """``/diagnose`` of an S3 logdir: what was found, and why each object or folder that is
    no profile was skipped (as for a local logdir), from the run listing: no request more."""
    import json

    from werkzeug.test import Client

    from tensorboard_plugin_profile.web.server import StandaloneApp

    proxy, client = s3
    session = "profiles/diag/run1/plugins/profile"
    client.pipe(
        {
            f"{session}/2024_01_01/vm.xplane.pb": b"",
            f"{session}/.tmp-2024_01_02-ab12/vm.xplane.pb": b"",
            f"{session}/stray.xplane.pb": b"",
            "profiles/diag/run1/plugins/projector/config.pbtxt": b"",
            "profiles/diag/loose/vm.xplane.pb": b"",
            "profiles/diag/old/host.trace.json.gz": b"",
            "profiles/diag/.hidden/vm.xplane.pb": b"",
            "profiles/diag/notes.txt": b"",
        }
    )
    app = StandaloneApp("s3://profiles/diag", config=CacheConfig(disk_dir=str(tmp_path)))
    try:
        http = Client(app)
        assert json.loads(http.get("/data/plugin/profile/runs").get_data()) == ["run1/2024_01_01"]
        proxy.requests.clear()
        reply = http.get("/data/plugin/profile/diagnose")
    finally:
        app.service.close()
    assert proxy.requests == [], "the diagnosis listed the store again"
    assert reply.status_code == 200
    diagnosis = json.loads(reply.get_data())
    assert diagnosis["exists"] is True and diagnosis["sessions"] == 1
    assert diagnosis["logdir"] == "diag"
    assert diagnosis["other_files"] == ["notes.txt"]
    not_in_session = "not inside <run>/plugins/profile/<session>/, so it is not part of a session"
    assert sorted(diagnosis["skipped"]) == sorted(
        [
            ".hidden/: a hidden folder (its name starts with a dot)",
            f"loose/vm.xplane.pb: {not_in_session}",
            "old/host.trace.json.gz: this format is not read; an .xplane.pb is needed",
            "run1/plugins/projector/: another plugin's folder, not a profile",
            "run1/plugins/profile/.tmp-2024_01_02-ab12/: a hidden folder (an upload in progress?)",
            "run1/plugins/profile/stray.xplane.pb: not inside a session folder, so not part of "
            "a session",
        ]
    )


def test_diagnose_of_an_empty_prefix_says_it_does_not_exist(s3, tmp_path):
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    diagnosis = RemoteLogDir("s3://profiles/nothing-here", str(tmp_path), start_listing=False)
    assert diagnosis.diagnose().exists is False


def test_a_trace_is_read_from_its_copy_while_the_rest_downloads(s3, tmp_path, monkeypatch):
    """A Chrome trace's reader follows the copy as the parts land in it: it reads the first
    two parts while the others are held back by the store, and sees the end of the file
    only once the copy is whole under its final name."""
    proxy, client = s3
    monkeypatch.setattr(remote_fetch, "MIN_PART_BYTES", 1000)  # 4 parts of 1000 bytes
    data = os.urandom(4000)
    client.pipe("profiles/follow/w.1.pt.trace.json", data)
    listed = remote.stat("s3://profiles/follow/w.1.pt.trace.json")
    gate = threading.Event()
    gets: list = []

    def hold_after_two(method: str, path: str):
        if method == "GET" and "follow" in path and "list-type" not in path:
            gets.append(path)
            if len(gets) > 2:
                gate.wait(30)  # parts 3 and 4 wait for the test
        return None

    held = CountingProxy(proxy.target_port, refuse=hold_after_two)
    local = str(tmp_path / remote.cache_name(listed))
    try:
        with environ(AWS_ENDPOINT_URL=f"http://127.0.0.1:{held.port}"):
            remote.forget_filesystems()
            f = remote_fetch.open_arriving(listed, local)
            assert f is not None
            try:
                assert f.read(2000) == data[:2000]  # while parts 3 and 4 are held
                assert not os.path.exists(local)  # no final name before the copy is whole
                gate.set()
                assert f.read() == data[2000:] and f.read() == b""
                assert f.seek(0) == 0 and f.read(10) == data[:10]  # a reader may rewind
            finally:
                gate.set()
                f.close()
            with open(local, "rb") as copy:
                assert copy.read() == data
            assert remote_fetch.open_arriving(listed, local) is None  # the copy is kept
    finally:
        remote.forget_filesystems()
        held.stop()


def _pytorch_host_file(client, prefix: str, cache, name: str = "rank0.1.pt.trace.json.gz"):
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    source = os.path.join(DATA, "pytorch_two_ranks", "run", name)
    client.put(source, f"profiles/{prefix}/run/{name}")
    logdir = RemoteLogDir(f"s3://profiles/{prefix}", str(cache), start_listing=False)
    (run,) = logdir.runs()
    return next(h for h in logdir.session(run).host_files if h.name == name)


def test_a_trace_whose_download_fails_midway_is_the_download_s_error(s3, tmp_path, monkeypatch):
    """The third ranged GET is refused while the reader parses the first parts: the read
    ends with the 404 naming the object (not a parse error of a cut-off trace), and no
    copy and no temporary file are left."""
    from tensorboard_plugin_profile.store.profile_reader import read_host_profile

    proxy, client = s3
    monkeypatch.setattr(remote_fetch, "MIN_PART_BYTES", 16 << 10)  # 8 parts of ~16 KB
    failing, gets = _refusing_the_third_get(proxy, "midtrace/run/")
    cache = tmp_path / "cache"
    try:
        with environ(AWS_ENDPOINT_URL=f"http://127.0.0.1:{failing.port}"):
            remote.forget_filesystems()
            host_file = _pytorch_host_file(client, "midtrace", cache)
            with pytest.raises(NotFound, match=r"s3://profiles/midtrace/run/rank0\.1\.pt"):
                read_host_profile(host_file)
            assert len(gets) >= 3
            assert not cache.exists() or os.listdir(cache) == []
            gets.append("back")  # the store answers again: a retry reads it whole
            assert len(read_host_profile(host_file).planes)
    finally:
        remote.forget_filesystems()
        failing.stop()


def test_a_remote_trace_s_errors_name_the_object_not_its_local_copy(s3, tmp_path):
    from tensorboard_plugin_profile.common.errors import CorruptProfile
    from tensorboard_plugin_profile.store.profile_reader import read_host_profile
    from tensorboard_plugin_profile.store.remote_logdir import RemoteLogDir

    _, client = s3
    client.pipe("profiles/empty/run/w.1.pt.trace.json", b'{"traceEvents": []}')
    logdir = RemoteLogDir("s3://profiles/empty", str(tmp_path), start_listing=False)
    (run,) = logdir.runs()
    (host_file,) = logdir.session(run).host_files
    with pytest.raises(CorruptProfile, match=r"^Profile file w\.1\.pt\.trace\.json holds no"):
        read_host_profile(host_file)

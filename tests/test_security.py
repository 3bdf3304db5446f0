"""The promises of docs/security.md, each tested through the real WSGI app where it can be."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURES
from werkzeug.test import Client
from xspace_builder import HostPlane, SpaceBuilder

from tensorboard_plugin_profile.analysis.trace import safe_regex
from tensorboard_plugin_profile.common.errors import NotFound
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.logdir import LogDir, read_host_file
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
KERAS_RUN = "tf_keras2_fit/session_1"


def _xspace_bytes(plane_name: str) -> bytes:
    space = SpaceBuilder("h")
    plane = space.plane(1, plane_name)
    plane.event(plane.line(1, "main", timestamp_ns=1_000), "step", 0, 5)
    return space.serialize()


# --- search patterns -------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixtures_client():
    return Client(StandaloneApp(str(FIXTURES)))


def test_a_catastrophic_search_regex_is_refused_at_once(fixtures_client):
    # Before the bound this request took about a minute and froze the server.
    started = time.perf_counter()
    response = fixtures_client.get(
        f"{PREFIX}/data",
        query_string={"run": KERAS_RUN, "tag": "trace_viewer@", "search_regex": r"(\w+\s?)+$"},
    )
    assert time.perf_counter() - started < 10  # includes the first decode of the fixture
    assert response.status_code == 400
    assert "exponential time" in json.loads(response.get_data())["error"]["message"]


def test_a_slow_search_regex_stops_at_its_deadline_and_others_are_served(
    fixtures_client, monkeypatch
):
    monkeypatch.setattr(safe_regex, "DEADLINE_S", 1.5)
    fixtures_client.get(f"{PREFIX}/run_tools?run={KERAS_RUN}")  # decode outside the timing
    slow: dict = {}

    def search():
        started = time.perf_counter()
        response = fixtures_client.get(
            f"{PREFIX}/data",
            query_string={"run": KERAS_RUN, "tag": "trace_viewer@", "search_regex": "(.|.)+!!"},
        )
        slow["status"], slow["elapsed"] = response.status_code, time.perf_counter() - started
        slow["body"] = json.loads(response.get_data())

    thread = threading.Thread(target=search)
    thread.start()
    time.sleep(0.3)
    other_started = time.perf_counter()
    assert fixtures_client.get(f"{PREFIX}/runs").status_code == 200
    other_elapsed = time.perf_counter() - other_started
    still_searching = thread.is_alive()
    thread.join(30)
    assert still_searching and other_elapsed < 0.5
    assert slow["status"] == 400 and slow["elapsed"] < 6
    assert "longer than 1.5 s" in slow["body"]["error"]["message"]


# --- reading inside the logdir ------------------------------------------------------------
@pytest.fixture
def swap_setup(tmp_path):
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    session = logs / "plugins" / "profile" / "s"
    session.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.xplane.pb").write_bytes(_xspace_bytes("/host:SECRET_OUTSIDE"))
    (session / "vm.xplane.pb").write_bytes(_xspace_bytes("/host:CPU"))
    return logs, session, outside / "secret.xplane.pb"


def _swap_to_link(session, target) -> None:
    link = session / ".link"
    os.symlink(target, link)
    os.replace(link, session / "vm.xplane.pb")


def test_a_file_swapped_for_a_link_after_listing_is_not_read(swap_setup):
    logs, session, secret = swap_setup
    logdir = LogDir(str(logs))
    listed = logdir.session("s").host_file("vm")
    _swap_to_link(session, secret)
    with pytest.raises(NotFound, match="changed while it was opened"):
        read_host_file(listed)


def test_a_folder_swapped_for_a_link_after_listing_is_not_read(swap_setup):
    logs, session, secret = swap_setup
    logdir = LogDir(str(logs))
    listed = logdir.session("s").host_file("vm")
    os.rename(secret, secret.parent / "vm.xplane.pb")
    os.rename(session, logs / "moved")
    os.symlink(secret.parent, session)
    with pytest.raises(NotFound):
        read_host_file(listed)


def test_racing_symlink_swaps_never_serve_outside_content_nor_500(swap_setup):
    logs, session, secret = swap_setup
    inside = (session / "vm.xplane.pb").read_bytes()
    app = StandaloneApp(str(logs), service=ProfileService(str(logs), cache_bytes=1))
    client = Client(app)
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            _swap_to_link(session, secret)
            restore = session / ".restore"
            restore.write_bytes(inside)
            os.replace(restore, session / "vm.xplane.pb")
            # A moment as a file each turn: on a loaded machine the swapper could otherwise
            # hold the link through every request (all 404, the last assertion's failure).
            stop.wait(0.002)

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    statuses, leaked = [], 0
    try:
        for _ in range(300):
            response = client.get(f"{PREFIX}/data?run=s&tag=trace_viewer&host=vm")
            statuses.append(response.status_code)
            leaked += b"SECRET_OUTSIDE" in response.get_data()
    finally:
        stop.set()
        thread.join()
    assert leaked == 0
    assert set(statuses) <= {200, 404}, statuses
    assert statuses.count(200) > 0, statuses  # the race did not simply make every request fail


def _without_root_powers() -> list:
    """A command prefix under which even root gets EACCES on unreadable files."""
    if not hasattr(os, "geteuid"):
        pytest.skip("POSIX permissions only")
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot drop the power to read all")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]


def _get_as_unprivileged(logs, urls: list) -> list:
    """(status, body) of each URL, asked by a fresh server process without root powers."""
    code = (
        "import json, sys\n"
        "from werkzeug.test import Client\n"
        "from tensorboard_plugin_profile.web.server import StandaloneApp\n"
        "client = Client(StandaloneApp(sys.argv[1]))\n"
        "for url in sys.argv[2:]:\n"
        "    r = client.get(url)\n"
        "    print(json.dumps([r.status_code, json.loads(r.get_data())]))\n"
    )
    command = _without_root_powers() + [sys.executable, "-c", code, str(logs)] + urls
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_unreadable_file_and_folder_say_permission_denied(swap_setup):
    logs, session, _ = swap_setup
    (session / "vm.xplane.pb").chmod(0)
    closed = logs / "plugins" / "profile" / "closed"
    closed.mkdir()
    (closed / "vm.xplane.pb").write_bytes(_xspace_bytes("/host:CPU"))
    closed.chmod(0)
    try:
        answers = _get_as_unprivileged(
            logs,
            [f"{PREFIX}/data?run=s&tag=trace_viewer&host=vm", f"{PREFIX}/run_tools?run=closed"],
        )
    finally:
        closed.chmod(0o755)
    for status, body in answers:
        assert status == 403 and body["error"]["code"] == "PERMISSION_DENIED", body
        assert "permission denied" in body["error"]["message"]


def test_diagnosis_names_unreadable_folders_by_relative_path(tmp_path):
    logs = tmp_path / "logs"
    (logs / "run" / "plugins").mkdir(parents=True)
    (logs / "run" / "plugins").chmod(0)
    try:
        ((status, diagnosis),) = _get_as_unprivileged(logs, [f"{PREFIX}/diagnose"])
    finally:
        (logs / "run" / "plugins").chmod(0o755)
    assert status == 200 and diagnosis["logdir"] == "logs"
    assert diagnosis["unreadable"] == ["run/plugins: permission denied"]
    assert str(tmp_path) not in json.dumps(diagnosis)


# --- JSON: never NaN or Infinity -----------------------------------------------------------
def _strict_json(data: bytes):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(data, parse_constant=refuse)


def test_non_finite_statistics_become_null_in_every_answer(tmp_path):
    plane = HostPlane()
    line = plane.line(1, "tf_gpu_a")
    stats = dict(allocator_name="GPU_0_bfc", bytes_reserved=0, bytes_available=100)
    stats.update(requested_bytes=8, allocation_bytes=8, addr=1, peak_bytes_in_use=8)
    plane.event(
        line, "MemoryAllocation", 10, fragmentation=float("nan"), bytes_allocated=8, **stats
    )
    plane.event(
        line, "MemoryAllocation", 20, fragmentation=float("inf"), bytes_allocated=16, **stats
    )
    plane.event(plane.line(2, "main"), "train_step", 5, 50, ratio=float("nan"))
    # A TensorFlow op, so that TF stats has a row (without one it is NOT_APPLICABLE).
    plane.event(plane.line(2, "main"), "dense/MatMul:MatMul", 10, 20, ratio=float("inf"))
    session = tmp_path / "plugins" / "profile" / "s"
    session.mkdir(parents=True)
    (session / "vm.xplane.pb").write_bytes(plane.builder.serialize())
    client = Client(StandaloneApp(str(tmp_path)))
    for tag in ("memory_profile", "trace_viewer", "overview_page", "framework_op_stats"):
        response = client.get(f"{PREFIX}/data?run=s&tag={tag}&host=vm")
        assert response.status_code == 200, (tag, response.get_data()[:300])
        _strict_json(response.get_data())
    memory = _strict_json(client.get(f"{PREFIX}/data?run=s&tag=memory_profile&host=vm").get_data())
    timeline = memory["memoryProfilePerAllocator"]["GPU_0_bfc"]["memoryProfileSnapshots"]
    fragmentation = [s["aggregationStats"]["fragmentation"] for s in timeline]
    assert fragmentation and all(f is None for f in fragmentation)
    trace = _strict_json(client.get(f"{PREFIX}/data?run=s&tag=trace_viewer&host=vm").get_data())
    assert {"ratio": "nan"} in [e.get("args") for e in trace["traceEvents"]]  # as upstream


def test_json_out_replaces_only_non_finite_numbers():
    from tensorboard_plugin_profile.common import json_out

    value = {"a": [1.5, float("nan"), (float("-inf"), 2)], "b": "NaN", "c": 0}
    assert json_out.dumps(value, sort_keys=True) == (
        '{"a": [1.5, null, [null, 2]], "b": "NaN", "c": 0}'
    )


def test_an_unexpected_error_is_an_opaque_500(tmp_path, monkeypatch, caplog):
    app = StandaloneApp(str(tmp_path))

    def broken():
        raise RuntimeError("secret detail at /srv/private/path")

    monkeypatch.setattr(app.service, "runs", broken)  # a bug, injected
    response = Client(app).get(f"{PREFIX}/runs")
    body = response.get_data(as_text=True)
    assert response.status_code == 500 and "secret" not in body and "/srv" not in body
    assert json.loads(body)["error"]["message"] == "Internal error; see the server log."
    assert "secret detail" in caplog.text  # the log keeps it for the operator

"""The service facing hostile JSON traces (issue 24, items 6, 7 and 12): a failed decode is
not redone on every retry, the memory budget sees what a decode really holds, progress
shows how far a decode is, and a decode stops when no client waits for it any more."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import threading
import time
import urllib.request

import pytest
from werkzeug.serving import make_server

from tensorboard_plugin_profile.chrome_trace import read_chrome_trace
from tensorboard_plugin_profile.common import work
from tensorboard_plugin_profile.common.errors import Cancelled, ProfileTooLarge
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache import ByteBudgetCache
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.web.server import StandaloneApp

TOOL = "trace_viewer@"


def _trace(path, events: int, name: str = "op") -> None:
    """``events`` events on 100 threads; an escaped name keeps them off the compiled scanner
    (the slower Python path makes the decode long enough to watch)."""
    rows = (
        f'{{"ph":"X","name":{json.dumps(name)},"ts":{i},"dur":1,"pid":1,"tid":{i % 100}}}'
        for i in range(events)
    )
    path.write_bytes(gzip.compress(("[" + ",".join(rows) + "]").encode(), 1))


def _service(logdir) -> ProfileService:
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=None))


def test_a_413_is_remembered_for_the_same_file(tmp_path, monkeypatch, caplog):
    """The report's retries each decoded again (~4 s of CPU, RSS creeping); now a retry of
    the same file (path, size, mtime) answers at once, and a changed file is read again."""
    monkeypatch.setenv("TBPROF_MAX_EVENTS", "1000")
    _trace(tmp_path / "w.1.pt.trace.json.gz", 70_000)
    service = _service(tmp_path)
    run = service.runs()[0]
    caplog.set_level(logging.INFO, logger="tensorboard_plugin_profile.store.space_store")
    for _ in range(3):
        with pytest.raises(ProfileTooLarge, match="TBPROF_MAX_EVENTS"):
            service.tool_data(run, TOOL)
    decodes = [r for r in caplog.records if r.getMessage().startswith("decoding ")]
    assert len(decodes) == 1
    _trace(tmp_path / "w.1.pt.trace.json.gz", 500)  # another file now: read again
    service = _service(tmp_path)
    assert b"".join(service.tool_data(service.runs()[0], TOOL).chunks())


def test_a_reservation_grows_to_what_the_decode_holds(tmp_path):
    """Admission reserved an estimate from the file size (~50 MB for the report's 200k
    threads, which then peaked at 3.6 GB); the reservation now follows the decode's own
    measure of what it holds, evicting stored values for it."""
    path = tmp_path / "t.json.gz"
    _trace(path, 50_000, "a")
    cache = ByteBudgetCache(budget_bytes=4 << 20)
    cache.get_or_compute("old", lambda: "x", size_of=lambda _: 3 << 20)
    with cache.reservation(1000):
        space = read_chrome_trace(str(path))
    assert space.num_events == 50_000
    assert cache.peak_bytes > 50_000 * 96  # the decode's estimate, not the 1,000 reserved
    assert cache.get("old") is None  # evicted to make room for it
    assert cache.reserved_bytes == 0


class _Caller:
    """A request that can hang up (what ``web/connection.py`` reports for a real socket)."""

    def __init__(self) -> None:
        self.open = True

    def wanted(self) -> bool:
        return self.open


def test_a_computation_stops_only_when_no_caller_waits_for_it():
    cache = ByteBudgetCache(1 << 20)
    first, second = _Caller(), _Caller()
    steps, outcome = [], {}
    joined = threading.Event()

    def compute():
        for i in range(400):
            steps.append(i)
            if i == 5:
                joined.wait(5)
            work.checkpoint(f"step {i}")
            time.sleep(0.005)
        return "done"

    def ask(name, caller):
        with work.interest(caller):
            try:
                outcome[name] = cache.get_or_compute("k", compute, size_of=len)
            except Cancelled as e:
                outcome[name] = e

    a = threading.Thread(target=ask, args=("first", first))
    a.start()
    while len(steps) < 5:
        time.sleep(0.001)
    b = threading.Thread(target=ask, args=("second", second))
    b.start()
    while not cache._pending["k"].wanted_by._members[1:]:
        time.sleep(0.001)
    joined.set()
    first.open = False  # the owner's client leaves; the second still waits: go on
    time.sleep(0.1)
    assert len(steps) > 10
    second.open = False  # now nobody waits: stop at the next checkpoint
    a.join(5)
    b.join(5)
    assert isinstance(outcome["first"], Cancelled) and isinstance(outcome["second"], Cancelled)
    assert len(steps) < 400
    assert cache.get("k") is None and not cache._pending


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_progress_shows_a_json_decode_and_a_hang_up_stops_it(tmp_path):
    """A real server on loopback: the progress route says how far the decode is; the client
    closes its socket; the decode stops at its next block instead of running to its end
    (the report: work went on after the client disconnected, progress showed nothing)."""
    _trace(tmp_path / "w.1.pt.trace.json.gz", 2_000_000, 'esc"aped')
    app = StandaloneApp(str(tmp_path), service=_service(tmp_path))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        run = _get_json(f"{base}/runs")[0]
        client = socket.create_connection(("127.0.0.1", server.server_port))
        request = f"GET /data?run={run}&tag={TOOL} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        client.sendall(request.encode())
        stage, deadline = "", time.monotonic() + 120
        while "MB read" not in stage and time.monotonic() < deadline:
            tasks = _get_json(f"{base}/progress")["tasks"]
            stage = tasks[0]["stage"] if tasks else ""
            time.sleep(0.05)
        assert "MB read" in stage, stage  # "decoding w (1/1): 3 of 14 MB read"
        client.close()
        deadline = time.monotonic() + 60
        while _get_json(f"{base}/progress")["tasks"] and time.monotonic() < deadline:
            last = _get_json(f"{base}/progress")["tasks"]
            stage = last[0]["stage"] if last else stage
            time.sleep(0.05)
        assert not _get_json(f"{base}/progress")["tasks"]
        done, total = (float(x.replace(",", "")) for x in stage.rsplit(": ", 1)[1].split()[0:3:2])
        assert done < total, stage  # stopped before the end of the file
        assert app.service.spaces.decodes == 0  # nothing decoded to the end
    finally:
        server.shutdown()

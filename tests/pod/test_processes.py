"""Real processes around the pod map: a `dask scheduler` / `dask worker` pair on loopback,
worker processes that die, and a server stopped with SIGTERM or SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile import tools
from tensorboard_plugin_profile.kernels import compiled
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.store.host_pool import HostPool, PoolUnavailable, thread_share

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port}")


def _overview(service: ProfileService) -> bytes:
    run = service.runs()[0]
    result = service.tool_data(run, "overview_page", host=tools.ALL_HOSTS)
    return b"".join(result.chunks())


def _dask(*args: str) -> subprocess.Popen:
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    return subprocess.Popen(
        [dask, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def test_a_dask_scheduler_and_worker_answer_then_a_vanished_cluster_falls_back():
    pytest.importorskip("distributed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                      "--no-dashboard")  # fmt: skip
    worker = None
    try:
        _wait_for_port(port)
        worker = _dask("worker", address, "--nthreads", "1", "--nworkers", "2",
                       "--no-dashboard", "--host", "127.0.0.1")  # fmt: skip
        local = ProfileService(str(FIXTURES / "jax_two_hosts"), config=CacheConfig(workers=2))
        expected = _overview(local)
        local.close()

        service = ProfileService(
            str(FIXTURES / "jax_two_hosts"), config=CacheConfig(dask_scheduler=address)
        )
        assert _overview(service) == expected
        assert service.host_map.computed == 2 and service.spaces.decodes == 0
        client = service.host_map.cluster._client
        assert len(client.scheduler_info()["workers"]) == 2  # the CLI workers did it

        _stop(worker)  # the cluster disappears: the next request falls back
        _stop(scheduler)
        service.cache.clear()  # forget the summaries: they must be made again
        started = time.monotonic()
        assert _overview(service) == expected
        assert service.host_map.computed == 4
        assert time.monotonic() - started < 120  # never a hang
        service.close()
    finally:
        for process in (worker, scheduler):
            if process is not None:
                _stop(process)


def _die(item: int) -> int:
    if item == 1:
        os._exit(3)  # a worker killed in the middle of a task (out of memory, a signal)
    return item * 10


def _times_ten(item: int) -> int:
    return item * 10


def test_a_dead_worker_is_reported_and_the_pool_starts_again():
    pool = HostPool(workers=2)
    try:
        with pytest.raises(PoolUnavailable):
            pool.map(_die, [0, 1, 2])
        assert pool.map(_times_ten, [1, 2, 3]) == [10, 20, 30]  # new workers
    finally:
        pool.shutdown()


def _thread_counts(_item: int) -> dict:
    """What the decoder, a splitting pass and the overview's analyses would run on, in a worker."""
    from tensorboard_plugin_profile.analysis import together
    from tensorboard_plugin_profile.kernels import compiled
    from tensorboard_plugin_profile.xspace import decode

    return {
        "pass": compiled.pass_threads(1 << 30),
        "analysis": together.analysis_threads(),
        "decode": decode._threads(),  # 0: one per core
    }


def test_workers_running_side_by_side_share_the_cores_and_give_them_back(monkeypatch):
    for name in compiled.THREAD_ENVS:
        monkeypatch.delenv(name, raising=False)
    cores = compiled.cores()
    share = max(1, cores // 2)
    pool = HostPool(workers=2)
    try:
        for counts in pool.map(_thread_counts, [0, 1, 2, 3]):
            assert counts == {"pass": share, "analysis": min(share, 4), "decode": share}
        # One task alone gets every core again: the share was not left behind in a worker.
        (alone,) = pool.map(_thread_counts, [0])
        assert alone == {"pass": min(cores, 16), "analysis": min(cores, 4), "decode": cores}
    finally:
        pool.shutdown()


def test_a_thread_count_the_user_set_wins_in_the_workers(monkeypatch):
    for name in compiled.THREAD_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(compiled.PASS_THREADS_ENV, "3")  # before the workers start
    pool = HostPool(workers=2)
    try:
        for counts in pool.map(_thread_counts, [0, 1]):
            assert counts["pass"] == 3
            assert counts["decode"] == max(1, compiled.cores() // 2)
    finally:
        pool.shutdown()


def test_thread_share():
    cores = compiled.cores()
    assert thread_share(1) == cores
    assert thread_share(cores) == 1
    assert thread_share(cores * 4) == 1  # never none
    assert thread_share(0) == cores


def _children(pid: int) -> list:
    """Every live process descending from ``pid`` (read from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def _alive(pids: list) -> list:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_the_server_stops_its_workers(tmp_path, stop):
    logdir = tmp_path / "logs"
    shutil.copytree(FIXTURES / "jax_two_hosts", logdir)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorboard_plugin_profile", "serve", str(logdir),
         "--port", str(port), "--workers", "2", "--no_cache"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_port(port)
        url = f"http://127.0.0.1:{port}/data/plugin/profile/runs"
        run = __import__("json").loads(urllib.request.urlopen(url, timeout=60).read())[0]
        url = (
            f"http://127.0.0.1:{port}/data/plugin/profile/data?run={run}&tag=pod_viewer"
            "&host=ALL_HOSTS"
        )
        assert urllib.request.urlopen(url, timeout=120).status == 200
        time.sleep(1.5)  # the request's thread is gone: its workers must not go with it
        workers = _children(server.pid)
        assert len(workers) >= 2  # the two worker processes ran the map
        advisor = url.replace("tag=pod_viewer", "tag=advisor")
        assert urllib.request.urlopen(advisor, timeout=120).status == 200  # the details map
        assert _children(server.pid) == workers  # the same workers ran it
        server.send_signal(stop)
        server.wait(timeout=60)
        deadline = time.monotonic() + 30
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(workers) == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

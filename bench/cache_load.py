"""Caches under load: restart from disk, warm requests, peak memory, sessions opened at once.

Starts ``tbprof serve`` on loopback (a free port, a fresh copy of the profile,
a fresh cache directory), drives it over HTTP, samples the server's RSS, and
stops it; every request has a timeout, so the run always ends.

    python bench/cache_load.py restart PROFILE.xplane.pb      # cold, warm, restart figures
    python bench/cache_load.py sessions PROFILE.xplane.pb --sessions 3 --cache_bytes 3G

``restart``: idle RSS; cold overview + first trace window (time, peak RSS above
idle); warm repeats (median ms); the Space entry's size against the file; then a
new server on the same cache: time and CPU seconds (server and workers; wall time
is noisy on a shared machine, CPU much less) to answer /runs + /run_tools + the
overview, and the first trace window (which reads the Space entry).
``sessions``: N copies of the profile (hard links, each its own session)
opened at once with a memory budget and no disk cache; reports the peak RSS
above idle against the budget.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

WINDOW = {"format": "columnar", "resolution": "2000"}


class Server:
    """``tbprof serve`` in a subprocess, with an RSS sampler."""

    def __init__(self, logdir: str, flags: list, log_path: str = os.devnull):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        command = [sys.executable, "-m", "tensorboard_plugin_profile", "serve", "--logdir", logdir]
        command += ["--port", str(self.port), *flags]
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self.peak_rss = 0
        self.total_cpu_s = 0.0  # set by stop(): the server's whole CPU time
        self._stop = threading.Event()
        deadline = time.monotonic() + 60
        while True:
            try:
                self.get("/runs")
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        self.idle_rss = self.rss()
        threading.Thread(target=self._sample, daemon=True).start()

    def get(self, path: str, timeout: float = 600) -> tuple:
        url = f"http://127.0.0.1:{self.port}{path}"
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                body = response.read()
                status = response.status
        except urllib.error.HTTPError as e:
            body, status = e.read(), e.code
        return status, body, time.perf_counter() - started

    def data(self, run: str, tool: str, **params: str) -> tuple:
        query = urllib.parse.urlencode(dict(params, run=run, tag=tool))
        return self.get(f"/data?{query}")

    def rss(self) -> int:
        """Resident bytes of the server and its worker processes."""
        total = 0
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def cpu(self) -> float:
        """CPU seconds (user + system) of the server and its live worker processes so far."""
        total = 0
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
            except (OSError, IndexError, ValueError):
                pass
        return total / os.sysconf("SC_CLK_TCK")

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_rss = max(self.peak_rss, self.rss())
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self.process.terminate()
        deadline = time.monotonic() + 10
        while self.process.returncode is None:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:  # reaped here, with its resource usage (workers it waited for included)
                self.process.returncode = os.waitstatus_to_exitcode(status)
                self.total_cpu_s = usage.ru_utime + usage.ru_stime
            elif time.monotonic() > deadline:
                self.process.kill()
                deadline = math.inf
            else:
                time.sleep(0.05)


def _children(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            found = [int(p) for p in f.read().split()]
    except OSError:
        return []
    return found + [c for p in found for c in _children(p)]


def _session(root: str, name: str, profile: str, link: bool) -> None:
    folder = os.path.join(root, "plugins", "profile", name)
    os.makedirs(folder)
    target = os.path.join(folder, os.path.basename(profile))
    if link:
        os.link(profile, target)
    else:
        shutil.copyfile(profile, target)


def restart(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        logdir, cache = os.path.join(tmp, "logs"), os.path.join(tmp, "cache")
        _session(logdir, "s1", args.profile, link=False)
        flags = ["--cache_dir", cache, "--cache_bytes", args.cache_bytes]
        out: dict = {"file_mb": os.path.getsize(args.profile) / 1e6}
        server = Server(logdir, flags)
        try:
            out["idle_rss_mb"] = server.idle_rss / 1e6
            _, _, t_tools = server.get("/run_tools?run=s1")
            status, _, t_overview = server.data("s1", "overview_page")
            status2, _, t_window = server.data("s1", "trace_viewer@", **WINDOW)
            assert status == status2 == 200, (status, status2)
            out["cold_overview_s"] = t_tools + t_overview
            out["cold_first_window_s"] = t_window
            warm = [server.data("s1", "overview_page")[2] for _ in range(args.repeat)]
            warm_w = [server.data("s1", "trace_viewer@", **WINDOW)[2] for _ in range(args.repeat)]
            out["warm_overview_ms"] = 1e3 * statistics.median(warm)
            out["warm_window_ms"] = 1e3 * statistics.median(warm_w)
            time.sleep(0.2)
            out["peak_rss_above_idle_mb"] = (server.peak_rss - server.idle_rss) / 1e6
            out["peak_over_file"] = (server.peak_rss - server.idle_rss) / 1e6 / out["file_mb"]
        finally:
            server.stop()
        out["cold_server_cpu_s"] = server.total_cpu_s  # everything, the Space's store included
        time.sleep(5)  # not needed for results (written before answering); for the Space
        entries = glob.glob(os.path.join(cache, "v*", "space-*.bin"))
        out["space_entry_mb"] = sum(os.path.getsize(p) for p in entries) / 1e6
        out["space_entry_over_file"] = out["space_entry_mb"] / out["file_mb"]
        server = Server(logdir, flags)
        try:
            started_cpu = server.cpu()
            _, _, t_runs = server.get("/runs")
            _, _, t_tools = server.get("/run_tools?run=s1")
            status, _, t_overview = server.data("s1", "overview_page")
            assert status == 200
            out["restart_overview_s"] = t_runs + t_tools + t_overview
            out["restart_overview_cpu_s"] = server.cpu() - started_cpu
            before_window = server.cpu()
            status, _, t_window = server.data("s1", "trace_viewer@", **WINDOW)
            out["restart_first_window_s"] = t_window
            out["restart_first_window_cpu_s"] = server.cpu() - before_window
            # A window not asked before: needs the decoded Space, loaded from the disk cache.
            status, _, t_new = server.data("s1", "trace_viewer@", **dict(WINDOW, resolution="999"))
            assert status == 200
            out["restart_new_window_s"] = t_new
            out["restart_peak_rss_above_idle_mb"] = (server.peak_rss - server.idle_rss) / 1e6
        finally:
            server.stop()
        out["restart_server_cpu_s"] = server.total_cpu_s  # start-up imports included
    return out


def sessions(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logs")
        names = [f"s{i}" for i in range(args.sessions)]
        for name in names:
            _session(logdir, name, args.profile, link=True)
        flags = ["--no_cache", "--cache_bytes", args.cache_bytes]
        log_path = os.path.join(tmp, "server.log")
        server = Server(logdir, flags, log_path)
        try:
            started = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
                results = list(pool.map(lambda n: server.data(n, "overview_page"), names))
            elapsed = time.perf_counter() - started
            time.sleep(0.2)
            return {
                "sessions": len(names),
                "file_mb": os.path.getsize(args.profile) / 1e6,
                "budget_mb": _size(args.cache_bytes) / 1e6,
                "statuses": [status for status, _, _ in results],
                "seconds_each": [round(t, 1) for _, _, t in results],
                "wall_s": round(elapsed, 1),
                "idle_rss_mb": server.idle_rss / 1e6,
                "peak_rss_above_idle_mb": (server.peak_rss - server.idle_rss) / 1e6,
                "admission_waits": _count(log_path, "waiting for memory"),
            }
        finally:
            server.stop()


def _count(path: str, text: str) -> int:
    with open(path, errors="replace") as f:
        return sum(text in line for line in f)


def _size(text: str) -> int:
    from tensorboard_plugin_profile.store.cache_config import parse_size

    return parse_size(text)


def main(argv: list | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("restart", "sessions"))
    parser.add_argument("profile", help="an .xplane.pb file")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--cache_bytes", default="4G")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    out = restart(args) if args.mode == "restart" else sessions(args)
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))
    return out


if __name__ == "__main__":
    main()

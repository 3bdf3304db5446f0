"""Cold servers, side by side: ours, xprof-rs and XProf on fresh copies of one profile.

    python bench/cold_servers.py PROFILE.xplane.pb [--servers ours,xprof-rs,xprof] [--tools]

For each server, in one run: copy the profile into a fresh logdir (upstream writes cache
files next to its inputs), start the server as a fresh process, wait until it answers,
note its idle RSS, then time over HTTP

- ``overview``: the first ``overview_page`` answer (a cold decode and analysis);
- ``trace``: then the first ``trace_viewer@`` window the page asks for (``--trace-first``:
  the window first, then the overview, as when the page opens on the trace viewer);
- ``tools`` (``--tools``): every other tool of the run, cold, one after the other;
- ``warm``: the overview again (median of 10);
- ``restart`` (ours): stop the server, start a new one on the same cache directory, time the
  overview again (answered from the disk cache);

and the peak RSS of the server's process tree (sampled every 20 ms) above its idle RSS, as
a multiple of the file size. ``cpu s`` is the user + system CPU the server's process tree
spent on the overview and the window: on a loaded machine it moves less than wall time,
and it shows how much of a peer's speed comes from more cores. Peers live in their own
virtualenvs (never beside this package): ``bash bench/setup_peers.sh`` makes them under
``bench/.venv-xprof`` and ``bench/.venv-xprof-rs`` (or point ``--xprof`` / ``--xprof-rs``
at other executables). Ours runs from the interpreter that runs this script.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
SESSION = "bench_session"
PREFIX = "/data/plugin/profile"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(pid: int) -> list:
    """A process and its children, from /proc (children of every thread: a server's
    request threads start the worker processes)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            threads = os.listdir(f"/proc/{current}/task")
        except (FileNotFoundError, ProcessLookupError):
            continue
        for thread in threads:
            try:
                with open(f"/proc/{current}/task/{thread}/children") as f:
                    pending.extend(int(c) for c in f.read().split())
            except (FileNotFoundError, ProcessLookupError, ValueError):
                continue
    return found


def tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and its children (kB), from /proc."""
    total = 0
    for current in _tree(pid):
        try:
            with open(f"/proc/{current}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its children, including reaped ones."""
    ticks = 0
    for current in _tree(pid):
        try:
            with open(f"/proc/{current}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


class RssSampler:
    """Peak RSS of a process tree, sampled in a background thread."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, tree_rss_kb(self.pid))
            time.sleep(0.02)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kb


class Server:
    def __init__(self, name: str, argv: list, env: dict, port: int):
        self.name = name
        self.port = port
        self.process = subprocess.Popen(
            argv,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def url(self, route: str, **params) -> str:
        query = urllib.parse.urlencode(params)
        return f"http://127.0.0.1:{self.port}{PREFIX}/{route}" + (f"?{query}" if query else "")

    def get(self, route: str, timeout: float = 900, **params) -> tuple:
        """(seconds, bytes) of one GET."""
        started = time.perf_counter()
        with urllib.request.urlopen(self.url(route, **params), timeout=timeout) as reply:
            body = reply.read()
        if body[:2] == b"\x1f\x8b":  # XProf compresses whether asked to or not
            body = gzip.decompress(body)
        return time.perf_counter() - started, body

    def wait_ready(self, timeout: float = 120) -> float:
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}")
            try:
                self.get("runs", timeout=5)
                return time.perf_counter() - started
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer within {timeout} s")

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def server_argv(name: str, args, logdir: str, port: int) -> list:
    if name == "ours":
        tbprof = os.path.join(os.path.dirname(sys.executable), "tbprof")
        return [tbprof, "serve", "--logdir", logdir, "--port", str(port), "--host", "127.0.0.1"]
    if name == "xprof-rs":
        return [args.xprof_rs, "--logdir", logdir, "--port", str(port), "--host", "127.0.0.1"]
    return [args.xprof, "--logdir", logdir, "--port", str(port)]


def fresh_logdir(profile: pathlib.Path, root: pathlib.Path) -> tuple:
    session = root / "logdir" / "plugins" / "profile" / SESSION
    session.mkdir(parents=True)
    shutil.copyfile(profile, session / profile.name)
    return str(root / "logdir"), profile.name.split(".xplane")[0]


def first_window_params(name: str) -> dict:
    if name == "ours":  # what the page asks first (frontend/src/trace/source.ts)
        return {"format": "columnar", "resolution": 1500}
    return {"resolution": 8000}  # upstream's page: the whole trace at its default resolution


# Tools that show one XLA module at a time (the page picks the first of module_list).
MODULE_TOOLS = ("memory_viewer", "graph_viewer")


def module_names(server: Server, run: str) -> list:
    try:
        _, body = server.get("module_list", run=run)
    except OSError:
        return []
    return [name for name in body.decode().strip().split(",") if name]


def run_tools(server: Server, run: str) -> list:
    _, body = server.get("run_tools", run=run)
    skip = ("overview_page", "trace_viewer@", "trace_viewer")
    return [t for t in json.loads(body) if t not in skip]


def measure(name: str, args, profile: pathlib.Path) -> dict:
    root = pathlib.Path(tempfile.mkdtemp(prefix=f"cold-{name}-"))
    cache_dir = root / "cache"
    logdir, host = fresh_logdir(profile, root)
    env = {**os.environ, "TBPROF_CACHE_DIR": str(cache_dir)}
    result: dict = {"server": name}
    port = free_port()
    server = Server(name, server_argv(name, args, logdir, port), env, port)
    try:
        result["start_s"] = server.wait_ready()
        time.sleep(0.5)
        idle_kb = tree_rss_kb(server.process.pid)
        sampler = RssSampler(server.process.pid)
        cpu_before = tree_cpu_s(server.process.pid)
        _, runs_body = server.get("runs")
        run = json.loads(runs_body)[0] if json.loads(runs_body) else SESSION
        data = {"run": run, "host": host}
        if args.trace_first:  # the page opened on the trace viewer: its window pays the decode
            result["trace_s"], trace_body = server.get(
                "data", tag="trace_viewer@", **data, **first_window_params(name)
            )
            result["overview_s"], _ = server.get("data", tag="overview_page", **data)
        else:
            result["overview_s"], _ = server.get("data", tag="overview_page", **data)
            result["trace_s"], trace_body = server.get(
                "data", tag="trace_viewer@", **data, **first_window_params(name)
            )
        result["trace_bytes"] = len(trace_body)
        result["cpu_s"] = tree_cpu_s(server.process.pid) - cpu_before
        if args.tools:
            result["tools"] = {}
            modules = module_names(server, run)
            for tool in run_tools(server, run):
                extra = {"module_name": modules[0]} if tool in MODULE_TOOLS and modules else {}
                try:
                    result["tools"][tool], _ = server.get("data", tag=tool, **data, **extra)
                except OSError as e:  # a tool a peer lists but cannot answer
                    result["tools"][tool] = f"error: {e}"
        warm = [server.get("data", tag="overview_page", **data)[0] for _ in range(10)]
        result["warm_ms"] = statistics.median(warm) * 1e3
        result["idle_mb"] = idle_kb / 1024
        result["peak_above_idle_mb"] = (sampler.stop() - idle_kb) / 1024
    finally:
        server.stop()
    if name == "ours":
        port = free_port()
        server = Server(name, server_argv(name, args, logdir, port), env, port)
        try:
            server.wait_ready()
            result["restart_s"], _ = server.get("data", tag="overview_page", **data)
        finally:
            server.stop()
    shutil.rmtree(root, ignore_errors=True)
    return result


def print_table(results: list, size_mb: float) -> None:
    print(f"\nprofile: {size_mb:.1f} MB")
    header = ("server", "overview s", "+trace s", "sum s", "cpu s", "warm ms", "restart s",
              "idle MB", "peak-idle MB", "x file")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        cells = (
            r["server"],
            f"{r['overview_s']:.2f}",
            f"{r['trace_s']:.2f}",
            f"{r['overview_s'] + r['trace_s']:.2f}",
            f"{r['cpu_s']:.2f}",
            f"{r['warm_ms']:.1f}",
            f"{r['restart_s']:.2f}" if "restart_s" in r else "-",
            f"{r['idle_mb']:.0f}",
            f"{r['peak_above_idle_mb']:.0f}",
            f"{r['peak_above_idle_mb'] / size_mb:.1f}",
        )
        print("| " + " | ".join(cells) + " |")
    ours = next((r for r in results if r["server"] == "ours"), None)
    for r in results:
        if ours and r is not ours:
            ratio = (r["overview_s"] + r["trace_s"]) / (ours["overview_s"] + ours["trace_s"])
            print(f"{r['server']} / ours (overview + trace): {ratio:.2f}x")
    for r in results:
        if "tools" in r:
            tools = r["tools"].items()
            cells = ", ".join(f"{t} {v:.2f}s" if isinstance(v, float) else f"{t} {v}"
                              for t, v in tools)
            print(f"{r['server']} other tools cold: {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=pathlib.Path)
    parser.add_argument("--servers", default="ours,xprof-rs,xprof")
    parser.add_argument("--tools", action="store_true", help="also time every other tool cold")
    parser.add_argument(
        "--trace-first", action="store_true", help="ask the first trace window before the overview"
    )
    parser.add_argument("--xprof", default=str(HERE / ".venv-xprof" / "bin" / "xprof"))
    parser.add_argument("--xprof-rs", default=str(HERE / ".venv-xprof-rs" / "bin" / "xprof-rs"))
    parser.add_argument("--json", type=pathlib.Path, help="also write the results here")
    args = parser.parse_args()
    results = []
    for name in args.servers.split(","):
        print(f"== {name}", flush=True)
        results.append(measure(name, args, args.profile))
        print(json.dumps(results[-1]), flush=True)
    print_table(results, args.profile.stat().st_size / 1e6)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

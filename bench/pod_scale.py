"""Pod-scale sessions: N hosts of one real profile, opened the way the page opens them.

    python bench/pod_scale.py PROFILE.xplane.pb [--hosts 8,32,128] [--servers ours,xprof-rs]
        [--workers N] [--json OUT]

For each host count and server, in one run: a fresh logdir holds one session of N hard
links to PROFILE (``host000.xplane.pb`` ...), a fresh server process (ours with an empty
disk cache of its own) is started and, once it answers, asked what the page asks: the run
list, the run's tool list, ``pod_viewer`` and then ``overview_page`` for ``ALL_HOSTS``.
Printed per row: the tool list's time, the two tools' times, the sum of all three, the CPU
seconds of the server's process tree (workers included) and of the server process alone,
its peak RSS above the idle server (sampled every 20 ms) and, for ours, ``+1 host``: the
overview again after one more host file appears in the session (what adding a host costs
an open session). Ratios against the peer are computed row by row from the same run.

Peers run from their own virtualenvs (``bash bench/setup_peers.sh``); ours from the
interpreter running this script. Record PROFILE with
``python bench/make_large_profile.py OUT --steps 1200`` (a real JAX profile,
~75 MB). Run on a quiet machine: the time of one server doubles beside another job.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from cold_servers import (  # noqa: E402 - bench/ is this script's folder
    HERE,
    RssSampler,
    Server,
    free_port,
    server_argv,
    tree_cpu_s,
    tree_rss_kb,
)

SESSION = "pod_session"


def own_cpu_s(pid: int) -> float:
    """User + system CPU seconds of the server process alone (not its workers)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def pod_logdir(profile: pathlib.Path, root: pathlib.Path, hosts: int) -> pathlib.Path:
    session = root / "logdir" / "plugins" / "profile" / SESSION
    session.mkdir(parents=True)
    for i in range(hosts):
        os.link(profile, session / f"host{i:03d}.xplane.pb")
    return session


def measure(name: str, args, profile: pathlib.Path, hosts: int) -> dict:
    root = pathlib.Path(tempfile.mkdtemp(prefix=f"pod-{name}-{hosts}-", dir=args.tmp))
    session = pod_logdir(profile, root, hosts)
    logdir = str(root / "logdir")
    env = {**os.environ, "TBPROF_CACHE_DIR": str(root / "cache")}
    port = free_port()
    argv = server_argv(name, args, logdir, port)
    if name == "ours" and args.workers:
        argv += ["--workers", str(args.workers)]
    server = Server(name, argv, env, port)
    result: dict = {"server": name, "hosts": hosts}
    try:
        server.wait_ready()
        time.sleep(0.5)
        idle_kb = tree_rss_kb(server.process.pid)
        sampler = RssSampler(server.process.pid)
        cpu_before = tree_cpu_s(server.process.pid)
        parent_before = own_cpu_s(server.process.pid)
        run = json.loads(server.get("runs")[1])[0]
        data = {"run": run, "host": "ALL_HOSTS"}
        result["run_tools_s"], _ = server.get("run_tools", run=run)
        result["pod_viewer_s"], _ = server.get("data", tag="pod_viewer", **data)
        result["overview_s"], body = server.get("data", tag="overview_page", **data)
        result["overview_bytes"] = len(body)
        result["cpu_s"] = tree_cpu_s(server.process.pid) - cpu_before
        result["parent_cpu_s"] = own_cpu_s(server.process.pid) - parent_before
        result["peak_above_idle_mb"] = (sampler.stop() - idle_kb) / 1024
        result["idle_mb"] = idle_kb / 1024
        if name == "ours":
            # A copy, not one more hard link: a new link changes the shared inode's ctime,
            # which is part of every host's cache key, as if every host had changed.
            shutil.copyfile(profile, session / f"host{hosts:03d}.xplane.pb")
            time.sleep(1.1)  # discovery walks a known logdir again after a second
            server.get("runs")
            result["plus_one_host_s"], _ = server.get("data", tag="overview_page", **data)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    return result


def _total(r: dict) -> float:
    return r["run_tools_s"] + r["pod_viewer_s"] + r["overview_s"]


def print_table(results: list, size_mb: float) -> None:
    print(f"\nprofile: {size_mb:.1f} MB per host")
    header = ("hosts", "server", "run_tools s", "pod_viewer s", "+overview s", "sum s", "cpu s",
              "server cpu s", "peak-idle MB", "+1 host s")  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        cells = (
            str(r["hosts"]), r["server"], f"{r['run_tools_s']:.2f}", f"{r['pod_viewer_s']:.1f}",
            f"{r['overview_s']:.2f}", f"{_total(r):.1f}", f"{r['cpu_s']:.1f}",
            f"{r['parent_cpu_s']:.1f}" if "parent_cpu_s" in r else "-",
            f"{r['peak_above_idle_mb']:.0f}",
            f"{r['plus_one_host_s']:.1f}" if "plus_one_host_s" in r else "-",
        )  # fmt: skip
        print("| " + " | ".join(cells) + " |")
    for hosts in sorted({r["hosts"] for r in results}):
        row = {r["server"]: r for r in results if r["hosts"] == hosts}
        ours = row.get("ours")
        for name, r in row.items():
            if ours and name != "ours":
                mine, theirs = _total(ours), _total(r)
                memory = r["peak_above_idle_mb"] / max(ours["peak_above_idle_mb"], 1)
                print(f"{hosts} hosts: {name} takes {theirs / mine:.2f}x our time, "
                      f"{memory:.2f}x our memory")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=pathlib.Path)
    parser.add_argument("--hosts", default="8,32")
    parser.add_argument("--servers", default="ours,xprof-rs")
    parser.add_argument("--workers", type=int, default=0, help="ours: --workers (default: cores)")
    parser.add_argument("--xprof", default=str(HERE / ".venv-xprof" / "bin" / "xprof"))
    parser.add_argument("--xprof-rs", default=str(HERE / ".venv-xprof-rs" / "bin" / "xprof-rs"))
    parser.add_argument("--tmp", default=None, help="where the logdirs go (same file system "
                        "as PROFILE: they are hard links)")  # fmt: skip
    parser.add_argument("--json", type=pathlib.Path, help="also write the results here")
    args = parser.parse_args()
    args.tmp = args.tmp or str(args.profile.resolve().parent)
    results = []
    for hosts in (int(h) for h in args.hosts.split(",")):
        for name in args.servers.split(","):
            print(f"== {hosts} hosts: {name}", flush=True)
            results.append(measure(name, args, args.profile, hosts))
            print(json.dumps(results[-1]), flush=True)
    print_table(results, args.profile.stat().st_size / 1e6)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

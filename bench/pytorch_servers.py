"""A PyTorch trace, side by side: ours against torch-tb-profiler and HTA, each a fresh process.

    python bench/pytorch_servers.py LOGDIR [--servers ours,torch-tb-profiler,hta]

``LOGDIR`` holds one run folder with one ``*.pt.trace.json[.gz]`` (as ``bench/chrome_trace.py``
builds: ``<out>/pytorch``). For each server, in one run, on a fresh copy of the logdir:

- ``ours``: ``tbprof serve`` starts; once it answers, the overview (``pytorch_overview``),
  then the operator table (``pytorch_operators``), both cold;
- ``torch-tb-profiler``: its TensorBoard starts and parses every run in the background
  (that is when it does the work); we poll ``runs`` until loading is over, then ask the
  overview and the operator table grouped by operator, as its page does;
- ``hta``: Holistic Trace Analysis, a library, not a server: a fresh Python process imports
  it, builds ``TraceAnalysis`` on the run folder (the parse), then asks the temporal
  breakdown (its overview) and the GPU kernel breakdown (its table); idle is the RSS after
  the imports.

Each server is timed from its process launch to the operator table's answer (``to tables s``:
startup and imports included, since torch-tb-profiler does its parsing during loading),
with the tree's CPU seconds and its peak RSS (sampled every 20 ms) above the RSS right
after launch answered. The peer lives in its own virtualenv, never beside this package:

    python3.11 -m venv bench/.venv-ttb
    bench/.venv-ttb/bin/pip install torch==2.13.0 torch-tb-profiler   # 0.4.3
    python3.11 -m venv bench/.venv-hta
    bench/.venv-hta/bin/pip install HolisticTraceAnalysis==0.5.0

Run on a quiet machine (docs/cold_path.md, "How to reproduce").
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cold_servers import RssSampler, Server, free_port, tree_cpu_s, tree_rss_kb  # noqa: E402

TTB = "/data/plugin/pytorch_profiler"


class _TtbServer(Server):
    def url(self, route: str, **params) -> str:  # torch-tb-profiler's own routes
        return super().url(route, **params).replace("/data/plugin/profile", TTB)


def _finished(result: dict, server: Server, sampler: RssSampler, idle_kb: int, launched: float):
    """``result`` with the time from launch, the tree's CPU and its peak RSS."""
    result["to_tables_s"] = time.perf_counter() - launched
    result["cpu_s"] = tree_cpu_s(server.process.pid)
    peak_kb = sampler.stop()
    result["peak_mb"], result["peak_above_idle_mb"] = peak_kb / 1024, (peak_kb - idle_kb) / 1024
    return result


def _ours(logdir: pathlib.Path, env: dict) -> dict:
    port = free_port()
    tbprof = os.path.join(os.path.dirname(sys.executable), "tbprof")
    argv = [tbprof, "serve", "--logdir", str(logdir), "--port", str(port), "--host", "127.0.0.1"]
    launched = time.perf_counter()
    server = Server("ours", argv, env, port)
    sampler = RssSampler(server.process.pid)
    try:
        result = {"server": "ours", "start_s": server.wait_ready()}
        idle_kb = tree_rss_kb(server.process.pid)
        _, body = server.get("runs")
        run = json.loads(body)[0]
        _, body = server.get("hosts", run=run, tag="pytorch_overview")
        host = json.loads(body)[0]["hostname"]
        query = {"run": run, "host": host}
        result["overview_s"], _ = server.get("data", tag="pytorch_overview", **query)
        result["tables_s"], _ = server.get("data", tag="pytorch_operators", **query)
        return _finished(result, server, sampler, idle_kb, launched)
    finally:
        sampler.stop()
        server.stop()


def _ttb(logdir: pathlib.Path, tensorboard: str, env: dict) -> dict:
    port = free_port()
    argv = [tensorboard, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port),
            "--load_fast=false"]  # fmt: skip
    launched = time.perf_counter()
    server = _TtbServer("torch-tb-profiler", argv, env, port)
    sampler = RssSampler(server.process.pid)
    try:
        result = {"server": "torch-tb-profiler", "start_s": server.wait_ready(timeout=300)}
        idle_kb = tree_rss_kb(server.process.pid)
        while True:
            _, body = server.get("runs")
            runs = json.loads(body)
            if runs["runs"] and not runs["loading"]:
                break
            if time.perf_counter() - launched > 3600:
                raise RuntimeError("torch-tb-profiler did not load the run within an hour")
            time.sleep(0.2)
        result["loaded_s"] = time.perf_counter() - launched
        run = runs["runs"][0]
        _, body = server.get("workers", run=run, view="Overview")
        worker = json.loads(body)[0]
        _, body = server.get("spans", run=run, worker=worker)
        spans = json.loads(body)
        query = {"run": run, "worker": worker, **({"span": spans[0]} if spans else {})}
        result["overview_s"], _ = server.get("overview", **query)
        result["tables_s"], _ = server.get("operation/table", group_by="Operation", **query)
        return _finished(result, server, sampler, idle_kb, launched)
    finally:
        sampler.stop()
        server.stop()


# Runs inside bench/.venv-hta: argv[1] is the run folder; prints one JSON line of its figures.
_HTA_CHILD = r"""
import json, os, resource, sys, time
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
from hta.trace_analysis import TraceAnalysis
idle_mb = rss_mb()
t = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
loaded_s = time.perf_counter() - t
t = time.perf_counter()
analysis.get_temporal_breakdown(visualize=False)
overview_s = time.perf_counter() - t
t = time.perf_counter()
analysis.get_gpu_kernel_breakdown(visualize=False)
tables_s = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"loaded_s": loaded_s, "overview_s": overview_s, "tables_s": tables_s,
                  "cpu_s": usage.ru_utime + usage.ru_stime, "idle_mb": idle_mb,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""


def _hta(logdir: pathlib.Path, python: str, env: dict) -> dict:
    runs = sorted({trace.parent for trace in logdir.rglob("*.pt.trace.json*")})
    launched = time.perf_counter()
    done = subprocess.run([python, "-c", _HTA_CHILD, str(runs[0])], env=env, check=True,
                          capture_output=True, text=True, timeout=3600)  # fmt: skip
    result = {"server": "hta", "to_tables_s": time.perf_counter() - launched}
    result.update(json.loads(done.stdout.strip().splitlines()[-1]))
    result["peak_above_idle_mb"] = result["peak_mb"] - result["idle_mb"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", type=pathlib.Path)
    parser.add_argument("--servers", default="ours,torch-tb-profiler")
    parser.add_argument("--tensorboard", default=str(HERE / ".venv-ttb" / "bin" / "tensorboard"))
    parser.add_argument("--hta-python", default=str(HERE / ".venv-hta" / "bin" / "python"))
    parser.add_argument("--json", type=pathlib.Path, help="also write the results here")
    args = parser.parse_args()
    traces = sorted(args.logdir.rglob("*.pt.trace.json*"))
    if len(traces) != 1:
        raise SystemExit(f"want one *.pt.trace.json[.gz] under {args.logdir}, found {len(traces)}")
    size_mb = traces[0].stat().st_size / 1e6
    results = []
    for name in args.servers.split(","):
        root = pathlib.Path(tempfile.mkdtemp(prefix=f"pt-{name}-"))
        try:
            logdir = root / "logdir"
            shutil.copytree(args.logdir, logdir)
            env = {**os.environ, "TBPROF_CACHE_DIR": str(root / "cache")}
            print(f"== {name}", flush=True)
            if name == "ours":
                results.append(_ours(logdir, env))
            elif name == "hta":
                results.append(_hta(logdir, args.hta_python, env))
            else:
                results.append(_ttb(logdir, args.tensorboard, env))
            print(json.dumps(results[-1]), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\ntrace: {size_mb:.1f} MB")
    print("| server | to tables s | overview s | tables s | cpu s | peak above idle |")
    print("|---|---|---|---|---|---|")
    for r in results:
        peak = r["peak_above_idle_mb"]
        times = f"{r['to_tables_s']:.2f} | {r['overview_s']:.2f} | {r['tables_s']:.2f}"
        memory = f"{peak:.0f} MB ({peak / size_mb:.1f}x)"
        print(f"| {r['server']} | {times} | {r['cpu_s']:.2f} | {memory} |")
    ours = next((r for r in results if r["server"] == "ours"), None)
    for r in results:
        if ours and r is not ours:
            ratio = r["to_tables_s"] / ours["to_tables_s"]
            print(f"{r['server']} / ours (launch to tables): {ratio:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""torch-tb-profiler's answers for a PyTorch logdir, stored as tests/data/reference/<name>/.

Starts TensorBoard with torch-tb-profiler (the peer, in its own venv, never beside this
package) on loopback, waits until the run is loaded, and saves what its HTTP API answers
for every worker and span: ``views``, ``overview``, ``operation`` (pie) and
``operation_table`` grouped by operator, the kernel views when the run has them
(``<route>.<worker>.<span>.json``) and the distributed views of several ranks
(``distributed_<route>.json``), named as the other PyTorch references.

    python3.11 -m venv bench/.venv-ttb
    bench/.venv-ttb/bin/pip install torch==2.13.0 torch-tb-profiler   # 0.4.3
    python bench/torch_tb_reference.py tests/data/pytorch_cpu_train_ns \
        tests/data/reference/pytorch_cpu_train_ns --tensorboard bench/.venv-ttb/bin/tensorboard
"""

from __future__ import annotations

import argparse
import json
import pathlib
import socket
import subprocess
import time
import urllib.parse
import urllib.request

PLUGIN = "/data/plugin/pytorch_profiler"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(base: str, route: str, **params):
    url = f"{base}{PLUGIN}/{route}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=120) as response:
        return json.loads(response.read())


def _save(out: pathlib.Path, name: str, data) -> None:
    (out / name).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print("wrote", out / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tensorboard", default="tensorboard")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = subprocess.Popen(
        [args.tensorboard, "--logdir", str(args.logdir), "--host", "127.0.0.1",
         "--port", str(port), "--load_fast=false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                runs = _get(base, "runs")
                if runs["runs"] and not runs["loading"]:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit("torch-tb-profiler did not load the run in 5 minutes")
        (run,) = runs["runs"]
        views = _get(base, "views", run=run)
        for worker in _get(base, "workers", run=run, view="Overview"):
            for span in _get(base, "spans", run=run, worker=worker):
                q = {"run": run, "worker": worker, "span": span}
                suffix = f"{worker}.{span}.json"
                _save(args.out, f"views.{suffix}", views)
                _save(args.out, f"overview.{suffix}", _get(base, "overview", **q))
                _save(args.out, f"operation.{suffix}",
                      _get(base, "operation", group_by="Operation", **q))  # fmt: skip
                _save(args.out, f"operation_table.{suffix}",
                      _get(base, "operation/table", group_by="Operation", **q))  # fmt: skip
                if "Kernel" in views:
                    for route in ("kernel", "kernel/table", "kernel/tc_pie"):
                        extra = {"group_by": "Kernel"} if route == "kernel" else {}
                        _save(args.out, f"{route.replace('/', '_')}.{suffix}",
                              _get(base, route, **q, **extra))  # fmt: skip
        if "Distributed" in views:  # one answer for all workers (worker "All"), span 1
            for route in ("gpuinfo", "overlap", "waittime", "commops"):
                answer = _get(base, f"distributed/{route}", run=run, worker="All", span="1")
                _save(args.out, f"distributed_{route}.json", answer)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

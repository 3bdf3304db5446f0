"""Cold path on one large profile: fresh processes, whole-process times and peak memory.

    python bench/cold_path.py LOGDIR/plugins/profile/*/vm.xplane.pb [--repeat 3]
    python bench/cold_path.py FILE --source /path/to/other/checkout   # e.g. a baseline

Two kinds of fresh process, each run ``--repeat`` times (best wall time kept, since
a shared machine only ever adds time):

1. ``overview``: a new ``ProfileService`` answers ``overview_page`` (decode, preprocess,
   op stats), then every other tool in turn (each cold, after the overview);
2. ``trace``: a new service answers only the first ``trace_viewer@`` window
   (``format=columnar``, the request the trace page sends first);
3. ``both``: the overview, then that first window (what a user opens first).

For each request: wall and CPU seconds; per process: wall from start to exit (imports
included) and peak RSS (of the process or any child it waited for), also above the RSS of
the idle service (imports done, session listed). The disk cache is off
(``TBPROF_NO_CACHE=1``), so every process is cold. ``--source`` runs another checkout's
package with this Python.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

OTHER_TOOLS = (
    "framework_op_stats",
    "input_pipeline_analyzer",
    "pod_viewer",
    "memory_profile",
    "tf_data_bottleneck_analysis",
    "kernel_stats",
)
FIRST_WINDOW = {"format": "columnar", "resolution": "2000"}

_CHILD = r"""
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
from tensorboard_plugin_profile.common.errors import ProfileError
from tensorboard_plugin_profile.service import ProfileService
path, requests = sys.argv[1], json.loads(sys.argv[2])
service = ProfileService(path)
run = service.runs()[0]
with open("/proc/self/status") as f:  # the idle server: imports done, session listed
    idle_kb = int(f.read().split("VmRSS:")[1].split()[0])
out = []
for tool, params in requests:
    wall, used = time.perf_counter(), cpu()
    try:
        size = sum(len(c) for c in service.tool_data(run, tool, params=params).chunks())
    except ProfileError:
        size = 0  # not applicable to this profile: timed all the same
    out.append([tool, time.perf_counter() - wall, cpu() - used, size])
if hasattr(service, "close"):
    service.close()
who = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
rss_mb = max(resource.getrusage(w).ru_maxrss for w in who) / 1024
print(json.dumps({"requests": out, "rss_mb": rss_mb, "idle_mb": idle_kb / 1024}))
"""


def run_child(path: str, requests: list, source: str) -> dict:
    env = dict(os.environ, TBPROF_NO_CACHE="1")
    if source:
        env["PYTHONPATH"] = source
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, path, json.dumps(requests)],
        env=env,
        cwd=source or None,  # the current directory comes first on sys.path
        check=True,
        capture_output=True,
        text=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - started
    return result


def best(results: list) -> dict:
    """Per request the best wall time (and its CPU time); process wall and RSS likewise."""
    first = min(results, key=lambda r: r["process_s"])
    requests = []
    for i, (tool, _, _, size) in enumerate(first["requests"]):
        wall, used = min((r["requests"][i][1], r["requests"][i][2]) for r in results)
        requests.append((tool, wall, used, size))
    return {
        "requests": requests,
        "process_s": first["process_s"],
        "rss_mb": min(r["rss_mb"] for r in results),
        "idle_mb": min(r["idle_mb"] for r in results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", default="", help="another checkout to import instead")
    parser.add_argument("--only", default="", help="some of: overview,trace,both")
    args = parser.parse_args()
    overview = [("overview_page", {})] + [(tool, {}) for tool in OTHER_TOOLS]
    trace = [("trace_viewer@", FIRST_WINDOW)]
    plans = {"overview": overview, "trace": trace, "both": [("overview_page", {})] + trace}
    if args.only:
        plans = {name: plans[name] for name in args.only.split(",")}
    print(f"{'process':10} {'request':30} {'wall s':>8} {'cpu s':>8} {'bytes':>9}")
    for name, requests in plans.items():
        result = best([run_child(args.path, requests, args.source) for _ in range(args.repeat)])
        for tool, wall, used, size in result["requests"]:
            print(f"{name:10} {tool:30} {wall:8.3f} {used:8.3f} {size:9d}")
        print(
            f"{name:10} {'(whole process, imports incl.)':30} {result['process_s']:8.3f}"
            f"{'':9} peak RSS {result['rss_mb']:.0f} MB,"
            f" {result['rss_mb'] - result['idle_mb']:.0f} MB above the idle service",
            flush=True,
        )


if __name__ == "__main__":
    main()

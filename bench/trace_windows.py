"""Trace viewer on a big profile: cold open, then windows at several zoom levels.

    python bench/bigtrace.py --out /tmp/bigtrace          # once: a >= 5M-event profile
    python bench/trace_windows.py /tmp/bigtrace/plugins/profile/big/*.xplane.pb [--upstream]

Reports decode / preprocess / index times, per window the server time (query + JSON),
payload bytes raw and gzip, and peak memory (ru_maxrss). ``--upstream`` also times
upstream's ``trace_viewer@`` on the same file in its own virtualenv (bench/.venv-xprof),
as a child process with a time limit.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import resource
import statistics
import subprocess
import sys
import time

from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.tools import trace_viewer_at as at
from tensorboard_plugin_profile.xspace import read_xspace

BENCH = pathlib.Path(__file__).resolve().parent
ZOOMS = (("full", 1.0), ("10%", 0.1), ("1%", 0.01), ("0.01%", 0.0001))


def _max_rss_mb(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _timed(label: str, fn):
    started = time.perf_counter()
    value = fn()
    print(f"{label:<28} {time.perf_counter() - started:8.2f} s   rss {_max_rss_mb():7.0f} MB")
    return value


def cold_open(path: str) -> tuple:
    space = _timed("decode", lambda: read_xspace(path))
    print(f"  {space.num_events} events in the file")
    prepared = _timed("preprocess", lambda: preprocess(space))
    # A preprocessed Space passes through preprocess() untouched: this times the index alone.
    hosts = [(pathlib.Path(path).name.split(".xplane")[0], prepared)]
    index = _timed("index", lambda: at.trace_index_of(hosts))
    print(f"  {index.num_events} trace events, {len(index.seg_row)} row/depth segments, "
          f"{len(index.flows)} flow arrows, {len(index.levels)} merge levels")  # fmt: skip
    return hosts, index


def windows(hosts: list, index, resolution: int, repeats: int) -> None:
    lo, hi = index.span_ps
    print(f"\n{'zoom':<7}{'ms (median)':>12}{'items':>9}{'merged':>9}{'flows':>7}"
          f"{'raw KB':>9}{'gzip KB':>9}")  # fmt: skip
    for label, fraction in ZOOMS:
        width = (hi - lo) * fraction
        start = lo + (hi - lo - width) / 2
        params = {
            "start_time_ms": f"{start / 1e9:.9f}",
            "end_time_ms": f"{(start + width) / 1e9:.9f}",
            "resolution": str(resolution),
        }
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            body = at.convert(hosts, params)
            times.append((time.perf_counter() - started) * 1e3)
        answer = json.loads(body)
        print(f"{label:<7}{statistics.median(times):12.1f}{answer['returned']:9d}"
              f"{answer['merged']:9d}{len(answer['flows']['from_row']):7d}"
              f"{len(body) / 1024:9.0f}{len(gzip.compress(body, 6)) / 1024:9.0f}")  # fmt: skip


def search_and_details(hosts: list) -> None:
    for params in ({"search": "thunk"}, {"details": "12345"}):
        started = time.perf_counter()
        body = at.convert(hosts, params)
        ms = (time.perf_counter() - started) * 1e3
        print(f"{next(iter(params)):<7}{ms:12.1f} ms {len(body) / 1024:9.0f} KB")


def upstream(path: str, timeout_s: int) -> None:
    python = BENCH / ".venv-xprof" / "bin" / "python"
    if not python.exists():
        print("upstream: bench/.venv-xprof missing (bash bench/setup_peers.sh)")
        return
    started = time.perf_counter()
    try:
        subprocess.run(
            [str(python), str(BENCH / "upstream_convert.py"), path, "trace_viewer@"],
            check=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        print(f"upstream trace_viewer@: gave up after {timeout_s} s")
        return
    print(f"upstream trace_viewer@ (cold, whole trace at default resolution): "
          f"{time.perf_counter() - started:.1f} s, "
          f"peak rss {_max_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--resolution", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--upstream", action="store_true")
    parser.add_argument("--upstream-timeout", type=int, default=300)
    args = parser.parse_args()
    hosts, index = cold_open(args.path)
    windows(hosts, index, args.resolution, args.repeats)
    search_and_details(hosts)
    print(f"peak rss (ours, this process): {_max_rss_mb():.0f} MB", file=sys.stderr)
    if args.upstream:
        upstream(args.path, args.upstream_timeout)


if __name__ == "__main__":
    main()

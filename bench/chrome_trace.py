"""A large PyTorch trace against an XSpace of the same size: open time, first tool, peak memory.

    python bench/chrome_trace.py [--mb 200] [--out /tmp/chrome_bench]

Builds ``<out>/pytorch/run/worker0.1.pt.trace.json`` by repeating the events of the
``pytorch_diff_control`` fixture with times shifted by one trace span per copy (ids shifted
too, so flows and correlations stay within a copy) until the file is ``--mb`` MB, and
``<out>/xspace/plugins/profile/big/<host>.xplane.pb`` of about the same size with
``bench/bigtrace.py``. Each measurement runs in a fresh process (decoding, then the first
trace-viewer window and one analysis tool, as a page would ask) and reports wall time and
peak RSS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "data"
SOURCE = FIXTURES / "pytorch_diff_control" / "run" / "worker0.1.pt.trace.json.gz"
_ID_ARGS = ("External id", "correlation", "Ev Idx", "Profiler Event Index")


def build_pytorch(target_mb: int, out: pathlib.Path) -> pathlib.Path:
    trace = json.loads(gzip.decompress(SOURCE.read_bytes()))
    events = trace.pop("traceEvents")
    stamps = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    period = (max(stamps) - min(stamps)) + 1000
    path = out / "pytorch" / "run" / "worker0.1.pt.trace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write("{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in trace.items()))
        f.write(', "traceEvents": [\n')
        copy, first = 0, True
        while f.tell() < target_mb * 1e6:
            for e in events:
                if copy and e.get("ph") == "M":
                    continue
                e = dict(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] = e["ts"] + copy * period
                if "id" in e and isinstance(e["id"], int):
                    e["id"] = e["id"] + copy * 10_000_000
                args = e.get("args")
                if isinstance(args, dict):
                    e["args"] = {
                        k: v + copy * 10_000_000 if k in _ID_ARGS and isinstance(v, int) else v
                        for k, v in args.items()
                    }
                f.write(("" if first else ",\n") + json.dumps(e))
                first = False
            copy += 1
        f.write("\n]}\n")
    print(f"{copy} copies -> {path.stat().st_size / 1e6:.0f} MB", file=sys.stderr)
    return path


def build_xspace(target_mb: int, out: pathlib.Path) -> pathlib.Path:
    sys.path.insert(0, str(HERE))
    import bigtrace  # noqa: E402  (bench helper beside this file)

    probe = pathlib.Path(bigtrace.build(1, str(out / "probe")))
    per_event = probe.stat().st_size / max(_events_of(probe), 1)
    events = int(target_mb * 1e6 / per_event)
    return pathlib.Path(bigtrace.build(events, str(out / "xspace")))


def _events_of(path: pathlib.Path) -> int:
    from tensorboard_plugin_profile.xspace import read_xspace

    return read_xspace(str(path)).num_events


def measure(logdir: pathlib.Path, tool: str) -> dict:
    """Runs one fresh process: decode, first trace window, one tool; returns times and RSS."""
    code = f"""
import json, time, resource
from tensorboard_plugin_profile.service import ProfileService
def cpu():  # this process and any worker process the service decoded in
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime
t0, c0 = time.perf_counter(), cpu()
s = ProfileService({str(logdir)!r})
run = s.runs()[0]
session = s.logdir.session(run)
host = session.hosts()[0]
space = s.space(session.host_files[0])
t1, c1 = time.perf_counter(), cpu()
s.tool_data(run, "trace_viewer@", host=host, params={{"start_time_ms": "0", "end_time_ms": "9e9"}})
t2, c2 = time.perf_counter(), cpu()
s.tool_data(run, {tool!r}, host=host)
t3, c3 = time.perf_counter(), cpu()
print(json.dumps({{"events": space.num_events, "decode_s": t1 - t0, "trace_window_s": t2 - t1,
    "tool_s": t3 - t2, "decode_cpu_s": c1 - c0, "window_cpu_s": c2 - c1, "tool_cpu_s": c3 - c2,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - started
    return result


def measure_decode(path: pathlib.Path) -> float:
    """CPU seconds of the decoder alone (``read_profile``), in a fresh process: the service
    may decode in a worker process, whose time ``measure`` does not see."""
    code = f"""
import resource
from tensorboard_plugin_profile.store.profile_reader import read_profile
read_profile({str(path)!r})
r = resource.getrusage(resource.RUSAGE_SELF)
print(r.ru_utime + r.ru_stime)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--out", default=os.path.join("/tmp", "chrome_bench"))
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    pt = build_pytorch(args.mb, out)
    xs = build_xspace(args.mb, out)
    rows = [
        ("PyTorch trace", pt, measure(out / "pytorch", "pytorch_overview"), "pytorch_overview"),
        ("XSpace", xs, measure(out / "xspace", "overview_page"), "overview_page"),
    ]
    for _, path, r, _ in rows:
        r["decoder_cpu_s"] = measure_decode(path)
    # CPU seconds (user + sys) beside wall seconds: the machine is shared, CPU time is the figure.
    print(f"{'input':14} {'MB':>5} {'events':>9} {'decoder cpu':>11} {'cpu s/MB':>9} "
          f"{'open s':>7} {'open cpu':>9} {'window cpu':>10} {'tool':>20} {'tool cpu':>8} "
          f"{'peak MB':>8}")  # fmt: skip
    for name, path, r, tool in rows:
        mb = path.stat().st_size / 1e6
        print(
            f"{name:14} {mb:5.0f} {r['events']:9d} {r['decoder_cpu_s']:11.2f} "
            f"{r['decoder_cpu_s'] / mb:9.3f} {r['decode_s']:7.2f} {r['decode_cpu_s']:9.2f} "
            f"{r['window_cpu_s']:10.2f} {tool:>20} {r['tool_cpu_s']:8.2f} {r['rss_mb']:8.0f}"
        )


if __name__ == "__main__":
    main()

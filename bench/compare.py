"""Cold, whole-process comparison: ``tbprof convert`` against upstream xprof.

    python bench/compare.py --tool trace_viewer [--runs 5] [--fixture NAME]

For each fixture host file: alternates ours and upstream as fresh processes,
prints median wall seconds and peak RSS of each and the ratio ours/upstream
(< 1 means we are faster / smaller).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = REPO / "tests" / "data"
UPSTREAM_PYTHON = HERE / ".venv-xprof" / "bin" / "python"

# Our tool names where they differ from upstream's.
UPSTREAM_NAME = {"trace_viewer": "trace_viewer", "tensorflow_stats": "framework_op_stats"}


def timed(args: list) -> tuple:
    """(wall seconds, peak RSS MB) of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(map(str, args))}")
    return wall, usage.ru_maxrss / 1024


def compare(path: pathlib.Path, tool: str, runs: int) -> dict:
    ours = [
        sys.executable,
        "-m",
        "tensorboard_plugin_profile",
        "convert",
        str(path),
        "--tool",
        tool,
        "-o",
        os.devnull,
    ]
    upstream = [
        str(UPSTREAM_PYTHON),
        str(HERE / "upstream_convert.py"),
        str(path),
        UPSTREAM_NAME.get(tool, tool),
    ]
    timed(ours), timed(upstream)  # warm the page cache and imports
    samples = {"ours": [], "upstream": []}
    for _ in range(runs):
        samples["ours"].append(timed(ours))
        samples["upstream"].append(timed(upstream))
    result = {}
    for name, values in samples.items():
        result[name] = (statistics.median(v[0] for v in values), max(v[1] for v in values))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="trace_viewer")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fixture", default=None)
    args = parser.parse_args()
    if not UPSTREAM_PYTHON.exists():
        raise SystemExit("run bench/setup_peers.sh first")
    print(f"{'fixture/host':48} {'ours s':>7} {'up s':>7} {'ratio':>6} {'ours MB':>8} {'up MB':>7}")
    for path in sorted(FIXTURES.glob("*/plugins/profile/*/*.xplane.pb")):
        name = path.relative_to(FIXTURES).parts[0]
        if args.fixture and name != args.fixture:
            continue
        r = compare(path, args.tool, args.runs)
        (ow, om), (uw, um) = r["ours"], r["upstream"]
        label = f"{name}/{path.stem.replace('.xplane', '')}"
        print(f"{label:48} {ow:7.3f} {uw:7.3f} {ow / uw:6.2f} {om:8.0f} {um:7.0f}", flush=True)


if __name__ == "__main__":
    main()

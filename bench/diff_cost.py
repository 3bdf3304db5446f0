"""What a comparison of two cold profiles costs against opening both (issue 26's target).

    python bench/diff_cost.py BASE EXP --tool overview_page [--tool hlo_stats] [--runs 3]
    python bench/diff_cost.py A.pt.trace.json B.pt.trace.json --tool pytorch_operators \
        --scope main_thread_steps

BASE and EXP are profile files or session folders (e.g. two ~50 MB JAX profiles recorded with
``make_large_profile.py --steps 800``). For each tool, in fresh processes without any cache:

- ``open both``: ``tbprof convert BASE --tool T`` then ``tbprof convert EXP --tool T``;
- ``diff``: ``tbprof diff BASE EXP --tool T``.

Prints the median wall seconds of each and the ratio diff / open both (target <= 1.0).
Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _seconds(args: list) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args, "--no_cache"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("exp")
    parser.add_argument("--tool", action="append", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--scope", default="all", help="the diff's --scope (main_thread_steps for PyTorch)"
    )
    args = parser.parse_args()
    print(f"{'tool':24} {'open both s':>11} {'diff s':>8} {'ratio':>6}")
    for tool in args.tool:
        both, diff = [], []
        for _ in range(args.runs):  # alternated, so drift hits both alike
            both.append(
                _seconds(["convert", args.base, "--tool", tool])
                + _seconds(["convert", args.exp, "--tool", tool])
            )
            diff.append(
                _seconds(
                    [
                        "diff",
                        args.base,
                        args.exp,
                        "--tool",
                        tool,
                        "--scope",
                        args.scope,
                        "--format",
                        "json",
                    ]
                )
            )
        b, d = statistics.median(both), statistics.median(diff)
        print(f"{tool:24} {b:11.2f} {d:8.2f} {d / b:6.2f}", flush=True)


if __name__ == "__main__":
    main()

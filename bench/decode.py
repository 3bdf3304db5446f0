"""In-process decoder throughput on every fixture (events per second).

python bench/decode.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import time

from tensorboard_plugin_profile.xspace import read_xspace

FIXTURES = (pathlib.Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures").resolve()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'file':56} {'events':>8} {'MB':>6} {'ms':>8} {'events/s':>10}")
    for path in sorted(FIXTURES.glob("*/plugins/profile/*/*.xplane.pb")):
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            space = read_xspace(str(path))
            times.append(time.perf_counter() - started)
        best = statistics.median(times)
        label = str(path.relative_to(FIXTURES))[:56]
        rate = space.num_events / best if best else 0
        size = path.stat().st_size / 1e6
        print(f"{label:56} {space.num_events:8d} {size:6.2f} {best * 1e3:8.1f} {rate:10.0f}")


if __name__ == "__main__":
    main()

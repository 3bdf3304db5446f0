"""Per-tool timings through ProfileService: cold (fresh service: decode + analysis + tool)
and warm (the same request again; served from the tool cache), on every fixture.

    python bench/tools.py [--tools overview_page,framework_op_stats,kernel_stats] [--repeat 5]

Whole-process cold comparisons against upstream are in compare.py.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import time

from tensorboard_plugin_profile.common.errors import ProfileError
from tensorboard_plugin_profile.service import ProfileService

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data"


def request(service: ProfileService, run: str, tool: str) -> float:
    started = time.perf_counter()
    try:
        result = service.tool_data(run, tool)
        b"".join(result.chunks())
    except ProfileError:
        pass  # not applicable: still timed, the page shows the reason
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", default="overview_page,framework_op_stats,kernel_stats")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'run':48} {'tool':28} {'cold ms':>8} {'warm ms':>8}")
    runs = ProfileService(str(FIXTURES)).runs()
    for run in sorted(runs):
        for tool in args.tools.split(","):
            cold = statistics.median(
                request(ProfileService(str(FIXTURES)), run, tool) for _ in range(args.repeat)
            )
            service = ProfileService(str(FIXTURES))
            request(service, run, tool)
            warm = statistics.median(request(service, run, tool) for _ in range(args.repeat))
            print(f"{run:48} {tool:28} {cold * 1e3:8.1f} {warm * 1e3:8.2f}", flush=True)


if __name__ == "__main__":
    main()

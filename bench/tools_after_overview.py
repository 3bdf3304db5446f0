"""Every tool of one profile, each cold, after the overview, in one process.

    python bench/tools_after_overview.py FILE.xplane.pb [--tools a,b] [--profile DIR] [--top 12]

One ``ProfileService`` with the disk cache off answers ``overview_page`` (decode,
preprocess, op statistics), then every tool the tool list offers for the file, each
once: what a user clicking through the tabs of a fresh server waits for. Per request:
wall seconds, CPU seconds (user + system of this process; the machine is shared, so
CPU is the figure to compare) and answer bytes. ``--profile DIR`` also keeps a
cProfile of each request (CPU-time clock) in DIR and prints its top functions by
cumulative time. Tools that need a program take ``--module`` (default: the first).
Issue 10's target: every tool after the overview within 1 s at 3 M events.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pathlib
import pstats
import resource
import time

FIRST_WINDOW = {"format": "columnar", "resolution": "2000"}
NEEDS_MODULE = ("graph_viewer", "memory_viewer")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(service, run: str, tool: str, params: dict, profile_to: str) -> tuple:
    """(wall s, CPU s, bytes or the error's class name) of one request."""
    from tensorboard_plugin_profile.common.errors import ProfileError

    profiler = cProfile.Profile(time.process_time) if profile_to else None
    wall, used = time.perf_counter(), cpu_seconds()
    if profiler:
        profiler.enable()
    try:
        answer: object = sum(len(c) for c in service.tool_data(run, tool, params=params).chunks())
    except ProfileError as e:  # not applicable here: timed all the same
        answer = type(e).__name__
    finally:
        if profiler:
            profiler.disable()
    wall, used = time.perf_counter() - wall, cpu_seconds() - used
    if profiler:
        profiler.dump_stats(profile_to)
    return wall, used, answer


def request(service, run: str, tool: str, params: dict, args: argparse.Namespace) -> None:
    out = os.path.join(args.profile, f"{tool.strip('@')}.prof") if args.profile else ""
    wall, used, answer = timed(service, run, tool, params, out)
    print(f"{tool:26} {wall:8.3f} {used:8.3f} {answer!s:>10}", flush=True)
    if out and args.top:
        pstats.Stats(out).sort_stats("cumulative").print_stats(args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--tools", default="", help="comma-separated (default: all listed)")
    parser.add_argument("--module", default="", help="program for graph/memory viewer")
    parser.add_argument("--profile", default="", help="directory for one .prof per request")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    os.environ["TBPROF_NO_CACHE"] = "1"  # before the service reads its configuration
    from tensorboard_plugin_profile.service import ProfileService

    service = ProfileService(args.path)
    run = service.runs()[0]
    if args.profile:
        pathlib.Path(args.profile).mkdir(parents=True, exist_ok=True)
    print(f"{'tool':26} {'wall s':>8} {'cpu s':>8} {'bytes':>10}", flush=True)
    request(service, run, "overview_page", {}, args)  # decodes: the tool list comes after
    tools = args.tools.split(",") if args.tools else service.run_tools(run)
    module = args.module or (service.module_list(run) or [""])[0]
    for tool in [t for t in tools if t != "overview_page"]:
        params: dict = dict(FIRST_WINDOW) if tool == "trace_viewer@" else {}
        if tool in NEEDS_MODULE:
            params["module_name"] = module
        request(service, run, tool, params, args)
    service.close()


if __name__ == "__main__":
    main()

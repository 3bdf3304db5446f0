"""Where the cold path's memory goes: resident and peak RSS per stage, in one process.

    python bench/cold_memory.py FILE.xplane.pb [--trace | --trace_first] [--tracemalloc]

Runs what a server does for a cold ``overview_page`` and then the first
``trace_viewer@`` window (``--trace``), or for the first window alone, without the
overview (``--trace_first``: the trace page opened first), stage by stage, each request
inside ``blockpool.reusing()`` as the service runs it, and prints for each stage
(nested stages indented) the RSS before and after it and its peak, above the RSS of
the process before the file was read. Peaks are exact, not sampled: Linux resets a
process's high-water mark when "5" is written to ``/proc/self/clear_refs``, so each
stage's peak is read from ``VmHWM`` (Linux only).

``--tracemalloc`` also prints the 15 largest live allocations (by source line) at
the end of decode, preprocess and op statistics (slow; numbers are Python heap and
numpy buffers, not RSS).
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import re
import sys
import time
import tracemalloc

_STACK: list = []  # peak (kB) of each open stage, before the inner stage reset it
_ROWS: list = []
_BASE = [0]


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        return int(re.search(field + r":\s+(\d+)", f.read()).group(1))


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class Stage:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        if _STACK:
            _STACK[-1] = max(_STACK[-1], _status("VmHWM"))
        _reset_peak()
        self.row = [len(_STACK), self.name, _status("VmRSS"), 0, 0, time.process_time()]
        _ROWS.append(self.row)
        _STACK.append(0)
        return self

    def __exit__(self, *exc):
        peak = max(_STACK.pop(), _status("VmHWM"))
        self.row[3] = peak
        self.row[4] = _status("VmRSS")
        self.row[5] = time.process_time() - self.row[5]
        if _STACK:
            _STACK[-1] = max(_STACK[-1], peak)


def _wrap(module_name: str, attr: str, label: str = "") -> None:
    """Measures every call of ``module.attr`` (a function or ``Class.method``) as a stage."""
    module = importlib.import_module(module_name)
    owner, name = module, attr
    if "." in attr:
        cls, name = attr.split(".")
        owner = getattr(module, cls)
    original = getattr(owner, name)

    @functools.wraps(original)
    def measured(*args, **kwargs):
        with Stage(label or attr):
            return original(*args, **kwargs)

    setattr(owner, name, measured)


_PKG = "tensorboard_plugin_profile"
FIRST_WINDOW = {"format": "columnar", "resolution": "2000"}  # the trace page's first request
_STAGES = [
    ("xspace.decode", "_read", "raw walk"),
    ("xspace.decode", "space_from_raw", "tables from raw form"),
    ("preprocessing.preprocess", "_mutated", "mutators (per plane)"),
    ("preprocessing.grouping", "group_events", "grouping"),
    ("preprocessing.preprocess", "_grouped", "group ids, flows, regions (per plane)"),
    ("preprocessing.plane_edit", "PlaneEdit.build", "PlaneEdit.build"),
    ("preprocessing.derived_lines", "derive", "derived lines"),
    ("analysis.steps.build", "step_database", "step database"),
    ("analysis.ops.op_stats", "analyse_host", "op statistics"),
    ("analysis.trace.trace_index", "build_index", "trace index"),
    ("analysis.trace.trace_window", "query_window", "window query"),
    ("tools.trace_viewer_at", "_json", "answer to JSON"),
]


def _top(label: str) -> None:
    snap = tracemalloc.take_snapshot()
    print(f"--- largest live allocations after {label}")
    for stat in snap.statistics("lineno")[:15]:
        frame = stat.traceback[0]
        print(f"{stat.size / 2**20:9.1f} MB {stat.count:9d}  {frame.filename}:{frame.lineno}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--trace", action="store_true", help="also the first trace window")
    parser.add_argument(
        "--trace_first", action="store_true", help="the first trace window, without the overview"
    )
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument(
        "--default_malloc", action="store_true", help="without limit_heap_fragmentation()"
    )
    args = parser.parse_args()
    for module, attr, label in _STAGES:
        _wrap(f"{_PKG}.{module}", attr, label)
    from tensorboard_plugin_profile.analysis.ops.op_stats import host_op_stats
    from tensorboard_plugin_profile.common.memsize import deep_size, limit_heap_fragmentation
    from tensorboard_plugin_profile.kernels import blockpool
    from tensorboard_plugin_profile.preprocessing.preprocess import preprocess_decoded
    from tensorboard_plugin_profile.tools import trace_viewer_at
    from tensorboard_plugin_profile.xspace import read_xspace

    if not args.default_malloc:
        limit_heap_fragmentation()  # as the service does (SpaceStore)
    gc.collect()
    _BASE[0] = _status("VmRSS")
    if args.tracemalloc:
        tracemalloc.start()
    with blockpool.reusing():  # the first request: decode, preprocess, its tool
        with Stage("decode (read + walk + tables)"):
            decoded = read_xspace(args.path)
        args.tracemalloc and _top("decode")
        decoded_bytes = deep_size(decoded)
        with Stage("preprocess (the decoded tables dropped)"):
            space = preprocess_decoded(decoded)  # what the service keeps (profile_reader)
            del decoded
        args.tracemalloc and _top("preprocess")
        if args.trace_first:
            with Stage("first window (no overview before)"):
                trace_viewer_at.convert([("vm", space)], FIRST_WINDOW)
        else:
            with Stage("op statistics (overview)"):
                host_op_stats(space)
            args.tracemalloc and _top("op statistics")
    if args.trace:
        with blockpool.reusing(), Stage("first window"):
            trace_viewer_at.convert([("vm", space)], FIRST_WINDOW)
    _print(decoded_bytes, deep_size(space), space.num_events)


def _print(decoded: int, kept: int, events: int) -> None:
    base = _BASE[0]
    print(f"RSS before reading the file: {base / 1024:.0f} MB; all figures below are above it")
    print(f"{'stage':46} {'before':>8} {'peak':>8} {'after':>8} {'cpu s':>7}")
    for depth, name, before, peak, after, cpu in _ROWS:
        label = "  " * depth + name
        cells = [(v - base) / 1024 for v in (before, peak, after)]
        print(f"{label:46} {cells[0]:8.0f} {cells[1]:8.0f} {cells[2]:8.0f} {cpu:7.2f}")
    whole = max(r[3] for r in _ROWS)
    above, process = (whole - base) / 1024, whole / 1024
    print(f"peak above the start: {above:.0f} MB; process peak {process:.0f} MB")
    print(
        f"deep_size: decoded Space {decoded / 2**20:.0f} MB ({decoded / events:.0f} B/event), "
        f"the preprocessed Space kept {kept / 2**20:.0f} MB ({kept / events:.0f} B/event)"
    )


if __name__ == "__main__":
    sys.exit(main())

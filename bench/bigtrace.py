"""Builds a big profile (millions of events) from a real fixture, for trace benchmarks.

Each line of the fixture is repeated ``copies`` times with its ``timestamp_ns`` shifted by
one trace span (plus a gap) per copy. Copies keep the line id, so they land on the same
trace row: the result looks like one long run of the recorded steps. Stat values (step
numbers, producer/consumer ids) are copied as they are, so grouping sees repeated ids: not
for step analysis, and not a real profile's shape for the cost of grouping either. Each
context id of the fixture appears once per copy, and below upstream's 64 x 64 fan-out cap
every producer of an id links to every consumer: 50 copies (``chrome_trace.py --mb 50``,
1.72 M events) make 7,235 ids of 50 producers and 50 consumers, 18.1 M links, where a real
JAX profile has one producer and one consumer per id (48 k links over 2.8 M events). On that
file, grouping took 5.0 s of a cold overview's 10.5 s (cProfile; 2.2 of 7.5 s once the links
were counted into place, not sorted), and the links alone are 290 MB as int64 pairs.

    python bench/bigtrace.py --events 5000000 --out /tmp/bigtrace   # prints the .xplane.pb path
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

from tensorboard_plugin_profile.protobuf import xplane_pb2

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data"
DEFAULT_SOURCE = "jax_remote_capture"


def source_file(name: str) -> pathlib.Path:
    return sorted((FIXTURES / name).resolve().glob("plugins/profile/*/*.xplane.pb"))[0]


def _span_ns(space: xplane_pb2.XSpace) -> tuple:
    lo, hi, events = None, None, 0
    for plane in space.planes:
        for line in plane.lines:
            for ev in line.events:
                begin = line.timestamp_ns + ev.offset_ps // 1000
                end = begin + ev.duration_ps // 1000
                lo = begin if lo is None else min(lo, begin)
                hi = end if hi is None else max(hi, end)
                events += 1
    return (lo or 0), (hi or 0), events


def repeat(space: xplane_pb2.XSpace, copies: int, gap_ns: int = 1_000_000) -> None:
    lo, hi, _ = _span_ns(space)
    period = (hi - lo) + gap_ns
    for plane in space.planes:
        originals = list(plane.lines)
        for k in range(1, copies):
            for line in originals:
                if not len(line.events):
                    continue
                copy = plane.lines.add()
                copy.CopyFrom(line)
                copy.timestamp_ns = line.timestamp_ns + k * period


def build(events: int, out_dir: str, source: str = DEFAULT_SOURCE) -> str:
    """Writes ``<out_dir>/plugins/profile/big/<host>.xplane.pb``; returns its path."""
    path = source_file(source)
    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    _, _, per_copy = _span_ns(space)
    copies = max(1, -(-events // per_copy))
    repeat(space, copies)
    session = pathlib.Path(out_dir) / "plugins" / "profile" / "big"
    session.mkdir(parents=True, exist_ok=True)
    target = session / path.name
    target.write_bytes(space.SerializeToString())
    print(f"{copies} copies of {per_copy} events -> {copies * per_copy} events", file=sys.stderr)
    return str(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--out", default=os.path.join("/tmp", "bigtrace"))
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    args = parser.parse_args()
    print(build(args.events, args.out, args.source))


if __name__ == "__main__":
    main()

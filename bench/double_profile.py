"""A profile twice as long as a recorded one: every event again, one trace span later.

    python bench/double_profile.py IN.xplane.pb OUT_LOGDIR

Writes ``OUT_LOGDIR/plugins/profile/double/<host>.xplane.pb``. Each line keeps its id and
gets, after its own events, a copy of each one shifted by the profile's span plus 1 ms, so
the result reads as one run of twice the steps. ``step_num`` stats of the copies are moved
past the recorded ones, and their producer/consumer context ids (``_p``, ``_c``) and flow
ids (``flow``) past every recorded id, so step grouping sees distinct steps and no group of
the copy is linked to one of the recording (which would make a group span the whole file).
Used for issue 30's 2 GB profile: recording ``make_large_profile.py --steps 32000`` needs
more memory than this 24 GiB machine has (16,000 steps peak at 13.6 GB while recording), and
a serialized XSpace must stay under 2 GiB, so the input must be under 1 GiB.
"""

from __future__ import annotations

import os
import pathlib
import sys

from tensorboard_plugin_profile.protobuf import xplane_pb2


def _span_ps(space: xplane_pb2.XSpace) -> int:
    lo, hi = None, None
    for plane in space.planes:
        for line in plane.lines:
            if not len(line.events):
                continue
            base = line.timestamp_ns * 1000
            first, last = line.events[0], line.events[len(line.events) - 1]
            begin = base + min(first.offset_ps, last.offset_ps)
            end = base + max(e.offset_ps + e.duration_ps for e in (first, last))
            lo = begin if lo is None else min(lo, begin)
            hi = end if hi is None else max(hi, end)
    return (hi or 0) - (lo or 0)


_MOVED_STATS = ("step_num", "_p", "_c", "flow")


def double(space: xplane_pb2.XSpace) -> None:
    shift = _span_ps(space) * 2 + 1_000_000_000  # lines are not sorted: a safe margin
    for plane in space.planes:
        moved = {k: m.name for k, m in plane.stat_metadata.items() if m.name in _MOVED_STATS}
        top = dict.fromkeys(_MOVED_STATS, 0)
        for line in plane.lines:
            for event in line.events:
                for stat in event.stats:
                    name = moved.get(stat.metadata_id)
                    if name is not None:
                        top[name] = max(top[name], stat.int64_value, stat.uint64_value)
        for line in plane.lines:
            events = line.events
            for i in range(len(events)):
                copy = events.add()
                copy.CopyFrom(events[i])
                copy.offset_ps += shift
                if moved and len(copy.stats):
                    for stat in copy.stats:
                        name = moved.get(stat.metadata_id)
                        if name is None:
                            continue
                        if stat.HasField("uint64_value"):
                            stat.uint64_value += top[name] + 1
                        elif stat.HasField("int64_value"):
                            stat.int64_value += top[name] + 1


def main(source: str, out: str) -> None:
    space = xplane_pb2.XSpace()
    space.ParseFromString(pathlib.Path(source).read_bytes())
    double(space)
    session = pathlib.Path(out) / "plugins" / "profile" / "double"
    session.mkdir(parents=True, exist_ok=True)
    target = session / os.path.basename(source)
    target.write_bytes(space.SerializeToString())
    print(target, target.stat().st_size)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

"""A tiny XSpace writer for host-plane events with typed stats (memory, tf.data tests).

Stat values: ``str`` → str_value, ``float`` → double_value, ``Uint(v)`` → uint64_value,
anything else → int64_value. Times are in microseconds.
"""

from __future__ import annotations

from typing import NamedTuple

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace

US = 1_000_000  # ps


class Uint(NamedTuple):
    value: int


class HostPlane:
    def __init__(self, hostname: str = "synthetic"):
        self.space = xplane_pb2.XSpace()
        self.space.hostnames.append(hostname)
        self.plane = self.space.planes.add()
        self.plane.id, self.plane.name = 1, "/host:CPU"
        self._stat_ids: dict = {}
        self._event_ids: dict = {}

    def line(self, line_id: int, name: str):
        line = self.plane.lines.add()
        line.id, line.name = line_id, name
        return line

    def event(self, line, name: str, begin_us: float, dur_us: float = 0, **stats):
        ev = line.events.add()
        ev.metadata_id = self._id(self._event_ids, self.plane.event_metadata, name)
        ev.offset_ps, ev.duration_ps = round(begin_us * US), round(dur_us * US)
        for key, value in stats.items():
            stat = ev.stats.add()
            stat.metadata_id = self._id(self._stat_ids, self.plane.stat_metadata, key)
            if isinstance(value, str):
                stat.str_value = value
            elif isinstance(value, float):
                stat.double_value = value
            elif isinstance(value, Uint):
                stat.uint64_value = value.value
            else:
                stat.int64_value = value
        return ev

    @staticmethod
    def _id(ids: dict, metadata, name: str) -> int:
        if name not in ids:
            ids[name] = len(ids) + 1
            metadata[ids[name]].id = ids[name]
            metadata[ids[name]].name = name
        return ids[name]

    def decode(self):
        return decode_xspace(self.space.SerializeToString(), "synthetic")

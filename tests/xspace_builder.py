"""The one XSpace builder for synthetic tests: hand-made profiles checked by hand.

Stat values are typed by their Python type: ``str`` → str_value, ``float`` → double_value,
``Uint(v)`` → uint64_value (how TensorFlow writes ids such as ``correlation_id``), ``bytes`` →
bytes_value, any other ``int`` → int64_value. Times are given in microseconds (``event``) or
picoseconds (``event_ps``).

Usage::

    space = SpaceBuilder("worker-0")
    host = space.plane(1, "/host:CPU")
    thread = host.line(7, "python")
    host.event(thread, "train", 100, 20, step_num=3, correlation_id=Uint(9))
    decoded = space.decode()            # a Space, through the real decoder
"""

from __future__ import annotations

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace

US = 1_000_000  # ps


class Uint(int):
    """An int written as uint64_value (ids that TensorFlow and JAX write unsigned)."""

    @property
    def value(self) -> int:
        return int(self)


def set_stat_value(stat, value) -> None:
    if isinstance(value, str):
        stat.str_value = value
    elif isinstance(value, bytes):
        stat.bytes_value = value
    elif isinstance(value, float):
        stat.double_value = value
    elif isinstance(value, Uint):
        stat.uint64_value = int(value)
    else:
        stat.int64_value = value


class PlaneBuilder:
    """Lines, events and stats of one XPlane; metadata ids are assigned on first use of a name."""

    def __init__(self, plane):
        self.plane = plane
        self.stat_ids: dict = {}
        self.event_ids: dict = {}

    def stat_id(self, name: str) -> int:
        return self._id(self.stat_ids, self.plane.stat_metadata, name)

    def event_id(self, name: str) -> int:
        return self._id(self.event_ids, self.plane.event_metadata, name)

    @staticmethod
    def _id(ids: dict, metadata, name: str) -> int:
        if name not in ids:
            ids[name] = len(ids) + 1
            metadata[ids[name]].id = ids[name]
            metadata[ids[name]].name = name
        return ids[name]

    def line(self, line_id: int, name: str, timestamp_ns: int = 0):
        line = self.plane.lines.add()
        line.id, line.name, line.timestamp_ns = line_id, name, timestamp_ns
        return line

    def event(self, line, name: str, begin_us: float, dur_us: float = 0, **stats):
        return self.event_ps(line, name, round(begin_us * US), round(dur_us * US), **stats)

    def event_ps(self, line, name: str, begin_ps: int, dur_ps: int = 0, **stats):
        ev = line.events.add()
        ev.metadata_id = self.event_id(name)
        ev.offset_ps, ev.duration_ps = begin_ps, dur_ps
        for key, value in stats.items():
            stat = ev.stats.add()
            stat.metadata_id = self.stat_id(key)
            set_stat_value(stat, value)
        return ev

    def plane_stat(self, name: str, value) -> None:
        stat = self.plane.stats.add()
        stat.metadata_id = self.stat_id(name)
        set_stat_value(stat, value)


class SpaceBuilder:
    def __init__(self, *hostnames: str):
        self.space = xplane_pb2.XSpace()
        self.space.hostnames.extend(hostnames)

    def plane(self, plane_id: int, name: str) -> PlaneBuilder:
        plane = self.space.planes.add()
        plane.id, plane.name = plane_id, name
        return PlaneBuilder(plane)

    def serialize(self) -> bytes:
        return self.space.SerializeToString()

    def decode(self, source: str = "synthetic"):
        return decode_xspace(self.serialize(), source)


def space_from_tables(planes: list, hostnames=("h",), source: str = "test"):
    """A decoded Space from nested tuples, times in ns:
    ``[(plane id, name, [(line id, line name, [(event, begin_ns, dur_ns, stats)])])]``."""
    builder = SpaceBuilder(*hostnames)
    for plane_id, plane_name, lines in planes:
        plane = builder.plane(plane_id, plane_name)
        for line_id, line_name, events in lines:
            line = plane.line(line_id, line_name)
            for name, begin_ns, dur_ns, stats in events:
                plane.event_ps(line, name, begin_ns * 1000, dur_ns * 1000, **stats)
    return builder.decode(source)


class HostPlane(PlaneBuilder):
    """A one-plane space (``/host:CPU``) for host-only tests (memory, tf.data)."""

    def __init__(self, hostname: str = "synthetic"):
        self.builder = SpaceBuilder(hostname)
        super().__init__(self.builder.plane(1, "/host:CPU").plane)

    def decode(self):
        return self.builder.decode()

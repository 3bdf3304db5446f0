"""A small host trace with Python-tracer frames enclosing TensorFlow ops."""

from __future__ import annotations

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace

US = 1_000_000


def python_traced_space():
    """``$train.py:10 step`` calls ``$layers.py:3 dense`` (MatMul twice) then runs Relu."""
    space = xplane_pb2.XSpace()
    plane = space.planes.add()
    plane.id, plane.name = 1, "/host:CPU"
    names: dict = {}
    line = plane.lines.add()
    line.id, line.name = 1, "python"

    def event(name: str, begin_us: float, dur_us: float) -> None:
        if name not in names:
            names[name] = len(names) + 1
            plane.event_metadata[names[name]].id = names[name]
            plane.event_metadata[names[name]].name = name
        ev = line.events.add()
        ev.metadata_id = names[name]
        ev.offset_ps, ev.duration_ps = int(begin_us * US), int(dur_us * US)

    event("$train.py:10 step", 0, 100)
    event("$layers.py:3 dense", 5, 50)
    event("dense/MatMul:MatMul", 10, 10)
    event("dense/MatMul:MatMul", 25, 20)
    event("dense/Relu:Relu", 60, 5)
    return decode_xspace(space.SerializeToString())

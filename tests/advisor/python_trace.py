"""A small host trace with Python-tracer frames enclosing TensorFlow ops."""

from __future__ import annotations

from xspace_builder import SpaceBuilder


def python_traced_space():
    """``$train.py:10 step`` calls ``$layers.py:3 dense`` (MatMul twice) then runs Relu."""
    space = SpaceBuilder("vm")
    host = space.plane(1, "/host:CPU")
    thread = host.line(1, "python")
    host.event(thread, "$train.py:10 step", 0, 100)
    host.event(thread, "$layers.py:3 dense", 5, 50)
    host.event(thread, "dense/MatMul:MatMul", 10, 10)
    host.event(thread, "dense/MatMul:MatMul", 25, 20)
    host.event(thread, "dense/Relu:Relu", 60, 5)
    return space.decode()

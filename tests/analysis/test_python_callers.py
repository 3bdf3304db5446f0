"""Framework ops attributed to the Python frames that enclose them (the code view's stacks)."""

from __future__ import annotations

from xspace_builder import HostPlane

from tensorboard_plugin_profile.analysis.ops.attribution import python_callers
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.xspace import schema


def _callers(build) -> list:
    plane = HostPlane()
    build(plane)
    table = python_callers(preprocess(plane.decode()).plane(schema.HOST_PLANE))
    return sorted(table.to_dict("records"), key=lambda r: (r["op"], r["frames"]))


def test_each_op_is_timed_under_the_whole_stack_of_frames_around_it():
    def build(plane):
        py, worker = plane.line(1, "python"), plane.line(2, "worker")
        plane.event(py, "$train.py:10 main", 0, 100)
        plane.event(py, "$model.py:5 step", 10, 50)
        plane.event(py, "relu:Relu", 15, 3)
        plane.event(py, "dense/MatMul:MatMul", 20, 10)
        plane.event(py, "dense/MatMul:MatMul", 70, 5)  # under main only
        plane.event(py, "dense/MatMul:MatMul", 200, 5)  # under no frame: not attributed
        plane.event(worker, "other:Add", 0, 10)  # a thread without Python frames

    main, step = "train.py:10 main", "model.py:5 step"
    assert _callers(build) == [
        {"op": "dense/MatMul", "frames": (main,), "time_ps": 5_000_000},
        {"op": "dense/MatMul", "frames": (main, step), "time_ps": 10_000_000},
        {"op": "relu", "frames": (main, step), "time_ps": 3_000_000},
    ]


def test_no_frames_or_no_ops_under_them_give_an_empty_table():
    def frames_only(plane):
        line = plane.line(1, "python")
        plane.event(line, "$train.py:10 main", 0, 100)
        plane.event(plane.line(2, "xla"), "dense/MatMul:MatMul", 20, 10)  # JAX: ops elsewhere

    def ops_only(plane):
        plane.event(plane.line(1, "python"), "dense/MatMul:MatMul", 20, 10)

    assert _callers(frames_only) == []
    assert _callers(ops_only) == []

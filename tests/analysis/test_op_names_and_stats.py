"""Framework op name parsing (§2.5), step statistics and the non-overlap sweep."""

from __future__ import annotations

import math

import pandas as pd

from tensorboard_plugin_profile.analysis.input_pipeline import breakdown as input_analysis
from tensorboard_plugin_profile.analysis.steps import step_db
from tensorboard_plugin_profile.xspace import op_names
from tensorboard_plugin_profile.xspace.op_names import parse_op_names


def test_parse_op_names():
    parsed = parse_op_names(
        [
            "dense/MatMul:MatMul",
            "Iterator::Batch::Map",
            "ExecutorState::Process",
            "MemcpyHToD",
            "jit(f)/dot_general",
            "x:reduce_sum[axes=(0,)]",
            "a/b_3:",
            "plain",
        ]
    )
    assert parsed.values.tolist() == [
        ["TensorFlow", "dense/MatMul", "MatMul"],
        ["tf.data", "Iterator::Batch::Map", "Dataset"],
        ["unknown", "ExecutorState::Process", ""],
        ["MemcpyHToD", "MemcpyHToD", "MemcpyHToD"],
        ["unknown", "jit(f)/dot_general", ""],
        ["JAX", "x", "reduce_sum"],
        ["JAX", "a/b_3", "b"],
        ["unknown", "plain", ""],
    ]


def test_summary_reproduces_upstream_stat_quirk():
    assert math.isnan(input_analysis.summarize([0.0]).standard_deviation)
    assert input_analysis.summarize([5.0]).standard_deviation == 0.0
    assert input_analysis.summarize([0.0, 0.0]).standard_deviation == 0.0
    assert round(input_analysis.summarize([1.0, 2.0, 3.0]).standard_deviation, 6) == 1.0
    assert input_analysis.summarize([]).average == 0.0


def test_non_overlapping_takes_highest_priority():
    spans = pd.DataFrame(
        {
            "group": [1, 1, 1],
            "begin": [0, 2, 8],
            "end": [10, 5, 12],
            "type": [
                step_db.TYPE["HOST_COMPUTE"],
                step_db.TYPE["HOST_WAIT_INPUT"],
                step_db.TYPE["HOST_COMPUTE"],
            ],
        }
    )
    pieces = step_db.non_overlapping(spans)
    names = [step_db.EVENT_TYPES[t] for t in pieces["type"]]
    assert list(zip(pieces["begin"], pieces["end"], names)) == [
        (0, 2, "HOST_COMPUTE"),
        (2, 5, "HOST_WAIT_INPUT"),
        (5, 8, "HOST_COMPUTE"),
        (8, 10, "HOST_COMPUTE"),
        (10, 12, "HOST_COMPUTE"),
    ]


def test_more_than_five_steps_drop_first_and_last():
    markers = pd.DataFrame(
        {
            "group": range(7),
            "begin": [i * 10 for i in range(7)],
            "end": [i * 10 + 9 for i in range(7)],
            "type": 0,
            "step_name": [f"train {i}" for i in range(7)],
        }
    )
    spans = markers.assign(type=step_db.TYPE["HOST_COMPUTE"]).drop(columns="step_name")
    db = step_db.build_step_db(markers, spans, has_device=False)
    assert db.steps["step_name"].tolist() == [f"train {i}" for i in range(1, 6)]
    assert db.steps["HOST_COMPUTE"].tolist() == [9] * 5


def test_is_tensorflow_op_agrees_with_the_parser():
    names = [
        "dense/MatMul:MatMul",
        "dense/MatMul_1:",
        "a_1:",
        "a:",
        "_1:",
        ":A",
        ":",
        "Iterator::Batch",
        "x:Y:Z",
        "jit(f)/dot_general:",
        "x/abc[1]:",
        "a.b/c>d-e:Type_1",
        " :A",
        "end: multiply_subtract_fusion.3",
        "train",
        "foo/bar:",
    ]
    parsed = op_names.parse_op_names(names)["category"].tolist()
    assert [op_names.is_tensorflow_op(n) for n in names] == [
        c == op_names.TENSORFLOW for c in parsed
    ]

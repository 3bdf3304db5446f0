"""The column paths of the PyTorch analyses give what the per-row formulas they replaced gave.

Speed changes (issue 30): stat columns found by category code instead of copying the stats
table per arg, event types from small integer codes instead of per-event string tests, and
segment boundaries deduplicated by a sort instead of numpy 2's hashing ``np.unique``. Each
test runs the old formula next to the new code on real fixtures or varied integers.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from tensorboard_plugin_profile.analysis import chrome_events
from tensorboard_plugin_profile.analysis.pytorch import events as E
from tensorboard_plugin_profile.analysis.pytorch.ranges import Segments
from tensorboard_plugin_profile.chrome_trace.read import read_chrome_trace
from tensorboard_plugin_profile.xspace.model import KIND_DOUBLE, KIND_STR

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
FIXTURES = ("pytorch_ddp_ns", "pytorch_amd_mi250", "pytorch_cpu_train_ns")


def _spaces():
    for name in FIXTURES:
        for root, _, files in os.walk(os.path.join(DATA, name)):
            for f in sorted(files):
                if ".pt.trace.json" in f:
                    yield read_chrome_trace(os.path.join(root, f))


def _old_numeric(plane, name):
    st = plane.stats
    rows = st[st["stat"] == name]
    out = np.full(len(plane.events), np.nan)
    kinds = rows["kind"].to_numpy()
    values = np.where(kinds == KIND_DOUBLE, rows["float_value"].to_numpy(),
                      rows["int_value"].to_numpy().astype(np.float64))  # fmt: skip
    out[rows["event"].to_numpy()[kinds != KIND_STR]] = values[kinds != KIND_STR]
    return out


def _old_string(plane, name):
    st = plane.stats
    rows = st[(st["stat"] == name) & (st["kind"] == KIND_STR)]
    out = np.full(len(plane.events), None, dtype=object)
    out[rows["event"].to_numpy()] = rows["str_value"].to_numpy(dtype=object)
    return out


def test_stat_columns_match_the_table_filter_they_replaced():
    checked = 0
    for space in _spaces():
        for plane in space.planes:
            for stat in (*E.NUMBERS, "no such arg"):
                got, want = chrome_events.numeric_stat(plane, stat), _old_numeric(plane, stat)
                np.testing.assert_array_equal(got, want)
            for stat in (*E.STRINGS, "no such arg"):
                got, want = chrome_events.string_stat(plane, stat), _old_string(plane, stat)
                assert [repr(v) for v in got] == [repr(v) for v in want]
                checked += int(pd.notna(want).sum())
    assert checked > 100  # the fixtures do carry string args


def test_event_types_match_the_per_event_tests_they_replaced():
    for space in _spaces():
        ev = chrome_events.events_of(space)
        cats, names = ev["cat"].to_numpy(dtype=object), ev["name"].to_numpy(dtype=object)
        kind = pd.Series(cats).str.lower().map(E._TYPE_OF_CATEGORY).to_numpy(dtype=object)
        step = np.isin(kind, [E.OPERATOR, E.USER_ANNOTATION]) & pd.Series(
            names).str.startswith(E.STEP_PREFIX).to_numpy(dtype=bool)  # fmt: skip
        kind = np.where(step, E.PROFILER_STEP, kind)
        kind[(kind == E.USER_ANNOTATION) & ~np.isin(names, E.NCCL_OPS + E.GLOO_OPS)] = None
        got = E._kinds(cats, names)
        assert [str(v) if pd.notna(v) else None for v in got] == [
            str(v) if pd.notna(v) else None for v in kind
        ]


def test_segment_points_are_the_sorted_distinct_ends():
    rng = np.random.default_rng(30)
    for n in (0, 1, 2, 1000):
        begins = rng.integers(-5, 50, n)
        ends = begins + rng.integers(0, 5, n)
        seg = Segments([(begins, ends), (np.array([7, 7]), np.array([7, 60]))])
        want = np.unique(np.concatenate([begins, ends, [7, 7, 7, 60]]))
        np.testing.assert_array_equal(seg.points, want)
        assert seg.points.dtype == np.int64


def test_type_masks_by_code_match_the_type_strings():
    for space in _spaces():
        ev = E.trace_events(space)
        kind = ev["type"].to_numpy(dtype=object)
        for types in ((E.KERNEL,), E.HOST_OP_TYPES, E.DEVICE_TYPES, (E.PROFILER_STEP, E.LAUNCH)):
            want = np.isin(kind, list(types))
            np.testing.assert_array_equal(E.of_type(ev, types), want)
            rows = ev[want]  # a subset keeps its codes
            assert E.of_type(rows, types).all()
        plain = ev.drop(columns=E.TYPE_CODE)  # a frame made elsewhere: by the strings
        np.testing.assert_array_equal(E.of_type(plain, (E.KERNEL,)), kind == E.KERNEL)

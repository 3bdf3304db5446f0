"""The compiled host step walk (_keys.c) gives the step database the numpy path gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.steps import (
    events as step_events,
)
from tensorboard_plugin_profile.analysis.steps import (
    guess,
    step_db,
)
from tensorboard_plugin_profile.analysis.steps import (
    keys as step_keys,
)
from tensorboard_plugin_profile.analysis.steps import (
    sweep as step_sweep,
)
from tensorboard_plugin_profile.kernels import compiled, per_name
from tensorboard_plugin_profile.xspace import op_names, schema
from tensorboard_plugin_profile.xspace.model import Plane, Space

TYPE = step_db.TYPE

WALK = compiled.load(step_keys.__name__)
needs_compiled = pytest.mark.skipif(WALK is None, reason="built without a C compiler")
NAMES = (
    "fn",
    "jit_step",
    "train",
    "train/inner",
    "TraceContext",
    "EagerExecute",
    "IteratorGetNext",
    "copy:MemcpyHToH",
    "h2d:MemcpyHToD",
)
LINE_IDS = (7, schema.DERIVED_LINE_ID_MIN + 3, 9)  # the middle line is derived
EVENTS = st.lists(  # (line, name or None, begin, duration, group or None, step name, stage)
    st.tuples(
        st.integers(0, 2),
        st.one_of(st.none(), st.integers(0, len(NAMES) - 1)),
        st.integers(0, 60),
        st.one_of(st.just(0), st.integers(1, 30)),  # many instants
        st.one_of(st.none(), st.integers(0, 3)),
        st.one_of(st.none(), st.integers(0, 3)),
        st.booleans(),
    ),
    max_size=60,
)


def _plane(events, categorical: bool = True, scale: int = 1, ids: str = "Int64") -> Plane:
    events = sorted(events, key=lambda e: (e[0], e[2], -e[3]))  # a line's events by begin
    name = [None if e[1] is None else NAMES[e[1]] for e in events]
    step = [None if e[5] is None else f"train {e[5]}" for e in events]
    stage = [("stage" if e[6] else None) for e in events]
    kind = pd.Categorical if categorical else (lambda v: pd.Series(v, dtype=object))
    table = pd.DataFrame(
        {
            "line": np.array([e[0] for e in events], dtype=np.int32),
            "name": kind(name),
            "begin_ps": np.array([e[2] * scale for e in events], dtype=np.int64),
            "duration_ps": np.array([e[3] * scale for e in events], dtype=np.int64),
            # The pure-Python reader's kind of columns too: objects with None; preprocessing
            # makes int32 group ids (``ids``).
            schema.GROUP_ID: pd.array([e[4] for e in events], dtype=ids if categorical else object),
            schema.STEP_NAME: kind(step),
            "_ipl_stage_name": pd.Categorical(stage),
            "parent_id": pd.array([(1 if e[6] and e[2] % 2 else None) for e in events], "Int64"),
        }
    )
    lines = pd.DataFrame({"id": np.array(LINE_IDS, dtype=np.int64)})
    empty = pd.DataFrame()
    return Plane(0, 0, schema.HOST_PLANE, lines, table, empty, empty, empty, {}, {})


def _windows(markers: pd.DataFrame) -> tuple:
    group = np.unique(markers["group"].to_numpy(dtype=np.int64))
    return group, group * 0 + 5, group * 0 + 40


def _same_database(plane: Plane) -> None:
    compiled = step_events.host_step_events(plane, pure_python=False)
    fallback = step_events.host_step_events(plane, pure_python=True)
    pd.testing.assert_frame_equal(compiled[0], fallback[0])  # the markers
    windows = _windows(fallback[0])
    spans = compiled[1]
    if isinstance(spans, step_keys.PackedSpans):
        assert spans.count == len(fallback[1])
        got = step_sweep.packed_breakdown(spans.key.copy(), spans.runs, windows, 18)
    else:
        got = step_sweep.breakdown(spans, windows, 18, pure_python=True)
    expected = step_sweep.breakdown(fallback[1], windows, 18, pure_python=True)
    for a, b in zip(got, expected):
        assert a.tolist() == b.tolist()
    with_keys = step_db.build_step_db(*compiled, has_device=False)
    with_frame = step_db.build_step_db(*fallback, has_device=False)
    pd.testing.assert_frame_equal(with_keys.steps, with_frame.steps)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(EVENTS, st.booleans(), st.sampled_from([1, 1 << 55]), st.sampled_from(["Int64", "Int32"]))
def test_the_compiled_walk_gives_the_numpy_step_database(events, categorical, scale, ids):
    # scale 1 << 55: steps too long to pack, so the numpy path decides.
    _same_database(_plane(events, categorical, scale, ids))


SPANS = st.lists(  # (group, begin, duration, type): one line, nested and overlapping
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 20),  # few distinct times: many shared moments
        st.one_of(st.just(0), st.integers(1, 15)),
        st.integers(0, 17),
    ),
    max_size=50,
)


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(SPANS)
# An instant at the covering span's end would leave its type on (upstream's quirk,
# analysis/steps/sweep.py) until the next start of that type or higher: it is kept.
@example([(0, 0, 10, 5), (0, 10, 0, 5), (0, 12, 8, 1)])
@example([(0, 0, 5, 5), (0, 5, 10, 5), (0, 5, 0, 5), (0, 12, 8, 1)])  # ... at its begin
@example([(0, 0, 10, 5), (0, 0, 10, 5), (0, 4, 0, 5), (0, 4, 0, 7), (0, 12, 8, 1)])
def test_leaving_out_covered_spans_keeps_every_sum(spans):
    # Every type (0 .. 17) and instants at the edges of covering spans: the sums of
    # the kept spans are those of all spans.
    spans = sorted(spans, key=lambda s: (s[1], -s[2]))
    n = len(spans)
    found = WALK.host_step_keys(
        np.zeros(n, dtype=np.int32),
        np.ones(1, dtype=np.uint8),
        np.array([s[0] for s in spans], dtype=np.int64),
        None,
        np.arange(n, dtype=np.int64),  # one name per span: its type
        np.full(n, -1, dtype=np.int8),
        np.array([s[1] for s in spans], dtype=np.int64),
        np.array([s[2] for s in spans], dtype=np.int64),
        np.array([s[3] for s in spans] + [0], dtype=np.int8),
        np.array([s[3] for s in spans] + [0], dtype=np.int8),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        None,
        18,
    )
    work, markers, key, runs = found
    assert work == n and markers == b""
    if not n:
        assert key is None
        return
    runs = [(stop, np.frombuffer(layout, np.int64)) for stop, layout in runs]
    frame = pd.DataFrame(
        [(g, b, b + d, t) for g, b, d, t in spans], columns=["group", "begin", "end", "type"]
    )
    windows = (np.arange(3), np.full(3, 3), np.full(3, 50))
    got = step_sweep.packed_breakdown(np.frombuffer(key, np.int64).copy(), runs, windows, 18)
    expected = step_sweep.breakdown(frame, windows, 18, pure_python=True)
    for a, b in zip(got, expected):
        assert a.tolist() == b.tolist()


@needs_compiled
def test_nested_spans_of_one_step_and_type_are_left_out():
    # A Python-tracer-like line: calls nested in calls, all host compute of step 0.
    events = [(0, 0, 0, 50, 0, None, False), (0, 0, 2, 10, 0, None, False)]
    events += [(0, 1, 3, 2, 0, None, False), (0, 0, 20, 30, 0, None, False)]
    events += [(0, 2, 0, 60, 0, 0, False)]  # the step marker
    plane = _plane(events)
    _, spans = step_events.host_step_events(plane, pure_python=False)
    assert isinstance(spans, step_keys.PackedSpans)
    assert spans.count == 4 and len(spans.key) == 2  # only the outer span's boundaries
    _same_database(plane)


@needs_compiled
def test_sparse_group_ids_take_the_numpy_path():
    events = [(0, 0, 0, 10, 0, 0, False), (0, 0, 1, 9, 0, None, False)]
    events += [(0, 0, 2, 8, 0, None, False)]
    plane = _plane(events)
    plane.events[schema.GROUP_ID] = pd.array([0, 0, 1 << 40], dtype="Int64")
    assert step_keys.host_step_keys(plane, *_tables(plane), np.zeros(0, np.int64), 18) is None
    _same_database(plane)


def _tables(plane: Plane) -> tuple:
    codes, names = per_name.distinct_native(plane.events["name"])
    return (codes,) + step_events._host_name_tables(names)


@needs_compiled
def test_bad_input_is_a_clear_error():
    plane = _plane([(0, 0, 0, 10, 0, None, False)])
    for line in (np.array([5], dtype=np.int32), np.array([1 << 40], dtype=np.int64)):
        plane.events["line"] = line  # no such line
        with pytest.raises(ValueError, match="line is out of range"):
            step_keys.host_step_keys(plane, *_tables(plane), np.zeros(0, np.int64), 18)
    codes, span_type, stage_type = _tables(_plane([(0, 0, 0, 10, 0, None, False)]))
    span_type[0] = 40
    with pytest.raises(ValueError, match="type is out of range"):
        step_keys.host_step_keys(plane, codes, span_type, stage_type, np.zeros(0, np.int64), 18)


def _type_table_parsing_every_name(names: pd.Series) -> tuple:
    """The host type table as it was built before: every name parsed as an op name."""
    op_type = op_names.parse_op_names(names.tolist())["type"]
    wait = np.append(names.str.lower().str.startswith("iteratorgetnext").to_numpy(bool), False)
    by_name = np.where(wait, TYPE["HOST_WAIT_INPUT"], TYPE["HOST_COMPUTE"]).astype(np.int64)
    copy = np.zeros(len(by_name), dtype=bool)
    for rule, kind in (
        (op_type == "MemcpyHToH", "HOST_TO_HOST"),
        (op_type.str.startswith("InfeedEnqueue") | (op_type == "MemcpyHToD"), "HOST_TO_DEVICE"),
    ):
        chosen = np.append(np.asarray(rule, dtype=bool), False)
        by_name[chosen] = TYPE[kind]
        copy |= chosen
    return by_name, copy


PIECES = ["a/", "x:", ":", "MemcpyHToD", "memcpyhtoh", "MemcpyHToH_1", "InfeedEnqueueTuple"]
PIECES += ["Iterator::", "IteratorGetNext", "jit(f)/", "dot_general", "train", "TraceContext"]
PIECES += ["EagerExecute", "/", "_2", "ß", "Op", "[x]"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=4).map("".join), max_size=30))
def test_the_type_table_parses_only_names_that_can_be_copies(names):
    names = pd.Series(list(dict.fromkeys(names)), dtype=object)
    got = step_events._host_type_table(names)
    expected = _type_table_parsing_every_name(names)
    assert got[0].tolist() == expected[0].tolist() and got[1].tolist() == expected[1].tolist()
    marker = [n.startswith(("train", "test", "TraceContext")) and "/" not in n for n in names]
    assert step_events._explicit_marker(names).tolist() == marker


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    EVENTS,
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 25)), min_size=1, max_size=6),
    st.lists(st.integers(0, 70), max_size=6, unique=True),
)
def test_guessed_step_windows_give_the_numpy_spans(events, windows, skipped):
    # Steps guessed from windows (guess.py): an event's step is the window it starts in.
    plane = _plane(events)
    windows = sorted(windows)
    frame = pd.DataFrame(
        {
            "begin_ps": [b for b, _ in windows],
            "duration_ps": [d for _, d in windows],
            "name": "step",
            "step": range(len(windows)),
        },
        index=sorted(skipped)[: len(windows)]
        + list(range(100, 100 + len(windows)))[: max(0, len(windows) - len(skipped))],
    )
    space = Space("", [plane], [], [], [])
    rows = step_events.real_rows(plane)
    markers, spans = guess._assign_to_windows(space, plane, frame, rows)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TBPROF_PURE_PYTHON", "1")
        _, expected = guess._assign_to_windows(space, plane, frame, rows)
    assert isinstance(expected, pd.DataFrame)
    if isinstance(spans, step_keys.PackedSpans):
        assert spans.count == len(expected)
    got_db = step_db.build_step_db(markers, spans, has_device=False)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TBPROF_PURE_PYTHON", "1")
        expected_db = step_db.build_step_db(markers, expected, has_device=False)
    pd.testing.assert_frame_equal(got_db.steps, expected_db.steps)

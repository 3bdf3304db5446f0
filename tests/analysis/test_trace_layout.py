"""The compiled trace index layout (``_trace_passes``) gives exactly what numpy gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.trace import depths, layout

needs_compiled = pytest.mark.skipif(layout._compiled is None, reason="built without a C compiler")

# (line, begin, duration): lines map to rows through LINE_ROW (two lines share row 1).
LINE_ROW = np.array([2, 0, 1, 1], dtype=np.int64)
events_strategy = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.one_of(st.just(0), st.integers(1, 25))),
    max_size=80,
)


def _columns(events: list, presorted: bool) -> tuple:
    if presorted:  # each line in (begin, longest first) order, as preprocessing leaves it
        events = sorted(events, key=lambda e: (e[0], e[1], -e[2]))
    line = np.array([e[0] for e in events], dtype=np.int32)
    begin = np.array([e[1] for e in events], dtype=np.int64)
    return line, begin, np.array([e[2] for e in events], dtype=np.int64)


def _both(function, *args) -> tuple:
    return function(*args, pure_python=False), function(*args, pure_python=True)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(events_strategy, st.booleans())
def test_order_by_row_agrees_and_is_the_lexsort_order(events, presorted):
    line, begin, duration = _columns(events, presorted)
    compiled, fallback = _both(layout.order_by_row, line, LINE_ROW, begin, duration, 3)
    for a, b in zip(compiled, fallback):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    row = LINE_ROW[line]
    expected = np.lexsort((-duration, begin, row))
    assert compiled[0].tolist() == expected.tolist()
    assert compiled[2].tolist() == (begin + duration)[expected].tolist()


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(events_strategy, st.booleans())
def test_lay_out_agrees(events, presorted):
    line, begin, duration = _columns(events, presorted)
    order, begin_t, end_t, bounds = layout.order_by_row(line, LINE_ROW, begin, duration, 3)
    depth_t, _ = depths.depths_in_rows(bounds, begin_t, end_t)
    names = (np.arange(len(line)) * 7 % 5).astype(np.int32)
    compiled, fallback = _both(layout.lay_out, order, bounds, begin_t, end_t, depth_t, names)
    for field in layout.Layout.__dataclass_fields__:
        a, b = getattr(compiled, field), getattr(fallback, field)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), field
    # Sorted by (row, depth) keeping time order; positions invert source.
    key = compiled.row.astype(np.int64) * 1000 + compiled.depth
    assert np.all(np.diff(key) >= 0)
    assert compiled.positions[compiled.source].tolist() == list(range(len(line)))
    assert compiled.name.tolist() == names[compiled.source].tolist()


def test_lay_out_rejects_a_depth_outside_its_row():
    if layout._compiled is None:
        pytest.skip("built without a C compiler")
    i32, i64 = (lambda: np.zeros(3, np.int32)), (lambda: np.zeros(3, np.int64))
    order = np.arange(3, dtype=np.int32)
    bounds, base = np.array([0, 3], np.int64), np.array([0, 1], np.int64)  # row 0: one key
    times = np.array([0, 1, 2], dtype=np.int64)
    columns = (i32(), i64(), i64(), i32(), i32(), i32(), i32(), i64(), np.zeros(2, np.int64))
    for depth, fails in (([0, 0, 0], False), ([0, 1, 0], True)):  # depth 1 has no key
        args = (order, bounds, base, times, times, np.array(depth, np.int64), i32(), *columns)
        if fails:
            with pytest.raises(ValueError, match="depth or source out of range"):
                layout._compiled.lay_out(*args)
        else:
            layout._compiled.lay_out(*args)
            assert columns[0].tolist() == [0, 1, 2]  # source


def test_order_by_row_rejects_a_line_without_row():
    if layout._compiled is None:
        pytest.skip("built without a C compiler")
    with pytest.raises(ValueError):
        layout.order_by_row(np.array([4], np.int32), LINE_ROW, np.zeros(1, np.int64),
                            np.zeros(1, np.int64), 3, pure_python=False)  # fmt: skip


def test_empty():
    z = np.zeros(0, dtype=np.int64)
    for pure in (True, False):
        order, begin_t, end_t, bounds = layout.order_by_row(
            np.zeros(0, np.int32), LINE_ROW, z, z, 3, pure
        )
        assert bounds.tolist() == [0, 0, 0, 0]
        lay = layout.lay_out(order, bounds, begin_t, end_t, z, np.zeros(0, np.int32), pure)
        assert lay.seg_bounds.tolist() == [0] and not len(lay.seg_row) and not len(lay.source)

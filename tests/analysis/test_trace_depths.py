"""The compiled depth pass of the trace index gives exactly what the numpy fallback gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.trace import depths, layout
from tensorboard_plugin_profile.kernels import compiled

needs_compiled = pytest.mark.skipif(
    compiled.load(depths.__name__) is None, reason="built without a C compiler"
)


def _rows(events):
    """Events sorted as the trace index sorts them: (row, begin, longest first)."""
    events = sorted(events, key=lambda e: (e[0], e[1], -e[2]))
    row = np.array([e[0] for e in events], dtype=np.int64)
    begin = np.array([e[1] for e in events], dtype=np.int64)
    return row, begin, begin + np.array([e[2] for e in events], dtype=np.int64)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(0, 40),
            st.one_of(st.just(0), st.integers(1, 30)),  # instants and spans, ties
        )
    ),
    st.booleans(),
)
def test_row_depths_agree(events, nested_only):
    if nested_only:  # well-nested rows: spans that only contain or follow each other
        events = [(r, b - b % 10 + (d % 3), 10 - 2 * (d % 3)) for r, b, d in events]
    row, begin, end = _rows(events)
    compiled = depths.row_depths(row, begin, end, 4, pure_python=False)
    fallback = depths.row_depths(row, begin, end, 4, pure_python=True)
    assert compiled[0].tolist() == fallback[0].tolist() and compiled[1] == fallback[1]
    for r in range(4):  # events sharing a depth on a row never overlap
        on = row == r
        for d in np.unique(compiled[0][on]).tolist():
            mine = np.flatnonzero(on & (compiled[0] == d))
            assert np.all(begin[mine][1:] >= end[mine][:-1])


def test_nesting_depth_and_relaying():
    # Row 0 nests (0 ⊃ 1 ⊃ 2, then 3); row 1 overlaps without nesting, so it is re-laid.
    row = np.array([0, 0, 0, 0, 1, 1, 1])
    begin = np.array([0, 1, 2, 10, 0, 5, 12])
    end = np.array([9, 8, 3, 11, 10, 15, 20])
    for pure in (False, True):
        depth, relaid = depths.row_depths(row, begin, end, 2, pure_python=pure)
        assert depth.tolist() == [0, 1, 2, 0, 0, 1, 0] and relaid == 1


@needs_compiled
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 400)), min_size=70, max_size=400))
def test_rows_with_more_lanes_than_the_compiled_scan_agree(spans):
    # Wide overlaps need more than 64 lanes: the compiled pass hands over to its heaps.
    row, begin, end = _rows([(0, b, d) for b, d in spans] + [(0, 0, 1000), (0, 1, 1000)])
    compiled = depths.row_depths(row, begin, end, 1, pure_python=False)
    fallback = depths.row_depths(row, begin, end, 1, pure_python=True)
    assert compiled[0].tolist() == fallback[0].tolist() and compiled[1] == fallback[1]


def test_ends_before_begins_take_the_fallback():
    row, begin, end = np.zeros(3, np.int64), np.array([0, 5, 6]), np.array([10, 4, 7])
    for pure in (False, True):
        depth, relaid = depths.row_depths(row, begin, end, 1, pure_python=pure)
        assert depth.tolist() == depths._depths_numpy(np.array([0, 3]), begin, end)[0].tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6))))
def test_segment_order_is_the_stable_lexsort(cells):
    # Rows sorted (some empty), depths in any order inside a row.
    cells = sorted(cells, key=lambda c: c[0])
    row = np.array([r for r, _ in cells], dtype=np.int64)
    depth = np.array([d for _, d in cells], dtype=np.int64)
    expected = np.lexsort((depth, row)).tolist()
    assert layout._by_depth(row, depth, 6).tolist() == expected

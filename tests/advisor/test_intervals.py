"""The advisor's interval helpers, worked a block at a time, against plain definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.advice import facts as advice

intervals = st.lists(st.tuples(st.integers(-30, 30), st.integers(0, 12)), max_size=40)


def covered_length(spans) -> int:
    """The union's length by counting the unit cells [t, t + 1) some interval covers."""
    return len({t for begin, duration in spans for t in range(begin, begin + duration)})


def columns(spans) -> tuple:
    array = np.array(spans, dtype=np.int64).reshape(-1, 2)
    return np.ascontiguousarray(array[:, 0]), np.ascontiguousarray(array[:, 1])


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 16])
def test_busy_time_is_the_length_of_the_union(block, monkeypatch):
    monkeypatch.setattr(advice, "_BLOCK", block)  # blocks smaller than the runs they cut

    @settings(max_examples=200, deadline=None)
    @given(intervals)
    def check(spans):
        assert advice.busy_time_ps(*columns(spans)) == covered_length(spans)

    check()


def test_busy_time_of_runs_that_cross_blocks(monkeypatch):
    monkeypatch.setattr(advice, "_BLOCK", 2)
    # [0, 10] swallows [2, 3] and [4, 5] (the next block); [12, 14] and [13, 20] join.
    begin = np.array([13, 4, 0, 12, 2], dtype=np.int64)
    duration = np.array([7, 1, 10, 2, 1], dtype=np.int64)
    assert advice.busy_time_ps(begin, duration) == 10 + 8
    assert advice.busy_time_ps(begin[:0], duration[:0]) == 0


@pytest.mark.parametrize("block", [1, 3, 1 << 16])
def test_latest_end_is_the_largest_begin_plus_duration(block, monkeypatch):
    monkeypatch.setattr(advice, "_BLOCK", block)
    begin = np.array([5, 40, 7, -3, 38, 0, 2], dtype=np.int64)
    duration = np.array([1, 0, 30, 100, 3, 0, 9], dtype=np.int64)
    assert advice.latest_end_ps(begin, duration) == 97

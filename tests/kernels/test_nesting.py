"""Vectorised nesting agrees with upstream's point-by-point stack."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.kernels.nesting import _replay_line, nest


def test_children_and_self_time():
    # A=[0,10] holds B=[2,5] which holds C=[3,4]; D=[6,10] ends with A and, like
    # upstream, is dropped (A's end comes first and pops it).
    r = nest(np.zeros(4), [0, 2, 3, 6], [10, 5, 4, 10], [1, 2, 3, 4])
    assert r.matched.tolist() == [True, True, True, False]
    assert r.self_ps.tolist()[:3] == [7, 2, 1]
    assert r.parent.tolist()[:3] == [-1, 0, 1]
    assert r.replayed_lines == 1


def test_lines_are_independent():
    r = nest([0, 0, 1], [0, 1, 1], [5, 2, 2], [1, 2, 2])
    assert r.parent.tolist() == [-1, 0, -1] and r.replayed_lines == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 10), st.integers(0, 3)),
        min_size=1,
        max_size=15,
    )
)
def test_matches_stack_replay(events):
    events.sort(key=lambda e: e[0])
    begin = np.array([e[0] for e in events])
    end = begin + np.array([e[1] for e in events])
    key = np.array([e[2] for e in events])
    r = nest(np.zeros(len(events)), begin, end, key)
    matched, time_ps, parent = _replay_line(begin, end, key)
    ok = matched & (parent >= 0)
    children = np.bincount(parent[ok], weights=time_ps[ok], minlength=len(events))
    assert r.matched.tolist() == matched.tolist()
    assert r.time_ps.tolist() == time_ps.tolist()
    assert r.children_ps.tolist() == children.astype(int).tolist()

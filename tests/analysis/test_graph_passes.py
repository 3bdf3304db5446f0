"""The compiled graph passes of step grouping give exactly what the numpy fallbacks give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis import graph_passes, passes
from tensorboard_plugin_profile.analysis.graph_passes import NO_LABEL

needs_compiled = pytest.mark.skipif(
    not passes.compiled_available(), reason="built without a C compiler"
)
BOTH = (False, True)


def _upstream_stack(line, begin, end, skip) -> list:
    """Upstream's per-line stack, literally (the oracle of ``stack_parents``)."""
    out, stack = [], []
    for i in range(len(line)):
        if i and line[i] != line[i - 1]:
            stack = []
        out.append(-1)
        if skip[i]:
            continue
        while stack and not (begin[stack[-1]] <= begin[i] and end[i] <= end[stack[-1]]):
            stack.pop()
        if stack:
            out[-1] = stack[-1]
        stack.append(i)
    return out


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(-5, 40), st.integers(0, 15), st.booleans()),
    ),
    st.booleans(),
)
def test_stack_parents_agree(rows, in_order):
    # Lines in runs (interleaved lines too); begins sorted per run or not at all.
    if in_order:
        rows = sorted(rows, key=lambda r: (r[0], r[1]))
    line = np.array([r[0] for r in rows], dtype=np.int64)
    begin = np.array([r[1] for r in rows], dtype=np.int64)
    end = begin + np.array([r[2] for r in rows], dtype=np.int64)
    skip = np.array([r[3] and r[2] % 3 == 0 for r in rows], dtype=bool)
    expected = _upstream_stack(line, begin, end, skip)
    for pure in BOTH:
        assert graph_passes.stack_parents(line, begin, end, skip, pure).tolist() == expected


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1)))))
def test_csr_agree(case):
    n, keys = case
    keys = np.array(keys, dtype=np.int64)
    values = np.arange(len(keys), dtype=np.int64) * 7 - 3
    (ptr_c, out_c), (ptr_f, out_f) = (graph_passes.csr(keys, values, n, pure) for pure in BOTH)
    assert ptr_c.tolist() == ptr_f.tolist() and out_c.tolist() == out_f.tolist()
    for k in range(n):  # key k's values, in input order
        assert out_c[ptr_c[k] : ptr_c[k + 1]].tolist() == values[keys == k].tolist()


def test_csr_rejects_a_key_out_of_range():
    for pure in BOTH:
        with pytest.raises(ValueError):
            graph_passes.csr(np.array([0, 3]), np.array([1, 2]), 3, pure)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(-1, n - 1), min_size=n, max_size=n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20),
        )
    )
)
def test_child_lists_agree(case):
    parent_of, extra = case
    parent_of = np.array(parent_of, dtype=np.int64)
    extra_parent = np.array([p for p, _ in extra], dtype=np.int64)
    extra_child = np.array([c for _, c in extra], dtype=np.int64)
    results = [
        graph_passes.child_lists(parent_of, extra_parent, extra_child, pure) for pure in BOTH
    ]
    (ptr, out), (ptr_f, out_f) = results
    assert ptr.tolist() == ptr_f.tolist() and out.tolist() == out_f.tolist()
    for k in range(len(parent_of)):  # nodes naming k as parent, then k's extra children
        expected = np.flatnonzero(parent_of == k).tolist() + extra_child[extra_parent == k].tolist()
        assert out[ptr[k] : ptr[k + 1]].tolist() == expected


def test_child_lists_reject_a_parent_out_of_range():
    for pure in BOTH:
        with pytest.raises(ValueError):
            graph_passes.child_lists(np.array([-1, 2]), np.zeros(0), np.zeros(0), pure)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30),
            st.lists(st.integers(-1, 3), min_size=n, max_size=n),
        )
    )
)
def test_group_crossings_agree(case):
    edges, group = case
    n = len(group)
    parent = np.array([p for p, _ in edges], dtype=np.int64)
    ptr, child = graph_passes.csr(parent, np.array([c for _, c in edges], dtype=np.int64), n)
    expected = {
        (group[p], group[c])
        for p, c in edges
        if min(group[p], group[c]) >= 0 and group[p] != group[c]
    }
    for pure in BOTH:
        outer, inner = graph_passes.group_crossings(ptr, child, np.array(group), pure)
        assert set(zip(outer.tolist(), inner.tolist())) == expected


def _closure_min(n, edges, label) -> list:
    """min over every node with a path to x (x included) of its label, by brute force."""
    reach = [{x} for x in range(n)]
    changed = True
    while changed:
        changed = False
        for parent, child in edges:
            if not reach[parent] <= reach[child]:
                reach[child] |= reach[parent]
                changed = True
    return [min(label[y] for y in reach[x]) for x in range(n)]


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 14).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30),
            st.lists(st.one_of(st.just(NO_LABEL), st.integers(0, 6)), min_size=n, max_size=n),
        )
    )
)
def test_flood_min_agree(case):
    # Random graphs: cycles, self loops, repeated edges, tied labels.
    n, edges, label = case
    parent = np.array([p for p, _ in edges], dtype=np.int64)
    child = np.array([c for _, c in edges], dtype=np.int64)
    ptr, idx = graph_passes.csr(parent, child, n)
    label = np.array(label, dtype=np.int64)
    before = label.copy()
    results = [graph_passes.flood_min(ptr, idx, label, pure).tolist() for pure in BOTH]
    assert results[0] == results[1] == _closure_min(n, edges, label.tolist())
    assert label.tolist() == before.tolist()  # the input is not modified


@needs_compiled
def test_flood_min_rejects_a_malformed_graph():
    with pytest.raises(ValueError):
        graph_passes.flood_min(np.array([0, 1]), np.array([5]), np.array([0]), pure_python=False)

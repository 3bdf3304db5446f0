"""The graph passes of step grouping: the compiled forest passes give exactly what the
numpy fallbacks give, and both what brute force gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.kernels import compiled, graph_passes
from tensorboard_plugin_profile.kernels.graph_passes import NO_LABEL
from tensorboard_plugin_profile.preprocessing.event_graph import Graph, intra_thread_forest

BUILT = compiled.load(graph_passes.__name__) is not None
needs_compiled = pytest.mark.skipif(not BUILT, reason="built without a C compiler")
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


LINE_ROWS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(-5, 40), st.integers(0, 15), st.booleans()),
)


def _line_columns(rows, in_order) -> tuple:
    """(line, begin, duration, skip): lines in runs (interleaved lines too), begins
    sorted per run or not at all."""
    if in_order:
        rows = sorted(rows, key=lambda r: (r[0], r[1]))
    line = np.array([r[0] for r in rows], dtype=np.int32)
    begin = np.array([r[1] for r in rows], dtype=np.int64)
    duration = np.array([r[2] for r in rows], dtype=np.int64)
    skip = np.array([r[3] and r[2] % 3 == 0 for r in rows], dtype=bool)
    return line, begin, duration, skip


@settings(max_examples=400, deadline=None)
@given(LINE_ROWS, st.booleans())
def test_stack_parents_match_upstream(rows, in_order):
    line, begin, duration, skip = _line_columns(rows, in_order)
    expected = _upstream_stack(line, begin, begin + duration, skip)
    assert graph_passes.stack_parents(line, begin, begin + duration, skip).tolist() == expected


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(LINE_ROWS, st.booleans())
def test_line_forest_matches_upstream(rows, in_order):
    line, begin, duration, skip = _line_columns(rows, in_order)
    parent, stop = graph_passes.line_forest(line, begin, duration, skip, pure_python=False)
    assert parent.tolist() == _upstream_stack(line, begin, begin + duration, skip)
    for i in range(len(line)):  # stop: the descendants are the rows up to it not skipped
        if skip[i]:
            assert stop[i] == i
            continue
        descendants, frontier = set(), {i}
        while frontier:
            frontier = set(np.flatnonzero(np.isin(parent, list(frontier))).tolist())
            descendants |= frontier
        inside = [k for k in range(i + 1, stop[i]) if not skip[k]]
        assert inside == sorted(descendants)


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


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1)))),
    st.sampled_from([0.0, 0.25, 1e9]),
)
def test_runs_by_key_counts_or_sorts_to_the_same_arrays(case, edges_per_node):
    # Many edges per node take the counting sort (compiled), few the argsort; the fallback
    # always sorts. Every way gives the distinct keys, their runs and the values in order.
    n, keys = case
    keys = np.array(keys, dtype=np.int64)
    values = np.arange(len(keys), dtype=np.int64) * 5 + 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(graph_passes, "COUNTING_SORT_EDGES_PER_NODE", edges_per_node)
        runs = [graph_passes.runs_by_key(keys, values, n, pure) for pure in BOTH]
    for distinct, ptr, out in runs:
        assert distinct.dtype == np.int64 and ptr.dtype == np.int64 and out.dtype == np.int64
        assert distinct.tolist() == sorted(set(keys.tolist()))
        assert ptr.tolist()[-1] == len(keys) and len(ptr) == len(distinct) + 1
        for k, key in enumerate(distinct.tolist()):
            assert out[ptr[k] : ptr[k + 1]].tolist() == values[keys == key].tolist()


def test_csr_rejects_a_key_out_of_range():
    for pure in BOTH:
        with pytest.raises(ValueError):
            graph_passes.csr(np.array([0, 3]), np.array([1, 2]), 3, pure)


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
    ptr, out = graph_passes.child_lists(parent_of, extra_parent, extra_child)
    for k in range(len(parent_of)):  # nodes naming k as parent, then k's extra children
        expected = np.flatnonzero(parent_of == k).tolist() + extra_child[extra_parent == k].tolist()
        assert out[ptr[k] : ptr[k + 1]].tolist() == expected


def test_child_lists_reject_a_parent_out_of_range():
    with pytest.raises(ValueError):
        graph_passes.child_lists(np.array([-1, 2]), np.zeros(0), np.zeros(0))


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
    outer, inner = graph_passes.group_crossings(ptr, child, np.array(group))
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
    result = graph_passes.flood_min(ptr, idx, label).tolist()
    assert result == _closure_min(n, edges, label.tolist())
    assert label.tolist() == before.tolist()  # the input is not modified


def _reach(n, edges, seed, proper) -> set:
    """The nodes with a path from ``seed`` (of at least one edge when ``proper``)."""
    found = set() if proper else {seed}
    frontier = [seed]
    while frontier:
        step = [c for p, c in edges if p in frontier and c not in found]
        found |= set(step)
        frontier = list(set(step))
    return found


def _flood_oracle(n, edges, order, values, proper) -> tuple:
    label, flooded, taken = [None] * n, [], 0
    for r, seed in enumerate(order):
        flooded.append(label[seed] is None)  # not reached by an earlier seed
        if not flooded[-1]:
            continue
        value = values[r] if values is not None else taken
        taken += 1
        for x in _reach(n, edges, seed, proper):
            if label[x] is None:
                label[x] = value
    return label, flooded


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    LINE_ROWS,
    st.booleans(),
    st.data(),
)
def test_forest_flood_agrees_with_fallback_and_brute_force(rows, in_order, data):
    line, begin, duration, skip = _line_columns(rows, in_order)
    n = len(line)
    if not n:
        return
    extra = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    order = data.draw(st.permutations(range(n)))
    order = order[: data.draw(st.integers(0, n))]
    proper = data.draw(st.booleans())
    dense = not proper and data.draw(st.booleans())
    values = None if dense else [3 * v + 1 for v in data.draw(st.permutations(range(len(order))))]
    parent = graph_passes.stack_parents(line, begin, begin + duration, skip)
    edges = [(int(p), c) for c, p in enumerate(parent.tolist()) if p >= 0] + extra
    expected, expected_flooded = _flood_oracle(n, edges, order, values, proper)
    extra_edges = (
        np.array([p for p, _ in extra], np.int64),
        np.array([c for _, c in extra], np.int64),
    )
    results = []
    forest = graph_passes.line_forest(line, begin, duration, skip, pure_python=False)
    for intra in (forest, (parent, None)):
        graph = Graph.build(intra, [extra_edges])
        for width in (np.int64, np.int32):  # int32 labels: grouping's group ids
            label, flooded, (outer, inner) = graph.flood(
                np.array(order, np.int64),
                values,
                proper,
                unreached=-1,
                out=np.full(n, 7, dtype=width),  # written whole, whatever it held
                crossings=not proper,
            )
            assert label.dtype == width
            assert label.tolist() == [-1 if v is None else v for v in expected]
            assert flooded.tolist() == expected_flooded
            results.append(set(zip(outer.tolist(), inner.tolist())))
    if not proper:
        crossing = {(label[p], label[c]) for p, c in edges if min(label[p], label[c]) >= 0}
        assert all(r == {(a, b) for a, b in crossing if a != b} for r in results)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(-5, 60), st.integers(0, 25), st.booleans()),
        min_size=8,
        max_size=120,
    ),
    st.booleans(),
    st.integers(2, 9),
    st.integers(1, 6),
)
def test_line_forest_split_across_threads_gives_the_same_rows(rows, in_order, threads, window):
    # Splits are guessed from a window of rows before them and checked by the part
    # before; a tiny window makes wrong guesses (an event longer than the window encloses
    # the split), which must fall back to one pass with the same result.
    line, begin, duration, skip = _line_columns(rows, in_order)
    expected = graph_passes.line_forest(line, begin, duration, skip, False, threads=1)
    parent, stop = np.empty_like(expected[0]), np.empty_like(expected[1])
    columns = (line, begin, duration, skip.view(np.uint8), parent, stop)
    parts = graph_passes._graph_passes.line_forest(*columns, threads, window)
    assert 1 <= parts <= threads
    assert parent.tobytes() == expected[0].tobytes() and stop.tobytes() == expected[1].tobytes()
    ours = graph_passes.line_forest(line, begin, duration, skip, False, threads=threads)
    assert ours[0].tobytes() == expected[0].tobytes()


@needs_compiled
def test_line_forest_splits_between_top_level_events_and_not_inside_one():
    # 3 lines of 40 nested pairs: splits land between pairs and hold; one event enclosing
    # the whole line makes every guess inside it wrong, and one pass is kept.
    pairs = np.arange(40, dtype=np.int64)
    begin = np.repeat(pairs * 10, 2)
    duration = np.tile(np.array([5, 2], dtype=np.int64), 40)
    line = np.zeros(80, dtype=np.int32)
    no_skip = np.zeros(80, dtype=np.uint8)
    out = np.empty(80, np.int32), np.empty(80, np.int32)
    assert graph_passes._graph_passes.line_forest(line, begin, duration, no_skip, *out, 4, 3) == 4
    begin, duration = np.r_[0, begin], np.r_[1000, duration]
    line, no_skip = np.zeros(81, dtype=np.int32), np.zeros(81, dtype=np.uint8)
    out = np.empty(81, np.int32), np.empty(81, np.int32)
    assert graph_passes._graph_passes.line_forest(line, begin, duration, no_skip, *out, 4, 3) == 1
    assert (out[0][1:] >= 0).all() and (out[1][0] == 81)


@needs_compiled
def test_line_forest_rejects_columns_of_other_lengths():
    line, begin = np.zeros(3, np.int32), np.zeros(3, np.int64)
    with pytest.raises(ValueError):
        graph_passes.line_forest(line, begin, np.zeros(2, np.int64), None, False)
    with pytest.raises(ValueError):
        graph_passes.line_forest(line, begin, np.zeros(3, np.int64), np.zeros(2, bool), False)


@needs_compiled
def test_flood_rejects_malformed_forests():
    graph = Graph.build(
        graph_passes.line_forest(
            np.zeros(2, np.int32), np.zeros(2, np.int64), np.ones(2, np.int64), None, False
        ),
        [],
    )
    graph.stop[0] = 5  # past the end
    with pytest.raises(ValueError):
        graph.flood(np.array([0]))
    graph.stop[0] = 1
    with pytest.raises(ValueError):
        graph.flood(np.array([2]))  # a seed out of range
    narrow = np.empty(2, dtype=np.int32)
    with pytest.raises(ValueError):
        graph.flood(np.array([0]), np.array([2**31]), out=narrow)  # a value past int32
    with pytest.raises(ValueError):
        graph.flood(np.array([0]), out=narrow)  # unreached (NO_LABEL) past int32
    with pytest.raises(ValueError):
        graph.flood(np.array([0]), out=np.empty(2, dtype=np.int16))


def test_graphs_past_int32_ids_take_the_fallbacks(monkeypatch):
    monkeypatch.delenv("TBPROF_PURE_PYTHON", raising=False)  # the compiled forest if built
    line = np.array([0, 0, 0, 1], dtype=np.int32)
    begin, duration = np.array([0, 1, 5, 0]), np.array([10, 2, 1, 3])
    assert graph_passes.line_forest(line, begin, duration, None, pure_python=True) is None
    parent, stop = intra_thread_forest(line, begin, duration, None)
    assert parent.tolist() == [-1, 0, 0, -1] and (stop is not None) == BUILT
    # One row more than int32 ids allow (made small here): the numpy fallback, same parents.
    monkeypatch.setattr(graph_passes, "MAX_FOREST_ROWS", len(line) - 1)
    assert graph_passes.line_forest(line, begin, duration, None, pure_python=False) is None
    parent, stop = intra_thread_forest(line, begin, duration, None)
    assert parent.tolist() == [-1, 0, 0, -1] and stop is None


@needs_compiled
def test_a_graph_with_many_extra_edges_counts_them_into_place(monkeypatch):
    # Every consumer of a context shared by 50 producers and 50 consumers gets 50 parents
    # (the synthetic bench file: 18 M such edges over 1.7 M events). Before, two stable
    # argsorts of the edges (O(E log E), 2.2 s there) laid them out by child and by parent.
    monkeypatch.delenv("TBPROF_PURE_PYTHON", raising=False)
    n, fan = 400, 50
    line = np.repeat(np.arange(n // 4, dtype=np.int32), 4)
    begin, duration = np.arange(n) * 10, np.full(n, 5)
    intra = intra_thread_forest(line, begin, duration, None)
    producers, consumers = np.arange(fan), np.arange(n - fan, n)
    parents, children = np.repeat(producers, fan), np.tile(consumers, fan)
    expected = Graph.build(intra, [(parents, children)])

    def refuse(*args, **kwargs):
        raise AssertionError("edges sorted by comparison")

    monkeypatch.setattr(np, "argsort", refuse)
    graph = Graph.build(intra, [(parents, children)])
    for name in ("extra_nodes", "extra_ptr", "extra_idx"):
        assert getattr(graph, name).tolist() == getattr(expected, name).tolist()
    assert [a.tolist() for a in graph.down] == [a.tolist() for a in expected.down]
    assert graph.parents_of(n - 1) == list(range(fan))


def _rows_by_code_brute(codes, slot, slots):
    """The rows of each slot in table order, one row at a time."""
    out = [[] for _ in range(slots)]
    for row, code in enumerate(codes.tolist()):
        s = slot[-1 if code < 0 else code]
        if s >= 0:
            out[s].append(row)
    return out


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.lists(st.integers(-1, 7), max_size=120),  # codes (-1: missing)
            st.lists(st.integers(-1, k - 1), min_size=9, max_size=9),  # 8 codes + missing
        )
    ),
    st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
    st.integers(2, 9),
)
def test_rows_by_code_split_across_threads_gives_the_same_rows(case, dtype, threads):
    # Parts of rows count per slot, then write from the sum of the parts before them: the
    # same bytes for any thread count, equal to the numpy twin and to one row at a time.
    slots, codes, slot = case
    codes, slot = np.array(codes, dtype=dtype), np.array(slot, dtype=np.int32)
    one = graph_passes.rows_by_code(codes, slot, slots, pure_python=False, threads=1)
    split = graph_passes.rows_by_code(codes, slot, slots, pure_python=False, threads=threads)
    twin = graph_passes.rows_by_code(codes, slot, slots, pure_python=True)
    for ptr, rows in (split, twin):
        assert ptr.dtype == rows.dtype == np.int64
        assert ptr.tobytes() == one[0].tobytes() and rows.tobytes() == one[1].tobytes()
    ptr, rows = one
    brute = _rows_by_code_brute(codes, slot.tolist(), slots)
    assert [rows[ptr[s] : ptr[s + 1]].tolist() for s in range(slots)] == brute


@needs_compiled
def test_rows_by_code_splits_a_large_column_the_same_way():
    # Over the threshold the parts are ~256 Ki rows each: many parts, one per queue turn.
    rng = np.random.default_rng(7)
    codes = rng.integers(-1, 40, 3 * compiled.PARALLEL_MIN_ROWS + 11).astype(np.int8)
    slot = np.full(41, -1, dtype=np.int32)
    slot[[3, 5, 17, 39]] = [0, 1, 0, 2]  # two codes share slot 0: merged in table order
    one = graph_passes.rows_by_code(codes, slot, 3, pure_python=False, threads=1)
    for threads in (2, 3, 16):
        got = graph_passes.rows_by_code(codes, slot, 3, pure_python=False, threads=threads)
        assert got[0].tobytes() == one[0].tobytes() and got[1].tobytes() == one[1].tobytes()
    twin = graph_passes.rows_by_code(codes, slot, 3, pure_python=True)
    assert twin[0].tobytes() == one[0].tobytes() and twin[1].tobytes() == one[1].tobytes()
    ptr, rows = one
    assert rows[ptr[0] : ptr[1]].tolist() == np.flatnonzero((codes == 3) | (codes == 17)).tolist()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_rows_by_code_rejects_codes_without_a_slot_and_bad_tables(dtype):
    codes = np.array([0, 4, 1], dtype=dtype)
    slot = np.array([0, -1, 1, -1], dtype=np.int32)  # codes 0..2, then missing
    for pure in BOTH if BUILT else (True,):
        with pytest.raises(ValueError, match="no slot"):
            graph_passes.rows_by_code(codes, slot, 2, pure_python=pure, threads=3)
    if not BUILT:
        return
    native = graph_passes._graph_passes
    ptr = np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="slot out of range"):
        native.rows_by_code(codes[:1], np.array([2, -1], dtype=np.int32), ptr, None, 1)
    with pytest.raises(ValueError, match="out does not match"):
        native.rows_by_code(codes[:1], slot, ptr, np.zeros(5, dtype=np.int64), 1)
    with pytest.raises(ValueError, match="ptr does not match"):  # ptr claims one row too few
        native.rows_by_code(
            np.array([0, 0], dtype=np.int8), slot, np.array([0, 1, 1]), np.zeros(1, np.int64), 2
        )

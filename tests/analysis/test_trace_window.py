"""Trace index windows against a brute-force filter of the same events (hypothesis)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.trace import layout
from tensorboard_plugin_profile.analysis.trace import trace_index as ti
from tensorboard_plugin_profile.analysis.trace import trace_window as tw
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace

NAMES = ("a", "b", "c")


def make_index(rows: dict, flows: tuple = ()) -> ti.TraceIndex:
    """An index of one host plane: ``rows`` = {tid: [(begin_ps, dur_ps, name), ...]}.

    ``flows`` = ((tid, event number, flow stat value), ...).
    """
    space = xplane_pb2.XSpace()
    plane = space.planes.add()
    plane.id, plane.name = 1, "/host:CPU"
    plane.stat_metadata[1].id, plane.stat_metadata[1].name = 1, "flow"
    for k, name in enumerate(NAMES, start=1):
        plane.event_metadata[k].id, plane.event_metadata[k].name = k, name
    flow_at = {(tid, n): v for tid, n, v in flows}
    for tid, events in rows.items():
        line = plane.lines.add()
        line.id = line.display_id = tid
        line.name = f"t{tid}"
        for n, (begin, dur, name) in enumerate(events):
            ev = line.events.add()
            ev.metadata_id = NAMES.index(name) + 1
            ev.offset_ps, ev.duration_ps = begin, dur
            if (tid, n) in flow_at:
                stat = ev.stats.add()
                stat.metadata_id, stat.uint64_value = 1, flow_at[(tid, n)]
    decoded = decode_xspace(space.SerializeToString(), "synthetic")
    return ti.build_index([ti.TracePlane(701, "/host:CPU", decoded.planes[0])])


def nested_events(actions: list, scale: int) -> list:
    """A well-nested row from open/close/instant actions with gaps (stack replay)."""
    out, stack, t = [], [], 0
    for action, gap, name in actions:
        t += gap * scale
        if action == 0:
            stack.append(len(out))
            out.append([t, None, name])
        elif action == 1 and stack:
            out[stack.pop()][1] = t
        else:
            out.append([t, t, name])
    while stack:
        t += scale
        out[stack.pop()][1] = t
    return [(b, e - b, n) for b, e, n in out]


def stack_depths(events: list) -> list:
    order = sorted(range(len(events)), key=lambda i: (events[i][0], -events[i][1]))
    depth, open_ends = {}, []
    for i in order:
        begin, end = events[i][0], events[i][0] + events[i][1]
        open_ends = [e for e in open_ends if e > begin]
        depth[i] = len(open_ends)
        open_ends.append(end)
    return [depth[i] for i in range(len(events))]


action = st.tuples(st.integers(0, 2), st.integers(0, 5), st.sampled_from(NAMES))
nested_row = st.builds(nested_events, st.lists(action, max_size=40), st.sampled_from([1, 700]))
messy_row = st.lists(
    st.tuples(st.integers(0, 3000), st.integers(0, 600), st.sampled_from(NAMES)), max_size=25
)
rows_strategy = st.dictionaries(st.integers(1, 4), st.one_of(nested_row, messy_row), max_size=3)


def brute_force(index: ti.TraceIndex, start: int, end: int, pixel: float, rows=None) -> list:
    """Items by the definition: per (row, depth), runs of narrow events closer than a pixel."""
    items = []
    for row in range(len(index.row_pid)):
        if rows is not None and row not in rows:
            continue
        for depth in sorted(set(index.depth[index.row == row].tolist())):
            pos = np.flatnonzero((index.row == row) & (index.depth == depth))
            b, e = index.begin_ps[pos], ends_of(index)[pos]
            pos = pos[(b <= end) & (e >= start)]
            pos = pos[np.argsort(index.begin_ps[pos], kind="stable")]
            run: list = []
            for p in pos.tolist():
                wide = pixel <= 0 or ends_of(index)[p] - index.begin_ps[p] >= pixel
                if (
                    run
                    and not wide
                    and not run[-1][1]
                    and (index.begin_ps[p] - ends_of(index)[run[-1][0]] < pixel)
                ):
                    run.append((p, wide))
                    continue
                if run:
                    items.append(run)
                run = [(p, wide)]
            if run:
                items.append(run)
    return sorted(
        (int(index.begin_ps[r[0][0]]), int(ends_of(index)[r[-1][0]]), len(r), int(row_of(index, r)))
        for r in items
    )


def ends_of(index: ti.TraceIndex) -> np.ndarray:
    """The end of every position (the index keeps none: begin + the event's duration)."""
    return index.ends_at(np.arange(index.num_events))


def row_of(index, run):
    return index.row[run[0][0]]


def answer(items: tw.WindowItems) -> list:
    return sorted(
        zip(items.begin_ps.tolist(), items.end_ps_.tolist(), items.count.tolist(),
            items.row.tolist())
    )  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=rows_strategy,
    start=st.integers(-100, 3500),
    width=st.integers(0, 4000),
    resolution=st.sampled_from([0, 1, 3, 10, 100, 5000]),
    pick_rows=st.booleans(),
)
def test_window_matches_brute_force(rows, start, width, resolution, pick_rows):
    index = make_index(rows)
    end = start + width
    pixel = width / resolution if resolution else 0.0
    chosen = np.array([0]) if pick_rows and len(index.row_pid) else None
    items = tw.query_window(index, start, end, pixel, rows=chosen)
    expected = brute_force(index, start, end, pixel, None if chosen is None else {0})
    assert answer(items) == expected
    assert items.visible == sum(c for _, _, c, _ in expected)
    # Wide events come back as themselves, names included.
    wide = (items.count == 1) & (items.end_ps_ - items.begin_ps >= pixel)
    assert np.all(index.name_id[items.first[wide]] == items.name_id[wide])


@settings(max_examples=60, deadline=None)
@given(rows=st.dictionaries(st.integers(1, 3), nested_row, max_size=3))
def test_depth_is_stack_depth_on_nested_rows(rows):
    index = make_index(rows)
    for tid, events in rows.items():
        row = int(np.flatnonzero(index.row_tid == tid)[0]) if events else None
        if row is None:
            continue
        pos = np.flatnonzero(index.row == row)
        dur = ends_of(index) - index.begin_ps
        got = sorted(
            zip(index.begin_ps[pos].tolist(), dur[pos].tolist(), index.depth[pos].tolist())
        )
        want = sorted((b, d, depth) for (b, d, _), depth in zip(events, stack_depths(events)))
        assert got == want
    assert index.relaid_rows == 0


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy)
def test_same_depth_events_never_overlap(rows):
    index = make_index(rows)
    b = index.seg_bounds
    for s in range(len(index.seg_row)):
        begin, end = index.begin_ps[b[s] : b[s + 1]], ends_of(index)[b[s] : b[s + 1]]
        assert np.all(begin[1:] >= end[:-1])


def test_levels_are_used_and_agree_with_a_full_scan():
    rng = np.random.default_rng(0)
    begins = np.sort(rng.integers(0, 10**9, 3000))
    rows = {1: [(int(b), int(rng.integers(0, 2000)), "a") for b in begins]}
    index = make_index(rows)
    assert index.levels
    # Made on first use, they are what a full scan of every pixel size keeps.
    n, (lo, hi) = index.num_events, index.span_ps
    for size, cuts in index.levels:
        assert np.array_equal(cuts, np.flatnonzero(index.break_key >= size))
        assert 2 * len(cuts) <= n and size <= 4 * (hi - lo)
    kept = {size for size, _ in index.levels}
    for size in (1000 * 4**k for k in range(20)):
        if size <= 4 * (hi - lo) and size not in kept:
            assert 2 * np.count_nonzero(index.break_key >= size) > n
    for resolution in (10, 300, 1000):
        pixel = 10**9 / resolution
        assert tw._level_for(index, pixel) is not None
        fast = tw.query_window(index, 0, 10**9, pixel)
        index.level_for = lambda pixel: None  # no level: every event is visited
        slow = tw.query_window(index, 0, 10**9, pixel)
        del index.level_for
        assert answer(fast) == answer(slow) == brute_force(index, 0, 10**9, pixel)


@pytest.mark.parametrize("cap", [0, 1, 2, 5, 17])
def test_cap_is_fair_per_row_and_keeps_top_levels(cap):
    rows = {
        1: nested_events([(0, 1, "a")] + [(2, 1, "b")] * 30 + [(1, 1, "a")], 10),
        2: [(100 * i, 50, "c") for i in range(3)],
    }
    index = make_index(rows)
    items = tw.query_window(index, 0, 10**6, 0.0, max_events=cap)
    assert items.truncated and len(items.first) <= cap
    per_row = np.bincount(items.row, minlength=2)
    counts = np.array([32, 3])
    assert per_row.tolist() == tw.fair_shares(counts, cap).tolist()
    if per_row[0]:
        assert items.depth[items.row == 0].min() == 0


def test_fair_shares():
    assert tw.fair_shares(np.array([5, 1, 100]), 10).tolist() == [4, 1, 4]
    assert tw.fair_shares(np.array([5, 1, 100]), 1000).tolist() == [5, 1, 100]
    assert tw.fair_shares(np.array([3, 3]), 0).tolist() == [0, 0]


def test_flow_arrows_join_consecutive_ends_and_follow_the_window():
    out, inn = 2 | (7 << 2), 1 | (7 << 2)
    rows = {1: [(0, 10, "a"), (100, 10, "b")], 2: [(50, 10, "c"), (500, 10, "a")]}
    index = make_index(rows, flows=((1, 0, out), (2, 0, inn), (2, 1, inn)))
    flows = index.flows
    assert len(flows) == 2
    numbers = (flows.end_pos, flows.end_flow, flows.arrow_from, flows.arrow_to, flows.to_order)
    assert {n.dtype for n in numbers} == {np.dtype(np.int32)}  # 4 B, not 8, under 2**31
    pairs = sorted(zip(index.begin_ps[flows.arrow_from].tolist(),
                       index.begin_ps[flows.arrow_to].tolist()))  # fmt: skip
    assert pairs == [(0, 50), (50, 500)]
    everything = np.ones(2, dtype=bool)
    arrows, capped = tw.window_arrows(index, 40, 60, everything, 10)
    assert len(arrows) == 2 and not capped
    arrows, _ = tw.window_arrows(index, 400, 600, everything, 10)
    assert index.begin_ps[flows.arrow_to[arrows]].tolist() == [500]
    arrows, capped = tw.window_arrows(index, 0, 600, everything, 1)
    assert len(arrows) == 1 and capped
    only_first_row = np.array([True, False])
    assert not len(tw.window_arrows(index, 0, 600, only_first_row, 10)[0])


def test_empty_index():
    index = ti.build_index([])
    items = tw.query_window(index, 0, 0, 0.0)
    assert len(items.first) == 0 and items.visible == 0 and index.span_ps == (0, 0)


def test_flow_arrows_need_an_event_at_least_a_pixel_long():
    out, inn = 2 | (9 << 2), 1 | (9 << 2)
    rows = {1: [(0, 10, "a"), (1000, 3000, "b")], 2: [(50, 20, "c"), (2000, 10, "a")]}
    other = 10 << 2
    flows = ((1, 0, out), (2, 0, inn), (1, 1, 2 | other), (2, 1, 1 | other))
    index = make_index(rows, flows=flows)
    everything = np.ones(2, dtype=bool)
    for pixel, expected in ((0, 2), (20, 2), (21, 1), (3000, 1), (3001, 0)):
        arrows, _ = tw.window_arrows(index, 0, 5000, everything, 10, pixel)
        assert len(arrows) == expected, pixel


@pytest.mark.parametrize("presorted", [True, False])
def test_time_order_is_the_lexsort_order(presorted):
    rng = np.random.default_rng(3)
    row = rng.integers(0, 5, 500)
    begin = rng.integers(0, 40, 500)
    end = begin + rng.integers(0, 10, 500)
    if presorted:  # each row's events in (begin, longest first) order, rows interleaved
        by = np.lexsort((begin - end, begin))
        begin, end = begin[by], end[by]
    expected = np.lexsort((begin - end, begin, row))
    assert layout._time_order(row, begin, end).tolist() == expected.tolist()
    line_row = np.arange(5, dtype=np.int64)  # line k is row k
    for pure in (True, False):
        order, bounds = layout.order_by_row(row, line_row, begin, end - begin, 5, pure)
        assert order.tolist() == expected.tolist()
        assert bounds.tolist() == np.searchsorted(row[order], np.arange(6)).tolist()


any_row = st.lists(
    st.tuples(st.integers(0, 3000), st.integers(-50, 600), st.sampled_from(NAMES)), max_size=25
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.dictionaries(st.integers(1, 4), any_row, max_size=3))
def test_compiled_and_numpy_indexes_are_identical(rows):
    # Unsorted lines, ties, instants and even negative durations (a damaged file).
    indexes = []
    for pure in ("0", "1"):
        os.environ["TBPROF_PURE_PYTHON"] = pure
        try:
            indexes.append(make_index(rows))
        finally:
            os.environ.pop("TBPROF_PURE_PYTHON")
    compiled, numpy_only = indexes
    for name in ("seg_row", "seg_depth", "seg_bounds", "begin_ps", "name_id", "depth",
                 "row", "source", "break_key", "group_id", "event_row"):  # fmt: skip
        a, b = getattr(compiled, name), getattr(numpy_only, name)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), name
    assert ends_of(compiled).tolist() == ends_of(numpy_only).tolist()
    assert compiled.strings == numpy_only.strings and compiled.span_ps == numpy_only.span_ps
    # The span comes from each segment's last event (ends are not kept), which must be
    # the whole trace's even when an event ends before it begins.
    ends = ends_of(compiled)
    whole = (int(compiled.begin_ps.min()), int(ends.max())) if len(ends) else (0, 0)
    assert compiled.span_ps == whole


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=rows_strategy,
    sample_every=st.sampled_from([1, 2, 3, 7, 1024]),
    values=st.lists(st.integers(-10, 4000), min_size=1, max_size=6),
)
def test_search_begins_is_searchsorted_in_every_segment(rows, sample_every, values):
    # Begins are read through source, a binary search narrowed by sampled begins.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layout, "SAMPLE_EVERY", sample_every)
        index = make_index(rows)
        first, stop = index.seg_bounds[:-1], index.seg_bounds[1:]
        some = [(v, side) for v in values for side in ("left", "right")]
        some += [(int(b), side) for b in index.begin_ps[:5] for side in ("left", "right")]
        for value, side in some:
            got = index.search_begins(first, stop, value, side)
            want = [a + np.searchsorted(index.begin_ps[a:b], value, side=side)
                    for a, b in zip(first.tolist(), stop.tolist())]  # fmt: skip
            assert got.tolist() == want, (value, side)

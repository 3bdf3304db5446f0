"""The non-overlapping step sweep, against a literal transcription of upstream's tracker."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from tensorboard_plugin_profile.analysis.steps import build as steps
from tensorboard_plugin_profile.analysis.steps import step_db
from tensorboard_plugin_profile.analysis.steps import sweep as step_sweep
from tensorboard_plugin_profile.analysis.steps.step_db import TYPE

HC, WAIT = TYPE["HOST_COMPUTE"], TYPE["HOST_WAIT_INPUT"]


def _spans(rows):
    return pd.DataFrame(rows, columns=["group", "begin", "end", "type"])


def _tracker(spans: pd.DataFrame) -> dict:
    """ps per (group, type): the sequential priority tracker, boundary by boundary."""
    boundaries = []
    for g, b, e, t in spans.itertuples(index=False):
        boundaries += [(g, b, 1, -t, t), (g, e, 0, -t, t)]
    boundaries.sort()
    out: dict = {}
    for i, (g, time, is_start, _, t) in enumerate(boundaries):
        if i == 0 or boundaries[i - 1][0] != g:
            counts, current = [0] * len(step_db.EVENT_TYPES), 0
        if is_start:
            counts[t] += 1
            current = max(current, t)
        else:
            counts[t] -= 1
            if t == current and counts[t] == 0:
                current = next((j for j in range(t - 1, -1, -1) if counts[j] > 0), 0)
        if i + 1 < len(boundaries) and boundaries[i + 1][0] == g:
            length = boundaries[i + 1][1] - time
            if length:
                out[(g, current)] = out.get((g, current), 0) + length
    return out


def _ours(spans) -> dict:
    pieces = step_db.non_overlapping(spans)
    totals = (pieces["end"] - pieces["begin"]).groupby([pieces["group"], pieces["type"]]).sum()
    return {k: v for k, v in totals.items() if v}


def test_an_instant_with_nothing_open_keeps_its_type_until_the_next_start():
    # Host compute "sticks" from the instant at 10 to the start of the span at 50.
    pieces = step_db.non_overlapping(_spans([(0, 10, 10, HC), (0, 50, 60, HC)]))
    assert pieces.values.tolist() == [[0, 10, 50, HC], [0, 50, 60, HC]]


def test_an_instant_inside_an_open_span_changes_nothing():
    spans = _spans([(0, 0, 20, HC), (0, 10, 10, HC), (0, 40, 50, HC)])
    assert _ours(spans) == {(0, HC): 30, (0, 0): 20}


def test_a_higher_start_ends_the_stuck_type_and_its_end_clears_it():
    spans = _spans([(0, 10, 10, HC), (0, 30, 40, WAIT), (0, 70, 80, HC)])
    assert _ours(spans) == {(0, HC): 30, (0, WAIT): 10, (0, 0): 30}


def test_without_a_later_start_the_type_sticks_to_the_groups_last_boundary():
    spans = _spans([(0, 10, 10, WAIT), (0, 20, 30, HC), (1, 0, 5, HC)])
    assert _ours(spans) == {(0, WAIT): 20, (1, HC): 5}


@pytest.mark.parametrize("seed", range(20))
def test_random_spans_match_the_tracker(seed):
    rng = np.random.default_rng(seed)
    n = 60
    begin = rng.integers(0, 200, n)
    instant = rng.random(n) < 0.3
    end = np.where(instant, begin, begin + rng.integers(1, 40, n))
    types = rng.choice([HC, WAIT, TYPE["HOST_TO_DEVICE"], TYPE["DEVICE_COMPUTE_32"]], n)
    spans = pd.DataFrame(
        {"group": rng.integers(0, 3, n), "begin": begin, "end": end, "type": types}
    )
    assert _ours(spans) == _tracker(spans)


@pytest.mark.parametrize("seed", range(10))
def test_best_host_offset_matches_trying_every_offset(seed):
    rng = np.random.default_rng(seed)

    def host(n, shift):
        begin = np.cumsum(rng.integers(50, 150, n)) + shift
        return pd.DataFrame({"begin_ps": begin, "duration_ps": rng.integers(1, 120, n)})

    chief, other = host(rng.integers(1, 30), 0), host(rng.integers(1, 30), rng.integers(-500, 500))
    cb, ce = chief["begin_ps"].to_numpy(), (chief["begin_ps"] + chief["duration_ps"]).to_numpy()
    ob, oe = other["begin_ps"].to_numpy(), (other["begin_ps"] + other["duration_ps"]).to_numpy()
    best, best_total = 0, -1
    for off in range(-len(cb) + 1, len(ob)):
        i = np.arange(max(0, -off), min(len(cb), len(ob) - off))
        total = np.maximum(np.minimum(ce[i], oe[i + off]) - np.maximum(cb[i], ob[i + off]), 0).sum()
        if total > best_total:
            best, best_total = off, total
    assert steps._best_offset(chief, other) == best


@pytest.mark.parametrize("time_scale", [100, 1 << 60])  # packed key, and the lexsort fallback
@pytest.mark.parametrize("seed", range(5))
def test_boundary_order_is_the_lexsort_order(seed, time_scale):
    rng = np.random.default_rng(seed)
    n = 400
    group = rng.integers(0, 4, n)
    time = rng.integers(0, 30, n) * (time_scale // 30)
    start, kind = rng.integers(0, 2, n), rng.integers(0, 18, n)
    expected = np.lexsort((-kind, start, time, group))
    got = step_sweep._boundary_order(group, time, start, kind, 18)
    assert got.tolist() == expected.tolist()


# --- the numpy sweep in pieces of whole groups ----------------------------------------
def _random_spans(seed: int, spans: int, groups: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    begin = rng.integers(0, 1000, spans) * 1000
    return _spans(
        {
            "group": rng.integers(0, groups, spans),
            "begin": begin,
            "end": begin + rng.integers(0, 30, spans) * 100,  # instants too
            "type": rng.choice([HC, WAIT, TYPE["HOST_COMPILE"], 0], spans),
        }
    )


def _windows(groups: int) -> tuple:
    group = np.arange(-1, groups + 1, dtype=np.int64)  # and windows without spans
    return group, np.full(len(group), 50_000), np.full(len(group), 900_000)


@pytest.mark.parametrize("pure_python", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_pieces_of_whole_groups_give_the_sums_of_one_sweep(seed, pure_python):
    spans = _random_spans(seed, 3_000, 40)
    if not pure_python:  # one group too wide to pack with the others: the numpy pieces
        spans.loc[spans["group"] == 7, "end"] += 1 << 58
    whole = step_sweep.breakdown(spans, _windows(40), 18, pure_python, piece_spans=1 << 20)
    for piece_spans in (1, 50, 333):
        pieces = step_sweep.breakdown(spans, _windows(40), 18, pure_python, piece_spans)
        for got, expected in zip(pieces, whole):
            assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


def test_the_numpy_sweep_in_pieces_holds_memory_of_a_piece_not_of_the_profile():
    spans = _random_spans(0, 200_000, 2_000)
    windows = _windows(2_000)

    def peak(piece_spans: int) -> int:
        tracemalloc.start()
        try:
            step_sweep.breakdown(spans, windows, 18, True, piece_spans)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    whole, pieces = peak(1 << 20), peak(4_096)
    # One sweep holds ~200 B per span; in pieces: the group order and the outputs.
    assert whole > 150 * len(spans) and pieces < 40 * len(spans), (whole, pieces)


def test_a_span_table_with_a_wide_group_packs_in_pieces_of_groups_that_fit():
    # One group 2^50 ps wide: 11 bits of group, 51 of time and 6 of tail do not fit in one
    # key. Compiled, the groups are packed in pieces whose keys fit (before: the numpy
    # sweep over every span, 233 B per span); the sums are the numpy sweep's.
    spans = _random_spans(0, 200_000, 2_000)
    spans.loc[spans["group"] == 7, "end"] += 1 << 50
    windows = _windows(2_000)
    tracemalloc.start()
    try:
        packed = step_sweep.breakdown(spans, windows, 18, pure_python=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = step_sweep.breakdown(spans, windows, 18, pure_python=True)
    for got, want in zip(packed, expected):
        assert got.tolist() == want.tolist()
    assert peak < 100 * len(spans), peak

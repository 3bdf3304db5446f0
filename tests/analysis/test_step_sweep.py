"""The non-overlapping step sweep, against a literal transcription of upstream's tracker."""

from __future__ import annotations

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

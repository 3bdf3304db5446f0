"""Per-name shortcuts of the trace index's plane events against per-event definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.analysis.trace import plane_events as pe
from tensorboard_plugin_profile.xspace import schema

small_ids = st.integers(-3, 40)
any_ids = st.one_of(small_ids, st.integers(-(2**40), 2**40))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(small_ids, any_ids), max_size=12), st.lists(any_ids, max_size=30))
def test_metadata_names_are_the_first_row_declaring_the_id(ids, event_ids):
    label_of_row = (np.arange(len(ids) + 1) * 3 + 1).astype(np.int32)  # last: no metadata
    got = pe._metadata_names(np.array(ids, dtype=np.int64), label_of_row, np.array(event_ids))
    first = {}
    for row, mid in enumerate(ids):
        first.setdefault(mid, row)
    expected = [label_of_row[first.get(mid, len(ids))] for mid in event_ids]
    assert got.dtype == np.int32 and got.tolist() == expected


step_names = st.lists(st.one_of(st.none(), st.sampled_from(["s0", "s1", "s10", "", "é"])))


@settings(max_examples=200, deadline=None)
@given(step_names, st.booleans())
def test_step_names_per_category_equal_per_event(names, some_rows):
    rows = np.arange(0, len(names), 2) if some_rows else None
    plain = pd.Series(names, dtype=object)
    for column in (plain, plain.astype("category")):
        codes, uniques, named = pe._step_names(column, rows)
        shown = names if rows is None else [names[r] for r in rows.tolist()]
        assert named.tolist() == [i for i, n in enumerate(shown) if n is not None]
        assert [uniques[c] for c in codes.tolist()] == [shown[i] for i in named.tolist()]
        assert uniques == list(dict.fromkeys(shown[i] for i in named.tolist()))


@given(st.lists(st.sampled_from(["a", "b", *sorted(schema.INTERNAL_EVENTS)[:2]]), max_size=20))
def test_internal_events_per_category_equal_per_event(names):
    expected = [n in schema.INTERNAL_EVENTS for n in names]
    for column in (pd.Series(names, dtype=object), pd.Series(names, dtype="category")):
        hidden = pe._internal(column)
        assert (hidden is None and not any(expected)) or hidden.tolist() == expected

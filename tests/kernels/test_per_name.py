"""Per-name tables reached through codes give what a per-event test gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.kernels import per_name

VALUES = st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "ab", "b"])), max_size=40)


def _columns(values):
    return pd.Series(pd.Categorical(values)), pd.Series(values, dtype=object)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_native_codes_and_row_selections_agree_with_the_values(values):
    starts_with_a = [v is not None and v.startswith("a") for v in values]
    for column in _columns(values):
        codes, names = per_name.distinct_native(column)
        wide_codes, wide_names = per_name.distinct(column)
        assert codes.tolist() == wide_codes.tolist() and names.tolist() == wide_names.tolist()
        answer = names.str.startswith("a").to_numpy(dtype=bool)
        assert per_name.rows_where(answer, codes).tolist() == np.flatnonzero(starts_with_a).tolist()
        missing = per_name.rows_where(np.zeros(len(names), bool), codes, missing=True)
        assert missing.tolist() == [i for i, v in enumerate(values) if v is None]
        set_rows = [i for i, v in enumerate(values) if v is not None]
        assert per_name.present_rows(column).tolist() == set_rows


def test_category_codes_are_a_view_and_distinct_codes_a_writable_copy():
    column = pd.Series(pd.Categorical(["x", None, "y"]))
    assert np.shares_memory(per_name.category_codes(column), column.array.codes)
    codes, _ = per_name.distinct(column)
    codes[0] = 5  # callers may write into their codes
    assert column.array.codes.tolist() == [0, -1, 1]

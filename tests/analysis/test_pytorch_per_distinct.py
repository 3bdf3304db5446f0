"""PyTorch analyses test names and categories once per distinct text, not once per event."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tensorboard_plugin_profile.analysis.pytorch import events as E
from tensorboard_plugin_profile.analysis.pytorch import overview


def test_each_distinct_value_is_tested_once_and_spread_back():
    names = np.array(["ProfilerStep#1", "aten::mm", "ProfilerStep#1", "", "aten::mm"] * 1000,
                     dtype=object)  # fmt: skip
    seen = []

    def is_step(distinct: pd.Series) -> pd.Series:
        seen.append(len(distinct))
        return distinct.str.startswith(E.STEP_PREFIX)

    got = E.per_distinct(names, is_step, bool)
    assert seen == [3]
    assert got.tolist() == pd.Series(names).str.startswith(E.STEP_PREFIX).tolist()


def test_categories_map_to_types_as_per_event_code_did():
    cats = np.array(["Kernel", "cpu_op", "unknown", "", "cuda_runtime", "kernel"], dtype=object)
    got = E.per_distinct(cats, lambda c: c.str.lower().map(E._TYPE_OF_CATEGORY), object)
    want = pd.Series(cats).str.lower().map(E._TYPE_OF_CATEGORY).to_numpy(dtype=object)
    assert [str(v) for v in got] == [str(v) for v in want]
    assert got[:2].tolist() == [E.KERNEL, E.OPERATOR] and pd.isna(got[2])


def test_data_loader_names():
    names = np.array(
        ["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
         "enumerate(DataLoader)#x", "enumerate(DataPipe)#y", "aten::add"] * 3,
        dtype=object,
    )  # fmt: skip
    got = E.per_distinct(names, overview._is_loader, bool)
    assert got.tolist() == [True, False, True, False] * 3
    assert E.per_distinct(np.zeros(0, dtype=object), overview._is_loader, bool).tolist() == []


def test_input_shapes_hold_no_fixed_width_copy_of_every_text():
    # The shape key of 20k calls sharing a 1,000-character text: a numpy str copy of the
    # column took rows x 1,000 x 4 bytes (80 MB), twice for its sort; now the distinct
    # texts are hashed (a few hundred KB of codes).
    import tracemalloc

    from tensorboard_plugin_profile.analysis.pytorch.operators import _shape_text

    long_dims = "[[" + ", ".join(["8"] * 330) + "]]"
    dims = np.array([long_dims, None, "[[2, 3], []]", "not json\x00"] * 5000, dtype=object)
    tracemalloc.start()
    try:
        got = _shape_text(dims)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
    assert got[:4].tolist() == [str([[8] * 330]), "[]", "[[2, 3], []]", "not json"]
    assert _shape_text(np.zeros(0, dtype=object)).tolist() == []


class _NoHash(str):
    """A text whose hash fails: what a per-value hash of the column would trip on."""

    def __hash__(self):
        raise AssertionError("the column's texts were hashed")


def test_distinct_names_are_found_by_identity_without_hashing_the_texts():
    # The decoder interns each distinct text once, so rows of a name share one object:
    # grouping the rows by pointer finds the distinct names without hashing each row's text.
    step, mm = _NoHash("ProfilerStep#7"), _NoHash("aten::mm")
    names = np.array([step, mm, None, step, float("nan"), mm] * 500, dtype=object)
    seen = []

    def is_step(distinct: pd.Series) -> pd.Series:
        seen.append(len(distinct))
        return distinct.map(lambda v: isinstance(v, str) and v.startswith(E.STEP_PREFIX))

    got = E.per_distinct(names, is_step, bool)
    assert seen == [3]  # the step, aten::mm, and one missing value for None and NaN
    assert got.tolist() == [True, False, False, True, False, False] * 500


def _by_value(values, test, dtype):
    """per_distinct as it was: the distinct values found by hashing every row's value."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    return test(pd.Series(uniques)).to_numpy(dtype=dtype)[codes]


def test_equal_texts_in_separate_objects_give_the_same_answer_as_by_value():
    texts = ["ProfilerStep#" + str(i % 3) for i in range(300)] + ["".join(["aten", "::mm"])] * 5
    names = np.array(texts + [None, float("nan")], dtype=object)  # equal values, separate objects
    for test, dtype in (
        (lambda n: n.str.startswith(E.STEP_PREFIX), object),
        (lambda n: n.str.startswith(E.STEP_PREFIX), bool),
        (overview._is_loader, bool),
        (lambda n: n.str.lower().map(E._TYPE_OF_CATEGORY), object),
    ):
        got, want = E.per_distinct(names, test, dtype), _by_value(names, test, dtype)
        assert [str(v) for v in got] == [str(v) for v in want]
    cats = np.array(["Kernel", "".join(["ker", "nel"]), "cpu_op", None] * 4, dtype=object)
    codes = E._kind_codes(cats, np.array(["x"] * len(cats), dtype=object))
    kernel, operator = E._CODE_OF_TYPE[E.KERNEL], E._CODE_OF_TYPE[E.OPERATOR]
    assert codes.tolist() == [kernel, kernel, operator, 0] * 4

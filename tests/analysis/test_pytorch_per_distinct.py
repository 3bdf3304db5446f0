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

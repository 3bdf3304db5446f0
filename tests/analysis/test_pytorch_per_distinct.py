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

"""String tests once per distinct value, reached from events through integer codes.

A profile repeats a few hundred or thousand distinct event names (and string stat
values) over millions of events. Every string test (a prefix, a regex, op-name
parsing) therefore runs on the distinct values only, and its answer is looked up
per event by code. This works whether the decoder gives a column as a pandas
Categorical (codes are free) or as an object column (one ``factorize``, a hash per
event in C, then the same lookup).

Usage::

    codes, names = distinct(plane.events["name"])          # int codes, -1 = missing
    marker = per_value(plane.events["name"], lambda s: s.str.startswith("train"))
    marker[rows]                                          # bool per selected event
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pandas as pd


def distinct(values: pd.Series, rows: Optional[np.ndarray] = None) -> tuple:
    """(int64 code per value, distinct values as a str Series); code -1 = missing.

    With ``rows``, only those positions are coded (an object column is factorized
    on them alone; a categorical keeps all its categories).
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        codes = codes if rows is None else codes[rows]
        names = pd.Series(values.cat.categories.astype(str), dtype=object)
        return codes.astype(np.int64, copy=False), names.reset_index(drop=True)
    array = values.to_numpy(dtype=object)
    if rows is not None:
        array = array[rows]
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    names = pd.Series([str(u) for u in uniques], dtype=object)
    return codes.astype(np.int64, copy=False), names


def lookup(table: np.ndarray, codes: np.ndarray, missing) -> np.ndarray:
    """``table[codes]`` with ``missing`` where the code is -1."""
    dtype = object if isinstance(missing, str) else np.asarray(missing).dtype
    extended = np.append(np.asarray(table, dtype=dtype), np.asarray([missing], dtype=dtype))
    return extended[np.where(codes < 0, len(extended) - 1, codes)]


def per_value(
    values: pd.Series,
    test: Callable[[pd.Series], pd.Series],
    rows: Optional[np.ndarray] = None,
    missing=False,
) -> np.ndarray:
    """``test`` (vectorised over a str Series) run once per distinct value, per event."""
    codes, names = distinct(values, rows)
    answer = test(names) if len(names) else np.zeros(0, dtype=bool)
    return lookup(answer, codes, missing)


def present(values: pd.Series, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """Per event: whether the (nullable, object or categorical) value is set."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        return (codes if rows is None else codes[rows]) >= 0
    array = values.array if rows is None else values.array[rows]
    return ~np.asarray(pd.isna(array), dtype=bool)

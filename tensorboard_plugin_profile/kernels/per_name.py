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
        codes = category_codes(values)
        codes = codes if rows is None else codes[rows]
        names = pd.Series(values.cat.categories.astype(str), dtype=object)
        return codes.astype(np.int64), names.reset_index(drop=True)  # a writable copy
    array = values.to_numpy(dtype=object)
    if rows is not None:
        array = array[rows]
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    names = pd.Series([str(u) for u in uniques], dtype=object)
    return codes.astype(np.int64, copy=False), names


def distinct_native(values: pd.Series) -> tuple:
    """``distinct(values)`` with the codes in the column's own width: a categorical's
    int8/int16/int32 codes as they are (no int64 copy per event)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        names = pd.Series(values.cat.categories.astype(str), dtype=object)
        return np.ascontiguousarray(category_codes(values)), names
    return distinct(values)


def category_codes(values: pd.Series) -> np.ndarray:
    """A categorical column's codes, read-only and without a copy (pandas 3's
    ``.cat.codes`` copies them, a few MB per million events)."""
    return np.asarray(values.array.codes)


def rows_where(answer: np.ndarray, codes: np.ndarray, missing: bool = False) -> np.ndarray:
    """Rows whose code's ``answer`` (one bool per distinct value; ``missing`` for code
    -1) is True. No pass over the events when no value qualifies."""
    table = np.append(np.asarray(answer, dtype=bool), missing)
    if not table.any():
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(table[codes])


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


def present_rows(values: pd.Series) -> np.ndarray:
    """``np.flatnonzero(present(values))``; for a categorical, one cheap ``max`` of its
    codes first, so a column that is never set costs no mask."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = category_codes(values)
        if not len(codes) or codes.max() < 0:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(codes >= 0)
    return np.flatnonzero(present(values))


def present(values: pd.Series, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """Per event: whether the (nullable, object or categorical) value is set."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = category_codes(values)
        return (codes if rows is None else codes[rows]) >= 0
    mask = getattr(values.array, "_mask", None)  # a nullable column's: no values gathered
    if isinstance(mask, np.ndarray) and mask.dtype == bool and len(mask) == len(values):
        return ~(mask if rows is None else mask[rows])
    array = values.array if rows is None else values.array[rows]
    return ~np.asarray(pd.isna(array), dtype=bool)

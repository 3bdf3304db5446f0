"""Compact event columns: string codes instead of Python objects per row.

Shared by the decoder and by ``preprocessing.plane_edit`` (which rebuilds the same
columns after an edit), so both give the same dtypes:

- the long stats tables' ``str_value`` is a categorical: its codes are ids into
  the plane's table of distinct strings (bytes values, rare, are categories
  too), code -1 where the row has no string value;
- a well-known string stat is a categorical event column (missing = NaN) whose
  categories are the values that occur, sorted, plus ``""`` so that
  ``fillna("")`` works;
- a well-known integer stat is a nullable integer column; a stat that no event
  carries costs no memory (a read-only all-missing view), and of one that few
  events carry only the pages holding those rows are resident (``sparse_values``).

See docs/decoder.md.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..common.memsize import sparse_values
from ..kernels import graph_passes
from . import schema
from .model import KIND_BYTES, KIND_REF, KIND_STR, stat_values

# Stat kinds whose value is in ``str_value``.
_STRING_KINDS = (KIND_STR, KIND_BYTES, KIND_REF)


def object_index(values: list) -> pd.Index:
    """An object Index of these values (pandas 3 would otherwise infer its str dtype)."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return pd.Index(column, dtype=object)


def str_categorical(codes: np.ndarray, strings: list) -> pd.Categorical:
    """Codes into ``strings`` (-1 = no value) as a categorical column."""
    return pd.Categorical.from_codes(
        np.asarray(codes, dtype=code_dtype(len(strings))), categories=object_index(strings)
    )


def code_dtype(n: int) -> type:
    return np.int8 if n < 127 else np.int16 if n < 32767 else np.int32


def event_dtype(n: int) -> type:
    """The dtype of a stats table's ``event`` column (event rows of a plane of n events):
    int32 up to 2**31 events, half the memory of int64 on the largest kept table."""
    return np.int32 if n < 2**31 else np.int64


def code_categorical(codes: np.ndarray, categories: pd.Index) -> pd.Categorical:
    """A categorical of codes known to be valid (made here, not read from a file): pandas
    would otherwise check every row, which costs as much as a column's pass (and reads
    every row of a broadcast view)."""
    try:
        return pd.Categorical.from_codes(codes, categories=categories, validate=False)
    except TypeError:  # pandas < 2.1 has no ``validate``
        return pd.Categorical.from_codes(codes, categories=categories)


def empty_str_column(n: int) -> pd.Categorical:
    """An all-missing string column that costs no memory per row."""
    return code_categorical(np.broadcast_to(np.int8(-1), (n,)), object_index([""]))


def zeros_view(n: int) -> np.ndarray:
    """A read-only int64 column of zeros that costs no memory per row."""
    return np.broadcast_to(np.int64(0), (n,))


def is_zeros_view(values: np.ndarray) -> bool:
    return values.ndim == 1 and len(values) > 1 and values.strides[0] == 0 and not values[0]


def empty_int_column(n: int, unsigned: bool = False) -> pd.api.extensions.ExtensionArray:
    values = np.broadcast_to(np.uint64(0) if unsigned else np.int64(0), (n,))
    return pd.arrays.IntegerArray(values, np.broadcast_to(np.True_, (n,)))


def stat_rows(stats: pd.DataFrame, names) -> dict:
    """Stat name -> row positions of that stat in ``stats`` (in table order)."""
    categories = stats["stat"].cat.categories
    codes = stats["stat"].array.codes  # a view (`.cat.codes` copies them)
    wanted = set(names)
    # One slot per wanted name (two stat ids may share a name: their rows share it, in
    # table order), and a last entry for code -1 (no name): not wanted.
    slot = np.full(len(categories) + 1, -1, dtype=np.int32)
    slot_of: dict = {}
    for i, c in enumerate(categories):
        if str(c) in wanted:
            slot[i] = slot_of.setdefault(str(c), len(slot_of))
    if not slot_of:
        return {}
    # A counting sort of the wanted rows by slot (threads on large tables): no flag per
    # row, nonzero or argsort over the whole column.
    ptr, rows = graph_passes.rows_by_code(codes, slot, len(slot_of))
    return {name: rows[ptr[s] : ptr[s + 1]] for name, s in slot_of.items()}


def well_known_columns(n: int, stats: pd.DataFrame, names, masks: Optional[list] = None) -> dict:
    """Typed event columns of these stats from the long table (last value wins).

    ``masks``: read-only missing masks to share (``shared_mask``; a list of its own if None).
    """
    rows_of = stat_rows(stats, names)
    event = stats["event"].to_numpy()
    masks = [] if masks is None else masks
    out = {}
    for name in names:
        rows = rows_of.get(name)
        if name in schema.STR_STATS:
            out[name] = _str_column(n, stats, rows) if rows is not None else empty_str_column(n)
            continue
        unsigned = name in schema.UINT_STATS
        if rows is None:
            out[name] = empty_int_column(n, unsigned)
            continue
        # Integers keep their 64 bits: uint64 stats are bit-cast into the column.
        values = _int_data(n, event[rows], stats["int_value"].to_numpy()[rows])
        mask = np.ones(n, dtype=bool)
        mask[event[rows]] = False
        mask = shared_mask(mask, masks)
        out[name] = pd.arrays.IntegerArray(values.view(np.uint64) if unsigned else values, mask)
    return out


def _int_data(n: int, present: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The data of an integer column with these values at these rows. Most such stats are
    on a few events: only the pages of those rows take memory. A stat with one value on
    every event that has it (a flag, the one program of a profile) is a read-only view of
    that value, which costs nothing per event (the mask says where it is present)."""
    if len(values) > 1 and (values == values[0]).all():
        return np.broadcast_to(np.int64(values[0]), (n,))
    return sparse_values(n, np.int64, present, values)


def shared_mask(mask: np.ndarray, kept: list) -> np.ndarray:
    """``mask``, or an equal one of ``kept``; a mask found nowhere joins ``kept``, read-only.

    Stats come in pairs on the same events (``_pt``/``_p``, ``_ct``/``_c``,
    ``step_num``/``_r``): their nullable columns share one missing mask (n bytes each
    otherwise), read-only so that no write in place can change one column's mask under
    another. The decoder and the plane edits (``preprocessing.placement``) share through
    here. An all-missing broadcast view is left as it is (it costs nothing)."""
    if len(mask) < 2 or not mask.strides[0]:
        return mask
    for other in kept:
        if other is mask or _equal_masks(other, mask):
            return other
    mask.flags.writeable = False
    kept.append(mask)
    return mask


def share_equal_masks(columns: dict, kept: Optional[list] = None) -> dict:
    """The same columns, the nullable integer ones with equal missing masks sharing one
    (``shared_mask``; ``kept``: masks shared already)."""
    kept = [] if kept is None else kept
    out = {}
    for name, column in columns.items():
        mask = getattr(column, "_mask", None)
        if isinstance(column, pd.arrays.IntegerArray) and isinstance(mask, np.ndarray):
            same = shared_mask(mask, kept)
            if same is not mask:
                column = pd.arrays.IntegerArray(column._data, same)
        out[name] = column
    return out


_COMPARED_AT_ONCE = 1 << 20  # bytes of two masks compared per step (no n-sized temporary)


def _equal_masks(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    step = _COMPARED_AT_ONCE
    return all(np.array_equal(a[i : i + step], b[i : i + step]) for i in range(0, len(a), step))


def int_values(column) -> tuple:
    """(int64 values, 0 where absent and uint64 bit-cast; present mask) of a nullable integer
    column. Only the present rows are read, and the values are as sparse as the column
    (reading every row of a mostly-empty column would make all its pages resident)."""
    array = column.array if isinstance(column, pd.Series) else column
    present = ~np.asarray(array.isna(), dtype=bool)
    rows = np.flatnonzero(present)
    dtype = np.uint64 if str(array.dtype).startswith("UInt") else np.int64
    values = array[rows].to_numpy(dtype=dtype).view(np.int64)
    return sparse_values(len(present), np.int64, rows, values), present


def int_values_at(column, rows) -> np.ndarray:
    """int64 values (uint64 bit-cast, 0 where absent) of a nullable integer column at these
    rows, reading no other row."""
    array = column.array if isinstance(column, pd.Series) else column
    dtype = np.uint64 if str(array.dtype).startswith("UInt") else np.int64
    taken = array[np.asarray(rows, dtype=np.int64)]
    return taken.to_numpy(dtype=dtype, na_value=0).view(np.int64)


def _str_column(n: int, stats: pd.DataFrame, rows: np.ndarray) -> pd.Categorical:
    """A well-known string stat as a sorted categorical (a numeric value stays a number)."""
    str_value = stats["str_value"]
    codes = str_value.array.codes[rows].astype(np.int64)
    strings = list(str_value.cat.categories)
    kinds = stats["kind"].to_numpy()[rows]
    numeric = ~np.isin(kinds, _STRING_KINDS)
    if numeric.any():
        # Rare: a number under a string stat's name keeps its Python value.
        extra = stat_values(stats.iloc[rows[numeric]])
        position = {v: i for i, v in enumerate(strings)}
        for i, value in zip(np.flatnonzero(numeric), extra):
            codes[i] = position.setdefault(value, len(position))
        strings = list(position)
    used = np.unique(codes[codes >= 0])
    values = [strings[c] for c in used]
    if "" not in values:
        used, values = np.append(used, len(strings)), values + [""]
    order = _sorted_order(values)
    remap = np.full(len(strings) + 1, -1, dtype=np.int64)
    remap[used[order]] = np.arange(len(order))
    column: np.ndarray = np.full(n, -1, dtype=code_dtype(len(order)))
    column[stats["event"].to_numpy()[rows]] = np.where(codes >= 0, remap[codes], -1)
    return pd.Categorical.from_codes(column, categories=object_index([values[i] for i in order]))


def _sorted_order(values: list) -> list:
    """Positions of values in sorted order (str before bytes before numbers if mixed)."""
    try:
        return sorted(range(len(values)), key=values.__getitem__)
    except TypeError:
        return sorted(range(len(values)), key=lambda i: (type(values[i]).__name__, values[i]))

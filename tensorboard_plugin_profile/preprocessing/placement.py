"""Where a ``PlaneEdit``'s new events go, and the event columns with them in place.

Each line's events are kept sorted by (begin, longest first), new events after old
ones with the same key (where a stable sort of old then new rows puts them). The
old rows are nearly always in that order already: the new events are then inserted
among them, column by column in long copies (``edit_passes``), and old rows keep
their order. Otherwise every row is sorted.

Columns that the edit did not touch keep their values: a typed stat column is
carried to the new rows (as sparse as it was) instead of being rebuilt from the
long stats table.

Usage::

    placed = Placement.of(events, new_line, new_begin, new_duration)
    begin = placed.place(events["begin_ps"].to_numpy(), new_begin)
    row = placed.new_row[old_rows]          # old (or new) event row -> row in the edit
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ..common.memsize import sparse_values
from ..xspace.columns import (
    code_categorical,
    code_dtype,
    empty_int_column,
    empty_str_column,
    int_values_at,
    object_index,
    shared_mask,
)
from .edit_passes import (
    insert_recoded,
    insert_rows,
    insertion_points,
    new_column,
    recode,
    shifted_rows,
    used_codes,
)


@dataclasses.dataclass
class Placement:
    """Rows of old and new events in the edited table."""

    num_old: int
    new_row: np.ndarray  # old rows, then new events in add order -> row in the edited table
    # (int32 when the rows fit: read once per stat row and per carried value)
    at: Optional[np.ndarray] = None  # insertion: new events (sorted) go before old rows `at`
    new_order: Optional[np.ndarray] = None  # insertion: new events in their sorted order
    order: Optional[np.ndarray] = None  # full sort: edited row -> old-then-new row

    @classmethod
    def of(cls, events: pd.DataFrame, line, begin, duration) -> Placement:
        old = [events[c].to_numpy() for c in ("line", "begin_ps", "duration_ps")]
        num_old, count = len(events), len(line)
        at = insertion_points(old[0], old[1], old[2], line, begin, duration)
        if at is None:  # old rows out of order: sort everything
            keys = [
                np.concatenate([o.astype(np.int64), np.asarray(n, dtype=np.int64)])
                for o, n in zip(old, (line, begin, duration))
            ]
            order = np.lexsort((-keys[2], keys[1], keys[0]))
            new_row = np.empty(num_old + count, dtype=np.int64)
            new_row[order] = np.arange(num_old + count)
            return cls(num_old, new_row, order=order)
        new_order = np.lexsort((-duration, begin, line))
        at = at[new_order]
        new_row = new_column(num_old + count, np.int32 if num_old + count < 2**31 else np.int64)
        shifted_rows(at, new_row[:num_old])
        new_row[num_old + new_order] = at + np.arange(count)
        return cls(num_old, new_row, at=at, new_order=new_order)

    def place(self, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """One column of the edited table from its old and new (in add order) values."""
        new = np.asarray(new, dtype=old.dtype)
        if self.order is None:
            assert self.at is not None and self.new_order is not None
            return insert_rows(old, self.at, new[self.new_order])
        return np.concatenate([old, new])[self.order]

    def place_recoded(self, codes: np.ndarray, table: np.ndarray, new: np.ndarray) -> np.ndarray:
        """``place(table[codes], new)`` without the recoded temporary."""
        if self.order is None:
            assert self.at is not None and self.new_order is not None
            return insert_recoded(codes, table, self.at, np.asarray(new)[self.new_order])
        return self.place(recode(codes, table), new)

    def permutation(self) -> np.ndarray:
        """Edited row -> old-then-new row (built on demand: rarely needed)."""
        if self.order is not None:
            return self.order
        assert self.at is not None and self.new_order is not None
        return insert_rows(np.arange(self.num_old), self.at, self.num_old + self.new_order)

    def padded(self, column: pd.Series) -> pd.Series:
        """An extra (not well-known) column: new events have no value in it."""
        count = len(self.new_row) - self.num_old
        values = pd.concat([column, pd.Series([None] * count)], ignore_index=True)
        return values.take(self.permutation()).reset_index(drop=True)

    # --- typed columns ----------------------------------------------------------------
    def carried(self, column, masks: Optional[list] = None) -> object:
        """A typed stat column with its old values on the old events' new rows.

        ``masks``, shared by the calls of one edit: equal placed missing masks are one
        (``columns.shared_mask``: stats that come in pairs on the same events), and a column
        whose data is one broadcast value keeps it, so neither costs a byte per event more
        after the edit than before."""
        array = column.array if isinstance(column, pd.Series) else column
        n, count = len(self.new_row), len(self.new_row) - self.num_old
        if isinstance(array, pd.Categorical):
            codes = array.codes
            free = len(codes) > 1 and not codes.strides[0] and codes[0] == -1
            if free and array.categories.tolist() == [""]:
                return empty_str_column(n)  # the all-missing view stays free
            placed = self.place(codes, np.full(count, -1, dtype=codes.dtype))
            return code_categorical(placed, array.categories)
        unsigned = str(array.dtype).startswith("UInt")
        mask = getattr(array, "_mask", None)
        if not isinstance(mask, np.ndarray):
            mask = np.asarray(array.isna(), dtype=bool)
        if len(mask) > 1 and not mask.strides[0] and mask[0]:
            return empty_int_column(n, unsigned)  # the all-missing view: no row to read
        missing = self.place(mask, np.ones(count, dtype=bool))
        if masks is not None:
            missing = shared_mask(missing, masks)
        old_data = getattr(array, "_data", None)
        if isinstance(old_data, np.ndarray) and len(old_data) > 1 and not old_data.strides[0]:
            data = np.broadcast_to(old_data[0], (n,))  # one value wherever present
            return pd.arrays.IntegerArray(data, missing)
        rows = np.flatnonzero(~mask)  # only present rows are read: pages stay as sparse
        moved = self.new_row[rows]
        data = sparse_values(n, np.int64, moved, int_values_at(array, rows))
        return pd.arrays.IntegerArray(data.view(np.uint64) if unsigned else data, missing)


def name_column(column: pd.Series, added: list, inverse, placed: Placement) -> pd.Categorical:
    """An event-name categorical with new events' names (``added[inverse]``) in place;
    categories re-made like those of object values (only the names used, sorted)."""
    names = [str(c) for c in column.cat.categories.tolist()]
    old_codes = column.array.codes  # a view (`.cat.codes` copies them)
    if len(old_codes) > 1 and not old_codes.strides[0] and old_codes[0] >= 0:
        only = names[old_codes[0]]  # one name on every old event (a decoder's broadcast)
        if all(a == only for a in added):
            n = len(placed.new_row)
            return code_categorical(np.broadcast_to(np.int8(0), (n,)), object_index([only]))
    code_of = {name: i for i, name in enumerate(names)}
    for name in added:
        code_of.setdefault(name, len(code_of))
    new_codes = np.array([code_of[a] for a in added], dtype=np.int64)[inverse]
    used = used_codes(old_codes, len(code_of))
    used[new_codes] = True
    categories, remap = sorted_used(list(code_of), used)
    if _is_identity(remap, len(names)) and old_codes.dtype == remap.dtype:
        codes = placed.place(old_codes, remap[new_codes])
    else:
        codes = placed.place_recoded(old_codes, remap, remap[new_codes])
    return code_categorical(codes, categories)


def sorted_used(names: list, used: np.ndarray) -> tuple:
    """(categories: the used names sorted, code -> new code table in the codes' dtype)."""
    ordered = sorted(np.flatnonzero(used).tolist(), key=lambda c: names[c])
    remap: np.ndarray = np.full(len(names), -1, dtype=code_dtype(len(ordered)))
    remap[ordered] = np.arange(len(ordered))
    return object_index([names[c] for c in ordered]), remap


def _is_identity(remap: np.ndarray, count: int) -> bool:
    return len(remap) >= count and bool((remap[:count] == np.arange(count)).all())

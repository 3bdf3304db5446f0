"""A plane edit keeps what its typed columns cost: shared missing masks stay shared,
broadcast values stay broadcasts, and the values are those of the plain placement."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tensorboard_plugin_profile.preprocessing.placement import Placement, name_column
from tensorboard_plugin_profile.xspace.columns import (
    code_categorical,
    object_index,
    share_equal_masks,
    well_known_columns,
)

N = 10_000


def _placement() -> Placement:
    """Three new events among N old ones on one line (begins 0, 10, 20, ...)."""
    events = pd.DataFrame(
        {
            "line": np.zeros(N, dtype=np.int32),
            "begin_ps": np.arange(N, dtype=np.int64) * 10,
            "duration_ps": np.full(N, 5, dtype=np.int64),
        }
    )
    new_begin = np.array([15, 5_005, 99_995], dtype=np.int64)
    return Placement.of(events, np.zeros(3, dtype=np.int32), new_begin, np.ones(3, np.int64))


def _shared_pair(rows: np.ndarray) -> tuple:
    mask = np.ones(N, dtype=bool)
    mask[rows] = False
    mask.flags.writeable = False
    kinds = pd.arrays.IntegerArray(np.where(mask, 0, 7).astype(np.int64), mask)
    ids = pd.arrays.IntegerArray(np.arange(N, dtype=np.int64) * 3, mask)
    return kinds, ids


def _expected(placed: Placement, column) -> list:
    """The column's values on the edited rows by the plain route: new events missing."""
    out: list = [None] * len(placed.new_row)
    for row, value in enumerate(column.tolist()):
        out[int(placed.new_row[row])] = None if value is pd.NA else value
    return out


def _values(column) -> list:
    return [None if v is pd.NA else v for v in column.tolist()]


def test_columns_sharing_a_mask_share_its_placed_copy():
    placed = _placement()
    kinds, ids = _shared_pair(np.arange(0, N, 97))
    masks: list = []
    # Frames hand out new view objects of a column's mask: the buffer is what is shared.
    frame = pd.DataFrame({"_ct": kinds, "_c": ids}, copy=False)
    a, b = placed.carried(frame["_ct"], masks), placed.carried(frame["_c"], masks)
    assert a._mask is b._mask
    assert not a._mask.flags.writeable
    assert _values(a) == _expected(placed, kinds)
    assert _values(b) == _expected(placed, ids)


def test_columns_present_on_other_events_keep_their_own_placed_masks():
    placed = _placement()
    first, second = np.ones(N, dtype=bool), np.ones(N, dtype=bool)
    first[::50] = False
    second[1::50] = False
    one = pd.arrays.IntegerArray(np.arange(N, dtype=np.int64), first)
    two = pd.arrays.IntegerArray(np.arange(N, dtype=np.int64), second)
    masks: list = []
    a, b = placed.carried(one, masks), placed.carried(two, masks)
    assert a._mask is not b._mask
    assert _values(a) == _expected(placed, one) and _values(b) == _expected(placed, two)


def test_a_broadcast_value_stays_a_broadcast():
    placed = _placement()
    mask = np.ones(N, dtype=bool)
    mask[[3, 500, 9_999]] = False
    column = pd.arrays.IntegerArray(np.broadcast_to(np.int64(26), (N,)), mask)
    out = placed.carried(column, [])
    assert out._data.strides[0] == 0
    assert _values(out) == _expected(placed, column)


def test_equal_masks_are_shared_and_others_left_alone():
    rows = np.arange(0, N, 31)
    _, first = _shared_pair(rows)
    equal = np.ones(N, dtype=bool)
    equal[rows] = False
    other = np.ones(N, dtype=bool)
    other[rows[:-1]] = False
    free = np.broadcast_to(np.True_, (N,))
    columns = {
        "a": pd.arrays.IntegerArray(np.arange(N, dtype=np.int64), equal),
        "b": first,
        "c": pd.arrays.IntegerArray(np.arange(N, dtype=np.int64), other),
        "d": pd.arrays.IntegerArray(np.broadcast_to(np.int64(0), (N,)), free),
        "e": pd.Series(["x"] * N).array,
    }
    out = share_equal_masks(dict(columns))
    assert out["b"]._mask is out["a"]._mask
    assert out["c"]._mask is not out["a"]._mask
    assert out["d"]._mask is free and out["e"] is columns["e"]
    assert not out["a"]._mask.flags.writeable
    for name in "abcd":
        assert _values(out[name]) == _values(columns[name])


def test_a_one_name_column_stays_a_broadcast_when_new_events_share_the_name():
    placed = _placement()
    codes = np.broadcast_to(np.int8(0), (N,))
    column = pd.Series(code_categorical(codes, object_index([""])), copy=False)
    kept = name_column(column, [""], np.zeros(3, dtype=np.int64), placed)
    assert kept.codes.strides[0] == 0
    assert list(kept.categories) == [""] and len(kept) == N + 3
    named = name_column(column, ["Region"], np.zeros(3, dtype=np.int64), placed)
    expected = ["Region" if r >= N else "" for r in np.argsort(placed.new_row)]
    assert named.codes.strides[0] != 0
    assert list(np.asarray(named)) == expected


def test_the_decoders_columns_on_the_same_events_share_one_mask():
    events = np.array([3, 3, 9, 40, 40, 77], dtype=np.int32)
    stats = pd.DataFrame(
        {
            "event": events,
            "stat": pd.Categorical(["_pt", "_p", "_r", "_pt", "_p", "_r"]),
            "int_value": np.array([1, 10, 1, 2, 20, 1], dtype=np.int64),
        }
    )
    columns = well_known_columns(100, stats, ["_pt", "_p", "_r", "step_num"])
    assert columns["_pt"]._mask is columns["_p"]._mask
    assert columns["_r"]._mask is not columns["_p"]._mask
    assert not columns["_pt"]._mask.flags.writeable
    assert _values(columns["_p"])[40] == 20 and _values(columns["_pt"])[3] == 1
    assert columns["_r"]._data.strides[0] == 0  # one value wherever present
    assert _values(columns["step_num"]) == [None] * 100

"""Sparse columns (``memsize.sparse_values``) and how ``deep_size`` charges them."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pandas as pd
from conftest import FIXTURES

from tensorboard_plugin_profile.common.memsize import LAZY_MIN_BYTES, deep_size, sparse_values
from tensorboard_plugin_profile.xspace import read_xspace
from tensorboard_plugin_profile.xspace.columns import int_values, int_values_at


def _dense(n: int, dtype, rows, values) -> np.ndarray:
    out = np.zeros(n, dtype=dtype)
    out[rows] = values
    return out


def test_sparse_values_equal_the_dense_array_and_are_charged_by_written_pages():
    n = 3_000_000
    rows = np.arange(0, n, 10 * mmap.PAGESIZE)  # one row in every tenth page of int64
    values = np.arange(len(rows), dtype=np.int64) - 5
    sparse = sparse_values(n, np.int64, rows, values)
    np.testing.assert_array_equal(sparse, _dense(n, np.int64, rows, values))
    assert sparse.flags.writeable and sparse.dtype == np.int64
    written = len(np.unique(rows * 8 // mmap.PAGESIZE)) * mmap.PAGESIZE
    # Charged by resident pages: those written here (comparing above read every page,
    # which some kernels make resident too, so re-make it for the charge).
    fresh = sparse_values(n, np.int64, rows, values)
    assert written <= deep_size(fresh) <= written + 64 * mmap.PAGESIZE
    assert deep_size(fresh) < fresh.nbytes / 5


def test_small_sparse_values_are_plain_arrays():
    small = sparse_values(LAZY_MIN_BYTES // 16, np.float64, [1, 3], [2.5, -1.0])
    np.testing.assert_array_equal(small[:5], [0, 2.5, 0, -1.0, 0])
    assert deep_size(small) == small.nbytes


def test_deep_size_counts_a_multi_index():
    frame = pd.DataFrame({"a": np.arange(1000) % 7, "b": np.arange(1000), "v": 1.0})
    indexed = frame.set_index(["a", "b"])
    assert deep_size(indexed) > 1000 * 8  # the values, plus levels and codes, no error
    assert deep_size(indexed) >= deep_size(indexed["v"].to_numpy()) + 1000 * 2


def test_int_values_read_only_present_rows_and_match_the_dense_conversion():
    space = read_xspace(str(next(FIXTURES.glob("tf_keras2_fit/**/*.xplane.pb"))))
    checked = 0
    for plane in space.planes:
        for name in plane.events.columns:
            column = plane.events[name]
            if not str(column.dtype).startswith(("Int", "UInt")):
                continue
            unsigned = str(column.dtype).startswith("UInt")
            dense = column.to_numpy(dtype=np.uint64 if unsigned else np.int64, na_value=0)
            values, present = int_values(column)
            np.testing.assert_array_equal(values, dense.view(np.int64))
            np.testing.assert_array_equal(present, column.notna().to_numpy())
            rows = np.flatnonzero(present)[::3]
            np.testing.assert_array_equal(int_values_at(column, rows), dense.view(np.int64)[rows])
            checked += int(present.any())
    assert checked >= 3


def test_deep_size_walks_nesting_of_any_depth_without_recursion():
    # A trace's top-level metadata is kept as decoded: 500 levels used to raise
    # RecursionError here, which every tool of that profile answered with a 500.
    nested: object = "leaf"
    for level in range(100_000):
        nested = {"k": [nested, level]} if level % 2 else [nested]
    size = deep_size(nested)
    assert size > 100_000 * sys.getsizeof([])
    shared = ["x" * 1000]
    assert deep_size([shared, shared, [shared]]) < 2 * sys.getsizeof("x" * 1000) + 500


def test_containers_of_scalars_are_charged_as_the_item_by_item_walk_did():
    # Summed by C loops now (a Space's group names: 0.66 s -> 0.24 s for 400,000 entries);
    # the charge is the same: each scalar's size, None as nothing, the container itself.
    names = {i: f"train {i}" for i in range(1000)}
    expected = sys.getsizeof(names) + sum(
        sys.getsizeof(k) + sys.getsizeof(v) for k, v in names.items()
    )
    assert deep_size(names) == expected
    mixed = [None, True, 1.5, b"ab", "x" * 100, 2**70, None]
    expected = sys.getsizeof(mixed) + sum(sys.getsizeof(v) for v in mixed if v is not None)
    assert deep_size(mixed) == expected
    assert deep_size({None: None}) == sys.getsizeof({None: None})
    # One item that is not a scalar: the walk goes item by item, shared buffers once.
    array = np.zeros(1000)
    assert deep_size({"a": array, "b": array, "c": "text"}) == (
        sys.getsizeof({"a": 0, "b": 0, "c": 0})
        + 3 * sys.getsizeof("a")
        + array.nbytes
        + sys.getsizeof("text")
    )


def test_object_columns_are_charged_per_distinct_object_without_hashing_values():
    """Rows that point at one object share it (counted once), found by hashing the pointers,
    not the values (issue 30: hashing the strings of a 250 MB PyTorch trace's event frame
    took ~0.55 s per first request); this holds for unhashable values too, and separate
    objects are separate memory even when equal."""
    shared_list = list(range(1000))
    rows = 100_000
    column = np.empty(rows, dtype=object)
    column[:] = [shared_list] * rows
    list_bytes = deep_size(shared_list)
    assert deep_size(column) == 8 * rows + list_bytes  # was 8 * rows + rows * list_bytes
    names = np.array([f"name {i % 100:04d}" for i in range(rows)], dtype=object)
    one_each = sum(sys.getsizeof(s) for s in names)  # equal texts, separate objects
    assert deep_size(names) == 8 * rows + one_each
    mostly_none = np.full(rows, None, dtype=object)
    mostly_none[::1000] = "x" * 100
    assert deep_size(mostly_none) == 8 * rows + sys.getsizeof("x" * 100)

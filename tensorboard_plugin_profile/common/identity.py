"""Rows of an object column grouped by the object they point at, without hashing values.

A row of a numpy object column is a pointer, and the decoders intern each distinct text once,
so rows of one name share one object. Factorizing the pointers as integers finds the distinct
objects at a fraction of the cost of hashing every row's text (used by the memory charge and
the PyTorch analyses' per-distinct tests).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pandas as pd


def group_by_identity(flat: np.ndarray, pointers=None) -> tuple:
    """``(codes, one_row_each)`` of a 1-d contiguous object array: each row's group, and for
    each group one row holding its object. ``pointers`` (from ``row_pointers``, maybe edited
    to join rows) replaces the rows' own."""
    if pointers is None:
        pointers = row_pointers(flat)
    codes, distinct = pd.factorize(pointers)
    one_row_each = np.empty(len(distinct), dtype=np.intp)
    one_row_each[codes] = np.arange(flat.size)  # any row of a pointer holds its object
    return codes, one_row_each


def row_pointers(flat: np.ndarray) -> np.ndarray:
    """The rows of a 1-d contiguous object array as integers (a view: keep ``flat`` alive)."""
    return np.ctypeslib.as_array((ctypes.c_ssize_t * flat.size).from_address(flat.ctypes.data))

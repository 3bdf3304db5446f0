"""Framework op names (``name:Type``) → (category, name, type), docs/conversion.md §2.5.

Profiles repeat a few thousand distinct names over millions of events, so the
parser works on the *unique* names with pandas string methods and callers map
the result back by position (e.g. through a categorical's codes).

Usage::

    parsed = parse_op_names(["dense/MatMul:MatMul", "Iterator::Batch", "jit(f)/dot_general"])
    parsed.category.tolist()   # ['TensorFlow', 'tf.data', 'JAX']
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ..kernels import per_name

UNKNOWN = "unknown"
TENSORFLOW = "TensorFlow"
JAX = "JAX"
TF_DATA = "tf.data"
DATASET_TYPE = "Dataset"
MEMCPY_TYPES = ("MemcpyHToD", "MemcpyDToH", "MemcpyDToD", "MemcpyHToH")
KNOWN_CATEGORIES = frozenset((TENSORFLOW, JAX, TF_DATA) + MEMCPY_TYPES)

_TF_NAME = r"[A-Za-z0-9.][A-Za-z0-9_./>-]*"
_TF_TYPE = r"[A-Z_][a-zA-Z0-9_]*"
_JAX_TYPE = r"[a-z_][a-z0-9_]*(?:\[.*\])?"
_GRADIENT_SCOPE = r"(?:^|/)(?:gradients|gradient_tape)|(?:^|/)transpose\("


def parse_op_names(names: Sequence[str]) -> pd.DataFrame:
    """One row per input name: ``category``, ``name``, ``type`` (all str)."""
    s = pd.Series(list(names), dtype=object).fillna("").astype(str)
    parts = s.str.split(":", n=1, expand=True).reindex(columns=[0, 1])
    has_colon = parts[1].notna().to_numpy()
    a = parts[0].fillna("").astype(object).astype(str)
    b = parts[1].astype(object).fillna("").astype(str)
    category = np.full(len(s), UNKNOWN, dtype=object)
    name = s.to_numpy(dtype=object).copy()
    op_type = np.full(len(s), "", dtype=object)

    # 1. No colon: memcpy by case-insensitive prefix, else unknown.
    upper = s.str.upper()
    for memcpy in MEMCPY_TYPES:
        hit = ~has_colon & upper.str.startswith(memcpy.upper()).to_numpy()
        category[hit] = memcpy
        op_type[hit] = memcpy
    # 2. tf.data iterators keep their whole name.
    iterator = has_colon & (a == "Iterator").to_numpy()
    category[iterator] = TF_DATA
    op_type[iterator] = DATASET_TYPE
    todo = has_colon & ~iterator
    # 3. TensorFlow "name:Type".
    tf = todo & a.str.fullmatch(_TF_NAME).to_numpy() & b.str.fullmatch(_TF_TYPE).to_numpy()
    _assign(category, name, op_type, tf, TENSORFLOW, a, b)
    todo &= ~tf
    # 4. JAX: the type is b, or the last scope of a without a "_<n>" suffix.
    last_scope = a.str.rsplit("/", n=1).str[-1].str.replace(r"_\d+$", "", regex=True)
    t = b.where(b != "", last_scope)
    jax = todo & t.str.fullmatch(_JAX_TYPE).to_numpy()
    _assign(category, name, op_type, jax, JAX, a, t.str.split("[", n=1).str[0])
    todo &= ~jax
    # 5. "name:" is TensorFlow with the derived type.
    tf_empty = todo & (b == "").to_numpy()
    _assign(category, name, op_type, tf_empty, TENSORFLOW, a, t)
    return pd.DataFrame({"category": category, "name": name, "type": op_type})


def _assign(category, name, op_type, mask, value, names: pd.Series, types: pd.Series) -> None:
    category[mask] = value
    name[mask] = names.to_numpy(dtype=object)[mask]
    op_type[mask] = types.to_numpy(dtype=object)[mask]


def parse_column(values: pd.Series) -> pd.DataFrame:
    """Parses a column of names (categorical or object), each distinct name once.

    One row per value: for small tables. Large columns use ``parse_codes`` and
    index its per-name table instead of building object columns per event.
    """
    codes, table = parse_codes(values)
    return table.iloc[codes].reset_index(drop=True)


def parse_codes(values: pd.Series, rows: Optional[np.ndarray] = None) -> tuple:
    """(row of ``table`` per value, ``table``): ``parse_op_names`` of each distinct
    value, plus a last "unknown" row that missing values point to."""
    codes, names = per_name.distinct(values, rows)
    parsed = parse_op_names(names.tolist())
    extra = pd.DataFrame({"category": [UNKNOWN], "name": [""], "type": [""]})
    table = pd.concat([parsed, extra], ignore_index=True)
    return np.where(codes < 0, len(parsed), codes), table


_TF_NAME_RE = re.compile(_TF_NAME)
_TF_TYPE_RE = re.compile(_TF_TYPE)
_JAX_TYPE_RE = re.compile(_JAX_TYPE)
_NUMBER_SUFFIX_RE = re.compile(r"_\d+$")


def is_tensorflow_op(name: str) -> bool:
    """``parse_op_names([name]).category == TENSORFLOW``, without the table.

    For callers that test many distinct names one by one (grouping's TfOpRun):
    rules 2, 3 and 5 of ``parse_op_names``, where rule 5 needs rule 4 (JAX) to fail.
    """
    head, colon, tail = name.partition(":")
    if not colon or head == "Iterator":
        return False
    if _TF_NAME_RE.fullmatch(head) and _TF_TYPE_RE.fullmatch(tail):
        return True
    if tail:
        return False
    last_scope = _NUMBER_SUFFIX_RE.sub("", head.rsplit("/", 1)[-1])
    return _JAX_TYPE_RE.fullmatch(last_scope) is None


def is_gradient_name(names: pd.Series) -> pd.Series:
    """True where an op name shows a training (gradient) scope (docs/conversion.md §4.1)."""
    return names.astype(str).str.contains(_GRADIENT_SCOPE, regex=True)

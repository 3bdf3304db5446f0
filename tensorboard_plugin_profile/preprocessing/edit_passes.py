"""Putting new events among old ones: compiled (``_edit_passes.c``) when built, else numpy.

``PlaneEdit`` adds a few thousand events (thread-pool regions, derived lines) to
planes of millions whose events are already sorted per line by (begin, longest
first). Instead of sorting and gathering every column through a full permutation,
it finds where each new event goes and copies the old columns around them:

- ``insertion_points``: where each new event goes, or None when the old events are
  not in that order (then the caller sorts everything);
- ``insert_rows``: ``numpy.insert`` at non-decreasing positions, for any dtype;
  ``insert_recoded`` the same of codes mapped through a table, in one pass;
- ``shifted_rows``: old row -> row after the insertion;
- ``stable_dest``: a stable counting sort (each row's place; the keys sorted in place), for
  the long stats table;
- ``used_codes``, ``recode``: which codes of a categorical occur, and codes mapped
  through a table, without an index-sized temporary;
- ``new_column``: the arrays of the edited table (lazy zeros where mostly empty).

Both implementations give identical results (``tests/preprocessing/test_edit_passes.py``,
with hypothesis); ``compiled.use_compiled`` chooses (``TBPROF_PURE_PYTHON=1`` forces the
fallbacks). The compiled ``insert_rows``, ``insert_recoded`` and ``shifted_rows`` fill
their output in ``compiled.pass_threads`` ranges at once (both cores on a large plane, one
thread below a quarter million rows; ``threads`` forces a count), the same bytes for any.

Usage::

    at = insertion_points(line, begin, duration, new_line, new_begin, new_duration)
    order = np.lexsort((-new_duration, new_begin, new_line))
    merged = insert_rows(begin, at[order], new_begin[order])
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..common.memsize import sparse_values
from ..kernels import compiled

_edit_passes = compiled.load(__name__)


def _int64(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def new_column(n: int, dtype, fill=None, lazy: bool = False) -> np.ndarray:
    """An array of ``n`` values for the edited table: ``fill`` everywhere, or (None) left
    for the caller to write whole; ``lazy``: zeros whose untouched pages cost nothing
    (``memsize.sparse_values``). The service builds inside ``blockpool.reusing()``, whose
    allocator hands these arrays freed blocks instead of fresh pages."""
    if lazy:
        empty = np.zeros(0, dtype=np.int64)
        return sparse_values(n, np.dtype(dtype), empty, empty.astype(dtype))
    return np.empty(n, dtype=dtype) if fill is None else np.full(n, fill, dtype=dtype)


def insertion_points(
    line, begin, duration, new_line, new_begin, new_duration, pure_python: Optional[bool] = None
) -> Optional[np.ndarray]:
    """Per new event, how many old events sort at or before it by (line, begin, -duration);
    None if the old events are not sorted that way."""
    line = np.ascontiguousarray(line)
    if line.dtype not in (np.int32, np.int64):
        line = line.astype(np.int64)
    begin, duration = _int64(begin), _int64(duration)
    new_line = np.ascontiguousarray(new_line, dtype=line.dtype)
    new_begin, new_duration = _int64(new_begin), _int64(new_duration)
    if compiled.use_compiled(_edit_passes, pure_python):
        out = np.empty(len(new_line), dtype=np.int64)
        keys = (line, begin, duration, new_line, new_begin, new_duration)
        return out if _edit_passes.insertion_points(*keys, out) else None
    line = line.astype(np.int64)
    if (
        len(line) > 1
        and not _lexically_le(
            (line[:-1], begin[:-1], -duration[:-1]), (line[1:], begin[1:], -duration[1:])
        ).all()
    ):
        return None
    # Where a stable sort of old then new rows puts each new row, minus the new rows
    # before it (a full sort: this fallback runs only without a C compiler).
    order = np.lexsort(
        (
            np.concatenate([-duration, -new_duration]),
            np.concatenate([begin, new_begin]),
            np.concatenate([line, new_line.astype(np.int64)]),
        )
    )
    is_new = order >= len(line)
    position = np.flatnonzero(is_new)
    out = np.empty(len(new_line), dtype=np.int64)
    out[order[position] - len(line)] = position - np.arange(len(position))
    return out


def _lexically_le(a: tuple, b: tuple) -> np.ndarray:
    """Elementwise (a0, a1, a2) <= (b0, b1, b2)."""
    result = a[2] <= b[2]
    for x, y in ((a[1], b[1]), (a[0], b[0])):
        result = (x < y) | ((x == y) & result)
    return result


def insert_rows(
    old: np.ndarray,
    at,
    values,
    pure_python: Optional[bool] = None,
    threads: Optional[int] = None,
) -> np.ndarray:
    """``numpy.insert(old, at, values)`` for non-decreasing ``at`` (same dtype out);
    ``threads``: how many ranges of the output the compiled pass fills at once (default
    ``compiled.pass_threads``)."""
    old = np.ascontiguousarray(old)
    at = _int64(at)
    values = np.ascontiguousarray(values, dtype=old.dtype)
    if not compiled.use_compiled(_edit_passes, pure_python) or old.dtype.hasobject:
        return np.insert(old, at, values)
    out = new_column(len(old) + len(at), old.dtype)
    _edit_passes.insert_rows(old, at, values, out, compiled.pass_threads(len(out), threads))
    return out


def insert_recoded(
    codes: np.ndarray, table: np.ndarray, at, values, pure_python=None, threads=None
):
    """``insert_rows(table[codes], at, values)`` (codes in range), in the table's dtype;
    ``threads`` as in ``insert_rows``."""
    codes, table = np.ascontiguousarray(codes), np.ascontiguousarray(table)
    at = _int64(at)
    values = np.ascontiguousarray(values, dtype=table.dtype)
    if not compiled.use_compiled(_edit_passes, pure_python):
        return insert_rows(recode(codes, table, pure_python=True), at, values, pure_python=True)
    out = new_column(len(codes) + len(at), table.dtype)
    threads = compiled.pass_threads(len(out), threads)
    _edit_passes.insert_recoded(codes, table, at, values, out, threads)
    return out


def shifted_rows(
    at, out: np.ndarray, pure_python: Optional[bool] = None, threads: Optional[int] = None
) -> None:
    """Old row -> its row once events were inserted before rows ``at`` (non-decreasing),
    written into ``out`` (one int64, or int32 where the rows fit, per old row);
    ``threads`` as in ``insert_rows``."""
    at = _int64(at)
    num_old = len(out)
    if compiled.use_compiled(_edit_passes, pure_python):
        _edit_passes.shifted_rows(at, out, compiled.pass_threads(num_old, threads))
        return
    if len(at) and (at[0] < 0 or at[-1] > num_old or (np.diff(at) < 0).any()):
        raise ValueError("shifted_rows: at must be non-decreasing in [0, n]")
    bounds = np.concatenate([[0], at, [num_old]])
    out[:] = np.repeat(np.arange(len(at) + 1, dtype=np.int64), np.diff(bounds))
    out += np.arange(num_old, dtype=np.int64)


def stable_dest(keys: np.ndarray, n: int, pure_python: Optional[bool] = None) -> np.ndarray:
    """Where row i of a stable sort of ``keys`` (int64, in [0, n)) goes; ``keys`` is then
    sorted in place (its memory is reused for the sorted column)."""
    dest = np.empty(len(keys), dtype=np.int64)
    if compiled.use_compiled(_edit_passes, pure_python):
        _edit_passes.stable_dest(keys, int(n), dest)
        return dest
    if len(keys) and (keys.min() < 0 or keys.max() >= n):
        raise ValueError("stable_dest: key out of range")
    order = np.argsort(keys, kind="stable")
    dest[order] = np.arange(len(keys))
    keys[:] = keys[order]
    return dest


def used_codes(
    codes: np.ndarray, count: int, pure_python: Optional[bool] = None, threads: Optional[int] = None
) -> np.ndarray:
    """Which of ``count`` codes occur in ``codes`` (bools); compiled, over parts of the codes
    on ``threads`` threads (``compiled.pass_threads``), the same flags for any count."""
    used = np.zeros(count, dtype=bool)
    if compiled.use_compiled(_edit_passes, pure_python):
        threads = compiled.pass_threads(len(codes), threads)
        _edit_passes.mark_used(np.ascontiguousarray(codes), used.view(np.uint8), threads)
        return used
    if len(codes) and (codes.min() < 0 or codes.max() >= count):
        raise ValueError("mark_used: code out of range")
    used[codes] = True
    return used


def recode(codes: np.ndarray, table: np.ndarray, out=None, pure_python: Optional[bool] = None):
    """``table[codes]`` (codes in range), in the table's dtype; ``out`` may be ``codes``
    itself when both have the table's item size (each row is read before it is written)."""
    if not compiled.use_compiled(_edit_passes, pure_python):
        if len(codes) and (codes.min() < 0 or codes.max() >= len(table)):
            raise ValueError("recode: code out of range")
        if out is None:
            return table[codes]
        out[:] = table[codes]
        return out
    if out is None:
        out = new_column(len(codes), table.dtype)
    _edit_passes.recode(np.ascontiguousarray(codes), np.ascontiguousarray(table), out)
    return out

"""The merged stats table written in one compiled pass (``_stat_merge.c``).

``stat_table.merged_stats`` hands over its parts (old kept rows, then each addition);
when each part's (moved) events ascend, as PlaneEdit's do, the parts are merged and every
column written in order (``merge_rows``, split by ranges of events across threads above
``compiled.PARALLEL_MIN_ROWS`` rows); else a counting sort by event places every row.
Either way each row is written once, straight into the final columns: no whole-length
array of moved events or of row places, no scatter per column. The typed event columns
of integer stats are filled in the same pass. ``stat_table`` keeps the numpy path, which
gives identical tables (``tests/preprocessing/test_stat_merge.py``).

Usage::

    merged = stat_merge.merge(parts, remap, strings, new_row, num_events, ints)
    if merged is not None:  # else the extension is not built (or pure Python is asked for)
        columns, typed = merged
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..common.memsize import sparse_rows
from ..kernels import compiled
from ..xspace.columns import code_dtype, event_dtype
from .edit_passes import new_column

_stat_merge = compiled.load(__name__)

# Counts per event fit in int32 up to this many rows (half the memory of int64).
_NARROW_ROWS = 2**31 - 1


def merge(
    parts: list,
    remap: np.ndarray,
    strings: list,
    new_row,
    n: int,
    int_codes: dict,
    pure_python: Optional[bool] = None,
    threads: Optional[int] = None,
) -> Optional[tuple]:
    """(columns of the merged table: event, code, kind, int, float, str code;
    {code: (int64 data, missing bools)} per event of the ``int_codes`` stats), or None
    when the compiled pass does not run (``stat_table`` then merges with numpy).
    ``threads``: how many threads merge sorted parts (``compiled.pass_threads``: by
    default one below its threshold of rows; the table is the same for any count)."""
    if not compiled.use_compiled(_stat_merge, pure_python):
        return None
    moved = None if new_row is None else np.ascontiguousarray(new_row)
    if moved is not None and moved.dtype not in (np.int32, np.int64):
        moved = moved.astype(np.int64)
    parts_in = tuple(_rows(part, moved) + _fields(part) for part in parts)
    total = sum(_kept_count(part) for part in parts)
    dtypes = (event_dtype(n), remap.dtype, np.int8, np.int64, np.float64, code_dtype(len(strings)))
    # Every column is written whole but the doubles (few rows hold one).
    out = tuple(new_column(total, dtype, lazy=dtype == np.float64) for dtype in dtypes)
    typed = {
        code: (_int_data(parts, code, n), new_column(n, bool, fill=True)) for code in int_codes
    }
    columns = tuple((code, data, missing.view(np.uint8)) for code, (data, missing) in typed.items())
    threads = compiled.pass_threads(total, threads)
    if not _stat_merge.merge_rows(parts_in, (None, remap, *out), columns, n, threads):
        _counting_sort(parts_in, (remap, *out), columns, n, total)
    return out, typed


def _int_data(parts: list, code: int, n: int) -> np.ndarray:
    """Zeros for an integer stat's event values: lazily mapped when few events get it
    (most pages are never written), else at once (a stat on most events: faulting its
    pages in one by one cost more than writing them)."""
    rows = sum(len(part.events) for part in parts[1:] if part.code == code)
    return new_column(n, np.int64, fill=0) if 4 * rows >= n else new_column(n, np.int64, lazy=True)


def _counting_sort(parts: tuple, outs: tuple, columns: tuple, n: int, total: int) -> None:
    """The parts' rows placed through per-event counts (some part's events do not ascend)."""
    assert _stat_merge is not None
    counts = new_column(n + 1, np.int32 if total < _NARROW_ROWS else np.int64, fill=0)
    for part in parts:
        _stat_merge.count_rows(part[0], part[1], part[2], counts)
    np.cumsum(counts, out=counts, dtype=counts.dtype)  # counts[e]: event e's first row
    for part in parts:
        _stat_merge.place_rows(part, (counts, *outs), columns)


def _kept_count(part) -> int:
    return len(part.events) if part.keep is None else int(np.count_nonzero(part.keep))


def _rows(part, new_row) -> tuple:
    keep = None if part.keep is None else part.keep.view(np.uint8)
    events = part.events  # int32 (an edited table's) or int64 (the decoder's, new rows)
    if events.dtype not in (np.int32, np.int64):
        events = events.astype(np.int64)
    return np.ascontiguousarray(events), keep, new_row


def _fields(part) -> tuple:
    """(code, kind, ints, float rows, float values, str codes) of one part, as
    ``place_rows`` reads them (one value for every row where the part has one)."""
    float_rows, float_values = _float_rows(part.floats)
    return (
        _scalar_or_array(part.code, None),
        _scalar_or_array(part.kind, np.int8),
        0 if part.ints is None else _scalar_or_array(part.ints, np.int64),
        float_rows,
        float_values,
        -1 if part.str_codes is None else _scalar_or_array(part.str_codes, None),
    )


def _scalar_or_array(values, dtype):
    if np.ndim(values) == 0:
        return int(values)
    values = np.asarray(values)
    if len(values) > 1 and not values.strides[0]:  # one value broadcast to every row
        return int(values[0])
    return np.ascontiguousarray(values, dtype=dtype)


def _float_rows(floats) -> tuple:
    """Rows holding a double (any nonzero bit pattern, -0.0 too) and their values; only
    the resident pages of a sparse column are read."""
    if floats is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    floats = np.asarray(floats, dtype=np.float64)
    rows = sparse_rows(floats)
    if rows is None:
        rows = np.flatnonzero(floats.view(np.int64))
    return np.ascontiguousarray(rows, dtype=np.int64), np.ascontiguousarray(floats[rows])

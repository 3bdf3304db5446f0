"""Compact forms of numeric columns in a disk cache entry: narrow integers, runs, bits, zlib.

In memory a Space keeps int64 times and int32 ids, but the values need far fewer bytes:
begin times grow by nanoseconds within a line, durations are mostly short, ids count a few
hundred names. Stored as they are, the Space entry of an ``.xplane.pb`` was 1.9x the file
(docs/cache.md, "Size of an entry"). So ``frames_codec`` stores each 1-D array through
``pack``:

- ``$int``: integers as offsets from the smallest value (``plain``) or as differences from
  the row before (``delta``: sorted columns, begin times within a line), divided by their
  greatest common divisor (times in picoseconds are whole nanoseconds), in the narrowest
  of 1, 2 or 4 bytes that costs least; the rows that do not fit that width are patched in
  from a list of exceptions (rows and full values, packed in turn);
- ``$runs``: a column of few runs (the line of each event, sorted by line): the value and
  the length of each run;
- ``$bits``: a bool column, eight rows a byte;
- ``$z``: a leaf array of a *cold* field (a dataclass field whose metadata says
  ``cold``: the long stats tables, read by few tools) compressed with zlib at level 1.
  Hot columns are never compressed: a restarted server reads them back with a copy and
  a pass or two of numpy, not a decompressor.

Encoding reads a column in blocks of ``BLOCK_ROWS`` (512 KiB of temporaries, whatever
the column's length). Decoding gives back the same dtype and the same values; it checks
every length against the stored arrays, and what can expand past its stored bytes (runs,
zlib) is charged to a ``Budget`` (the cache's size cap), so a forged entry cannot make
a reader allocate without bound.

Usage (``frames_codec`` does this)::

    node = pack(array, put)              # put(leaf array) -> {"$a": i}
    same = unpack(tag, body, value, budget)
"""

from __future__ import annotations

import math
import zlib
from typing import Any, Callable, Optional

import numpy as np

# Shorter arrays are stored as they are (the tree node would outweigh the bytes saved).
MIN_ROWS = 16
# Rows per block while encoding (a parameter so that tests run it tiny). Its int64
# temporaries (512 KiB) stay under the 1 MiB from which the service has glibc map every
# block afresh (memsize.limit_heap_fragmentation): reused heap, not new pages to fault in
# (with 2 MiB blocks the server spent 2.3 s of CPU encoding the Space of a 76 MB file, 0.5 s
# without that setting).
BLOCK_ROWS = 1 << 16
# An encoding is used only when it saves at least this share of the bytes (a load pays a
# pass or two of numpy for it).
_MIN_SAVING = 0.15
# What one exception (row and full value) costs, roughly, once packed in turn.
_EXCEPTION_BYTES = 12
_RUN_BYTES = 12
# Cold leaves smaller than this, or that compress by less than the saving, stay raw.
_COMPRESS_MIN_BYTES = 1024
_ZLIB_LEVEL = 1
_WIDTHS = (1, 2, 4)
_INT64 = np.iinfo(np.int64)


class Budget:
    """Bytes that runs and decompression may still produce while one entry is decoded."""

    def __init__(self, max_bytes: Optional[int] = None):
        self.left = math.inf if max_bytes is None else max_bytes

    def spend(self, nbytes: int) -> None:
        if nbytes > self.left:
            raise ValueError(f"the entry expands past {self.left} bytes")
        self.left -= nbytes


# --- encoding ---------------------------------------------------------------------------
def pack(array: np.ndarray, put: Callable[[np.ndarray], dict]) -> dict:
    """The tree node of a numeric array; ``put`` stores a leaf array and returns its node."""
    if array.ndim != 1 or len(array) < MIN_ROWS:
        return put(array)
    if array.dtype == np.bool_:
        runs = int(np.count_nonzero(array[1:] != array[:-1])) + 1
        if _RUN_BYTES * runs < len(array) // 8:
            return _pack_runs(array, put)
        return {"$bits": [len(array), put(np.packbits(array))]}
    if array.dtype.kind not in "iu":
        return put(array)
    stats = _Stats.of(array)
    plain, delta, runs = stats.plain_cost(), stats.delta_cost(), _RUN_BYTES * stats.runs
    best = min(plain[0], delta[0], runs)
    if best > (1 - _MIN_SAVING) * array.nbytes:
        return put(array)
    if runs == best:
        return _pack_runs(array, put)
    if delta[0] < (1 - _MIN_SAVING) * plain[0]:  # a running sum only where it pays
        return _pack_narrow(array, stats, "delta", delta[1], put)
    return _pack_narrow(array, stats, "plain", plain[1], put)


def compress(array: np.ndarray) -> Optional[np.ndarray]:
    """zlib bytes of a cold leaf array, or None when that is not worth it."""
    if array.ndim != 1 or array.nbytes < _COMPRESS_MIN_BYTES:
        return None
    contiguous: Any = np.ascontiguousarray(array)  # (numpy's stubs: arrays are no buffers)
    data = zlib.compress(memoryview(contiguous).cast("B"), _ZLIB_LEVEL)
    if len(data) > (1 - _MIN_SAVING) * array.nbytes:
        return None
    return np.frombuffer(data, dtype=np.uint8)


def _as_int64(block: np.ndarray) -> np.ndarray:
    """int64 values of an integer block (uint64 reinterpreted: arithmetic wraps mod 2**64)."""
    if block.dtype == np.uint64:
        return block.view(np.int64)
    return block.astype(np.int64, copy=False)


def _blocks(array: np.ndarray, diffs: bool = True) -> Any:
    """(start, int64 values, int64 differences from the row before, or None) per block;
    the first block's differences start at its second row."""
    for start in range(0, len(array), BLOCK_ROWS):
        before = max(start - 1, 0)  # the row before the block, for its first difference
        both = _as_int64(array[before : start + BLOCK_ROWS])
        yield start, both[start - before :], both[1:] - both[:-1] if diffs else None


class _Stats:
    """What choosing an encoding needs of a column: two passes over its blocks."""

    def __init__(self, n: int, lo: int, hi: int, step: int, runs: int, widest: int):
        self.n, self.lo, self.hi, self.step, self.runs = n, lo, hi, step, runs
        self.widest = widest  # the largest difference, in absolute value
        self.plain_misfits = {w: 0 for w in _WIDTHS}
        self.delta_misfits = {w: 0 for w in _WIDTHS}

    @classmethod
    def of(cls, array: np.ndarray) -> _Stats:
        lo, hi, step, changes, widest = _INT64.max, _INT64.min, 0, 0, 0
        for _, values, diffs in _blocks(array):
            lo, hi = min(lo, int(values.min())), max(hi, int(values.max()))
            if len(diffs):
                if step != 1:
                    step = math.gcd(step, abs(int(np.gcd.reduce(diffs))))
                widest = max(widest, -int(diffs.min()), int(diffs.max()))
            changes += int(np.count_nonzero(diffs))
        # Differences share the divisor of the offsets from any row; a gcd above 2**63
        # (differences of -2**63) or of nothing is no use.
        step = step if 1 <= step <= _INT64.max else 1
        stats = cls(len(array), lo, hi, step, changes + 1, widest)
        stats._count_misfits(array)
        return stats

    def _count_misfits(self, array: np.ndarray) -> None:
        """Rows that do not fit each width, roughly (the bytes they cost decide the width;
        packing then finds them exactly): offsets (``plain``), differences (``delta``)."""
        # Widths that need counting: narrower than the widest offset or difference.
        plain = [w for w in _WIDTHS if self.hi - self.lo >= self.step << (8 * w)]
        delta = [w for w in _WIDTHS if self.widest >= self.step << (8 * w - 1)]
        if self.hi - self.lo > _INT64.max:
            self.plain_misfits, plain = {w: self.n for w in _WIDTHS}, []
        if not (plain or delta):
            return
        for _, values, diffs in _blocks(array, diffs=bool(delta)):
            if plain:
                offsets = values - self.lo
                for w in plain:
                    limit = self.step << (8 * w)
                    self.plain_misfits[w] += int(np.count_nonzero(offsets >= limit))
            if delta:
                magnitude = np.abs(diffs)  # (-2**63 stays negative: off by one row)
                for w in delta:
                    limit = min(self.step << (8 * w - 1), _INT64.max)
                    self.delta_misfits[w] += int(np.count_nonzero(magnitude >= limit))

    def plain_cost(self) -> tuple:
        return _cheapest(self.n, self.plain_misfits)

    def delta_cost(self) -> tuple:
        return _cheapest(self.n - 1, self.delta_misfits)


def _cheapest(rows: int, misfits: dict) -> tuple:
    """(bytes, width) of the cheapest width for ``rows`` values with these misfits."""
    return min((rows * w + _EXCEPTION_BYTES * misfits[w], w) for w in _WIDTHS)


def _pack_narrow(array: np.ndarray, stats: _Stats, mode: str, width: int, put: Callable) -> dict:
    """``$int``: [dtype, mode, origin, step, narrow values, exceptions or None].

    ``plain``: value = origin + step * narrow (origin: the smallest value); ``delta``: the
    differences, value = origin (the first value) + their running sum. An exception is a
    row (of the narrow array) whose true offset or difference does not fit: its narrow value
    is 0 and the exception holds the full value (``plain``) or difference (``delta``).
    """
    kind = "u" if mode == "plain" else "i"
    narrow_dtype = np.dtype(f"<{kind}{width}")
    info = np.iinfo(narrow_dtype)
    narrow = np.empty(stats.n - (mode == "delta"), dtype=narrow_dtype)
    rows, full = [], []
    for start, values, diffs in _blocks(array, diffs=mode == "delta"):
        if mode == "plain":
            at, exact = start, values
            scaled = values - stats.lo
            if stats.step != 1:
                scaled //= stats.step
            misfit = scaled > info.max
        else:
            at, exact = max(start - 1, 0), diffs
            scaled = diffs // stats.step if stats.step != 1 else diffs
            misfit = (scaled < info.min) | (scaled > info.max)
        if misfit.any():
            where = np.flatnonzero(misfit)
            rows.append(where + at)
            full.append(exact[where])
            scaled[where] = 0
        narrow[at : at + len(scaled)] = scaled
    origin = stats.lo if mode == "plain" else int(_as_int64(array[:1])[0])
    exceptions = None
    if rows:
        exceptions = [pack(np.concatenate(rows), put), pack(np.concatenate(full), put)]
    return {"$int": [array.dtype.str, mode, origin, stats.step, put(narrow), exceptions]}


def _pack_runs(array: np.ndarray, put: Callable) -> dict:
    """``$runs``: [rows, the value of each run, the length of each run]."""
    starts = np.flatnonzero(array[1:] != array[:-1]) + 1
    lengths = np.diff(starts, prepend=0, append=len(array))
    values = array[np.concatenate(([0], starts))]
    return {"$runs": [len(array), pack(values, put), pack(lengths, put)]}


# --- decoding ---------------------------------------------------------------------------
def unpack(tag: str, body: Any, value: Callable, budget: Budget) -> np.ndarray:
    """The array of a ``$int``, ``$runs``, ``$bits`` or ``$z`` node (``value`` decodes its
    child nodes); ValueError (or TypeError, IndexError) when the node does not fit together."""
    return _UNPACKERS[tag](body, value, budget)


def _integer_dtype(text: Any) -> np.dtype:
    dtype = np.dtype(str(text))
    if dtype.kind not in "iu" or dtype.itemsize > 8 or dtype.shape:
        raise ValueError(f"not an integer dtype: {dtype}")
    return dtype


def _int(x: Any, low: int = _INT64.min, high: int = _INT64.max) -> int:
    if type(x) is not int or not low <= x <= high:
        raise ValueError(f"bad integer {x!r}")
    return x


def _array(x: Any, kind: str) -> np.ndarray:
    if not (isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in kind):
        raise ValueError("not a 1-D array of the expected kind")
    return x


def _unpack_int(body: Any, value: Callable, budget: Budget) -> np.ndarray:
    dtype_text, mode, origin, step, narrow, exceptions = body
    dtype, origin, step = _integer_dtype(dtype_text), _int(origin), _int(step, 1)
    if mode not in ("plain", "delta"):
        raise ValueError(f"unknown mode {mode!r}")
    narrow = _array(value(narrow), "iu")
    # Computed in the column's own width: sums and products wrap modulo 2**bits alike for
    # signed and unsigned types, and every true value fits, so what wraps comes out right.
    work = np.dtype(f"<i{dtype.itemsize}")
    out = np.empty(len(narrow) + (mode == "delta"), dtype=work)
    patched = out if mode == "plain" else out[1:]
    # Widened and scaled in one pass (a narrower type fits in a wider one, or both are as
    # narrow).
    np.multiply(narrow, _wrapped(step, work), out=patched, casting="unsafe")
    del narrow
    if mode == "plain" and origin:
        out += _wrapped(origin, work)
    if exceptions is not None:
        rows, full = (_array(value(x), "i") for x in exceptions)
        if len(rows) != len(full) or (len(rows) and rows.min() < 0):
            raise ValueError("exceptions do not fit")
        patched[rows] = full.astype(work)  # IndexError past the end
    if mode == "delta":
        out[0] = _wrapped(origin, work)
        np.cumsum(out, out=out)  # wraps as the differences did
    return out.view(dtype)


def _wrapped(x: int, work: np.dtype) -> Any:
    """``x`` modulo 2**bits of ``work``, as a scalar of that (signed) type."""
    bits = 8 * work.itemsize
    x %= 1 << bits
    return work.type(x - (1 << bits) if x >> (bits - 1) else x)


def _unpack_runs(body: Any, value: Callable, budget: Budget) -> np.ndarray:
    n, values, lengths = body
    n, values, lengths = _int(n, 0), _array(value(values), "biufc"), _array(value(lengths), "iu")
    if len(values) != len(lengths) or (len(lengths) and (lengths.min() < 0 or lengths.max() > n)):
        raise ValueError("runs do not fit")
    if int(lengths.sum()) != n:  # at most n * len(lengths) < 2**63: no wrap
        raise ValueError("runs do not add up")
    budget.spend(n * values.dtype.itemsize)
    return np.repeat(values, lengths)


def _unpack_bits(body: Any, value: Callable, budget: Budget) -> np.ndarray:
    n, packed = body
    n, packed = _int(n, 0), _array(value(packed), "u")
    if packed.dtype != np.uint8 or len(packed) != -(-n // 8):
        raise ValueError("bits do not fit")
    return np.unpackbits(packed, count=n).view(np.bool_)


def _unpack_zlib(body: Any, value: Callable, budget: Budget) -> np.ndarray:
    dtype_text, n, stored = body
    dtype, n = np.dtype(str(dtype_text)), _int(n, 0)
    if dtype.kind not in "biufc" or dtype.shape:
        raise ValueError(f"arrays of dtype {dtype} are not stored")
    blob: Any = _array(value(stored), "u")
    nbytes = n * dtype.itemsize
    if blob.dtype != np.uint8 or not nbytes:  # (a max_length of 0 would mean no limit)
        raise ValueError("compressed data of another kind")
    budget.spend(nbytes)
    inflate = zlib.decompressobj()
    data = inflate.decompress(memoryview(blob).cast("B"), nbytes)  # never more than that
    if len(data) != nbytes or not inflate.eof or inflate.unconsumed_tail or inflate.unused_data:
        raise ValueError("compressed data of another length")
    return np.frombuffer(data, dtype=dtype).copy()  # writable, as every other column


_UNPACKERS: dict = {
    "$int": _unpack_int,
    "$runs": _unpack_runs,
    "$bits": _unpack_bits,
    "$z": _unpack_zlib,
}
TAGS = frozenset(_UNPACKERS)

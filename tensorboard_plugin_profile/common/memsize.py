"""How much memory a cached value really holds, for the cache's byte budget.

``deep_size`` walks dataclasses, containers, pandas frames and numpy arrays and
adds up what they keep alive: array buffers (each counted once, however many
columns or views share it), category tables, and for object columns one
pointer per row plus each distinct object once (a column of a million ``None``
costs 8 MB, not the 24 MB that ``memory_usage(deep=True)`` reports).

Columns that are mostly empty (a stat that 1% of the events carry) are built by
``sparse_values``: anonymous memory whose untouched pages are never allocated, and
which ``deep_size`` charges by its resident pages (``mincore``), not by its length.

Usage::

    charge = deep_size(space)                   # one value
    charge = deep_size([space, *derived])       # several, shared buffers once
    values = sparse_values(len(events), np.int64, rows, stat_values)
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import mmap
import os
import sys
import weakref
from typing import Any, Iterator, Optional

import numpy as np
import pandas as pd

from .identity import group_by_identity

# id(object array) -> (weak reference, bytes of its distinct elements).
_OBJECT_BYTES: dict = {}
# Types whose size needs no walk, and plain containers, recognised by exact type first.
_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_CONTAINERS = frozenset({dict, list, tuple, set, frozenset})
# Per-object overhead of a pandas container, roughly (block manager, index, names).
_FRAME_OVERHEAD = 1024


def release_free_memory() -> None:
    """Hands freed heap pages back to the OS (glibc only; elsewhere a no-op).

    Each server thread allocates from its own malloc arena, and glibc keeps an arena's
    freed pages: a profile evicted by one request's thread would otherwise still count
    in the RSS while another thread decodes the next one.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, …)
        return None


_MALLOC_TRIM = _malloc_trim()

# glibc's mallopt parameter, and the size from which blocks get their own mapping.
_M_MMAP_THRESHOLD = -3
_OWN_MAPPING_BYTES = 1 << 20
# Arrays smaller than this are ordinary numpy arrays (a mapping per tiny array costs more).
LAZY_MIN_BYTES = 1 << 20


def limit_heap_fragmentation() -> None:
    """Every heap block of 1 MiB or more gets its own mapping, returned to the OS when freed.

    By default glibc raises that threshold (up to 32 MiB) each time such a block is freed, so
    after the first few event columns die, every later column of a few million events comes
    from the heap, whose freed holes stay resident: on a 2.8 M-event profile that kept
    ~260 MB more resident after preprocessing and the trace index
    (bench/history/cold_path_rounds.md, "Memory").
    A fixed threshold also makes ``np.zeros`` of such sizes lazy (fresh zero pages). Linux
    with glibc only; elsewhere a no-op.
    """
    if _MALLOC_TRIM is not None:
        mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
        if mallopt is not None:
            mallopt(_M_MMAP_THRESHOLD, _OWN_MAPPING_BYTES)


# Where a container's memory limit is read: cgroup v2, then v1 (each as the process sees it).
CGROUP_LIMIT_FILES = (
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
)


def usable_memory_bytes(limit_files: tuple = CGROUP_LIMIT_FILES) -> Optional[int]:
    """The memory this process may use: physical RAM, or a container's (cgroup) limit
    when lower. None when neither can be read (not Linux or a BSD: no ``sysconf``)."""
    try:
        physical: Optional[int] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        physical = None
    limits = [physical] if physical and physical > 0 else []
    for path in limit_files:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) > 0:  # "max", or v1's huge "unlimited", stay out
            limits.append(int(text))
            break
    return min(limits) if limits else None


class _ZeroPages(mmap.mmap):
    """Anonymous memory behind a ``sparse_values`` array (``deep_size`` asks the kernel
    which of its pages are resident)."""


def sparse_values(n: int, dtype: Any, rows: Any, values: Any) -> np.ndarray:
    """Zeros except ``values`` at ``rows``; only the pages holding those rows cost memory.

    For mostly-empty columns (a stat that 1% of the events carry): a fresh anonymous
    mapping is zero without being allocated, whatever the allocator's settings (``np.zeros``
    is lazy only when malloc maps the block itself). Reading every row of it can make
    every page resident (some kernels back reads of untouched pages with the shared zero
    page, others do not), so readers gather the present rows (``mask``) instead.
    """
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    if nbytes < LAZY_MIN_BYTES:
        out = np.zeros(n, dtype=dtype)
        out[rows] = values
        return out
    pages = _ZeroPages(-1, nbytes)
    if hasattr(pages, "madvise") and hasattr(mmap, "MADV_NOHUGEPAGE"):
        pages.madvise(mmap.MADV_NOHUGEPAGE)  # a written row must not allocate 2 MB
    out = np.frombuffer(pages, dtype=dtype, count=n)
    rows = np.asarray(rows, dtype=np.int64)
    out[rows] = values
    return out


def sparse_rows(array: np.ndarray) -> Optional[np.ndarray]:
    """The rows of a ``sparse_values`` array that hold a value (None for any other array).

    Only its resident pages are read: the others were never written, so they are zero,
    and reading them would make them resident (on this kernel, 80 MB for an 80 MB column).
    """
    root = array  # a frame's column is a view of the (1, n) block viewing the mapping
    while isinstance(root.base, np.ndarray):
        root = root.base
    whole = array.flags.c_contiguous and array.nbytes == root.nbytes and array.ndim == 1
    if not (whole and _is_zero_pages(root)) or _MINCORE is None:
        return None
    resident = _resident_pages(array)
    if resident is None:
        return None
    per_page = mmap.PAGESIZE // array.itemsize
    bits = array.view(f"u{array.itemsize}")  # -0.0 and NaN are values too
    found = []
    for start in range(0, len(resident), _PAGES_PER_SCAN):
        pages = resident[start : start + _PAGES_PER_SCAN]
        rows = (pages[:, None] * per_page + np.arange(per_page)).reshape(-1)
        rows = rows[rows < len(array)]
        found.append(rows[bits[rows] != 0])
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


# Resident pages scanned at once by ``sparse_rows`` (bounds its index arrays to ~4 MB).
_PAGES_PER_SCAN = 1024


def _is_zero_pages(array: np.ndarray) -> bool:
    return array.base is not None and isinstance(getattr(array.base, "obj", None), _ZeroPages)


def _resident_pages(array: np.ndarray) -> Optional[np.ndarray]:
    """Indexes of the pages of this page-aligned array the kernel has resident (None: unknown)."""
    pages = -(-array.nbytes // mmap.PAGESIZE)
    if _MINCORE is None or not pages:
        return None
    vector = np.zeros(pages, dtype=np.uint8)  # one byte per page, bit 0: resident
    address = ctypes.c_void_p(array.__array_interface__["data"][0])
    if _MINCORE(address, ctypes.c_size_t(array.nbytes), vector.ctypes.data_as(ctypes.c_void_p)):
        return None
    return np.flatnonzero(vector & 1)


def _resident_bytes(array: np.ndarray) -> int:
    """Bytes of this (page-aligned) array the kernel has resident; all of it without mincore."""
    resident = _resident_pages(array)
    return int(array.nbytes) if resident is None else len(resident) * mmap.PAGESIZE


def _mincore() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).mincore
    except (OSError, AttributeError):
        return None


_MINCORE = _mincore()


def deep_size(value: Any, seen: Optional[Any] = None) -> int:
    """Bytes held by ``value`` and everything it references (buffers counted once).

    ``seen`` (ids already counted: a set, or anything with ``in`` and ``add``) carries the
    counted buffers from one walk to the next, so shared ones are counted once in all.

    The walk keeps its own stack, so nesting of any depth (a trace's metadata nested a
    thousand levels) costs a list entry per level, not a Python frame: no RecursionError.
    """
    return _Sizer(seen if seen is not None else set()).size(value)


_DONE = object()


class _Sizer:
    def __init__(self, seen: Any):
        self.seen = seen  # ids of buffers and containers already counted

    def size(self, value: Any) -> int:
        """``value``'s bytes and its references', walked depth first on an explicit stack
        of iterators (one per container being walked)."""
        total, children = self.own(value)
        stack = [] if children is None else [children]
        while stack:
            item = next(stack[-1], _DONE)
            if type(item) in _SCALARS:  # most items: no call
                total += 0 if item is None else sys.getsizeof(item)
                continue
            if item is _DONE:
                stack.pop()
                continue
            own, children = self.own(item)
            total += own
            if children is not None:
                stack.append(children)
        return total

    def own(self, value: Any) -> tuple:
        """(bytes of ``value`` itself, iterator over what it references or None)."""
        kind = type(value)
        if kind in _SCALARS:  # most of what a walk meets: skip the isinstance chain
            return (0 if value is None else sys.getsizeof(value)), None
        if value is None or isinstance(value, (bool, int, float, str, bytes)):
            return sys.getsizeof(value), None
        if isinstance(value, np.ndarray):  # marks its buffer as seen itself
            return self.array(value), None
        if id(value) in self.seen:
            return 0, None
        self.seen.add(id(value))
        if kind in _CONTAINERS or isinstance(value, (dict, list, tuple, set, frozenset)):
            scalars = _scalar_bytes(value)
            if scalars is not None:
                return sys.getsizeof(value) + scalars, None
            return sys.getsizeof(value), _references(value)
        if isinstance(value, pd.DataFrame):
            return _FRAME_OVERHEAD + self.index(value.index) + self.columns(value), None
        if isinstance(value, pd.Series):
            return _FRAME_OVERHEAD + self.index(value.index) + self.extension(value.array), None
        if isinstance(value, pd.Index):
            return self.index(value), None
        if isinstance(value, pd.api.extensions.ExtensionArray):
            return self.extension(value), None
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = (getattr(value, f.name) for f in dataclasses.fields(value))
            return sys.getsizeof(value), fields
        return sys.getsizeof(value), None

    def columns(self, frame: pd.DataFrame) -> int:
        """The frame's column arrays, read from its blocks: one array per block of
        same-typed columns rather than a Series per column (~0.3 ms each)."""
        arrays = getattr(getattr(frame, "_mgr", None), "arrays", None)
        if not isinstance(arrays, list):  # another pandas layout: column by column
            arrays = [frame.iloc[:, i].array for i in range(frame.shape[1])]
        return sum(self.extension(a) for a in arrays)

    def array(self, array: np.ndarray) -> int:
        base = array  # the array owning the buffer, counted once however many views share it
        while isinstance(base.base, np.ndarray):
            base = base.base
        if id(base) in self.seen:
            return 0
        self.seen.add(id(base))
        if array.dtype == object:
            return 8 * array.size + self.objects(array)
        pages = getattr(base.base, "obj", None)  # a memoryview's owner
        if isinstance(pages, _ZeroPages):
            return _resident_bytes(base)
        return int(base.nbytes)

    def objects(self, array: np.ndarray) -> int:
        """Each distinct element once (strings repeated per row are usually one object).

        Hashing a column costs ~0.1 µs a row, so a column's answer is remembered while
        it lives: re-measuring a Space after a tool added derived tables is cheap.
        """
        known = _OBJECT_BYTES.get(id(array))
        if known is not None and known[0]() is array:
            return known[1]
        size = self._distinct_objects(array)
        key = id(array)
        try:
            ref = weakref.ref(array, lambda _: _OBJECT_BYTES.pop(key, None))
        except TypeError:
            return size
        _OBJECT_BYTES[key] = (ref, size)
        return size

    def _distinct_objects(self, array: np.ndarray) -> int:
        """The distinct objects by identity: a row of an object column is a pointer, and rows
        pointing at one object share it. Hashing the pointers as integers costs a tenth of
        hashing the strings (pd.unique of the values: ~0.55 s per first request of a 250 MB
        PyTorch trace's event frame), and equal strings that are separate objects are
        separate memory anyway."""
        flat = np.ascontiguousarray(array.reshape(-1))
        if not flat.size:
            return 0
        _, one_row_each = group_by_identity(flat)
        return sum(self.size(v) for v in flat[one_row_each])

    def extension(self, values: Any) -> int:
        if isinstance(values, pd.Categorical):
            return self.array(values.codes) + self.index(values.categories)
        if isinstance(values, np.ndarray):
            return self.array(values)
        numpy_view = getattr(values, "_ndarray", None)  # NumpyExtensionArray, StringArray
        if isinstance(numpy_view, np.ndarray):
            return self.array(numpy_view)
        data, mask = getattr(values, "_data", None), getattr(values, "_mask", None)
        if isinstance(data, np.ndarray) and isinstance(mask, np.ndarray):  # nullable numbers
            return self.array(data) + self.array(mask)
        return int(getattr(values, "nbytes", 0))

    def index(self, index: pd.Index) -> int:
        if isinstance(index, pd.RangeIndex):
            return 0
        if isinstance(index, pd.MultiIndex):  # no single backing array: levels and codes
            levels = sum(self.index(level) for level in index.levels)
            return levels + sum(self.array(np.asarray(codes)) for codes in index.codes)
        return self.extension(index.array)


def _scalar_bytes(container: Any) -> Optional[int]:
    """What the walk would add for a container that holds only scalars (each counted, None
    as nothing), summed by C loops; None when it holds anything else.

    A Space's group names (a dict entry per step group) made the walk ~1.6 µs an entry
    through the Python loop; this is ~0.55 µs (400,000 entries: 0.66 s -> 0.23 s)."""
    parts = (container, container.values()) if isinstance(container, dict) else (container,)
    kinds: set = set()
    for part in parts:
        kinds.update(map(type, part))
    if not kinds <= _SCALARS:
        return None
    total = sum(sum(map(sys.getsizeof, part)) for part in parts)
    if type(None) in kinds:
        total -= sys.getsizeof(None) * sum(list(part).count(None) for part in parts)
    return total


def _references(container: Any) -> Iterator:
    """What a plain container references: a dict's keys and values, the others' items."""
    if isinstance(container, dict):
        return itertools.chain.from_iterable(container.items())
    return iter(container)

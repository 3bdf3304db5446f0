"""Collected columns → the XSpace decoder's raw form (``xspace/wire.py`` documents it).

Processes become planes, their threads (GPU streams, counter series) lines; events are
ordered by (plane, line, begin, longest first). Flow points are bound to events here,
vectorised: a point belongs to the latest event of its line that begins at or before it,
unless that event has ended and the point is a flow's step or end (``t``/``f``), which
then binds to the next event of the line (Chrome's rule for "next slice"). Each bound
point becomes a ``flow`` stat (direction, id, category as
``xspace/flow_codes.py`` encodes). PyTorch traces without flow events get
launch → kernel flows from their ``correlation`` ids, so the arrows are there for old
Kineto files too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..common import work
from ..xspace import flow_codes, schema
from ..xspace.model import KIND_STR, KIND_UINT64
from .collect import Collector

CATEGORY = "cat"
CORRELATION = "correlation"
LAUNCH_FLOW_CATEGORIES = frozenset({"ac2g", "async_cpu_to_gpu"})
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "runtime"})
DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
_DIRECTION_OF_PHASE = np.array(
    [flow_codes.FLOW_OUT, flow_codes.FLOW_IN | flow_codes.FLOW_OUT, flow_codes.FLOW_IN]
)
_GENERATED_TID_BASE = 1 << 30
_PLANES_PER_CHECKPOINT = 64


def _np(column, dtype) -> np.ndarray:
    return np.frombuffer(column, dtype=dtype) if len(column) else np.zeros(0, dtype=dtype)


def raw_space(c: Collector) -> dict:
    """The raw form of everything collected (call ``c.finish()`` first)."""
    line_keys = c.lines.values
    pids = _plane_order(c, line_keys)
    plane_of_pid = {pid: i for i, pid in enumerate(pids)}
    line_plane = np.asarray([plane_of_pid[pid] for pid, _ in line_keys], dtype=np.int64)
    ev_line = _np(c.ev_line, np.int64)
    begin, dur = _np(c.ev_begin, np.int64), _np(c.ev_dur, np.int64)
    # Times start at the earliest event (whole ns), not at the first one in the file.
    shift_ps = (int(begin.min()) // 1000) * 1000 if len(begin) else 0
    begin = begin - shift_ps
    order = np.lexsort((-dur, begin, ev_line, line_plane[ev_line] if len(ev_line) else ev_line))
    row_of = np.empty(len(order), dtype=np.int64)
    row_of[order] = np.arange(len(order))
    stats = _stat_columns(c, row_of)
    # Sorted once for every plane: a plane's columns are slices of these (before, each
    # plane sorted whole columns again, and its slices kept those copies alive: 16 KB per
    # line on 1 M threads in 1,000 processes).
    ev_line, begin, dur = ev_line[order], begin[order], dur[order]
    flow_rows = _flow_stats(c, ev_line, begin, dur, order, shift_ps)
    names, cats = _np(c.ev_name, np.int64)[order], _np(c.ev_cat, np.int64)[order]
    meta_ids = names * max(len(c.strings.values), 1) + cats
    unique_meta, meta_codes = np.unique(meta_ids, return_inverse=True)
    event_plane = line_plane[ev_line] if len(order) else ev_line
    bounds = np.searchsorted(event_plane, np.arange(len(pids) + 1))
    stats, stat_bounds = _sorted_stats(stats, flow_rows, bounds)
    del flow_rows
    c.stat_keys(CATEGORY)
    strings = np.empty(len(c.strings.values), dtype=object)
    strings[:] = c.strings.values
    base_ns = int(c.base_us or 0) * 1000 + shift_ps // 1000
    plane_lines = _lines_by_plane(line_plane, len(pids))
    line_row = np.zeros(len(line_keys), dtype=np.int64)  # a line's row in its plane
    planes = []
    for p, pid in enumerate(pids):
        if p % _PLANES_PER_CHECKPOINT == _PLANES_PER_CHECKPOINT - 1:
            work.checkpoint(f"building process {p + 1:,} of {len(pids):,}")
        lo, hi = bounds[p], bounds[p + 1]
        s_lo, s_hi = stat_bounds[p], stat_bounds[p + 1]
        lines = _lines(c, pid, plane_lines[p], base_ns, line_row)
        codes = meta_codes[lo:hi]
        used = np.unique(codes)
        planes.append(
            {
                "id": p,
                "name": _process_name(c, pid),
                "lines": lines,
                "events": (
                    line_row[ev_line[lo:hi]].astype(np.int32),
                    (codes + 1).astype(np.int64),
                    begin[lo:hi],
                    dur[lo:hi],
                    np.zeros(hi - lo, dtype=np.int64),
                ),
                "stats": _stat_slice(stats, s_lo, s_hi, lo, strings),
                "event_metadata": [
                    (int(m) + 1, strings[unique_meta[m] // max(len(strings), 1)], "") for m in used
                ],
                "metadata_stats": _category_stats(c, used, unique_meta, strings),
                "stat_metadata": _stat_names(c, stats[1][s_lo:s_hi]),
                "plane_stats": _empty_stats(),
            }
        )
    return {"planes": planes, "hostnames": [], "errors": [], "warnings": [], "base_ns": base_ns}


_MEMORY_PROCESSES = ("Allocators", " Tensors")


def _plane_order(c: Collector, line_keys: list) -> list:
    """Processes by pid: CPU before GPU ones, memory bookkeeping (ProfilerHook's allocator
    counters and tensor objects) after them, named pseudo-pids (PyTorch's "Spans") last."""
    seen: dict = {}
    for pid, _ in line_keys:
        seen.setdefault(pid, len(seen))

    def rank(pid) -> tuple:
        meta = c.process_meta.get(pid, {})
        memory = meta.get("name", "").endswith(_MEMORY_PROCESSES)
        numeric = isinstance(pid, int)
        return (
            not numeric,
            "GPU" in meta.get("labels", ""),
            memory,
            pid if numeric else 0,
            seen[pid],
        )

    return sorted(seen, key=rank)


def _process_name(c: Collector, pid) -> str:
    meta = c.process_meta.get(pid, {})
    parts = [meta.get("labels", ""), meta.get("name", "")]
    name = " · ".join(p for p in parts if p)
    return name or f"process {pid}"


def _lines_by_plane(line_plane: np.ndarray, planes: int) -> list:
    """The global line numbers of each plane, in line order (one sort for all planes)."""
    order = np.argsort(line_plane, kind="stable")
    bounds = np.searchsorted(line_plane[order], np.arange(planes + 1))
    return [order[bounds[p] : bounds[p + 1]] for p in range(planes)]


def _lines(c: Collector, pid, global_lines: np.ndarray, base_ns: int, line_row) -> list:
    """Raw line tuples of one process; ``line_row`` gets each global line's row in it."""
    keys = [c.lines.values[g] for g in global_lines]
    used: set = set()
    ids = []
    for k, (_, tid) in enumerate(keys):
        ok = isinstance(tid, int) and 0 <= tid < _GENERATED_TID_BASE and tid not in used
        ids.append(tid if ok else _GENERATED_TID_BASE + k)
        used.add(ids[-1])
    names = []
    for _, tid in keys:
        meta = c.thread_meta.get((pid, tid), {})
        names.append((meta.get("name") or f"thread {tid}").strip())
    rank = sorted(range(len(keys)), key=lambda k: (_sort_index(c, pid, keys[k][1], ids[k]), k))
    line_row[global_lines[rank]] = np.arange(len(rank))
    return [(ids[k], 0, names[k], "", base_ns, 0) for k in rank]


def _sort_index(c: Collector, pid, tid, line_id: int) -> tuple:
    value = c.thread_meta.get((pid, tid), {}).get("sort_index")
    return (0, value) if isinstance(value, int) else (1, line_id)


def _stat_names(c: Collector, keys: np.ndarray) -> dict:
    """Id → name of the stat keys a plane uses (not every key of the file: a file of many
    processes and many distinct arg names would hold their product)."""
    used = np.unique(keys).tolist() + [c.stat_keys(CATEGORY)]
    return {k: c.stat_keys.values[k] for k in sorted(set(used))}


def _stat_columns(c: Collector, row_of: np.ndarray) -> tuple:
    owners = _np(c.st_event, np.int64)
    return (
        row_of[owners] if len(owners) else owners,
        _np(c.st_key, np.int64),
        _np(c.st_kind, np.int8),
        _np(c.st_int, np.int64),
        _np(c.st_float, np.float64),
    )


def _sorted_stats(stats: tuple, flow_rows: tuple, bounds: np.ndarray) -> tuple:
    """Event and flow stats as one table ordered by owner row (stable: an event's stats keep
    their order), and where each plane's slice begins (``bounds``: its first event row).

    Rows are sorted by plane first, so the owner alone orders them as (plane, owner) did.
    One column is gathered at a time: the peak holds one more column, not two copies of
    every column (concatenated, then sorted), which was the decoder's peak on PyTorch
    traces (millions of args).
    """
    owners = np.concatenate([stats[0], flow_rows[0]])
    order = np.argsort(owners, kind="stable")
    columns = [owners[order]]
    del owners
    for a, b in zip(stats[1:], flow_rows[1:]):
        columns.append(np.concatenate([a, b])[order])
    return tuple(columns), np.searchsorted(columns[0], bounds)


def _stat_slice(stats: tuple, lo: int, hi: int, first_row: int, strings: np.ndarray) -> tuple:
    owners, keys, kinds, ints, floats = (col[lo:hi] for col in stats)
    is_str = kinds == KIND_STR
    string_ids, table = _local_strings(np.where(is_str, ints, -1), strings)
    ints = np.where(is_str, 0, ints)
    return (owners - first_row, keys, kinds, ints, floats, string_ids, table)


def _local_strings(global_ids: np.ndarray, strings: np.ndarray) -> tuple:
    """Codes into this table's own distinct strings (first-seen order), -1 where none."""
    codes, uniques = pd.factorize(global_ids[global_ids >= 0])
    local = np.full(len(global_ids), -1, dtype=np.int32)
    local[global_ids >= 0] = codes
    return local, list(strings[np.asarray(uniques, dtype=np.int64)])


def _category_stats(c: Collector, used: np.ndarray, unique_meta: np.ndarray, strings) -> tuple:
    key = c.stat_keys(CATEGORY)
    cats = (unique_meta[used] % max(len(strings), 1)).astype(np.int64)
    string_ids, table = _local_strings(cats, strings)
    n = len(used)
    return (
        (used + 1).astype(np.int64),
        np.full(n, key, dtype=np.int64),
        np.full(n, KIND_STR, dtype=np.int8),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.float64),
        string_ids,
        table,
    )


def _empty_stats() -> tuple:
    empty = np.zeros(0, dtype=np.int64)
    return (
        empty,
        empty,
        empty.astype(np.int8),
        empty,
        empty.astype(np.float64),
        empty.astype(np.int32),
        [],
    )


# --- flows ------------------------------------------------------------------------
def _flow_stats(
    c: Collector, line: np.ndarray, begin: np.ndarray, dur: np.ndarray, order, shift_ps: int
) -> tuple:
    """Stat rows (owner, key, kind, int, float) tying flow points to events (sorted rows)."""
    point_line = _np(c.flow_line, np.int64)
    if len(point_line):
        point_ts = _np(c.flow_ts, np.int64) - shift_ps
        rows = _bind(line, begin, dur, point_line, point_ts, _np(c.flow_phase, np.int8))
        keys = _np(c.flow_key, np.int64)
        ok = rows >= 0
        rows, keys, phase = rows[ok], keys[ok], _np(c.flow_phase, np.int8)[ok]
        launch = np.asarray(
            [cat in LAUNCH_FLOW_CATEGORIES for cat, _ in c.flow_keys.values], dtype=bool
        )
        category = np.where(launch[keys], schema.CONTEXT_TYPE_GPU_LAUNCH, 0)
        direction = _DIRECTION_OF_PHASE[phase]
        flow_id = keys + 1
    else:
        rows, flow_id, direction, category = _correlation_flows(c, order)
    values = flow_codes.encode(flow_id.astype(np.uint64), 0, category)
    values |= direction.astype(np.uint64)
    n = len(rows)
    return (
        rows.astype(np.int64),
        np.full(n, c.stat_keys(schema.FLOW_STAT), dtype=np.int64),
        np.full(n, KIND_UINT64, dtype=np.int8),
        values.view(np.int64),
        np.zeros(n),
    )


def _bind(line, begin, dur, p_line, p_ts, p_phase) -> np.ndarray:
    """Sorted event row of each flow point (-1 when its line has no event)."""
    n = len(line)
    all_line = np.concatenate([line, p_line])
    all_time = np.concatenate([begin, p_ts])
    kind = np.concatenate([np.zeros(n, dtype=np.int8), np.ones(len(p_line), dtype=np.int8)])
    merged = np.lexsort((kind, all_time, all_line))
    # The latest event at or before each merged position (forward fill of event positions).
    marks = np.where(merged < n, np.arange(len(merged)), -1)
    last = np.maximum.accumulate(marks) if len(marks) else marks
    where = np.empty(len(merged), dtype=np.int64)
    where[merged] = np.arange(len(merged))
    last_at_point = last[where[n:]]
    cand = np.where(last_at_point >= 0, merged[np.maximum(last_at_point, 0)], -1)
    valid = cand >= 0
    cand_safe = np.where(valid, cand, 0)
    valid &= line[cand_safe] == p_line if n else False
    ended = begin[cand_safe] + dur[cand_safe] < p_ts
    nxt = np.minimum(cand_safe + 1, max(n - 1, 0))
    has_next = (cand + 1 < n) & (line[nxt] == p_line) if n else valid
    use_next = (p_phase != 0) & (~valid | ended) & has_next
    return np.where(use_next, nxt, np.where(valid, cand_safe, -1))


def _correlation_flows(c: Collector, order: np.ndarray) -> tuple:
    """Launch → device flows from shared ``correlation`` ids (Kineto traces without flows)."""
    empty = np.zeros(0, dtype=np.int64)
    key = c.stat_keys.ids.get(CORRELATION)
    if key is None:
        return empty, empty, empty, empty
    st_key, owners = _np(c.st_key, np.int64), _np(c.st_event, np.int64)
    mask = st_key == key
    events, corr = owners[mask], _np(c.st_int, np.int64)[mask]
    cat_names = np.asarray(c.strings.values, dtype=object)[_np(c.ev_cat, np.int64)[events]]
    is_rt = np.isin(cat_names, list(RUNTIME_CATEGORIES))
    is_dev = np.isin(cat_names, list(DEVICE_CATEGORIES))
    both = np.intersect1d(corr[is_rt], corr[is_dev])
    keep = (is_rt | is_dev) & np.isin(corr, both) & (corr != 0)
    row_of = np.empty(len(order), dtype=np.int64)
    row_of[order] = np.arange(len(order))
    direction = np.where(is_rt[keep], flow_codes.FLOW_OUT, flow_codes.FLOW_IN)
    category = np.full(int(keep.sum()), schema.CONTEXT_TYPE_GPU_LAUNCH)
    return row_of[events[keep]], corr[keep].astype(np.int64), direction, category

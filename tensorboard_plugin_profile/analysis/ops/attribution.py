"""Executed ops with where they came from: type, name-scope path and Python call stack.

One row per distinct op (not per event), from whatever the profile records:

- framework ops (TensorFlow ``name:Type`` TraceMes on host threads, GPU kernels
  annotated with ``tf_op``): the op statistics of ``op_stats``; the scope path
  is the op name split at ``/`` (tf.data iterators at ``::``);
- XLA ops (events carrying ``hlo_op``/``program_id``: JAX on any device, TF with
  XLA): grouped by (program, instruction) and joined with the instruction's
  ``OpMetadata`` (``hlo.metadata``): the framework op name is the scope path,
  its source stack the call sites;
- Python-tracer events on a host thread (``$file.py:12 f``) nest the ops that
  thread ran, which gives those ops a call stack too.

Columns (``RECORD_COLUMNS``): ``side`` (Host / Device), ``name``, ``type``,
``scope`` (tuple of path parts, the op itself last), ``frames`` (tuple, caller
first, () when unknown), ``occurrences``, ``time_ps``, ``self_time_ps``,
``bytes`` (requested by allocations or accessed, 0 when not recorded).

Usage::

    records = op_records([("host", space)])
    records.groupby("type").self_time_ps.sum()
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ...common.formats import PROFILER_HOOK, PYTORCH, XSPACE, format_of
from ...common.memo import memoized
from ...kernels import per_name
from ...kernels.nesting import nest
from ...preprocessing.preprocess import preprocess
from ...xspace import schema
from ...xspace.event_stats import int_stat_at, set_rows, typed_column_at
from ...xspace.model import Plane, Space
from ..hlo.metadata import instruction_metadata
from . import metrics as ops
from .op_stats import op_stats_of_hosts

RECORD_COLUMNS = (
    "side",
    "name",
    "type",
    "scope",
    "frames",
    "occurrences",
    "time_ps",
    "self_time_ps",
    "bytes",
)
HOST, DEVICE = "Host", "Device"
# XLA's Python tracer names frames "$file.py:12 function" (C functions "$module function");
# PyTorch's python_function events "file.py(12): function".
_PYTHON_FRAME = re.compile(r"^\$|^\S+\.py\(\d+\): ")
_SUMMED = ["occurrences", "time_ps", "self_time_ps", "bytes"]
_RECORD_KEYS = ["side", "name", "type", "scope", "frames"]


def op_records(hosts: Sequence[tuple]) -> pd.DataFrame:
    """Every executed op of the (name, Space) hosts, one row per (side, name, stack).

    Computed once per set of decoded Spaces (the three views and the advisor share it).
    """
    return memoized([space for _, space in hosts], "op_records", lambda: _op_records(hosts))


def _op_records(hosts: Sequence[tuple]) -> pd.DataFrame:
    source = source_format(hosts)
    if source == PYTORCH:  # operator calls nested in their scopes (analysis/pytorch)
        from ..pytorch.op_records import pytorch_records

        parts = [pytorch_records(space) for _, space in hosts]
        records = pd.concat([p for p in parts if not p.empty] or [_empty()], ignore_index=True)
    elif source == PROFILER_HOOK:  # the timeline's executor ops: node names are scopes
        from .timeline import timeline_op_stats

        stats = timeline_op_stats(hosts)
        frames = [
            _framework_records(stats.host_ops, HOST, {}),
            _framework_records(stats.device_ops, DEVICE, {}),
        ]
        records = pd.concat([f for f in frames if not f.empty] or [_empty()], ignore_index=True)
        records = _with_tensor_bytes(records, [space for _, space in hosts])
    else:
        return _xspace_records(hosts)
    return records.groupby(_RECORD_KEYS, sort=False, as_index=False)[_SUMMED].sum()


def source_format(hosts: Sequence[tuple]) -> str:
    """What the session was read from (a session's hosts share one format)."""
    return format_of(hosts[0][1]) if hosts else XSPACE


@dataclasses.dataclass
class RecordPieces:
    """What one XSpace host adds to the op records beside its op statistics: small tables
    a pod worker sends back (``analysis/host_summary.py``) instead of the host's events."""

    callers: Optional[pd.DataFrame]  # python_callers of the host plane; None without one
    xla: pd.DataFrame  # this host's XLA op records
    requested: pd.Series  # bytes requested by allocations, per host op name


def record_pieces(space: Space) -> RecordPieces:
    """One preprocessed XSpace host's ``RecordPieces``."""
    plane = space.plane(schema.HOST_PLANE)
    return RecordPieces(
        callers=python_callers(plane) if plane is not None else None,
        xla=_xla_records(space),
        requested=_requested_by_op(space),
    )


def records_of_pieces(stats: Any, pieces: Sequence[RecordPieces]) -> pd.DataFrame:
    """The op records of XSpace hosts from their combined OpStats and their pieces, in host
    order: the same table whether the pieces were made here or in workers."""
    stacks = _best_stacks([p.callers for p in pieces if p.callers is not None])
    frames = [
        _framework_records(stats.host_ops, HOST, stacks),
        _framework_records(ops.device_framework_ops(stats.device_ops), DEVICE, {}),
    ]
    frames += [p.xla for p in pieces]
    records = pd.concat([f for f in frames if not f.empty] or [_empty()], ignore_index=True)
    records = _with_requested_bytes(records, [p.requested for p in pieces])
    return records.groupby(_RECORD_KEYS, sort=False, as_index=False)[_SUMMED].sum()


def _xspace_records(hosts: Sequence[tuple]) -> pd.DataFrame:
    pieces = [record_pieces(preprocess(space)) for _, space in hosts]
    return records_of_pieces(op_stats_of_hosts(hosts), pieces)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RECORD_COLUMNS}).astype(
        {c: np.int64 for c in _SUMMED}
    )


def has_python_sources(space: Space) -> bool:
    """Cheap test for the code view: HLO protos or Python-tracer events present."""
    if space.source_format == PYTORCH:
        from ..pytorch.op_records import has_python_functions

        return has_python_functions(space)
    metadata = space.plane(schema.METADATA_PLANE)
    if metadata is not None and schema.HLO_PROTO_STAT in metadata.stat_names.values():
        return True
    host = space.plane(schema.HOST_PLANE)
    if host is None:
        return False
    names = pd.Series(host.event_metadata["name"], dtype=object).astype(str)
    return bool(names.str.contains(_PYTHON_FRAME).any())


def scope_path(name: str) -> tuple:
    """Name-scope parts of a framework op name (tf.data iterators split at ``::``)."""
    parts = name.split("::") if name.startswith("Iterator::") else name.split("/")
    return tuple(p for p in parts if p) or (name,)


def _framework_records(db: ops.OpMetricsDb, side: str, stacks: dict) -> pd.DataFrame:
    table = db.without_idle()
    if table.empty:
        return _empty()
    names = table["name"].astype(str).tolist()
    return pd.DataFrame(
        {
            "side": side,
            "name": names,
            "type": table["category"].astype(str).replace("", "unknown").tolist(),
            "scope": [scope_path(n) for n in names],  # once per distinct op
            "frames": [stacks.get(n, ()) for n in names],
            "occurrences": table["occurrences"].to_numpy(dtype=np.int64),
            "time_ps": table["time_ps"].to_numpy(dtype=np.int64),
            "self_time_ps": table["self_time_ps"].to_numpy(dtype=np.int64),
            "bytes": table["bytes_accessed"].to_numpy(dtype=np.int64),
        }
    )


# --- XLA ops ------------------------------------------------------------------------
def _xla_records(space: Space) -> pd.DataFrame:
    parts = [_xla_plane_ops(p) for p in space.planes]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return _empty()
    grouped = (
        pd.concat(parts, ignore_index=True)
        .groupby(["side", "program_id", "hlo_op"], sort=False, as_index=False)
        .agg(occurrences=("duration", "size"), time_ps=("duration", "sum"))
    )
    meta = instruction_metadata(space)
    keys = pd.MultiIndex.from_arrays([grouped["program_id"], grouped["hlo_op"]])
    found = meta.reindex(keys)
    op_name = found["op_name"].fillna("").tolist()
    hlo = grouped["hlo_op"].astype(str).tolist()
    types = [
        t or c or "unknown" for t, c in zip(found["op_type"].fillna(""), found["opcode"].fillna(""))
    ]
    stacks = [f if isinstance(f, tuple) else () for f in found["frames"].tolist()]
    return pd.DataFrame(
        {
            "side": grouped["side"].tolist(),
            "name": hlo,
            "type": types,
            "scope": [_xla_scope(n, h) for n, h in zip(op_name, hlo)],
            "frames": stacks,
            "occurrences": grouped["occurrences"].to_numpy(dtype=np.int64),
            "time_ps": grouped["time_ps"].to_numpy(dtype=np.int64),
            "self_time_ps": grouped["time_ps"].to_numpy(dtype=np.int64),
            "bytes": np.zeros(len(grouped), dtype=np.int64),
        }
    )


_NO_XLA_OPS = pd.DataFrame({"side": [], "program_id": [], "hlo_op": [], "duration": []})


def _xla_scope(op_name: str, hlo_op: str) -> tuple:
    """The framework op's scope path, then the HLO instruction that ran it."""
    return tuple(p for p in op_name.split("/") if p) + (hlo_op,)


def _xla_plane_ops(plane: Plane) -> pd.DataFrame:
    """Events of one plane that ran an XLA instruction and no framework op."""
    ev = plane.events
    rows = set_rows(plane, schema.HLO_OP)  # the tests below read these rows only
    hlo = typed_column_at(plane, schema.HLO_OP, rows)
    if not len(rows):
        return _NO_XLA_OPS
    keep = ~_derived(plane, rows) & (hlo.fillna("") != "").to_numpy()
    if schema.TF_OP in ev:
        keep &= ev[schema.TF_OP].iloc[rows].fillna("").eq("").to_numpy()
    rows, hlo = rows[keep], hlo[keep]
    program = int_stat_at(plane, schema.PROGRAM_ID, rows)  # 0 where absent, no column
    return pd.DataFrame(
        {
            "side": DEVICE if schema.is_device_plane(plane.name) else HOST,
            "program_id": program,
            "hlo_op": hlo.astype(str).to_numpy(),
            "duration": ev["duration_ps"].to_numpy(dtype=np.int64)[rows],
        }
    )


def _derived(plane: Plane, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """Per event (or per row of ``rows``): whether it lies on a derived line."""
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    derived = (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)
    line = plane.events["line"].to_numpy()
    return derived[line if rows is None else line[rows]]


# --- Python tracer --------------------------------------------------------------------
def _best_stacks(found: list) -> dict:
    """Framework op name → call stack of its longest-running Python caller, from the hosts'
    ``python_callers`` tables (in host order).

    Each op event on a host thread is matched with the Python-tracer events that
    enclose it on that thread; an op called from several places is attributed to
    the stack it spent most time under (ops are aggregated per name elsewhere).
    """
    if not found:
        return {}
    table = pd.concat(found, ignore_index=True)
    if table.empty:
        return {}
    best = table.sort_values("time_ps", ascending=False, kind="stable").drop_duplicates("op")
    return dict(zip(best["op"], best["frames"]))


def python_callers(plane: Plane) -> pd.DataFrame:
    """Per (framework op name, Python stack): time of that op's events under that stack."""
    ev = plane.events
    # Per distinct name: a Python frame? a framework op? Events are reached through rows.
    codes, distinct = per_name.distinct_native(ev["name"])
    python_name = distinct.str.contains(_PYTHON_FRAME).to_numpy()
    none = pd.DataFrame({"op": [], "frames": [], "time_ps": []})
    if not python_name.any():
        return none
    from ...xspace import op_names

    parsed = op_names.parse_op_names(distinct.tolist())
    op_name = parsed["category"].isin(op_names.KNOWN_CATEGORIES).to_numpy() & ~python_name
    line = ev["line"].to_numpy()
    op_rows = per_name.rows_where(op_name, codes)
    if not len(op_rows) or not _python_beside(plane, codes, python_name, line[op_rows]):
        return none  # e.g. JAX: its ops run on XLA's threads, not under Python frames
    python_rows = per_name.rows_where(python_name, codes)
    python_rows = python_rows[~_derived(plane, python_rows)]
    traced_lines = np.unique(line[python_rows])
    op_rows = op_rows[np.isin(line[op_rows], traced_lines)]
    # Only the traced threads are nested (a thread's frames can only enclose its own ops).
    rows = np.union1d(python_rows, op_rows)
    order = np.lexsort((rows, ev["line"].to_numpy()[rows]))
    rows = rows[order]
    begin = ev["begin_ps"].to_numpy()[rows]
    result = nest(
        ev["line"].to_numpy()[rows],
        begin,
        begin + ev["duration_ps"].to_numpy()[rows],
        np.arange(len(rows)),
    )
    row_codes = codes[rows]
    row_is_python = python_name[row_codes]  # a nested row is a frame or an op, never missing
    caller = nearest_ancestor(result.parent, row_is_python)
    called = np.flatnonzero(~row_is_python & (caller >= 0))
    names = np.asarray(distinct, dtype=object)[row_codes]
    stack_id, stacks = stack_keys(caller, row_is_python, names)
    table = pd.DataFrame(
        {
            "op": parsed["name"].to_numpy(dtype=object)[row_codes[called]],
            "stack": stack_id[caller[called]],
            "time_ps": result.time_ps[called],
        }
    )
    table = table.groupby(["op", "stack"], as_index=False)["time_ps"].sum()
    table["frames"] = [stacks[k] for k in table["stack"]]
    return table[["op", "frames", "time_ps"]]


def nearest_ancestor(parent: np.ndarray, is_python: np.ndarray) -> np.ndarray:
    """Per activity: index of its innermost enclosing member (``is_python``), -1 when none."""
    anc = parent.copy()
    pending = (anc >= 0) & ~is_python[np.maximum(anc, 0)]
    while pending.any():  # one vectorised step per nesting level
        anc[pending] = parent[anc[pending]]
        pending = (anc >= 0) & ~is_python[np.maximum(anc, 0)]
    return anc


def _python_beside(plane: Plane, codes: np.ndarray, python_name: np.ndarray, op_lines) -> bool:
    """Whether any Python frame (off derived lines) shares a line with one of the ops: a
    test with two masks, before the rows of every frame (most events, with the Python
    tracer on) are gathered."""
    candidate = np.isin(plane.events["line"].to_numpy(), np.unique(op_lines))
    candidate &= np.append(python_name, False)[codes]
    candidate[candidate] = ~_derived(plane, np.flatnonzero(candidate))
    return bool(candidate.any())


def stack_keys(caller: np.ndarray, is_python: np.ndarray, names: np.ndarray) -> tuple:
    """Per member activity a stack id (the members from the outermost down to it), and
    id -> names (Python frames, or the scopes of a PyTorch call; caller first).

    Ids are assigned level by level (factorising (caller's id, own name) pairs), so
    string work happens once per distinct stack, not per event.
    """
    name_codes, name_values = pd.factorize(pd.Series(names, dtype=object))
    level = np.zeros(len(caller), dtype=np.int64)
    up = caller.copy()
    while (up >= 0).any():  # one pass per nesting depth
        has = up >= 0
        level[has] += 1
        up[has] = caller[up[has]]
    stack_id = np.full(len(caller), -1, dtype=np.int64)
    parents: list = []
    own: list = []
    for depth in range(int(level[is_python].max(initial=-1)) + 1):
        at = np.flatnonzero(is_python & (level == depth))
        above = np.where(caller[at] >= 0, stack_id[np.maximum(caller[at], 0)], -1)
        pairs = (above + 1) * (len(name_values) + 1) + name_codes[at]
        codes, unique = pd.factorize(pairs)
        stack_id[at] = len(own) + codes
        parents.extend((unique // (len(name_values) + 1) - 1).tolist())
        own.extend(name_values[unique % (len(name_values) + 1)].tolist())
    stacks: list = []
    for parent, name in zip(parents, own):  # parents get lower ids: one pass
        stacks.append((stacks[parent] if parent >= 0 else ()) + (_display_frame(name),))
    return stack_id, stacks


def _display_frame(name: str) -> str:
    return name[1:] if name.startswith("$") else name


# --- requested bytes ------------------------------------------------------------------
def _with_requested_bytes(records: pd.DataFrame, per_host: Sequence) -> pd.DataFrame:
    """Adds the bytes requested by allocations made inside each host op (``tf_op``), from
    each host's ``_requested_by_op``."""
    requested = [r for r in per_host if not r.empty]
    if not requested or records.empty:
        return records
    per_op = pd.concat(requested).groupby(level=0).sum()
    host = (records["side"] == HOST).to_numpy()
    extra = per_op.reindex(records["name"]).fillna(0).to_numpy(dtype=np.int64)
    records = records.copy()
    records["bytes"] = records["bytes"].to_numpy() + np.where(host, extra, 0)
    return records


def _with_tensor_bytes(records: pd.DataFrame, spaces: Sequence[Space]) -> pd.DataFrame:
    """ProfilerHook (``show_memory=True``): bytes requested by the tensors each node made.

    Tensor objects are named after the node that produced them (``conv1/Conv2D``, or with
    an output index ``conv1/Conv2D:0``).
    """
    from ...chrome_trace.objects import REQUESTED_BYTES
    from ..chrome_events import events_of
    from ..memory.timeline import TENSOR_CATEGORY

    parts = []
    for space in spaces:
        ev = events_of(space, numbers=(REQUESTED_BYTES,))
        tensors = ev[(ev["cat"] == TENSOR_CATEGORY) & ev[REQUESTED_BYTES].notna()]
        node = tensors["name"].astype(str).str.replace(r":\d+$", "", regex=True)
        parts.append(pd.Series(tensors[REQUESTED_BYTES].to_numpy(dtype=np.int64), index=node))
    per_node = pd.concat(parts).groupby(level=0).sum() if parts else pd.Series(dtype=np.int64)
    if per_node.empty or records.empty:
        return records
    extra = per_node.reindex(records["name"]).fillna(0).to_numpy(dtype=np.int64)
    return records.assign(bytes=records["bytes"].to_numpy() + extra)


def _requested_by_op(space: Space) -> pd.Series:
    plane = space.plane(schema.HOST_PLANE)
    if plane is None or schema.TF_OP not in plane.events:
        return pd.Series(dtype=np.int64)
    ev = plane.events
    alloc = (ev["name"] == schema.MEMORY_ALLOCATION).to_numpy(dtype=bool)  # categorical: no strings
    if not alloc.any():
        return pd.Series(dtype=np.int64)
    stats = plane.stats
    rows = stats[(stats["stat"] == schema.REQUESTED_BYTES) & alloc[stats["event"].to_numpy()]]
    op = ev[schema.TF_OP].to_numpy(dtype=object)[rows["event"].to_numpy()]
    frame = pd.DataFrame({"op": op, "bytes": rows["int_value"].to_numpy(dtype=np.int64)})
    return frame.dropna().groupby("op")["bytes"].sum()

"""Op metrics databases (docs/conversion.md §4.2, §4.3): host framework ops and device ops.

An ``OpMetricsDb`` is a DataFrame with one row per op (``OP_COLUMNS``; an
``IDLE`` row carries the idle time) plus the totals upstream keeps beside it.
Host ops come from framework-named TraceMe events nested on each thread (self
time = time minus direct children); GPU device ops from kernels annotated with
the framework op that launched them.

Usage::

    host = host_op_metrics(space.plane("/host:CPU"))
    device = device_op_metrics(space.planes_with_prefix("/device:GPU:"))
    framework = device_framework_ops(device)        # device ops regrouped by framework op
    combined = combine([host_a, host_b])            # several hosts into one db
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from ...kernels import per_name
from ...kernels.nesting import nest
from ...xspace import op_names, schema
from ...xspace.model import Plane
from .launches import LaunchOps

IDLE = "IDLE"
UNKNOWN_CATEGORY = "Unknown"
OP_COLUMNS = (
    "program_id",
    "name",
    "category",
    "provenance",
    "is_eager",
    "occurrences",
    "time_ps",
    "self_time_ps",
    "flops",
    "model_flops",
    "bytes_accessed",
    "num_cores",
)
_SUMMED = ("occurrences", "time_ps", "self_time_ps", "flops", "model_flops", "bytes_accessed")


@dataclasses.dataclass
class OpMetricsDb:
    ops: pd.DataFrame  # OP_COLUMNS; includes the IDLE row when the db has a timeline
    total_time_ps: int = 0
    total_op_time_ps: int = 0

    @property
    def idle_time_ps(self) -> int:
        idle = self.ops.loc[self.ops["name"] == IDLE, "self_time_ps"]
        return int(idle.sum())

    def without_idle(self) -> pd.DataFrame:
        return self.ops[self.ops["name"] != IDLE]


_DTYPES = {
    **{c: np.dtype(np.int64) for c in _SUMMED + ("program_id", "num_cores")},
    "is_eager": np.dtype(bool),
    **{c: np.dtype(object) for c in ("name", "category", "provenance")},
}


def empty_ops() -> pd.DataFrame:
    return pd.DataFrame({c: np.zeros(0, dtype=_DTYPES[c]) for c in OP_COLUMNS})


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    for col, dtype in _DTYPES.items():
        if frame[col].dtype != dtype:  # each cast is a column copy and a frame update
            frame[col] = frame[col].astype(dtype)
    return frame.reset_index(drop=True)


def _ops_frame(**columns) -> pd.DataFrame:
    n = len(columns["name"])
    defaults = {
        "program_id": 0,
        "provenance": "",
        "is_eager": False,
        "flops": 0,
        "model_flops": 0,
        "bytes_accessed": 0,
        "num_cores": 1,
    }
    data = {c: columns.get(c, np.full(n, defaults.get(c, 0))) for c in OP_COLUMNS}
    return _typed(pd.DataFrame(data))


def _idle_row(idle_ps: int, num_cores: int = 1) -> pd.DataFrame:
    return _ops_frame(
        name=[IDLE],
        category=[IDLE],
        occurrences=[0],
        time_ps=[idle_ps],
        self_time_ps=[idle_ps],
        num_cores=[num_cores],
    )


def _nonderived(plane: Plane) -> np.ndarray:
    """Per event: True when its line is a real (not derived) timeline."""
    line_ids = plane.lines["id"].to_numpy(dtype=np.int64)
    ok = ~((line_ids >= schema.DERIVED_LINE_ID_MIN) & (line_ids <= schema.DERIVED_LINE_ID_MAX))
    return ok[plane.events["line"].to_numpy()]


# --- host -------------------------------------------------------------------------
def host_op_metrics(plane: Optional[Plane]) -> OpMetricsDb:
    """Framework ops on the host threads, one IDLE row for the threads' gaps."""
    if plane is None or plane.lines.empty:
        return OpMetricsDb(empty_ops())
    acts = _host_activities(plane)
    lines = np.flatnonzero(~_derived_lines(plane))
    if acts.empty:
        return OpMetricsDb(_idle_row(0), 0, 0)
    result = nest(
        acts["line"].to_numpy(),
        acts["begin"].to_numpy(),
        acts["end"].to_numpy(),
        acts["key"].to_numpy(),
    )
    acts["time_ps"] = result.time_ps
    acts["self_time_ps"] = result.self_ps
    done = acts[result.matched]
    op_time_per_line = done.groupby("line")["self_time_ps"].sum()
    span = acts.groupby("line").agg(first=("begin", "min"), last=("end", "max"))
    span = span.reindex(lines, fill_value=0)
    op_time = op_time_per_line.reindex(lines, fill_value=0)
    total = np.maximum(op_time.to_numpy(), (span["last"] - span["first"]).to_numpy())
    total_time, total_op_time = int(total.sum()), int(op_time.sum())
    # Records are entered in end-time order; the first non-empty type is the category
    # (a tf_op stat without a type, e.g. on an allocation inside the op, has none).
    done = done.sort_values(["line", "end"], kind="stable")
    done = done.assign(type=done["type"].where(done["type"] != ""))
    ops = (
        done.groupby(["program_id", "name"], sort=False)
        .agg(
            category=("type", "first"),
            is_eager=("is_eager", "any"),
            occurrences=("key", "size"),
            time_ps=("time_ps", "sum"),
            self_time_ps=("self_time_ps", "sum"),
        )
        .reset_index()
    )
    ops["category"] = ops["category"].fillna("")
    ops = _ops_frame(**{c: ops[c].to_numpy() for c in ops.columns})
    idle = _idle_row(total_time - total_op_time)
    return OpMetricsDb(pd.concat([ops, idle], ignore_index=True), total_time, total_op_time)


def _derived_lines(plane: Plane) -> np.ndarray:
    ids = plane.lines["id"].to_numpy(dtype=np.int64)
    return (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)


def _host_activities(plane: Plane) -> pd.DataFrame:
    """One row per (begin, end) activity in line and insertion order.

    Per-name tables reached through the name codes (one gather each) choose the
    rows; everything else is read for the chosen rows only.
    """
    ev = plane.events
    real = ~_derived_lines(plane)
    codes, names = per_name.distinct_native(ev["name"])
    table = op_names.parse_op_names(names.tolist())  # each distinct name parsed once
    # Events without a name (code -1) are unknown ops.
    known = table["category"].isin(op_names.KNOWN_CATEGORIES).to_numpy()
    stage = _stage_rows(ev, real)
    rows = _on_lines(ev, per_name.rows_where(known, codes), real)
    if len(stage):
        rows = rows[~np.isin(rows, stage, assume_unique=True)]
    named = codes[rows]
    frames = [
        _activities(
            ev,
            rows,
            table["name"].to_numpy()[named],
            table["type"].to_numpy()[named],
            _eager(ev, rows),
            ev["metadata_id"].to_numpy()[rows],
            0,
            0,
        ),
    ]
    if len(stage):
        rows = stage
        stage_ids = ev["_ipl_stage_id"].array[rows].to_numpy(dtype=np.int64, na_value=0)
        frames.append(
            _activities(
                ev,
                rows,
                _names_at(ev, rows),
                ev["_ipl_stage_cat"].iloc[rows].to_numpy(),
                _eager(ev, rows),
                stage_ids,
                stage_ids,
                1 << 40,
            )
        )
    tf_op = ev["tf_op"]
    op_codes, op_values = per_name.distinct_native(tf_op)
    rows = _on_lines(
        ev, per_name.rows_where((op_values != "").to_numpy(dtype=bool), op_codes), real
    )
    if len(rows):
        codes, uniques = pd.factorize(tf_op.iloc[rows])
        parsed_op = op_names.parse_op_names(list(uniques)).iloc[codes]
        frames.append(
            _activities(
                ev,
                rows,
                parsed_op["name"],
                parsed_op["type"],
                np.zeros(len(rows), dtype=bool),
                codes,
                0,
                1 << 41,
                sub=1,
            )
        )
    acts = pd.concat(frames, ignore_index=True)
    return acts.sort_values(["line", "order"], kind="stable").reset_index(drop=True)


def _on_lines(ev: pd.DataFrame, rows: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The rows whose line is one of ``lines`` (a bool per line)."""
    return rows[lines[ev["line"].to_numpy()[rows]]] if len(rows) else rows


def _stage_rows(ev: pd.DataFrame, real: np.ndarray) -> np.ndarray:
    """Rows of input-pipeline stage events (stage id and category set) on real lines."""
    rows = per_name.present_rows(ev["_ipl_stage_cat"])
    rows = rows[per_name.present(ev["_ipl_stage_id"], rows)]
    return _on_lines(ev, rows, real)


def _eager(ev: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per row: ``is_eager`` is set and non-zero."""
    return ev["is_eager"].array[rows].to_numpy(dtype=np.int64, na_value=0) != 0


def _names_at(ev: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Event names of some rows as str (object array), looked up per distinct name."""
    codes, names = per_name.distinct(ev["name"], rows)
    return per_name.lookup(names.to_numpy(), codes, "nan")


def _activities(ev, rows, names, types, eager, keys, program_id, key_offset, sub=0):
    begin = ev["begin_ps"].to_numpy()[rows]
    return pd.DataFrame(
        {
            "line": ev["line"].to_numpy()[rows].astype(np.int64),
            "order": rows * 2 + sub,  # an event's own activity before its tf_op activity
            "begin": begin,
            "end": begin + ev["duration_ps"].to_numpy()[rows],
            "key": np.asarray(keys, dtype=np.int64) + key_offset,
            "program_id": np.broadcast_to(np.asarray(program_id, dtype=np.int64), rows.shape),
            "name": np.asarray(names, dtype=object),
            "type": np.asarray(types, dtype=object),
            "is_eager": np.asarray(eager, dtype=bool),
        }
    )


# --- device (GPU) -----------------------------------------------------------------
def device_op_metrics(planes: Iterable[Plane], launched: Optional[LaunchOps] = None) -> OpMetricsDb:
    """GPU kernels annotated with ``tf_op``, per plane, then combined.

    A kernel without ``tf_op`` gets the op of its host launch (``launched``, joined on
    ``correlation_id``; ``launches.launch_ops``) when there is one.
    """
    dbs = [_gpu_plane_ops(p, launched) for p in planes]
    return combine(dbs) if dbs else OpMetricsDb(empty_ops())


def _kernel_tf_ops(ev: pd.DataFrame, launched: Optional[LaunchOps]) -> tuple:
    """(bool per event: it has an op, the op of each such event as an object array):
    its own ``tf_op``, else its launch's op. Strings only for the events kept."""
    has_own = per_name.per_value(ev["tf_op"], lambda s: s != "")
    keep = has_own.copy()
    by_launch = np.zeros(0, dtype=object)
    if launched is not None and len(launched) and schema.CORRELATION_ID in ev:
        candidates = np.flatnonzero(~has_own & per_name.present(ev[schema.CORRELATION_ID]))
        by_launch = launched.tf_ops_of(ev[schema.CORRELATION_ID].iloc[candidates])
        found = by_launch != ""
        keep[candidates[found]] = True
        by_launch = by_launch[found]
    ops = np.empty(int(keep.sum()), dtype=object)
    own_at = has_own[keep]
    ops[own_at] = ev["tf_op"].iloc[np.flatnonzero(has_own)].to_numpy(dtype=object)
    ops[~own_at] = by_launch
    return keep, ops


def _gpu_plane_ops(plane: Plane, launched: Optional[LaunchOps] = None) -> OpMetricsDb:
    ev = plane.events[_nonderived(plane)]
    if ev.empty:
        return OpMetricsDb(_idle_row(0), 0, 0)
    begin = ev["begin_ps"].to_numpy()
    end = begin + ev["duration_ps"].to_numpy()
    span = int(end.max() - begin.min())
    keep, tf_ops = _kernel_tf_ops(ev, launched)
    kernels = ev[keep]
    ops = empty_ops()
    if not kernels.empty:
        kernels = kernels.assign(tf_op=tf_ops)
        codes, uniques = pd.factorize(kernels["tf_op"])
        parsed = op_names.parse_op_names(list(uniques)).iloc[codes]
        duration = kernels["duration_ps"].to_numpy(dtype=np.int64)
        flops = _event_numbers(plane, kernels.index, "flops")
        records = pd.DataFrame(
            {
                "name": parsed["name"].to_numpy() + "/" + kernels["name"].astype(str).to_numpy(),
                "category": np.where(parsed["type"] == "", "unknown", parsed["type"]),
                "provenance": kernels["tf_op"].to_numpy(dtype=object),
                "is_eager": kernels["is_eager"].fillna(0).to_numpy(dtype=np.int64) != 0,
                "duration": duration,
                "flops": flops,
                "bytes": _event_numbers(plane, kernels.index, "bytes_accessed"),
            }
        )
        grouped = (
            records.groupby("name", sort=False)
            .agg(
                category=("category", "first"),
                provenance=("provenance", "first"),
                is_eager=("is_eager", "first"),
                occurrences=("duration", "size"),
                time_ps=("duration", "sum"),
                flops=("flops", "sum"),
                bytes_accessed=("bytes", "sum"),
            )
            .reset_index()
        )
        ops = _ops_frame(
            self_time_ps=grouped["time_ps"].to_numpy(),
            model_flops=grouped["flops"],
            **{c: grouped[c].to_numpy() for c in grouped.columns},
        )
    op_time = int(ops["self_time_ps"].sum())
    total = max(span, op_time)
    ops = pd.concat([ops, _idle_row(total - op_time)], ignore_index=True)
    return OpMetricsDb(ops, total, op_time)


def _event_numbers(plane: Plane, rows: pd.Index, stat: str) -> np.ndarray:
    """A numeric stat per selected event (0 where absent)."""
    values = plane.event_stat(stat, at=np.asarray(rows))
    return pd.to_numeric(values, errors="coerce").fillna(0).to_numpy(dtype=np.int64)


# --- combining ----------------------------------------------------------------------
def combine(dbs: Iterable[OpMetricsDb]) -> OpMetricsDb:
    """Adds dbs (planes or hosts): counts and times add, metadata from the first."""
    dbs = list(dbs)
    frames = [db.ops for db in dbs if not db.ops.empty]
    total = sum(db.total_time_ps for db in dbs)
    op_total = sum(db.total_op_time_ps for db in dbs)
    if not frames:
        return OpMetricsDb(empty_ops(), total, op_total)
    allops = pd.concat(frames, ignore_index=True)
    aggs = {c: (c, "sum") for c in _SUMMED + ("num_cores",)}
    aggs.update(
        category=("category", "first"),
        provenance=("provenance", "first"),
        is_eager=("is_eager", "any"),
    )
    ops = allops.groupby(["program_id", "name"], sort=False).agg(**aggs).reset_index()
    return OpMetricsDb(_typed(ops[list(OP_COLUMNS)]), total, op_total)


def device_framework_ops(device: OpMetricsDb, with_idle: bool = False) -> OpMetricsDb:
    """Device ops regrouped by the framework op that launched them (docs/conversion.md §5.4)."""
    ops = device.without_idle()
    if ops.empty:
        frame = empty_ops()
    else:
        parsed = op_names.parse_column(ops["provenance"].where(ops["provenance"] != ""))
        has_prov = (ops["provenance"] != "").to_numpy()
        name = np.where(has_prov, parsed["name"], ops["name"])
        category = np.where(
            has_prov & (parsed["type"] != "").to_numpy(), parsed["type"], UNKNOWN_CATEGORY
        )
        frame = (
            ops.assign(name=name, category=category)
            .groupby("name", sort=False)
            .agg(
                category=("category", "first"),
                provenance=("provenance", "first"),
                is_eager=("is_eager", "last"),
                occurrences=("occurrences", "max"),
                time_ps=("time_ps", "sum"),
                self_time_ps=("self_time_ps", "sum"),
                flops=("flops", "sum"),
                model_flops=("model_flops", "sum"),
                bytes_accessed=("bytes_accessed", "sum"),
                num_cores=("num_cores", "max"),
            )
            .reset_index()
        )
        frame["program_id"] = 0
        frame = _typed(frame[list(OP_COLUMNS)])
    if with_idle and not device.ops.empty:
        frame = pd.concat([frame, _idle_row(device.idle_time_ps)], ignore_index=True)
        return OpMetricsDb(frame, device.total_time_ps, device.total_op_time_ps)
    return OpMetricsDb(frame, device.total_op_time_ps, device.total_op_time_ps)

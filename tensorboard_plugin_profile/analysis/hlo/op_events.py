"""Time per HLO op, from the XLA op events of a profile, with facts from the HLO.

XLA marks every op it runs with ``hlo_op``, ``hlo_module`` and ``program_id``
stats: GPU/TPU kernels on device planes and, for XLA:CPU, the thunk events on the
host's ``tf_XLAEigen`` / ``tf_XLAPjRtCpuClient`` threads (``ynn_fusion.1``,
``dot_general.7``, ...). Upstream leaves the latter out, so its HLO tools are
empty for a JAX program on a CPU; we count both. Self time is an op's time minus
the XLA ops nested in it on the same line. Category, text, framework op and
source come from the program's HloProto.

Usage::

    table = hlo_op_table(hosts)   # DataFrame, one row per (program_id, hlo_op)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ...common.memo import memoized
from ...kernels import per_name
from ...kernels.nesting import nest
from ...xspace import schema
from ...xspace.event_stats import int_stat, typed_column_at
from . import modules
from .attribution import source_info
from .costs import ModuleCosts
from .printer import ModuleIndex, instruction_text

COLUMNS = (
    "program_id", "module", "hlo_op", "category", "expression", "tf_op", "source",
    "occurrences", "total_ps", "self_ps", "flops", "bytes_accessed", "on_device",
)  # fmt: skip
_CATEGORY_OF_OPCODE = {
    "copy": "data formatting",
    "transpose": "data formatting",
    "bitcast": "data formatting",
    "reshape": "data formatting",
    "broadcast": "data formatting",
    "get-tuple-element": "data formatting",
    "tuple": "data formatting",
}


def hlo_op_table(hosts: Sequence[tuple]) -> pd.DataFrame:
    """Per HLO op of every program: occurrences, total and self time, FLOPs, bytes."""
    return combined_op_table([host_op_table(space) for _, space in hosts])


def host_op_table(space: Any) -> pd.DataFrame:
    """One host's HLO ops (``hlo_op_table`` of that host alone), once per Space."""
    return memoized([space], "hlo_op_table_host", lambda: _host_table(space))


def combined_op_table(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Hosts' op tables merged per (program, op), once per set of host tables."""
    return memoized(list(frames), "hlo_op_table", lambda: _combined(frames))


_SUMMED = ("occurrences", "total_ps", "self_ps", "flops", "bytes_accessed")
_FACTS = ("module", "category", "expression", "tf_op", "source")


def _combined(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame({c: [] for c in COLUMNS})
    table = frames[0]
    if len(frames) > 1:  # the same program's ops on several hosts add up
        both = pd.concat(frames, ignore_index=True)
        keys = ["program_id", "hlo_op"]
        grouped = both.groupby(keys, sort=False)
        table = grouped[list(_SUMMED)].sum()
        table[list(_FACTS)] = grouped[list(_FACTS)].first()
        table["on_device"] = grouped["on_device"].max()
        table = table.reset_index()
    return table.sort_values("self_ps", ascending=False, kind="stable").reset_index(drop=True)


def has_xla_ops(space: Any) -> bool:
    """Whether any host or device plane has an event with ``hlo_op`` and ``program_id``
    (whether ``host_op_table`` has a row, without building it), once per Space."""
    return memoized([space], "has_xla_ops", lambda: _has_xla_ops(space))


def _has_xla_ops(space: Any) -> bool:
    return any(_may_hold_ops(p.name) and len(_op_rows(p)[0]) for p in space.planes)


def _op_rows(plane: Any) -> tuple:
    """(rows of the events that carry both ``hlo_op`` and ``program_id``, their programs,
    their op names): read at those rows only, no column over the plane's events."""
    programmed, programs = int_stat(plane, schema.PROGRAM_ID)
    names = typed_column_at(plane, schema.HLO_OP, programmed)
    ops = names.notna().to_numpy()
    return programmed[ops], programs[ops], names[ops]


def _host_table(space: Any) -> pd.DataFrame:
    """One host's ops: event numbers summed per (program, op), then the HLO facts once each."""
    frames = [_plane_ops(p) for p in space.planes if _may_hold_ops(p.name)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame({c: [] for c in COLUMNS})
    events = pd.concat(frames, ignore_index=True)
    events["hlo_op"] = events["hlo_op"].astype("category")  # codes, not a string per event
    grouped = events.groupby(["program_id", "hlo_op"], sort=False, observed=True)
    ops = grouped[list(_SUMMED)].sum()
    ops["on_device"] = grouped["on_device"].max()
    ops = ops.reset_index()
    ops["hlo_op"] = ops["hlo_op"].astype(str)  # one string per distinct op
    return _with_hlo_facts(ops, modules.program_modules(space))


def _may_hold_ops(name: str) -> bool:
    return name == schema.HOST_PLANE or schema.is_gpu_plane(name) or schema.is_tpu_core_plane(name)


def _plane_ops(plane: Any) -> pd.DataFrame:
    rows, programs, names = _op_rows(plane)
    if not len(rows):
        return pd.DataFrame()
    ev = plane.events
    begin = ev["begin_ps"].to_numpy(dtype=np.int64)[rows]
    duration = ev["duration_ps"].to_numpy(dtype=np.int64)[rows]
    line = ev["line"].to_numpy()[rows]
    nesting = nest(line, begin, begin + duration, np.arange(len(rows)))
    self_ps = np.where(nesting.matched, nesting.self_ps, duration)
    return pd.DataFrame(
        {
            "program_id": programs,
            "hlo_op": _op_names(names),
            "occurrences": np.ones(len(rows), dtype=np.int64),
            "total_ps": duration,
            "self_ps": self_ps.astype(np.int64),
            "flops": _numbers(plane, rows, "flops"),
            "bytes_accessed": _numbers(plane, rows, "bytes_accessed"),
            "on_device": np.full(len(rows), plane.name != schema.HOST_PLANE),
        }
    )


def _op_names(column: pd.Series) -> pd.Categorical:
    """The ``hlo_op`` column as categories (the decoder may give strings or categories)."""
    codes, names = pd.factorize(column)
    return pd.Categorical.from_codes(codes, categories=[str(n) for n in names])


def _numbers(plane: Any, rows: np.ndarray, stat: str) -> np.ndarray:
    if not _has_stat(plane, stat):
        return np.zeros(len(rows), dtype=np.int64)
    values = plane.event_stat(stat, at=rows)
    return pd.to_numeric(values, errors="coerce").fillna(0).to_numpy(dtype=np.int64)


def _has_stat(plane: Any, stat: str) -> bool:
    """Whether any stat row is ``stat``: names compared once each, not per row."""
    codes, names = per_name.distinct_native(plane.stats["stat"])
    wanted = np.flatnonzero((names == stat).to_numpy())
    return bool(len(wanted)) and bool(np.isin(codes, wanted).any())


def _with_hlo_facts(ops: pd.DataFrame, programs: dict) -> pd.DataFrame:
    """Adds the HLO columns to one row per distinct (program, op)."""
    indexes = {pid: _IndexByName(proto) for pid, proto in programs.items()}
    facts = [
        _facts(indexes.get(int(p)), op)
        for p, op in zip(ops["program_id"].tolist(), ops["hlo_op"].tolist())
    ]
    for column in _FACTS:
        ops[column] = [f[column] for f in facts]
    # Where the events carry no cost stats (XLA:CPU, most GPU profiles), the HLO's own
    # count for one run of the op (analysis/hlo/costs.py) times its occurrences.
    occurrences = ops["occurrences"].to_numpy(dtype=np.int64)
    for column in ("flops", "bytes_accessed"):
        per_op = np.array([f[column] for f in facts], dtype=np.int64)
        recorded = ops[column].to_numpy(dtype=np.int64)
        ops[column] = np.where(recorded > 0, recorded, per_op * occurrences)
    return ops[list(COLUMNS)]


def _facts(index: Any, op: str) -> dict:
    empty = {
        "module": "", "category": "unknown", "expression": "", "tf_op": "", "source": "",
        "flops": 0, "bytes_accessed": 0,
    }  # fmt: skip
    if index is None:
        return empty
    proto = index.proto
    instruction = index.by_name.get(op)
    module = f"{proto.hlo_module.name}({proto.hlo_module.id})"
    if instruction is None:
        return {**empty, "module": module}
    source = source_info(instruction, proto.hlo_module.stack_frame_index)
    return {
        "module": module,
        "category": category(instruction),
        "expression": instruction_text(index.index, instruction),
        "tf_op": instruction.metadata.op_name,
        "source": f"{source['fileName']}:{source.get('lineNumber', 0)}" if source else "",
        "flops": index.costs.flops(instruction),
        "bytes_accessed": index.costs.bytes_accessed(instruction),
    }


class _IndexByName:
    def __init__(self, proto: Any):
        self.proto = proto
        self.index = ModuleIndex(proto.hlo_module)
        self.by_name = {i.name: i for i in self.index.instructions.values()}
        self.costs = ModuleCosts(proto.hlo_module)


def category(instruction: Any) -> str:
    """The op's category: fusion kind, data formatting, or its opcode."""
    if instruction.opcode == "fusion":
        kind = instruction.fusion_kind[1:].lower() if instruction.fusion_kind else ""
        return f"{kind} fusion" if kind else "fusion"
    return _CATEGORY_OF_OPCODE.get(instruction.opcode, instruction.opcode)

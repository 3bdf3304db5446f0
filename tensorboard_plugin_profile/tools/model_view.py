"""model_view: the model's parameters, and the FLOPs and bytes of its ops.

tfprof's "model architecture" half (docs/model_view.md). Four tables:

1. parameters: one row per variable (TensorFlow graph) or per argument of a
   compiled program (XLA entry parameters), with scope, shape, dtype, elements
   and bytes;
2. scopes: the parameters summed per scope and kind, and a total per program;
3. framework ops: FLOPs and bytes of the HLO ops summed per framework op (the
   HLO metadata's ``op_name``), with the FLOP rate over their self time;
4. HLO ops: FLOPs and bytes of one run of each HLO op, and in total.

Tables 3 and 4 need XLA op events; for a TensorFlow graph from a ProfilerHook run,
table 3 is the timeline's ops (TF stats) with the FLOPs and bytes the graph and its
traced step's shapes give them (``chrome_trace/graph_costs.py``), and there is no 4.
The first table's properties hold the totals and say where the parameters come from.

Usage::

    tables = convert(hosts, {})   # [parameters, scopes, framework ops, HLO ops]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.hlo import parameters
from ..analysis.hlo.modules import has_modules
from ..analysis.hlo.op_events import hlo_op_table
from ..analysis.ops.timeline import timeline_op_stats
from ..common.errors import NotApplicable
from ..common.formats import PROFILER_HOOK, PYTORCH, XSPACE, format_of
from .datatable import UNIT_BYTES, UNIT_US, Column, data_table, rows_from_columns

NO_MODEL = {
    XSPACE: (
        "The model view reads the parameters of compiled XLA programs, and this profile "
        "carries no HLO: it is a TensorFlow profile without XLA (tf.function with "
        "jit_compile=True, or a JAX program, records it)."
    ),
    PYTORCH: (
        "A PyTorch profiler trace records operators and kernels, but not the module "
        "parameters (names and shapes of the weights), so the model view has nothing "
        "to show. Print them with sum(p.numel() for p in model.parameters())."
    ),
    PROFILER_HOOK: (
        "The model view reads the TensorFlow graph from the events.out.tfevents.* file "
        "beside the timelines, and there is none with a graph."
    ),
}
_PARAMETERS = (
    Column("program", "Program", "string"),
    Column("name", "Name", "string"),
    Column("scope", "Scope", "string"),
    Column("shape", "Shape", "string"),
    Column("dtype", "Type", "string"),
    Column("kind", "Kind", "string"),
    Column("elements", "Parameters", "number"),
    Column("bytes", "Size (bytes)", "number", UNIT_BYTES),
)
_SCOPES = (
    Column("program", "Program", "string"),
    Column("scope", "Scope", "string"),
    Column("kind", "Kind", "string"),
    Column("count", "Variables", "number"),
    Column("elements", "Parameters", "number"),
    Column("bytes", "Size (bytes)", "number", UNIT_BYTES),
)
_OP_COSTS = (
    Column("program", "Program", "string"),
    Column("op", "Operation", "string"),
    Column("category", "Category", "string"),
    Column("framework_op", "Framework op", "string"),
    Column("occurrences", "Occurrences", "number"),
    Column("flops_per_run", "FLOPs per run", "number"),
    Column("bytes_per_run", "Bytes per run", "number"),
    Column("flops", "FLOPs", "number"),
    Column("bytes_accessed", "Bytes accessed", "number"),
    Column("self_time", "Self time (us)", "number", UNIT_US),
    Column("flop_rate", "FLOP rate (GFLOP/s)", "number"),
    Column("operational_intensity", "Operational intensity (FLOP/byte)", "number"),
)
TOTAL = "(total)"
TOP_LEVEL = "(top level)"


def is_listed(space) -> bool:
    """XLA programs, or a ProfilerHook run with a graph beside it."""
    source = format_of(space)
    if source == XSPACE:
        return has_modules(space)
    return source == PROFILER_HOOK and "graph_variables" in space.extras


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    space = hosts[0][1]
    source = format_of(space)
    if source == PROFILER_HOOK and "graph_variables" in space.extras:
        table = space.extras["graph_variables"].assign(program="graph")
        origin = f"TensorFlow graph in {space.extras.get('graph_file', 'the event file')}"
        return _model_tables(table, origin, trainable_only=True) + [_graph_op_table(hosts)]
    if source == XSPACE and has_modules(space):
        table = parameters.entry_parameters(space).assign(kind="argument")
        tables = _model_tables(table, "entry parameters of the XLA programs", False)
        return tables + _op_tables(hlo_op_table(hosts))
    reason = NO_MODEL.get(source, NO_MODEL[XSPACE])
    raise NotApplicable(
        space.extras.get("graph_note", reason) if source == PROFILER_HOOK else reason
    )


def _model_tables(table: pd.DataFrame, origin: str, trainable_only: bool) -> list:
    """Programs with the most parameters first; within one, in argument/graph order."""
    largest = table.groupby("program")["elements"].sum().sort_values(ascending=False)
    rank = {name: i for i, name in enumerate(largest.index)}
    table = table.assign(
        scope=table["scope"].replace("", TOP_LEVEL), rank=table["program"].map(rank)
    ).sort_values("rank", kind="stable")
    rows = rows_from_columns(*(table[c.id] for c in _PARAMETERS))
    trainable = table[table["kind"] == "trainable"] if trainable_only else table
    properties = {
        "source": origin,
        "total_parameters": int(table["elements"].sum()),
        "total_bytes": int(table["bytes"].sum()),
    }
    if trainable_only:
        properties["trainable_parameters"] = int(trainable["elements"].sum())
        properties["trainable_bytes"] = int(trainable["bytes"].sum())
    elif len(largest):
        properties["largest_program"] = str(largest.index[0])
        properties["largest_program_parameters"] = int(largest.iloc[0])
    return [data_table(_PARAMETERS, rows, properties), _scope_table(table)]


def _scope_table(table: pd.DataFrame) -> dict:
    """Per (program, kind): a ``(total)`` row when there are several scopes, then the scopes
    by size; programs as in the parameters table, trainable before slots before the rest."""
    sums = {"count": ("name", "size"), "elements": ("elements", "sum"), "bytes": ("bytes", "sum")}
    scopes = table.groupby(["program", "scope", "kind"], sort=True).agg(**sums).reset_index()
    totals = table.groupby(["program", "kind"], sort=True).agg(**sums).reset_index()
    several = scopes.groupby(["program", "kind"])["scope"].transform("size") > 1
    many = set(map(tuple, scopes.loc[several, ["program", "kind"]].to_numpy().tolist()))
    keep = [(p, k) in many for p, k in zip(totals["program"], totals["kind"])]
    both = pd.concat([totals[keep].assign(scope=TOTAL, first=0), scopes.assign(first=1)])
    both["rank"] = both["program"].map(table.groupby("program")["rank"].first())
    both["kind_rank"] = both["kind"].map(_KIND_ORDER).fillna(len(_KIND_ORDER))
    both = both.sort_values(
        ["rank", "kind_rank", "first", "elements"],
        ascending=[True, True, True, False],
        kind="stable",
    )
    return data_table(_SCOPES, rows_from_columns(*(both[c.id] for c in _SCOPES)))


_KIND_ORDER = {"trainable": 0, "optimizer slot": 1, "variable": 2, "argument": 2, "other": 3}


def _op_tables(ops: pd.DataFrame) -> list:
    if ops.empty:
        return [data_table(_OP_COSTS, []), data_table(_OP_COSTS, [])]
    ops = ops.assign(framework_op=ops["tf_op"].replace("", "(no framework op)"))
    by_framework = (
        ops.groupby(["module", "framework_op"], sort=False)
        .agg(
            occurrences=("occurrences", "sum"),
            flops=("flops", "sum"),
            bytes_accessed=("bytes_accessed", "sum"),
            self_ps=("self_ps", "sum"),
            category=("category", lambda c: ", ".join(sorted(set(c)))),
            op=("hlo_op", "size"),
        )
        .reset_index()
    )
    by_framework["op"] = by_framework["op"].astype(str) + " HLO ops"
    return [_cost_table(by_framework), _cost_table(ops.assign(op=ops["hlo_op"]))]


def _graph_op_table(hosts: Sequence[tuple]) -> dict:
    """The timeline's ops (TF stats rows) with the graph's FLOPs and bytes for them."""
    stats = timeline_op_stats(hosts)
    frame = pd.concat([stats.host_ops.ops, stats.device_ops.ops], ignore_index=True)
    frame = frame[frame["name"] != "IDLE"]
    frame = frame.assign(
        module="graph",
        op=frame["name"],
        framework_op=frame["name"],
        self_ps=frame["self_time_ps"],
    )
    return _cost_table(frame)


def _cost_table(frame: pd.DataFrame) -> dict:
    frame = frame.sort_values("flops", ascending=False, kind="stable")
    occurrences = frame["occurrences"].to_numpy(dtype=np.float64)
    flops = frame["flops"].to_numpy(dtype=np.float64)
    nbytes = frame["bytes_accessed"].to_numpy(dtype=np.float64)
    self_ps = frame["self_ps"].to_numpy(dtype=np.float64)
    runs = np.maximum(occurrences, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(self_ps > 0, flops / self_ps * 1e3, 0.0)  # FLOP/ps -> GFLOP/s
        intensity = np.where(nbytes > 0, flops / nbytes, 0.0)
    rows = rows_from_columns(
        frame["module"], frame["op"], frame["category"], frame["framework_op"],
        occurrences, flops / runs, nbytes / runs, flops, nbytes, self_ps / 1e6, rate, intensity,
    )  # fmt: skip
    return data_table(_OP_COSTS, rows)

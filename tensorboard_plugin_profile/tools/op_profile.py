"""op_profile: the HLO ops of every program as a tree to drill into (upstream's JSON).

``group_by=program`` (default) nests program → category → op; ``group_by=category``
nests category → op across programs. Each answer has the tree with and without the
device's idle time (an ``IDLE`` node, device planes only: a CPU has no idle device
time to show). Leaves carry the op's HLO facts (``xla``: op, text, framework op,
category, source). ``view=tables`` returns the flat op table (as hlo_stats) for
CSV export.

Usage::

    profile = convert(hosts, {"group_by": "category"})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..analysis.host_summary import combined_hlo_ops, summaries_of
from ..common.errors import InvalidArgument, NotApplicable
from . import ToolAnswer
from .hlo_stats import NO_XLA_OPS, hlo_stats_table

GROUPINGS = ("program", "category")


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    group_by = params.get("group_by") or "program"
    if group_by not in GROUPINGS:
        raise InvalidArgument(f"group_by must be one of {', '.join(GROUPINGS)}.")
    table = combined_hlo_ops([s for _, s in summaries])
    if table.empty:
        raise NotApplicable(NO_XLA_OPS)
    if params.get("view") == "tables":
        return [hlo_stats_table(table)]
    perf = summaries[0][1].perf_env
    idle_ps = sum(s.device_idle_ps for _, s in summaries)
    root = "by_" + group_by
    key = "byProgram" if group_by == "program" else "byCategory"
    exclude = _tree(table, group_by, root, perf, 0)
    include = _tree(table, group_by, root, perf, idle_ps)
    device = "GPU" if any(table["on_device"]) else "CPU_ONLY"
    return {key: include, "deviceType": device, key + "ExcludeIdle": exclude,
            "aggDvfsTimeScaleMultiplier": 0}  # fmt: skip


def _metrics(time_ps: float, occurrences: int, flops: float, nbytes: float, perf) -> dict:
    peak_flops = perf.peak_tera_flops_per_second * 1e12
    peak_bw = perf.peak_hbm_bw_giga_bytes_per_second * 1e9
    seconds = time_ps / 1e12
    flop_util = flops / seconds / peak_flops if seconds > 0 and peak_flops > 0 else 0.0
    bw_util = nbytes / seconds / peak_bw if seconds > 0 and peak_bw > 0 else 0.0
    return {
        "flops": flop_util,
        "bandwidthUtils": [bw_util, 0, 0],
        "rawTime": time_ps,
        "rawFlops": flops,
        "rawBytesAccessedArray": [nbytes, 0, 0],
        "occurrences": occurrences,
        "avgTimePs": time_ps / occurrences if occurrences else 0,
        "bf16Flops": 0,
        "uncappedFlops": flop_util,
        "normalizedTimePs": time_ps,
    }


def _node(name: str, children: list, perf, extra: dict) -> dict:
    time_ps = sum(c["metrics"]["rawTime"] for c in children)
    occ = sum(c["metrics"]["occurrences"] for c in children)
    flops = sum(c["metrics"]["rawFlops"] for c in children)
    nbytes = sum(c["metrics"]["rawBytesAccessedArray"][0] for c in children)
    children = sorted(children, key=lambda c: -c["metrics"]["rawTime"])
    node: dict = {"name": name, "metrics": _metrics(time_ps, occ, flops, nbytes, perf)}
    node.update(extra)
    node["children"] = children
    node["numChildren"] = len(children)
    return node


def _leaf(row: dict, perf) -> dict:
    xla = {
        "op": row["hlo_op"],
        "expression": row["expression"],
        "provenance": row["tf_op"],
        "category": row["category"],
        "programId": str(row["program_id"]),
        "module": row["module"],
        "sourceInfo": {"fileName": row["source"].rsplit(":", 1)[0] if row["source"] else ""},
    }
    metrics = _metrics(
        float(row["self_ps"]), int(row["occurrences"]), float(row["flops"]),
        float(row["bytes_accessed"]), perf,
    )  # fmt: skip
    return {"name": row["hlo_op"], "metrics": metrics, "xla": xla, "children": [], "numChildren": 0}


def _grouped(rows: list, key: str) -> dict:
    """Rows by ``key``, groups in first-seen order (rows come largest self time first)."""
    groups: dict = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


def _categories(rows: list, perf) -> list:
    return [
        _node(str(name), [_leaf(r, perf) for r in group], perf, {"category": {}})
        for name, group in _grouped(rows, "category").items()
    ]


def _tree(table: pd.DataFrame, group_by: str, root: str, perf, idle_ps: int) -> dict:
    rows = table.to_dict("records")
    if group_by == "program":
        children = [
            _node(str(group[0]["module"] or pid), _categories(group, perf), perf, {})
            for pid, group in _grouped(rows, "program_id").items()
        ]
    else:
        children = _categories(rows, perf)
    if idle_ps > 0:
        idle = _node("IDLE", [], perf, {"category": {}})
        idle["metrics"] = _metrics(float(idle_ps), 0, 0.0, 0.0, perf)
        children.append(idle)
    return _node(root, children, perf, {})

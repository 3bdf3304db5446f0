"""overview_page: the run at a glance (docs/conversion.md §5.4).

Seven slots, as upstream: [analysis (top device ops), step-time table, run
environment, recommendation, inference latency, {}, diagnostics]. Slot 5 is the
literal `` {}`` upstream writes; ``convert`` returns a ``ToolOutput`` whose bytes
reproduce it, with the same object as ``json_obj`` for CSV export.

Usage::

    out = convert([("host", space)], {})
    tables = out.json_obj          # list of 7 (slot 5 is {})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis import together
from ..analysis.host_summary import combined_op_stats, summaries_of
from ..analysis.input_pipeline import breakdown as ia
from ..analysis.ops import metrics as ops
from ..analysis.ops.op_stats import OpStats
from ..analysis.steps.guess import ANNOTATION_HINT
from ..common import json_out
from . import ToolOutput
from .datatable import Column, data_table, dumps, percent
from .overview_tables import (
    diagnostics_table,
    host_step_time_table,
    inference_latency_table,
    recommendation_table,
    run_environment_table,
)

TOP_OPS = 10
_ANALYSIS_HEAD = (
    Column("selfTimePercent", "Time (%)", "number"),
    Column("cumulativeTimePercent", "Cumulative time (%)", "number"),
    Column("category", "Category", "string"),
    Column("operation", "Operation", "string"),
)
_GPU_TAIL = (
    Column("flopRate", "GFLOPs/Sec", "number"),
    Column("tcEligibility", "TensorCore eligibility", "boolean"),
    Column("tcUtilization", "Op is using TensorCore", "boolean"),
)
_TPU_TAIL = (Column("flopRate", "Bf16 Normalized Flop Rate(GFLOPs/Sec)", "number"),)
NO_STEP_MARKER = (
    "No step marker observed and hence the step time is unknown. This may happen if (1) "
    "training steps are not instrumented (e.g., if you are not using Keras) or (2) the "
    "profiling duration is shorter than the step time. For (1), you need to add step "
    "instrumentation; for (2), you may try to profile longer."
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolOutput:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> ToolOutput:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    # Independent analyses, side by side on the idle cores; joined in this order.
    stats, has_xla_ops = together.run_all(
        [
            lambda: combined_op_stats([s for _, s in summaries]),
            lambda: any(s.has_xla_ops for _, s in summaries),
        ]
    )
    tables = overview_tables(stats, has_xla_ops=has_xla_ops)
    body = "[" + ",".join(dumps(t) for t in tables[:5]) + ", {},"
    body += dumps(tables[6]) + "]"
    data = json_out.utf8(body)
    return ToolOutput(json_obj=tables, chunks=lambda: [data])


def overview_tables(stats: OpStats, has_xla_ops: bool = False) -> list:
    """The seven slots; ``has_xla_ops``: whether any host has XLA ops (HLO stats lists
    them), which the device next step names when there are no TensorFlow ops."""
    details = ia.step_details(stats.steps)
    tf_data = ia.tf_data_in_use(stats.host_ops, details)
    bottleneck = ia.classify(details, tf_data)
    env = stats.run_environment
    return [
        analysis_table(stats),
        host_step_time_table(stats),
        run_environment_table(env),
        recommendation_table(stats, bottleneck, has_xla_ops),
        inference_latency_table(),
        {},
        diagnostics_table(*overview_diagnostics(stats)),
    ]


def analysis_table(stats: OpStats) -> dict:
    gpu = "GPU" in stats.run_environment.device_type
    device = ops.device_framework_ops(stats.device_ops)
    framework = device.ops
    top = framework.sort_values(
        ["self_time_ps", "name"], ascending=[False, True], kind="stable"
    ).head(TOP_OPS)
    total = device.total_time_ps
    fraction = (
        top["self_time_ps"].to_numpy(dtype=np.float64) / total if total else np.zeros(len(top))
    )
    time_ns = top["time_ps"].to_numpy(dtype=np.float64) / 1000
    flop_rate = np.divide(
        top["flops"].to_numpy(dtype=np.float64), time_ns, out=np.zeros(len(top)), where=time_ns != 0
    )
    columns = list(_ANALYSIS_HEAD) + list(_GPU_TAIL if gpu else _TPU_TAIL)
    cells = [fraction, np.cumsum(fraction), top["category"], top["name"], flop_rate]
    if gpu:
        eligible, using = _tensor_core_flags(stats, top["name"])
        cells += [eligible, using]
    rows = [list(r) for r in zip(*(np.asarray(c, dtype=object).tolist() for c in cells))]
    return data_table(columns, rows, _analysis_properties(stats, framework, gpu))


def _tensor_core_flags(stats: OpStats, names) -> tuple:
    k = stats.kernels
    if k.empty:
        return [False] * len(names), [False] * len(names)
    eligible = k.groupby("op_name")["is_op_tensor_core_eligible"].any()
    tc_time = (
        k[k["is_kernel_using_tensor_core"].astype(bool)]
        .groupby("op_name")["total_duration_ns"]
        .sum()
    )
    return (
        eligible.reindex(names).fillna(False).astype(bool).tolist(),
        (tc_time.reindex(names).fillna(0) > 0).tolist(),
    )


def _analysis_properties(stats: OpStats, framework, gpu: bool) -> dict:
    host = stats.host_ops.without_idle()
    host_count = float(host["occurrences"].sum())
    device_count = float(framework["occurrences"].sum())
    everything = host_count + device_count
    p = {
        "host_trace_level": str(stats.run_environment.host_trace_level),
        "host_tf_op_percent": percent(100 * host_count / everything if everything else 0),
        "device_tf_op_percent": percent(100 * device_count / everything if everything else 0),
        "host_op_time_eager_percent": percent(_eager_percent(host)),
        "device_op_time_eager_percent": percent(_eager_percent(framework)),
        "remark_text": "",
        "remark_color": "",
        "mxu_utilization_percent": percent(0),
        "hbm_utilization_percent": percent(0),
    }
    if gpu:
        sixteen, thirty_two = stats.steps.precision_16bit_ps, stats.steps.precision_32bit_ps
        both = sixteen + thirty_two
        p["device_compute_16bit_percent"] = percent(100 * sixteen / both if both else 0)
        p["device_compute_32bit_percent"] = percent(100 * thirty_two / both if both else 0)
    else:
        for key in (
            "flop_rate_utilization_relative_to_roofline",
            "memory_bw_utilization_relative_to_hw_limit",
            "device_idle_time_percent",
            "device_duty_cycle_percent",
            "device_duty_cycle_high_confidence_percent",
            "host_idle_time_percent",
        ):
            p[key] = percent(0)
    return p


def _eager_percent(frame) -> float:
    total = float(frame["self_time_ps"].sum())
    eager = float(frame.loc[frame["is_eager"].astype(bool), "self_time_ps"].sum())
    return 100 * eager / total if total else 0.0


def overview_diagnostics(stats: OpStats) -> tuple:
    """(info, warnings, errors) messages for the diagnostics table (docs/conversion.md §4.8)."""
    info: list = []
    warnings: list = list(stats.warnings)
    db = stats.steps
    if db.steps.empty or db.guessed:
        warnings.insert(0, NO_STEP_MARKER)
    if db.guessed:
        warnings.insert(1, guessed_steps_message(db))
    # Upstream does not report steps lost when aligning hosts (tf_two_hosts drops 2).
    errors = sorted(stats.errors)
    return info, warnings, errors


def guessed_steps_message(db) -> str:
    hint = ANNOTATION_HINT.get(db.framework or "", ANNOTATION_HINT["TensorFlow"])
    return (
        f"The steps shown were guessed: each is one '{db.guessed_from}' event. For exact "
        f"steps, mark each training step in your program, e.g. with {hint}."
    )

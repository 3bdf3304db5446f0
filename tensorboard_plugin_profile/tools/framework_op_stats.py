"""framework_op_stats (old name tensorflow_stats): time per framework op (docs/conversion.md §5.5).

The answer is ``[with_idle, without_idle]``: two DataTables of device ops (regrouped
by the framework op that launched them) then host ops, ranked by self time.

Usage::

    tables = convert([("host", space)], {})
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.environment import PerfEnv
from ..analysis.host_summary import combined_op_stats, summaries_of
from ..analysis.ops import metrics as ops
from ..analysis.ops.op_stats import OpStats, has_framework_ops
from ..analysis.ops.timeline import timeline_op_stats
from ..common.errors import NotApplicable
from ..common.formats import is_chrome_trace
from ..xspace import op_names
from .datatable import Column, data_table, rows_from_columns

MAX_ROWS = 500
# Upstream answers one IDLE row of zeros here (docs/differences.md,
# "TF stats on profiles without TensorFlow ops").
NO_FRAMEWORK_OPS = (
    "Tool framework_op_stats (TF stats) has nothing to show: this profile recorded no "
    "TensorFlow ops. A JAX or other XLA program's ops are in hlo_stats and op_profile."
)
GIB = 1 << 30
_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("host_or_device", "Host/device", "string"),
    Column("type", "Operation Type", "string"),
    Column("operation", "Operation Name", "string"),
    Column("occurrences", "#Occurrences", "number"),
    Column("total_time", "Total time (us)", "number"),
    Column("avg_time", "Avg. time (us)", "number"),
    Column("total_self_time", "Total self-time (us)", "number"),
    Column("avg_self_time", "Avg. self-time (us)", "number"),
    Column("device_total_self_time_percent", "Total self-time on Device (%)", "number"),
    Column(
        "device_cumulative_total_self_time_percent",
        "Cumulative total-self time on Device (%)",
        "number",
    ),
    Column("host_total_self_time_percent", "Total self-time on Host (%)", "number"),
    Column(
        "Host_cumulative_total_self_time_percent",
        "Cumulative total-self time on Host (%)",
        "number",
    ),
    Column("measured_flop_rate", "Normalized FLOP Rate (FLOPs/s)", "number"),
    Column("model_flop_rate", "Model FLOP Rate (GFLOP/s)", "number"),
    Column("measured_memory_bw", "Measured Memory BW (GBytes/Sec)", "number"),
    Column("operational_intensity", "Operational Intensity (FLOPs/Byte)", "number"),
)
_TENSORCORE = Column("gpu_tensorcore_utilization", "GPU TensorCore utilization", "number")
_TAIL = (Column("bound_by", "Bound by", "string"), Column("eager", "Execution mode", "string"))


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    if any(is_chrome_trace(space) for _, space in hosts):
        return framework_op_tables(timeline_op_stats(hosts))  # ProfilerHook timelines
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> list:
    """The answer from each XSpace host's summary (``analysis/host_summary.py``)."""
    stats = combined_op_stats([s for _, s in summaries])
    if not has_framework_ops(stats):
        raise NotApplicable(NO_FRAMEWORK_OPS)
    return framework_op_tables(stats)


def framework_op_tables(stats: OpStats) -> list:
    return [_table(stats, exclude_idle=False), _table(stats, exclude_idle=True)]


def _table(stats: OpStats, exclude_idle: bool) -> dict:
    gpu = "GPU" in stats.run_environment.device_type
    device = ops.device_framework_ops(stats.device_ops, with_idle=True)
    tensorcore = _tensorcore_share(stats.kernels) if gpu else None
    device_rows = _side(device, "Device", exclude_idle, stats.perf_env, tensorcore)
    host_rows = _side(stats.host_ops, "Host", exclude_idle, stats.perf_env, None)
    frame = pd.concat([device_rows, host_rows], ignore_index=True)
    frame["rank"] = np.arange(1, len(frame) + 1)
    columns = list(_COLUMNS) + ([_TENSORCORE] if gpu else []) + list(_TAIL)
    rows = rows_from_columns(*(frame[c.id] for c in columns))
    training = _is_training(stats)
    properties = {"architecture_type": "Unknown", "task_type": training}
    return data_table(columns, rows, properties)


def _is_training(stats: OpStats) -> str:
    names = pd.concat(
        [
            stats.host_ops.ops["name"],
            stats.device_ops.ops["name"],
            stats.device_ops.ops["provenance"],
        ],
        ignore_index=True,
    )
    return "Training" if op_names.is_gradient_name(names).any() else "Inference"


def _side(
    db: ops.OpMetricsDb, side: str, exclude_idle: bool, perf: PerfEnv, tensorcore
) -> pd.DataFrame:
    total_ps = db.total_op_time_ps if exclude_idle else db.total_time_ps
    ranked = db.ops.sort_values(["self_time_ps", "name"], ascending=[False, True], kind="stable")
    ranked = ranked.head(MAX_ROWS)
    if exclude_idle:
        ranked = ranked[ranked["name"] != ops.IDLE]
    occurrences = ranked["occurrences"].to_numpy(dtype=np.float64)
    time_us = ranked["time_ps"].to_numpy(dtype=np.float64) / 1e6
    self_us = ranked["self_time_ps"].to_numpy(dtype=np.float64) / 1e6
    fraction = _safe_div(self_us, total_ps / 1e6)
    zeros = np.zeros(len(ranked))
    time_ns = ranked["time_ps"].to_numpy(dtype=np.float64) / 1000
    flops = ranked["flops"].to_numpy(dtype=np.float64)
    bytes_accessed = ranked["bytes_accessed"].to_numpy(dtype=np.float64)
    flop_rate = _safe_div(flops, time_ns)
    memory_bw = _safe_div(bytes_accessed, time_ns) * 1e9 / GIB
    out = pd.DataFrame(
        {
            "host_or_device": side,
            "type": ranked["category"].to_numpy(dtype=object),
            "operation": ranked["name"].to_numpy(dtype=object),
            "occurrences": occurrences,
            "total_time": time_us,
            "avg_time": _safe_div(time_us, occurrences),
            "total_self_time": self_us,
            "avg_self_time": _safe_div(self_us, occurrences),
            "device_total_self_time_percent": fraction if side == "Device" else zeros,
            "device_cumulative_total_self_time_percent": np.cumsum(fraction)
            if side == "Device"
            else zeros,
            "host_total_self_time_percent": fraction if side == "Host" else zeros,
            "Host_cumulative_total_self_time_percent": np.cumsum(fraction)
            if side == "Host"
            else zeros,
            "measured_flop_rate": flop_rate,
            "model_flop_rate": _safe_div(ranked["model_flops"].to_numpy(dtype=np.float64), time_ns),
            "measured_memory_bw": memory_bw,
            "operational_intensity": _safe_div(flops, bytes_accessed),
            "bound_by": _bound_by(flop_rate, memory_bw, perf),
            "eager": np.where(ranked["is_eager"].to_numpy(dtype=bool), "Eager", "Function"),
        }
    )
    share = (
        tensorcore.reindex(out["operation"]).fillna(0.0).to_numpy()
        if tensorcore is not None
        else zeros
    )
    out["gpu_tensorcore_utilization"] = share if side == "Device" else zeros
    return out


def _safe_div(a: Any, b: Any) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), a.shape)
    out = np.zeros_like(a)
    np.divide(a, b, out=out, where=b != 0)
    return out


def _bound_by(flop_rate: np.ndarray, memory_bw_gib: np.ndarray, perf: PerfEnv) -> np.ndarray:
    """The resource closest to its peak (strictly above 0), else "Unknown"."""
    compute = _safe_div(flop_rate, perf.peak_tera_flops_per_second * 1000)
    hbm = _safe_div(memory_bw_gib, perf.peak_hbm_bw_giga_bytes_per_second * 1e9 / GIB)
    return np.where(
        (compute <= 0) & (hbm <= 0), "Unknown", np.where(compute >= hbm, "Compute", "HBM")
    ).astype(object)


def _tensorcore_share(kernels: pd.DataFrame) -> pd.Series:
    """Per op name: tensor-core kernel time / all kernel time."""
    if kernels.empty:
        return pd.Series(dtype=np.float64)
    total = kernels.groupby("op_name")["total_duration_ns"].sum()
    tc = kernels[kernels["is_kernel_using_tensor_core"].astype(bool)]
    tc_total = tc.groupby("op_name")["total_duration_ns"].sum().reindex(total.index, fill_value=0)
    return (tc_total / total).astype(np.float64)

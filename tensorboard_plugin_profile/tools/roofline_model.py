"""roofline_model: each HLO op's FLOP rate against its operational intensity.

Upstream's two tables: the ops (one row per HLO op, with the device's peak FLOP
rate and memory bandwidth in the table properties) and diagnostics. A roofline
needs those peaks; a CPU profile carries none, so there the tool says why instead
of drawing a roof.

Usage::

    tables = convert(hosts, {})   # [ops table, diagnostics table], or NotApplicable
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis.host_summary import combined_hlo_ops, summaries_of
from ..common.errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns
from .hlo_stats import NO_XLA_OPS, rates

NO_PEAKS = (
    "A roofline compares each op with the device's peak FLOP rate and memory bandwidth, "
    "and this profile reports neither: XLA on a CPU records no peak numbers. The HLO "
    "stats and op profile tools show the same ops by time."
)
_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("program_id", "Program id", "string"),
    Column("category", "Category", "string"),
    Column("operation", "Operation", "string"),
    Column("occurrences", "# Occurrences", "number"),
    Column("total_self_time", "Total self time (us)", "number"),
    Column("measured_flop_rate", "Measured FLOP rate (GFLOP/s)", "number"),
    Column("measured_memory_bw", "Memory BW (GiB/s)", "number"),
    Column("operational_intensity", "Operational Intensity (FLOP/Byte)", "number"),
    Column("bound_by", "Bound by", "string"),
    Column("roofline_efficiency", "Roofline efficiency", "number"),
)
_DIAGNOSTICS = (Column("severity", "Severity", "string"), Column("message", "Message", "string"))


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> list:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    table = combined_hlo_ops([s for _, s in summaries])
    if table.empty:
        raise NotApplicable(NO_XLA_OPS)
    perf = summaries[0][1].perf_env
    if perf.peak_tera_flops_per_second <= 0 or perf.peak_hbm_bw_giga_bytes_per_second <= 0:
        raise NotApplicable(NO_PEAKS)
    peak_gflops = perf.peak_tera_flops_per_second * 1e3
    peak_gib_s = perf.peak_hbm_bw_giga_bytes_per_second * 1e9 / (1 << 30)
    ridge = peak_gflops / peak_gib_s
    r = rates(table)
    roof = np.minimum(peak_gflops, r["intensity"] * peak_gib_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        efficiency = np.where(roof > 0, r["gflops"] / roof, 0.0)
    rows = rows_from_columns(
        np.arange(1, len(table) + 1),
        table["program_id"].astype(str),
        table["category"],
        table["hlo_op"],
        table["occurrences"].to_numpy(dtype=np.int64),
        table["self_ps"].to_numpy(dtype=np.float64) / 1e6,
        r["gflops"],
        r["gib_s"],
        r["intensity"],
        np.where(r["intensity"] >= ridge, "Compute", "Memory"),
        efficiency,
    )
    properties = {
        "peak_flop_rate": peak_gflops,
        "peak_hbm_bw": peak_gib_s,
        "hbm_ridge_point": ridge,
        "device_type": "GPU",
    }
    return [data_table(_COLUMNS, rows, properties), data_table(_DIAGNOSTICS, [])]

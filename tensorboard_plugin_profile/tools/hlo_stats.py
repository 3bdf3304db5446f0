"""hlo_stats: one row per HLO op of every program, by self time (upstream's columns).

Rows come from the XLA op events on device planes and, for XLA:CPU, on the host's
XLA threads (see ``analysis/hlo/op_events.py``); percentages are fractions of the
total self time of all HLO ops, as upstream writes them.

Usage::

    table = convert(hosts, {})   # DataTable dict, or NotApplicable
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.host_summary import combined_hlo_ops, summaries_of
from ..common.errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns

NO_XLA_OPS = (
    "HLO stats show the ops of XLA programs, and this profile has no XLA op events "
    "(no events with hlo_op and program_id stats): it was not recorded from a JAX, "
    "TensorFlow-XLA or PyTorch/XLA program, or none ran while profiling."
)
_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("program_id", "Program id", "string"),
    Column("category", "HLO op category", "string"),
    Column("hlo_op_name", "HLO op name", "string"),
    Column("hlo_op_expression", "HLO op text", "string"),
    Column("tf_op_name", "Framework op name", "string"),
    Column("occurrences", "#Occurrences", "number"),
    Column("total_time", "Total time (us)", "number"),
    Column("avg_time", "Avg. time (us)", "number"),
    Column("total_self_time", "Total self time (us)", "number"),
    Column("avg_self_time", "Avg. self time (us)", "number"),
    Column("total_self_time_percent", "Total self time (%)", "number"),
    Column("cumulative_total_self_time_percent", "Cumulative total self time (%)", "number"),
    Column("dma_stall_percent", "%time stalled by DMA", "number"),
    Column("model_flop_rate", "Model GFLOP/s", "number"),
    Column("normalized_flop_rate", "Normalized GFLOP/s", "number"),
    Column("measured_memory_bw", "Measured memory BW (GiB/s)", "number"),
    Column("hbm_bw", "HBM BW (GiB/s)", "number"),
    Column("cmem_read_bw", "CMEM Read BW (GiB/s)", "number"),
    Column("cmem_write_bw", "CMEM Write BW (GiB/s)", "number"),
    Column("operational_intensity", "Operational intensity (FLOPS/Byte)", "number"),
    Column("bound_by", "Bound by", "string"),
    Column("hlo_rematerialization", "Rematerialization", "string"),
    Column("outside_compilation", "Outside Compilation", "string"),
    Column("autotuned", "Autotuned", "string"),
    Column("source_info", "Source Info", "string"),
    Column("core_type", "TPU core type", "string"),
    Column("parent_op_name", "Parent op name", "string"),
    Column("vdd_energy", "VDD Energy (J)", "number"),
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> dict:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    table = combined_hlo_ops([s for _, s in summaries])
    if table.empty:
        raise NotApplicable(NO_XLA_OPS)
    return hlo_stats_table(table)


def rates(table: pd.DataFrame) -> dict:
    """Per-op FLOP rate (GFLOP/s), bandwidth (GiB/s) and intensity (FLOP/byte)."""
    self_ps = table["self_ps"].to_numpy(dtype=np.float64)
    flops = table["flops"].to_numpy(dtype=np.float64)
    nbytes = table["bytes_accessed"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        gflops = np.where(self_ps > 0, flops / self_ps * 1e3, 0.0)  # FLOP/ps * 1e12 / 1e9
        gib_s = np.where(self_ps > 0, nbytes / (self_ps / 1e12) / (1 << 30), 0.0)
        intensity = np.where(nbytes > 0, flops / nbytes, 0.0)
    return {"gflops": gflops, "gib_s": gib_s, "intensity": intensity}


def hlo_stats_table(table: pd.DataFrame) -> dict:
    n = len(table)
    occurrences = table["occurrences"].to_numpy(dtype=np.int64)
    total_us = table["total_ps"].to_numpy(dtype=np.float64) / 1e6
    self_us = table["self_ps"].to_numpy(dtype=np.float64) / 1e6
    share = self_us / self_us.sum() if self_us.sum() > 0 else np.zeros(n)
    r = rates(table)
    zeros, empty, no = np.zeros(n), [""] * n, ["No"] * n
    rows = rows_from_columns(
        np.arange(1, n + 1),
        table["program_id"].astype(str),
        table["category"],
        table["hlo_op"],
        table["expression"],
        table["tf_op"],
        occurrences,
        total_us,
        total_us / np.maximum(occurrences, 1),
        self_us,
        self_us / np.maximum(occurrences, 1),
        share,
        np.cumsum(share),
        zeros,
        r["gflops"],
        r["gflops"],
        r["gib_s"],
        r["gib_s"],
        zeros,
        zeros,
        r["intensity"],
        empty,
        no,
        no,
        no,
        table["source"],
        empty,
        empty,
        zeros,
    )
    return data_table(_COLUMNS, rows)

"""kernel_stats: one row per GPU kernel shape and op (docs/conversion.md §5.6).

``kernel_stats_table`` is the data (an empty table for CPU/TPU profiles, as
upstream); ``convert`` raises ``NotApplicable`` instead of showing an empty page.

Usage::

    table = convert([("host", space)], {})   # DataTable dict, or NotApplicable
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.host_summary import combined_op_stats, summaries_of
from ..common.errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns

_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("kernel_name", "Kernel Name", "string"),
    Column("registers_per_thread", "Registers per thread", "number"),
    Column("shmem_bytes", "Shared Mem bytes", "number"),
    Column("block_dim", "Block dim", "string"),
    Column("grid_dim", "Grid dim", "string"),
    Column("occupancy_pct", "Theoretical Occupancy %", "number"),
    Column("is_op_tensor_core_eligible", "Op is TensorCore eligible", "boolean"),
    Column("is_kernel_using_tensor_core", "Kernel uses TensorCore", "boolean"),
    Column("op_name", "Op Name", "string"),
    Column("occurrences", "Occurrences", "number"),
    Column("total_duration_us", "Total Duration (μs)", "number"),
    Column("avg_duration_us", "Avg Duration (μs)", "number"),
    Column("min_duration_us", "Min Duration (μs)", "number"),
    Column("max_duration_us", "Max Duration (μs)", "number"),
)
NO_KERNELS = (
    "Kernel stats show GPU kernels, and this profile has none: it was recorded "
    "without a GPU (or the GPU ran no kernels while profiling)."
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> dict:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    if not any(s.has_gpu() for _, s in summaries):
        raise NotApplicable(NO_KERNELS)  # no need to analyse the whole profile to say so
    table = _table(summaries)
    if not table["rows"]:
        raise NotApplicable(NO_KERNELS)
    return table


def kernel_stats_table(hosts: Sequence[tuple]) -> dict:
    """The kernel DataTable of these hosts (no rows when there are no kernels)."""
    return _table(summaries_of(hosts))


def _table(summaries: Sequence[tuple]) -> dict:
    return table_from_reports(combined_op_stats([s for _, s in summaries]).kernels)


def table_from_reports(k: pd.DataFrame) -> dict:
    occurrences = k["occurrences"].to_numpy(dtype=np.int64)
    total_ns = k["total_duration_ns"].to_numpy(dtype=np.int64)
    # Upstream divides integer nanoseconds before converting to microseconds.
    avg_ns = np.where(occurrences > 0, total_ns // np.maximum(occurrences, 1), 0)
    rows = rows_from_columns(
        np.arange(1, len(k) + 1),
        k["name"],
        k["registers_per_thread"],
        k["static_shmem_bytes"].to_numpy(dtype=np.int64)
        + k["dynamic_shmem_bytes"].to_numpy(dtype=np.int64),
        k["block_dim"],
        k["grid_dim"],
        k["occupancy_pct"],
        k["is_op_tensor_core_eligible"],
        k["is_kernel_using_tensor_core"],
        k["op_name"],
        occurrences,
        total_ns / 1000,
        avg_ns / 1000,
        k["min_duration_ns"].to_numpy(dtype=np.int64) / 1000,
        k["max_duration_ns"].to_numpy(dtype=np.int64) / 1000,
    )
    return data_table(_COLUMNS, rows)

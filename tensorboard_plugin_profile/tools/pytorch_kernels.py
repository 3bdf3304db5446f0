"""``pytorch_kernels``: GPU kernels of a PyTorch worker (``analysis/pytorch/kernels.py``).

Tables: one row per kernel (calls, total / mean / max / min µs, mean blocks per SM and
estimated achieved occupancy when the trace has them, Tensor Core use), and the share of
kernel time on Tensor Cores.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.pytorch.kernels import kernel_stats, tensor_core_share
from ..common.errors import NotApplicable
from .datatable import UNIT_US, Column, data_table, rows_from_columns


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    t = kernel_stats(hosts[0][1])
    if t.empty:
        raise NotApplicable("This trace has no GPU kernels (a CPU-only profile).")
    columns = [
        Column("name", "Name", "string"),
        Column("tensor_cores", "Tensor Cores used", "string"),
        Column("calls", "Calls", "number"),
        Column("total_us", "Total duration (us)", "number", UNIT_US),
        Column("mean_us", "Mean duration (us)", "number", UNIT_US),
        Column("max_us", "Max duration (us)", "number", UNIT_US),
        Column("min_us", "Min duration (us)", "number", UNIT_US),
    ]
    values = [
        t["name"],
        ["Yes" if v else "No" for v in t["tensor_cores"]],
        t["calls"],
        t["total_us"].round(3),
        t["mean_us"].round(3),
        t["max_us"].round(3),
        t["min_us"].round(3),
    ]
    if t["blocks_per_sm"].any():
        columns.append(Column("blocks_per_sm", "Mean blocks per SM", "number"))
        values.append(t["blocks_per_sm"].round(2))
    if t["occupancy"].any():
        columns.append(Column("occupancy", "Mean est. achieved occupancy (%)", "number"))
        values.append(t["occupancy"].round(2))
    share = tensor_core_share(t)
    kernels = data_table(columns, rows_from_columns(*values), {"title": "Kernels"})
    tensor_cores = data_table(
        (Column("use", "Kernel time", "string"), Column("percent", "Share (%)", "number")),
        [
            ["Using Tensor Cores", round(100 * share, 2)],
            ["Not using Tensor Cores", round(100 * (1 - share), 2)],
        ],
        {"title": "Tensor Core use"},
    )
    return [kernels, tensor_cores]

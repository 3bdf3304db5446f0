"""``pytorch_overview``: a PyTorch worker's steps and where their time went.

Tables (``analysis/pytorch/overview.py`` computes them): the average step and each step
split into Kernel / Memcpy / Memset / Communication / Runtime / DataLoader / CPU Exec /
Other (µs), the GPU summary (utilization, estimated
SM efficiency and achieved occupancy, the GPU's name, memory and compute capability) and
the run environment.

Usage::

    breakdown, gpus, environment = convert([("worker0", space)], {})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis.pytorch.environment import distributed_info, gpu_info
from ..analysis.pytorch.overview import PARTS, TOTAL, step_overview
from .datatable import UNIT_US, Column, data_table

_US = 1e6


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    worker, space = hosts[0]
    ov = step_overview(space)
    return [_breakdown(ov), _gpus(ov, space), _environment(ov, space, worker)]


def _shown_parts(ov) -> list:
    parts = list(PARTS)
    if not ov.has_gpu:
        parts = [p for p in parts if p not in ("Kernel", "Memcpy", "Memset", "Runtime")]
    if not ov.has_communication:
        parts.remove("Communication")
    return parts


def _breakdown(ov) -> dict:
    parts = _shown_parts(ov)
    columns = [
        Column("step", "Step", "string"),
        Column("total_us", "Step time (us)", "number", UNIT_US),
    ]
    for part in parts:
        # Time only (the page shows each part's share of the average step beside the table).
        part_id = f"{part.lower().replace(' ', '_')}_us"
        columns.append(Column(part_id, f"{part} (us)", "number", UNIT_US))
    rows = [_row("Average", ov.average, parts)]
    for record in ov.steps.to_dict("records"):
        rows.append(_row(str(record["step"]), record, parts))
    average = ov.average[TOTAL] / _US
    return data_table(
        columns,
        rows,
        {"title": "Step time breakdown", "average_step_time_us": f"{average:.0f}"},
    )


def _row(name: str, costs: Mapping, parts: list) -> list:
    return [name, round(float(costs[TOTAL]) / _US)] + [
        round(float(costs[part]) / _US) for part in parts
    ]


def _gpus(ov, space) -> dict:
    columns = (
        Column("device", "GPU", "string"),
        Column("name", "Name", "string"),
        Column("memory", "Memory", "string"),
        Column("compute_capability", "Compute capability", "string"),
        Column("utilization", "GPU utilization (%)", "number"),
        Column("sm_efficiency", "Est. SM efficiency (%)", "number"),
        Column("occupancy", "Est. achieved occupancy (%)", "number"),
    )
    rows = []
    for g in ov.gpu.to_dict("records"):
        info = gpu_info(space, int(g["device"]))
        rows.append(
            [
                f"GPU {int(g['device'])}",
                info.get("Name", ""),
                info.get("Memory", ""),
                info.get("Compute Capability", ""),
                _percent(g["utilization"]),
                _percent(g["sm_efficiency"]),
                _round(g["occupancy"]),
            ]
        )
    properties = {"title": "GPU summary"}
    if not rows:  # said, not shown as an empty table
        properties["empty_reason"] = (
            "No GPU ran in this trace: it holds no GPU kernels or devices"
            " (recorded on the CPU only)."
        )
    return data_table(columns, rows, properties)


def _environment(ov, space, worker: str) -> dict:
    info = distributed_info(space)
    pairs = [
        ("Worker", worker),
        ("Device type", "GPU" if ov.has_gpu else "CPU"),
        ("Steps", str(len(ov.steps))),
    ]
    for key, label in (
        ("backend", "Distributed backend"),
        ("rank", "Rank"),
        ("world_size", "World size"),
    ):
        if key in info:
            pairs.append((label, str(info[key])))
    columns = (Column("property", "Property", "string"), Column("value", "Value", "string"))
    return data_table(columns, pairs, {"title": "Environment"})


def _percent(value: float) -> float:
    return 0.0 if value is None or np.isnan(value) else round(100 * float(value), 2)


def _round(value: float) -> float:
    return 0.0 if value is None or np.isnan(value) else round(float(value), 2)

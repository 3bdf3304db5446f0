"""``pytorch_distributed``: computation / communication overlap of every worker, and their
collectives (``analysis/pytorch/distributed.py``)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.pytorch.distributed import communication_ops, overlap_by_step
from ..analysis.pytorch.environment import distributed_info
from ..errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns

_US = 1e6


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    hosts = list(hosts)
    if not any(distributed_info(space) for _, space in hosts) and len(hosts) < 2:
        raise NotApplicable(
            "This trace was not recorded by a distributed job (no distributedInfo)."
        )
    o = overlap_by_step(hosts)
    overlap = data_table(
        (
            Column("worker", "Worker", "string"),
            Column("step", "Step", "string"),
            Column("computation_us", "Computation (us)", "number"),
            Column("overlapping_us", "Overlapping (us)", "number"),
            Column("communication_us", "Communication (us)", "number"),
            Column("other_us", "Other (us)", "number"),
        ),
        rows_from_columns(
            o["worker"],
            o["step"],
            (o["computation"] / _US).round(),
            (o["overlapping"] / _US).round(),
            (o["communication"] / _US).round(),
            (o["other"] / _US).round(),
        ),
        {"title": "Computation / communication overlap (step 'all' is the mean step)"},
    )
    rows = []
    for worker, space in hosts:
        ops = communication_ops(space)
        for r in ops.to_dict("records"):
            calls = max(int(r["calls"]), 1)
            rows.append(
                [worker, r["name"], r["calls"], r["total_bytes"], round(r["total_bytes"] / calls),
                 round(r["latency_ps"] / _US), round(r["latency_ps"] / _US / calls)]
            )  # fmt: skip
    comm = data_table(
        (
            Column("worker", "Worker", "string"),
            Column("name", "Name", "string"),
            Column("calls", "Calls", "number"),
            Column("total_bytes", "Total size (bytes)", "number"),
            Column("avg_bytes", "Avg size (bytes)", "number"),
            Column("latency_us", "Total latency (us)", "number"),
            Column("avg_latency_us", "Avg latency (us)", "number"),
        ),
        rows,
        {"title": "Communication operations"},
    )
    return [overlap, comm]

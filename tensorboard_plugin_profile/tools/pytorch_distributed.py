"""``pytorch_distributed``: computation / communication overlap of every worker, their
synchronizing time and their collectives (``analysis/pytorch/distributed.py``,
``analysis/pytorch/wait_time.py``)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.pytorch.distributed import communication_ops, overlap_by_step
from ..analysis.pytorch.environment import distributed_info
from ..analysis.pytorch.wait_time import wait_time
from ..common.errors import NotApplicable
from .datatable import UNIT_BYTES, UNIT_US, Column, data_table, rows_from_columns

_US = 1e6


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    hosts = list(hosts)
    if not any(distributed_info(space) for _, space in hosts) and len(hosts) < 2:
        raise NotApplicable(
            "This trace was not recorded by a distributed job (no distributedInfo)."
        )
    if len(hosts) < 2 and communication_ops(hosts[0][1]).empty:
        raise NotApplicable(
            "This rank ran no collective (NCCL or Gloo) operation: there is no communication "
            "to show. Profile two or more ranks into one run to compare them."
        )
    o = overlap_by_step(hosts)
    overlap = data_table(
        (
            Column("worker", "Worker", "string"),
            Column("step", "Step", "string"),
            Column("computation_us", "Computation (us)", "number", UNIT_US),
            Column("overlapping_us", "Overlapping (us)", "number", UNIT_US),
            Column("communication_us", "Communication (us)", "number", UNIT_US),
            Column("other_us", "Other (us)", "number", UNIT_US),
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
    waits = wait_time(hosts)
    wait = data_table(
        (
            Column("worker", "Worker", "string"),
            Column("step", "Step", "string"),
            Column("transfer_us", "Data transfer time (us)", "number", UNIT_US),
            Column("synchronizing_us", "Synchronizing time (us)", "number", UNIT_US),
        ),
        rows_from_columns(
            waits.by_step["worker"],
            waits.by_step["step"],
            (waits.by_step["transfer_ps"] / _US).round(),
            (waits.by_step["synchronizing_ps"] / _US).round(),
        ),
        {
            "title": "Synchronizing / communication time (step 'all' is the mean step)",
            **({"note": waits.problem} if waits.problem else {}),
        },
    )
    return [overlap, wait, _collectives_table(hosts, waits.by_op)]


def _collectives_table(hosts: list, transfer) -> dict:
    moved = {(w, n): t for w, n, t in zip(transfer["worker"], transfer["name"],
                                          transfer["transfer_ps"])}  # fmt: skip
    rows = []
    for worker, space in hosts:
        ops = communication_ops(space)
        for r in ops.to_dict("records"):
            calls = max(int(r["calls"]), 1)
            t = moved.get((worker, r["name"]))
            rows.append(
                [worker, r["name"], r["calls"], r["total_bytes"], round(r["total_bytes"] / calls),
                 round(r["latency_ps"] / _US), round(r["latency_ps"] / _US / calls),
                 None if t is None else round(t / _US),
                 None if t is None else round(t / _US / calls)]
            )  # fmt: skip
    return data_table(
        (
            Column("worker", "Worker", "string"),
            Column("name", "Name", "string"),
            Column("calls", "Calls", "number"),
            Column("total_bytes", "Total size (bytes)", "number", UNIT_BYTES),
            Column("avg_bytes", "Avg size (bytes)", "number", UNIT_BYTES),
            Column("latency_us", "Total latency (us)", "number", UNIT_US),
            Column("avg_latency_us", "Avg latency (us)", "number", UNIT_US),
            Column("transfer_us", "Data transfer time (us)", "number", UNIT_US),
            Column("avg_transfer_us", "Avg data transfer time (us)", "number", UNIT_US),
        ),
        rows,
        {"title": "Communication operations"},
    )

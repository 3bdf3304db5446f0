"""TF stats of a ProfilerHook timeline: the executor's op events, as an ``OpStats``.

``tf.train.ProfilerHook`` writes one ``X`` event per executed node, ``args.name`` the node
and ``args.op`` its op type, on one process per device (``.../device:CPU:0 Compute``,
``.../device:GPU:0 Compute``, GPU streams). Ops on GPU processes are device ops, the
others host ops; an executor thread runs one op at a time, so self time is the op's
time. Each side gets an IDLE row for its threads' gaps (line span minus op time), like
the XSpace host op database, so the same ``framework_op_stats`` tables lay it out.

Usage::

    stats = timeline_op_stats([("timeline-4", space)])
    tables = framework_op_tables(stats)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .. import environment
from ..chrome_events import events_of
from ..steps import step_db
from . import kernels
from . import metrics as ops
from .op_stats import OpStats

OP_CATEGORY = "Op"
NODE_ARG = "name"
TYPE_ARG = "op"


def timeline_op_stats(hosts: Sequence[tuple]) -> OpStats:
    frames = [_op_events(space) for _, space in hosts]
    ev = pd.concat(frames, ignore_index=True) if frames else _op_events(None)
    gpu = ev["device"].to_numpy(dtype=bool)
    device_type = "GPU" if gpu.any() else environment.CPU
    costs = _graph_costs(hosts)
    return OpStats(
        host_ops=_op_db(ev[~gpu], costs),
        device_ops=_op_db(ev[gpu], costs),
        kernels=kernels.empty_reports(),
        steps=step_db.StepDb(steps=step_db.empty_steps()),
        run_environment=environment.RunEnvironment(
            hostnames=[name for name, _ in hosts], device_type=device_type
        ),
        perf_env=environment.PerfEnv(),
        errors=[],
        warnings=[],
    )


def _op_events(space) -> pd.DataFrame:
    if space is None:
        return pd.DataFrame(columns=["key", "name", "category", "begin_ps", "end_ps", "device"])
    ev = events_of(space, strings=(NODE_ARG, TYPE_ARG))
    ev = ev[ev["cat"] == OP_CATEGORY]
    names = ev[NODE_ARG].where(ev[NODE_ARG].notna(), ev["name"])
    types = ev[TYPE_ARG].where(ev[TYPE_ARG].notna(), ev["name"])
    plane_names = np.asarray([p.name for p in space.planes], dtype=object)
    device = pd.Series(plane_names[ev["plane"].to_numpy()]).str.contains("device:GPU")
    return pd.DataFrame(
        {
            "key": ev["plane"].astype(str) + ":" + ev["line"].astype(str) + ":" + space.source,
            "name": names.to_numpy(dtype=object),
            "category": types.to_numpy(dtype=object),
            "begin_ps": ev["begin_ps"].to_numpy(),
            "end_ps": ev["end_ps"].to_numpy(),
            "device": device.to_numpy(dtype=bool),
        }
    )


def _graph_costs(hosts: Sequence[tuple]) -> pd.DataFrame:
    """FLOPs and bytes of one run of each graph node, from the event file beside the
    timelines (``chrome_trace/graph_costs.py``), indexed by node name; empty without one."""
    for _, space in hosts:
        costs = space.extras.get("graph_op_costs") if space is not None else None
        if costs is not None and not costs.empty:
            return costs.drop_duplicates("name").set_index("name")
    return pd.DataFrame({"flops": [], "bytes": []})


def _op_db(ev: pd.DataFrame, costs: pd.DataFrame) -> ops.OpMetricsDb:
    if ev.empty:
        return ops.OpMetricsDb(ops.empty_ops())
    ev = ev.assign(time_ps=ev["end_ps"] - ev["begin_ps"])
    grouped = ev.groupby("name", sort=False).agg(
        category=("category", "first"), occurrences=("time_ps", "size"), time_ps=("time_ps", "sum")
    )
    spans = ev.groupby("key").agg(first=("begin_ps", "min"), last=("end_ps", "max"))
    op_time = int(grouped["time_ps"].sum())
    total = max(int((spans["last"] - spans["first"]).sum()), op_time)
    # One run's FLOPs and bytes per node (the traced step's shapes) times its runs.
    per_run = costs.reindex(grouped.index).fillna(0)
    occurrences = grouped["occurrences"].to_numpy()
    flops = per_run["flops"].to_numpy(dtype=np.int64) * occurrences
    frame = ops._ops_frame(
        name=grouped.index.to_numpy(dtype=object),
        category=grouped["category"].to_numpy(dtype=object),
        occurrences=occurrences,
        time_ps=grouped["time_ps"].to_numpy(),
        self_time_ps=grouped["time_ps"].to_numpy(),
        flops=flops,
        model_flops=flops,
        bytes_accessed=per_run["bytes"].to_numpy(dtype=np.int64) * occurrences,
    )
    frame = pd.concat([frame, ops._idle_row(total - op_time)], ignore_index=True)
    return ops.OpMetricsDb(frame, total_time_ps=total, total_op_time_ps=op_time)

"""Synchronizing time of the ranks of one span (torch-tb-profiler's "wait time").

A collective (an NCCL/Gloo op of the host) runs on every rank at once; the rank that
arrives first waits for the others inside its communication kernels. So for the i-th
collective of every rank and its j-th kernel, the shortest duration among the ranks is
taken as the real data transfer; on each rank that transfer is the last part of its
kernel (``[end - shortest, end)``) and the rest of the kernel is synchronizing. As in
torch-tb-profiler 0.4.3 (whose numbers we match), the op's own host span is its first
"kernel" range, followed by the kernels that carry its external id (Gloo ops have none;
Kineto gives NCCL kernels their own launch's id, so they are rarely found).

Per step of each rank: data transfer = the union of those transfer ranges, synchronizing
= the union of the kernels minus it. Collectives outside every step count under the step
``NO_STEP``. Matching needs the same number of collectives (and of kernels per collective)
on every rank; otherwise there is no wait time and ``WaitTime.problem`` says why.

Usage::

    w = wait_time([("rank0", space0), ("rank1", space1)])
    w.by_step     # worker, step, transfer_ps, synchronizing_ps (step "all" = mean)
    w.by_op       # worker, name, transfer_ps, latency_ps (unions over that op's calls)
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...common.memo import memoized
from ...xspace.model import Space
from . import events as E
from .overview import step_overview

NO_STEP = "outside steps"
ALL_STEPS = "all"


@dataclasses.dataclass
class WaitTime:
    by_step: pd.DataFrame  # worker, step, transfer_ps, synchronizing_ps
    by_op: pd.DataFrame  # worker, name, transfer_ps, latency_ps
    problem: Optional[str]  # why there is no wait time (None when there is)


def collectives(space: Space) -> tuple:
    """(nodes, kernels) of one rank: nodes = name, begin_ps, end_ps, step in time order;
    kernels = node, begin_ps, end_ps (its kernel ranges, ordered in each node)."""
    return memoized([space], "pytorch_collectives", lambda: _collectives(space))


def _collectives(space: Space) -> tuple:
    ev = E.trace_events(space)
    host = ev[np.isin(ev["type"], E.HOST_OP_TYPES + (E.PROFILER_STEP,))]
    ops = host[np.isin(host["name"], E.NCCL_OPS + E.GLOO_OPS)]
    # One collective per external id (a later op with the same id replaces the earlier one).
    ops = ops.drop_duplicates("external_id", keep="last")
    ops = ops.sort_values(["begin_ps", "end_ps"], ascending=[True, False], kind="stable")
    nodes = pd.DataFrame(
        {
            "name": ops["name"].to_numpy(dtype=object),
            "begin_ps": ops["begin_ps"].to_numpy(),
            "end_ps": ops["end_ps"].to_numpy(),
            "external_id": ops["external_id"].to_numpy(),
        }
    )
    nodes["step"] = _steps_of(nodes, step_overview(space).steps)
    own = pd.DataFrame(
        {"node": np.arange(len(nodes)), "begin_ps": nodes["begin_ps"].to_numpy(),
         "end_ps": nodes["end_ps"].to_numpy()}
    )  # fmt: skip
    parts = [own]
    nccl = np.isin(nodes["name"], E.NCCL_OPS) & nodes["external_id"].notna().to_numpy()
    if nccl.any():
        kernels = ev[ev["type"] == E.KERNEL]
        node_of = pd.Series(np.flatnonzero(nccl), index=nodes["external_id"][nccl].to_numpy())
        k = kernels[kernels["external_id"].isin(node_of.index).to_numpy()]
        parts.append(
            pd.DataFrame(
                {
                    "node": node_of.loc[k["external_id"]].to_numpy(),
                    "begin_ps": k["begin_ps"].to_numpy(),
                    "end_ps": k["end_ps"].to_numpy(),
                }
            )  # fmt: skip
        )
    ranges = pd.concat(parts, ignore_index=True)
    ranges = ranges.assign(neg_end=-ranges["end_ps"]).sort_values(
        ["node", "begin_ps", "neg_end"], kind="stable", ignore_index=True
    )
    return nodes, ranges.drop(columns="neg_end")


def _steps_of(nodes: pd.DataFrame, steps: pd.DataFrame) -> list:
    """The step holding each collective whole, walking both in time order (as torch-tb-
    profiler: a collective straddling a step boundary, and every one after the last step,
    belongs to no step)."""
    names = steps["step"].astype(str).tolist()
    sb, se = steps["begin_ps"].tolist(), steps["end_ps"].tolist()
    out = [NO_STEP] * len(nodes)
    index = 0
    for i, (b, e) in enumerate(zip(nodes["begin_ps"].tolist(), nodes["end_ps"].tolist())):
        while index < len(names):
            if b >= sb[index] and e <= se[index]:
                out[i] = names[index]
                break
            if b >= se[index]:
                index += 1
            else:
                break
        if index >= len(names):
            break
    return out


def wait_time(hosts: list) -> WaitTime:
    per_rank = [(worker, *collectives(space)) for worker, space in hosts]
    problem = _mismatch(per_rank)
    if problem is not None or not per_rank:
        # Typed even when empty: older pandas refuses arithmetic like round() on object columns.
        empty_step = _empty(["worker", "step"], ["transfer_ps", "synchronizing_ps"])
        empty_op = _empty(["worker", "name"], ["transfer_ps", "latency_ps"])
        return WaitTime(empty_step, empty_op, problem or "There are no ranks.")
    durations = np.stack([(r["end_ps"] - r["begin_ps"]).to_numpy() for _, _, r in per_rank])
    shortest = durations.min(axis=0)
    by_step: list = []
    by_op: list = []
    for worker, nodes, ranges in per_rank:
        node = ranges["node"].to_numpy()
        end = ranges["end_ps"].to_numpy()
        kernel = (ranges["begin_ps"].to_numpy(), end)
        real = (end - shortest, end)
        step = nodes["step"].to_numpy(dtype=object)[node]
        total = _union_by(step, *kernel)
        transfer = _union_by(step, *real)
        steps = list(dict.fromkeys(nodes["step"]))
        rows = [(worker, s, transfer[s], total[s] - transfer[s]) for s in steps if s in total]
        if rows:
            mean = np.mean([[t, w] for _, _, t, w in rows], axis=0)
            rows.append((worker, ALL_STEPS, float(mean[0]), float(mean[1])))
        by_step.extend(rows)
        name = nodes["name"].to_numpy(dtype=object)[node]
        latency, moved = _union_by(name, *kernel), _union_by(name, *real)
        by_op.extend((worker, n, moved[n], latency[n]) for n in dict.fromkeys(name))
    return WaitTime(
        pd.DataFrame(by_step, columns=["worker", "step", "transfer_ps", "synchronizing_ps"]),
        pd.DataFrame(by_op, columns=["worker", "name", "transfer_ps", "latency_ps"]),
        None,
    )


def _mismatch(per_rank: list) -> Optional[str]:
    """Why the ranks' collectives cannot be matched one to one (None when they can)."""
    if any(not len(nodes) for _, nodes, _ in per_rank):
        return "Some rank ran no collective (NCCL or Gloo op)."
    counts = [len(nodes) for _, nodes, _ in per_rank]
    if len(set(counts)) > 1:
        return f"The ranks ran different numbers of collectives ({counts}): they cannot be matched."
    kernels = [np.bincount(r["node"], minlength=counts[0]) for _, _, r in per_rank]
    if any((k != kernels[0]).any() for k in kernels[1:]):
        return "The ranks' collectives launched different numbers of kernels: no match."
    return None


def _union_by(keys: np.ndarray, begin: np.ndarray, end: np.ndarray) -> dict:
    """key -> length of the union of its [begin, end) ranges (ps)."""
    if not len(keys):
        return {}
    frame = pd.DataFrame({"key": keys, "begin": begin, "end": end})
    frame = frame.sort_values(["key", "begin"], kind="stable")
    reach = frame.groupby("key", sort=False)["end"].cummax()
    before = reach.groupby(frame["key"], sort=False).shift(1)
    # A range starts a new merged run when it begins after everything before it ended.
    new_run = before.isna() | (frame["begin"] > before)
    run = new_run.cumsum()
    merged = frame.groupby(run).agg(
        key=("key", "first"), begin=("begin", "min"), end=("end", "max")
    )
    length = (merged["end"] - merged["begin"]).groupby(merged["key"], sort=False).sum()
    return {k: float(v) for k, v in length.items()}


def _empty(text: list, numbers: list) -> pd.DataFrame:
    columns = {c: pd.Series(dtype=object) for c in text}
    columns.update({c: pd.Series(dtype=np.float64) for c in numbers})
    return pd.DataFrame(columns)

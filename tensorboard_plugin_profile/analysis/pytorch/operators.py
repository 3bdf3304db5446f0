"""Operator statistics of one PyTorch worker (torch-tb-profiler's Operator view).

Host activities (operators, ``python`` events, steps, collectives) nest per thread by time
(``kernels/nesting.py``). An operator whose only child is an operator of the same name is
merged with it, as the autograd profiler prints them: one call, the child's children
become its own. Host self time is an op's time minus its children's. Device time comes
from the kernels, memcpys and memsets whose ``External id`` is the op's (the op launched
them): self device time is that, total device time adds the op's descendants'.

Rows are operators (``cpu_op``) except ``DataParallel.forward``,
``DistributedDataParallel.forward`` and ``Optimizer.*``; grouped by name or by name and
input shapes (``Input Dims``). Tensor Core eligibility: the op is one that autocast runs on
Tensor Cores (``TENSOR_CORE_OPS``) or has an eligible child.

Two scopes say which calls count (``SCOPES``): ``all`` (the default, the Operator view)
counts every thread; ``main_thread_steps`` only the calls of the thread that marks the steps
(``ProfilerStep#N``) made inside a step, as torch-tb-profiler's diff view counts them
(docs/compare.md).

When call stacks were recorded (``with_stack=True``), ``call_stacks`` drills into one
operator (or one operator and input shape): the same figures per distinct call stack.

Usage::

    by_name = operator_stats(space)
    by_shape = operator_stats(space, by_input_shape=True)
    diff_like = operator_stats(space, scope=MAIN_THREAD_STEPS)
    stacks = call_stacks(space, "aten::mm", input_shape="[[2, 3], [3, 4]]")
"""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import pandas as pd

from ...common.errors import InvalidArgument, NotApplicable
from ...common.memo import memoized
from ...kernels.passes import dropping_stack
from ...xspace.model import Space
from . import events as E
from .kernels import uses_tensor_cores

ALL_THREADS, MAIN_THREAD_STEPS = "all", "main_thread_steps"
SCOPES = (ALL_THREADS, MAIN_THREAD_STEPS)
EXCLUDED_OPS = ("DataParallel.forward", "DistributedDataParallel.forward")
TENSOR_CORE_OPS = frozenset(
    """aten::_convolution aten::conv1d aten::conv2d aten::conv3d aten::conv_tbc
    aten::conv_transpose1d aten::conv_transpose2d aten::conv_transpose3d aten::convolution
    aten::cudnn_convolution aten::cudnn_convolution_transpose aten::prelu aten::addmm aten::addmv
    aten::addr aten::matmul aten::mm aten::mv aten::linear aten::addbmm aten::baddbmm aten::bmm
    aten::chain_matmul aten::linalg_multi_dot aten::_thnn_fused_lstm_cell
    aten::_thnn_fused_gru_cell aten::lstm_cell aten::gru_cell aten::rnn_tanh_cell
    aten::rnn_relu_cell CudnnConvolutionBackward BmmBackward0
    aten::cudnn_convolution_transpose_backward CudnnConvolutionTransposeBackward MmBackward
    aten::cudnn_convolution_backward_weight aten::addmm_ AddmvBackward MvBackward
    aten::cudnn_convolution_transpose_backward_weight
    aten::cudnn_convolution_transpose_backward_input AddmmBackward
    aten::cudnn_convolution_backward_input AddbmmBackward
    aten::cudnn_convolution_backward""".split()
)
_HOST_TREE_TYPES = (E.OPERATOR, E.PYTHON, E.PROFILER_STEP, E.USER_ANNOTATION)
_CALL_TYPES = (E.RUNTIME, E.LAUNCH)
COLUMNS = ("name", "input_shape", "calls", "device_self_us", "device_total_us",
           "host_self_us", "host_total_us", "tc_eligible", "tc_self_ratio", "tc_total_ratio",
           "has_call_stack")  # fmt: skip


def operator_nodes(space: Space) -> pd.DataFrame:
    """One row per operator call after merging (host and device times in ps)."""
    return memoized([space], "pytorch_operator_nodes", lambda: _nodes(E.trace_events(space)))


def operator_stats(
    space: Space, by_input_shape: bool = False, scope: str = ALL_THREADS
) -> pd.DataFrame:
    keys = ["name", "input_shape"] if by_input_shape else ["name"]
    nodes = operator_nodes(space)
    if scope == MAIN_THREAD_STEPS:
        nodes = nodes[in_main_thread_steps(space, nodes)]
    elif scope != ALL_THREADS:
        raise InvalidArgument(f"scope must be one of {', '.join(SCOPES)}; got {scope!r}.")
    return _aggregate(nodes, keys)


def in_main_thread_steps(space: Space, nodes: pd.DataFrame) -> np.ndarray:
    """Per operator call: whether it ran on the thread that marks the steps, inside a step
    (from its begin to its end). The steps of that thread do not overlap, so one binary
    search per call finds the step it may be in."""
    ev = _step_events(space)
    if ev.empty:
        raise NotApplicable(
            "This trace marks no steps (ProfilerStep#N), so the scope main_thread_steps "
            "counts nothing; use scope all (every thread)."
        )
    main = ev["tid"].iloc[0]
    steps = ev[(ev["tid"] == main).to_numpy()].sort_values("begin_ps", kind="stable")
    sb, se = steps["begin_ps"].to_numpy(), steps["end_ps"].to_numpy()
    begin, end = nodes["begin_ps"].to_numpy(), nodes["end_ps"].to_numpy()
    at = np.searchsorted(sb, begin, "right") - 1
    inside = (at >= 0) & (end <= se[np.maximum(at, 0)])
    return inside & (nodes["tid"].to_numpy() == main)


def _step_events(space: Space) -> pd.DataFrame:
    """The ``ProfilerStep#N`` events of one worker, by begin (the first one's thread marks
    the steps)."""
    ev = E.trace_events(space)
    return ev[(ev["type"] == E.PROFILER_STEP).to_numpy()]


def call_stacks(space: Space, name: str, input_shape: Optional[str] = None) -> pd.DataFrame:
    """The calls of one operator (and input shape) grouped by call stack: COLUMNS plus
    ``call_stack`` (frames separated by ``;`` as recorded, "" for calls without one)."""
    nodes = operator_nodes(space)
    mine = nodes["name"] == name
    if input_shape is not None:
        mine &= nodes["input_shape"] == input_shape
    keys = (
        ["name", "input_shape", "call_stack"] if input_shape is not None else ["name", "call_stack"]
    )
    return _aggregate(nodes[mine.to_numpy()], keys)


def _aggregate(nodes: pd.DataFrame, keys: list) -> pd.DataFrame:
    if nodes.empty:
        return pd.DataFrame({c: [] for c in COLUMNS + ("call_stack",)})
    g = nodes.groupby(keys, sort=False)
    out = g.agg(
        calls=("name", "size"),
        device_self=("device_self_ps", "sum"),
        device_total=("device_total_ps", "sum"),
        host_self=("host_self_ps", "sum"),
        host_total=("host_total_ps", "sum"),
        tc_self=("tc_self_ps", "sum"),
        tc_total=("tc_total_ps", "sum"),
        tc_eligible=("tc_eligible", "first"),
        has_call_stack=("has_call_stack", "any"),
    ).reset_index()
    for key in ("input_shape", "call_stack"):
        if key not in keys:
            out[key] = ""
    out = pd.DataFrame(
        {
            "name": out["name"],
            "input_shape": out["input_shape"],
            "calls": out["calls"],
            "device_self_us": out["device_self"] / 1e6,
            "device_total_us": out["device_total"] / 1e6,
            "host_self_us": out["host_self"] / 1e6,
            "host_total_us": out["host_total"] / 1e6,
            "tc_eligible": out["tc_eligible"].astype(bool),
            "tc_self_ratio": _ratio(out["tc_self"], out["device_self"]),
            "tc_total_ratio": _ratio(out["tc_total"], out["device_total"]),
            "has_call_stack": out["has_call_stack"].astype(bool),
            "call_stack": out["call_stack"],
        }
    )
    has_device = bool(out["device_self_us"].sum() > 0)
    sort = "device_self_us" if has_device else "host_self_us"
    return out.sort_values(sort, ascending=False, kind="stable", ignore_index=True)


def _ratio(a: pd.Series, b: pd.Series) -> np.ndarray:
    a, b = a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64)
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out


def _nodes(ev: pd.DataFrame) -> pd.DataFrame:
    # Only the columns the tree reads: the filter and the sort each copy what they carry.
    host = ev.loc[E.of_type(ev, _HOST_TREE_TYPES + _CALL_TYPES), _columns(ev, _HOST_COLUMNS)]
    host = host.sort_values(
        ["tid", "begin_ps", "end_ps"], ascending=[True, True, False], kind="stable"
    )
    host = host.reset_index(drop=True)
    begin, end = host["begin_ps"].to_numpy(), host["end_ps"].to_numpy()
    tid_codes = pd.factorize(host["tid"])[0]
    matched, parent = _tree(tid_codes, begin, end)
    kind = host["type"].to_numpy(dtype=object)
    names = host["name"].to_numpy(dtype=object)
    # Launch calls only say which op launched device work: not tree nodes of their own.
    is_call = E.of_type(host, _CALL_TYPES)
    is_operator = E.of_type(host, (E.OPERATOR,))
    call_parent = np.where(is_call, parent, -1)
    parent = np.where(is_call, -1, parent)
    alive, parent, owner = _merge_single_same_name_children(
        parent, is_operator, names, matched & ~is_call
    )
    launcher = np.where(call_parent >= 0, owner[np.maximum(call_parent, 0)], -1)
    dur = (end - begin).astype(np.int64)
    kept_child = alive & (parent >= 0)
    children = np.bincount(parent[kept_child], weights=dur[kept_child], minlength=len(host))
    self_dev, tc_self = _device_time(ev, host, launcher)
    depth = _depths(parent, alive)  # once: the three walks below share it
    total_dev = _subtree_sum(self_dev, parent, alive, depth)
    total_tc = _subtree_sum(tc_self, parent, alive, depth)
    eligible = _eligibility(names, kind, parent, alive, depth)
    excluded = E.per_distinct(names, lambda n: n.isin(EXCLUDED_OPS), bool)
    is_op = alive & is_operator & ~excluded
    is_op &= ~E.per_distinct(names, lambda n: n.astype(object).str.startswith("Optimizer."), bool)
    stacks = host["call_stack"].to_numpy(dtype=object)
    rows = np.flatnonzero(is_op)
    out = pd.DataFrame(
        {
            "name": names[rows],
            # Where the call ran (the scope and code views nest it in its callers).
            "tid": host["tid"].to_numpy()[rows],
            "begin_ps": begin[rows],
            "end_ps": end[rows],
            "input_shape": _shape_text(host["input_dims"].to_numpy(dtype=object)[rows]),
            "host_total_ps": dur[rows],
            "host_self_ps": dur[rows] - np.rint(children[rows]).astype(np.int64),
            "device_self_ps": self_dev[rows],
            "device_total_ps": total_dev[rows],
            "tc_self_ps": tc_self[rows],
            "tc_total_ps": total_tc[rows],
            "tc_eligible": eligible[rows],
            "call_stack": pd.Series(stacks[rows], dtype=object).fillna("").to_numpy(dtype=object),
        }
    )
    return out.assign(has_call_stack=out["call_stack"].str.len() > 0)


def _tree(line: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple:
    """(kept, parent) of host activities sorted by (line, begin, longest first).

    torch-tb-profiler's stack per thread: on a line where some activity ends after its
    enclosing one (partial overlap), it keeps the enclosing one and drops the overlapping
    activity. One compiled pass over every line (``kernels/passes.py``); identical
    activities (same begin and end, common in PyTorch) no longer send a whole thread to a
    Python loop.
    """
    return dropping_stack(line, begin, end)


def _merge_single_same_name_children(parent, is_operator, names, matched) -> tuple:
    """Drops an operator that is the only child of a same-named operator (its children move up).

    Returns (alive, parent, absorber): absorber is each node itself, or for a dropped node
    the surviving node that took it over (its device work counts there).
    """
    alive = matched.copy()
    n = len(parent)
    parent = np.where(matched[np.maximum(parent, 0)], parent, -1)
    absorber = np.arange(n)
    while True:
        has_parent = alive & (parent >= 0)
        counts = np.bincount(parent[has_parent], minlength=n)
        p = np.where(has_parent, parent, 0)
        merge = has_parent & (counts[p] == 1) & is_operator & is_operator[p] & (names == names[p])
        if not merge.any():
            while True:  # merged nodes answer to the surviving node that absorbed them
                up = ~alive[absorber] & (absorber[absorber] != absorber)
                if not up.any():
                    return alive, parent, absorber
                absorber = np.where(up, absorber[absorber], absorber)
        absorber = np.where(merge, parent, absorber)
        alive &= ~merge
        # Children of a merged node now hang from its parent (chains resolve in one pass).
        for _ in range(64):
            up = (parent >= 0) & ~alive[np.maximum(parent, 0)] & merge[np.maximum(parent, 0)]
            if not up.any():
                break
            parent = np.where(up, parent[np.maximum(parent, 0)], parent)
        parent = np.where(merge, -1, parent)


def _device_time(ev: pd.DataFrame, host: pd.DataFrame, launcher: np.ndarray) -> tuple:
    """Per host node: device time (ps) of the work it launched itself, and of its Tensor Core part.

    Device work joins its launch call by correlation id; the call's innermost enclosing
    host activity on its thread (``launcher``) launched it.
    """
    n = len(host)
    dev = ev.loc[E.of_type(ev, E.DEVICE_TYPES), _columns(ev, _DEVICE_COLUMNS)]
    dev = dev.dropna(subset=["correlation"])
    self_dev, tc = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    if dev.empty or not n:
        return self_dev, tc
    calls = pd.DataFrame({"correlation": host["correlation"], "row": launcher})
    calls = calls[calls["correlation"].notna() & (calls["row"] >= 0)]
    calls = calls.drop_duplicates("correlation", keep="last")
    joined = dev.merge(calls, on="correlation")
    rows = joined["row"].to_numpy()
    durations = (joined["end_ps"] - joined["begin_ps"]).to_numpy()
    names, codes = np.unique(joined["name"].to_numpy(dtype=object), return_inverse=True)
    tc_kernel = uses_tensor_cores(names)[codes] & (
        joined["type"].to_numpy(dtype=object) == E.KERNEL
    )
    np.add.at(self_dev, rows, durations)
    np.add.at(tc, rows, np.where(tc_kernel, durations, 0))
    return self_dev, tc


_HOST_COLUMNS = ("tid", "begin_ps", "end_ps", "type", E.TYPE_CODE, "name", "correlation",
                 "input_dims", "call_stack")  # fmt: skip
_DEVICE_COLUMNS = ("correlation", "begin_ps", "end_ps", "type", E.TYPE_CODE, "name")


def _columns(ev: pd.DataFrame, wanted: tuple) -> list:
    return [c for c in wanted if c in ev.columns]


def _depths(parent: np.ndarray, alive: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), dtype=np.int64)
    current = np.where(alive, parent, -1)
    while (current >= 0).any():
        depth += current >= 0
        current = np.where(current >= 0, parent[np.maximum(current, 0)], -1)
    return depth


def _subtree_sum(
    values: np.ndarray, parent: np.ndarray, alive: np.ndarray, depth: np.ndarray
) -> np.ndarray:
    """Per node: its value plus its descendants' (one pass per tree level, deepest first)."""
    total = values.astype(np.int64).copy()
    for level in range(int(depth.max(initial=0)), 0, -1):
        rows = np.flatnonzero(alive & (depth == level) & (parent >= 0))
        np.add.at(total, parent[rows], total[rows])
    return total


def _eligibility(names, kind, parent, alive, depth) -> np.ndarray:
    # Once per distinct name: np.isin over every operator's name object took 0.25 s at 250 MB.
    eligible = E.per_distinct(names, lambda n: n.isin(TENSOR_CORE_OPS), bool)
    for level in range(int(depth.max(initial=0)), 0, -1):
        rows = np.flatnonzero(alive & (depth == level) & (parent >= 0) & eligible)
        targets = parent[rows]
        eligible[targets[kind[targets] == E.OPERATOR]] = True
    return eligible


def _shape_text(dims: np.ndarray) -> np.ndarray:
    """Input shapes as Python prints the list (torch-tb-profiler's key), once per distinct text."""
    texts = pd.Series(dims, dtype=object).fillna("[]").to_numpy(dtype=object)
    if not len(texts):
        return texts.astype(str)
    # Distinct texts by hashing the str objects: a fixed-width numpy copy (``astype(str)``)
    # took rows x the longest text x 4 bytes, twice for its sort: +410 MB of peak RSS on a
    # 219 MB trace.
    codes, uniques = pd.factorize(texts)
    # numpy's str copy dropped trailing NULs; kept so that every shape reads as before.
    shown = [str(_loads(str(u).rstrip("\x00"))) for u in uniques]
    return np.asarray(shown, dtype=object)[codes]


def _loads(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text

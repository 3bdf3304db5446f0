"""Op records of a PyTorch trace: operator calls with their scope path and Python stack.

The op-type, scope and code views read one table of op records (``analysis/ops/attribution``).
For PyTorch it comes from the operator calls of the Operator view (``operator_nodes``), so
per operator name the numbers are the Operator view's: calls, host self time, device self
time (the kernels, memcpys and memsets the call launched).

Each call is nested, on its thread, in what encloses it:

- **scopes**: the operators it runs inside (``aten::linear`` → ``aten::addmm``), the
  operators the Operator view leaves out (``Optimizer.step#SGD.step``,
  ``DistributedDataParallel.forward``), ``record_function`` annotations and ``nn.Module``
  frames (``python_function`` events named ``nn.Module: Linear_0``, recorded with
  ``with_modules=True``); ``ProfilerStep#N`` is time, not model structure, and is left out;
- **frames**: the other ``python_function`` events (``train.py(12): step``, recorded with
  ``with_stack=True``), caller first.

A call makes one ``Host`` record (occurrences = calls, self = host self time, bytes = what
it allocated itself: the positive ``[memory]`` instants of ``profile_memory=True`` whose
innermost enclosing call it is) and, when it launched device work, one ``Device`` record
(occurrences 0, so a type's occurrences stay its calls; self = device self time).
Records are summed per (operator, scope, frames): string work is per distinct path, never
per call.

Usage::

    records = pytorch_records(space)    # attribution.RECORD_COLUMNS
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...chrome_trace.memory import MEMORY_EVENT
from ...common.memo import memoized
from ...kernels.nesting import nest
from ...xspace.model import Space
from ..chrome_events import events_of
from . import events as E
from .operators import EXCLUDED_OPS, operator_nodes

MODULE_PREFIX = "nn.Module: "
_PYTHON_CATEGORIES = ("python_function", "python")
_SCOPE, _FRAME, _CALL, _MEMORY = 0, 1, 2, 3
# profile_memory=True: an instant per allocation (positive) or free, on the allocating thread.
MEMORY_BYTES = "Bytes"


def pytorch_records(space: Space) -> pd.DataFrame:
    """The op records of one PyTorch worker (computed once per decoded Space)."""
    return memoized([space], "pytorch_op_records", lambda: _records(space))


def has_python_functions(space: Space) -> bool:
    """Whether the trace recorded Python call sites (``python_function`` frames)."""
    ctx = _context(space)
    return bool((ctx["kind"] == _FRAME).any())


def _context(space: Space) -> pd.DataFrame:
    """Host events that enclose operator calls without being rows of the Operator view."""
    return memoized([space], "pytorch_op_context", lambda: _context_events(space))


def _context_events(space: Space) -> pd.DataFrame:
    ev = events_of(space, numbers=(MEMORY_BYTES,))
    # String tests once per distinct name and category, then spread to events by code.
    name_code, names = pd.factorize(ev["name"].astype(object))
    cat_code, cats = pd.factorize(ev["cat"].astype(object))
    names = pd.Series(names, dtype=object).astype(str)
    cats = pd.Series(cats, dtype=object).astype(str).str.lower()
    is_op = cats.isin(("cpu_op", "operator")).to_numpy()[cat_code]
    left_out = (names.isin(EXCLUDED_OPS) | names.str.startswith("Optimizer.")).to_numpy()
    annotation = cats.eq("user_annotation").to_numpy()[cat_code]
    annotation &= ~names.str.startswith(E.STEP_PREFIX).to_numpy()[name_code]
    python = cats.isin(_PYTHON_CATEGORIES).to_numpy()[cat_code]
    is_module = names.str.startswith(MODULE_PREFIX).to_numpy()
    module = python & is_module[name_code]
    allocation = names.eq(MEMORY_EVENT).to_numpy()[name_code]
    allocation &= ev[MEMORY_BYTES].fillna(0).to_numpy() > 0
    keep = (is_op & left_out[name_code]) | annotation | python | allocation
    shown = names.where(~is_module, names.str.slice(len(MODULE_PREFIX))).to_numpy(dtype=object)
    kind = np.where(allocation, _MEMORY, np.where(python & ~module, _FRAME, _SCOPE))
    chosen = ev[keep]
    return pd.DataFrame(
        {
            "name": shown[name_code[keep]],
            "tid": chosen["tid"].to_numpy(),
            "begin_ps": chosen["begin_ps"].to_numpy(dtype=np.int64),
            "end_ps": chosen["end_ps"].to_numpy(dtype=np.int64),
            "kind": kind[keep],
            "bytes": chosen[MEMORY_BYTES].fillna(0).to_numpy(dtype=np.int64),
        }
    )


def _records(space: Space) -> pd.DataFrame:
    from ..ops.attribution import DEVICE, HOST, RECORD_COLUMNS

    calls = operator_nodes(space)
    if calls.empty:
        return pd.DataFrame({c: [] for c in RECORD_COLUMNS})
    ctx = _context(space)
    acts = pd.concat(
        [
            ctx,
            pd.DataFrame(
                {
                    "name": calls["name"].to_numpy(dtype=object),
                    "tid": calls["tid"].to_numpy(),
                    "begin_ps": calls["begin_ps"].to_numpy(dtype=np.int64),
                    "end_ps": calls["end_ps"].to_numpy(dtype=np.int64),
                    "kind": _CALL,
                    "bytes": 0,
                    "call": np.arange(len(calls)),
                }
            ),
        ],
        ignore_index=True,
    )
    acts["call"] = acts["call"].fillna(-1).astype(np.int64)
    parent = _parents(acts)
    scope_key, scope_of = _chains(acts, parent, _SCOPE_MEMBERS)
    frames_key, frames_of = _chains(acts, parent, (_FRAME,))
    is_call = (acts["kind"] == _CALL).to_numpy()
    at = np.empty(len(calls), dtype=np.int64)
    at[acts["call"].to_numpy()[is_call]] = np.flatnonzero(is_call)
    table = calls.assign(
        scope_id=scope_key[at], frames_id=frames_key[at], bytes=_allocated(acts, parent, at)
    )
    grouped = table.groupby(["name", "scope_id", "frames_id"], sort=False, as_index=False).agg(
        calls=("name", "size"),
        host_total=("host_total_ps", "sum"),
        host_self=("host_self_ps", "sum"),
        device_total=("device_total_ps", "sum"),
        device_self=("device_self_ps", "sum"),
        allocated=("bytes", "sum"),
    )
    names = grouped["name"].tolist()
    scope = [scope_of(s) + (n,) for s, n in zip(grouped["scope_id"].tolist(), names)]
    stack = [frames_of(f) for f in grouped["frames_id"].tolist()]
    host = pd.DataFrame(
        {
            "side": HOST,
            "name": ["/".join(s) for s in scope],
            "type": names,
            "scope": scope,
            "frames": stack,
            "occurrences": grouped["calls"].to_numpy(dtype=np.int64),
            "time_ps": grouped["host_total"].to_numpy(dtype=np.int64),
            "self_time_ps": grouped["host_self"].to_numpy(dtype=np.int64),
            "bytes": grouped["allocated"].to_numpy(dtype=np.int64),
        }
    )
    launched = (grouped["device_self"] > 0).to_numpy()
    device = host[launched].assign(
        side=DEVICE,
        occurrences=np.int64(0),
        time_ps=grouped["device_total"].to_numpy(dtype=np.int64)[launched],
        self_time_ps=grouped["device_self"].to_numpy(dtype=np.int64)[launched],
        bytes=np.int64(0),  # allocations count once, on the Host record
    )
    return pd.concat([host, device], ignore_index=True)[list(RECORD_COLUMNS)]


_SCOPE_MEMBERS = (_SCOPE, _CALL)


def _chains(acts: pd.DataFrame, parent: np.ndarray, members: tuple) -> tuple:
    """Per activity the id of the chain of members enclosing it (-1: none), and id -> names.

    Chains are built once per distinct chain (``stack_keys``), never per call.
    """
    from ..ops.attribution import nearest_ancestor, stack_keys

    is_member = np.isin(acts["kind"].to_numpy(), members)
    caller = nearest_ancestor(parent, is_member)
    stack_id, stacks = stack_keys(caller, is_member, acts["name"].to_numpy(dtype=object))
    key = np.where(caller >= 0, stack_id[np.maximum(caller, 0)], -1)
    return key, lambda k: stacks[k] if k >= 0 else ()


def _allocated(acts: pd.DataFrame, parent: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per call (``at``: its activity): bytes allocated while it was the innermost call."""
    from ..ops.attribution import nearest_ancestor

    kind = acts["kind"].to_numpy()
    owner = nearest_ancestor(parent, kind == _CALL)
    alloc = np.flatnonzero((kind == _MEMORY) & (owner >= 0))
    per_activity = np.zeros(len(acts), dtype=np.int64)
    np.add.at(per_activity, owner[alloc], acts["bytes"].to_numpy(dtype=np.int64)[alloc])
    return per_activity[at]


def _parents(acts: pd.DataFrame) -> np.ndarray:
    """Per activity the one enclosing it on its thread (-1: none or not well nested)."""
    tid = pd.factorize(acts["tid"])[0]
    begin, end = acts["begin_ps"].to_numpy(), acts["end_ps"].to_numpy()
    # Per thread by time; on equal begins the longer first, context before calls.
    order = np.lexsort((acts["kind"].to_numpy(), -end, begin, tid))
    result = nest(tid[order], begin[order], end[order], np.arange(len(order)))
    up = np.where(result.matched, result.parent, -1)
    up = np.where((up >= 0) & result.matched[np.maximum(up, 0)], up, -1)
    parent = np.full(len(order), -1, dtype=np.int64)
    parent[order] = np.where(up >= 0, order[np.maximum(up, 0)], -1)
    return parent

"""The events of one PyTorch trace, classified as torch-tb-profiler classified them.

Types come from the Kineto category (``cat``): ``kernel``; ``gpu_memcpy``/``memcpy``;
``gpu_memset``/``memset``; ``runtime``; operators (``cpu_op``/``operator``) and ``python``;
``ProfilerStep#N`` annotations or operators are steps. Like torch-tb-profiler 0.4.3 (whose
numbers we match, docs/differences.md), ``cuda_runtime`` calls are not runtime events and
user annotations count only as steps or NCCL/Gloo collectives. Times stay integer
picoseconds; the args the analyses read become columns.

Usage::

    ev = trace_events(space)
    ev[ev["type"] == KERNEL]
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ...common.identity import group_by_identity, row_pointers
from ...common.memo import memoized
from ...xspace.model import Space
from ..chrome_events import events_of

KERNEL, MEMCPY, MEMSET, RUNTIME = "Kernel", "Memcpy", "Memset", "Runtime"
OPERATOR, PYTHON, USER_ANNOTATION = "Operator", "Python", "UserAnnotation"
PROFILER_STEP, TRACE = "ProfilerStep", "Trace"
# Launch calls torch-tb-profiler 0.4.3 did not count as Runtime (cuda_runtime, ...): kept to
# tie device work to the operator that launched it, never part of the step breakdown.
LAUNCH = "Launch"
DEVICE_TYPES = (KERNEL, MEMCPY, MEMSET)
HOST_OP_TYPES = (OPERATOR, PYTHON, USER_ANNOTATION)

_LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver", "mtia_runtime", "glow_runtime",
                      "xpu_runtime", "privateuse1_runtime")  # fmt: skip
_TYPE_OF_CATEGORY = {
    **{cat: LAUNCH for cat in _LAUNCH_CATEGORIES},
    "trace": TRACE,
    "cpu_op": OPERATOR,
    "operator": OPERATOR,
    "runtime": RUNTIME,
    "kernel": KERNEL,
    "memcpy": MEMCPY,
    "gpu_memcpy": MEMCPY,
    "memset": MEMSET,
    "gpu_memset": MEMSET,
    "python": PYTHON,
    "user_annotation": USER_ANNOTATION,
    "gpu_user_annotation": USER_ANNOTATION,
}
# The types as small codes (0: ignored): the ``type_code`` column of ``trace_events``.
_TYPES = np.array([None, *dict.fromkeys(_TYPE_OF_CATEGORY.values()), PROFILER_STEP], object)
_CODE_OF_TYPE = {t: i for i, t in enumerate(_TYPES) if t is not None}
TYPE_CODE = "type_code"
STEP_PREFIX = "ProfilerStep#"
NCCL_OPS = (
    "nccl:broadcast",
    "nccl:reduce",
    "nccl:all_reduce",
    "nccl:all_gather",
    "nccl:reduce_scatter",
)
GLOO_OPS = (
    "gloo:broadcast",
    "gloo:reduce",
    "gloo:all_reduce",
    "gloo:all_gather",
    "gloo:reduce_scatter",
)

NUMBERS = (
    "External id",
    "external id",
    "correlation",
    "device",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
    "registers per thread",
    "shared memory",
)
STRINGS = ("grid", "block", "Input Dims", "Input dims", "Input type", "Call stack")


def trace_events(space: Space) -> pd.DataFrame:
    """Classified events of one worker, computed once per decoded Space."""
    return memoized([space], "pytorch_events", lambda: _classify(space))


def _classify(space: Space) -> pd.DataFrame:
    ev = events_of(space, numbers=NUMBERS, strings=STRINGS)
    code = _kind_codes(ev["cat"].to_numpy(dtype=object), ev["name"].to_numpy(dtype=object))
    kind = _TYPES[code]
    ext = ev["External id"].where(ev["External id"].notna(), ev["external id"])
    # Kept rows in start order (torch-tb-profiler's, a stable sort of file order), taken
    # once per column: filtering and then sorting the frame copied every column twice.
    kept = np.flatnonzero(code != 0)
    order = kept[np.argsort(ev["begin_ps"].to_numpy()[kept], kind="stable")]
    columns = {
        "type": kind,
        "name": ev["name"].to_numpy(dtype=object),
        "plane": ev["plane"].to_numpy(),
        "tid": ev["tid"].to_numpy(),
        "begin_ps": ev["begin_ps"].to_numpy(),
        "end_ps": ev["end_ps"].to_numpy(),
        "external_id": ext.to_numpy(),
        "correlation": ev["correlation"].to_numpy(),
        "device": ev["device"].to_numpy(),
        "blocks_per_sm": ev["blocks per SM"].to_numpy(),
        "warps_per_sm": ev["warps per SM"].to_numpy(),
        "occupancy": ev["est. achieved occupancy %"].to_numpy(),
        "registers": ev["registers per thread"].to_numpy(),
        "shared_memory": ev["shared memory"].to_numpy(),
        "grid": ev["grid"].to_numpy(),
        "block": ev["block"].to_numpy(),
        "input_dims": ev["Input Dims"].where(ev["Input Dims"].notna(), ev["Input dims"]),
        "input_type": ev["Input type"].to_numpy(),
        "call_stack": ev["Call stack"].to_numpy(),
        TYPE_CODE: code,
    }
    return pd.DataFrame({name: _take(col, order) for name, col in columns.items()})


def _take(column, order: np.ndarray):
    if isinstance(column, pd.Series):  # keeps its dtype, as the frame kept it
        return column.take(order).reset_index(drop=True)
    return column[order]


def of_type(ev: pd.DataFrame, types: Sequence[str]) -> np.ndarray:
    """Per row of ``ev`` (``trace_events`` or rows of it): whether its type is one of
    ``types``, read from the int8 type codes through a small table (``np.isin`` over the
    type strings compared every event's string object with each type: ~0.06 s a call at
    250 MB, and the overview and operator table made a dozen such calls)."""
    if TYPE_CODE not in ev.columns:  # a frame made elsewhere: by the strings
        return np.isin(ev["type"].to_numpy(dtype=object), list(types))
    wanted = np.zeros(len(_TYPES), dtype=bool)
    wanted[[_CODE_OF_TYPE[t] for t in types]] = True
    return wanted[ev[TYPE_CODE].to_numpy()]


def _kinds(cats: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Per event: its type (None where the analyses ignore it)."""
    return _TYPES[_kind_codes(cats, names)]


def _kind_codes(cats: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Per event: the index of its type in ``_TYPES`` (0: ignored), from per-distinct tests
    spread back by small integer codes: no comparison of string objects per event."""
    cat_codes, cat_uniques = _factorize_objects(cats)
    of_cat = pd.Series(cat_uniques).str.lower().map(_TYPE_OF_CATEGORY).to_numpy(dtype=object)
    index = _CODE_OF_TYPE
    code = np.array([index.get(k, 0) if isinstance(k, str) else 0 for k in of_cat], np.int8)
    code = code[cat_codes] if len(cat_codes) else np.zeros(0, np.int8)
    name_codes, name_uniques = _factorize_objects(names)
    distinct = pd.Series(name_uniques, dtype=object)
    is_step_name = distinct.str.startswith(STEP_PREFIX).to_numpy(dtype=bool)[name_codes]
    is_comm = distinct.isin(NCCL_OPS + GLOO_OPS).to_numpy(dtype=bool)[name_codes]
    step_kinds = (code == index[OPERATOR]) | (code == index[USER_ANNOTATION])
    code[step_kinds & is_step_name] = index[PROFILER_STEP]
    code[(code == index[USER_ANNOTATION]) & ~is_comm] = 0
    return code


def per_distinct(values: np.ndarray, test: Callable[[pd.Series], pd.Series], dtype) -> np.ndarray:
    """``test`` run on each distinct value once and spread back to every value: string work
    once per distinct name or category, not once per event (a trace holds millions of
    events and a few thousand names)."""
    codes, uniques = _factorize_objects(values)
    return test(pd.Series(uniques)).to_numpy(dtype=dtype)[codes]


def _factorize_objects(values) -> tuple:
    """Codes and one object per code, by object identity: a row of an object column is a
    pointer, and the decoder interns each distinct text once, so hashing the pointers as
    integers finds the distinct names at a fraction of hashing the strings (0.29 s of a
    250 MB trace's two first requests). Equal strings that are separate objects get codes
    of their own, which a test run per value answers alike."""
    flat = np.asarray(values)
    if flat.dtype != object or flat.ndim != 1 or not flat.size:
        return pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    flat = np.ascontiguousarray(flat)
    pointers = row_pointers(flat)
    missing = pd.isna(flat)  # None and NaN are one value, NaN, as pd.factorize makes them
    if missing.any():
        pointers = pointers.copy()
        pointers[missing] = pointers[np.argmax(missing)]
    codes, one_row_each = group_by_identity(flat, pointers)
    uniques = flat[one_row_each]
    if missing.any():
        uniques[pd.isna(uniques)] = np.nan
    return codes, pd.Index(uniques, dtype=object)  # as pd.factorize gives them


def step_numbers(names) -> np.ndarray:
    return pd.Series(names, dtype=object).str.slice(len(STEP_PREFIX)).to_numpy(dtype=object)

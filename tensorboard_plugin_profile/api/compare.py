"""Compare two runs: a baseline and an experiment, value by value (docs/compare.md).

A comparison is built on top of each tool's own answer: both sides are asked of the
service exactly as the page asks them (same caches, both at once), read as DataFrames
(``tables.table_frame``), and joined with one pandas merge on the tool's alignment key.
So every baseline and experiment value in a comparison is, by construction, a value the
run's own tool answers alone; the comparison adds only ``delta`` and ``delta_pct``.

- Row tools (op tables, kernels, HLO ops, the op_profile tree, memory peaks) align rows on
  ``Spec.keys``; a row found on one side only is ``added`` (experiment only) or
  ``removed`` (baseline only), the others ``common``.
- Step tools (overview, input pipeline, PyTorch overview) compare the step time and each
  part of its breakdown: the average step, or a chosen step on each side.

``delta = experiment - baseline`` (a missing side counts as 0), ``delta_pct = delta /
baseline * 100`` (empty when the baseline is 0 or missing).

Usage::

    frame = compare_runs(Side(service, "base_run"), Side(service, "exp_run"), "framework_op_stats")
    frame.attrs["summary"]      # "total self time 95.7 -> 72.1 ms (-24.7%); the largest ..."
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import re
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ..analysis.pytorch.operators import ALL_THREADS, SCOPES
from ..common.errors import InvalidArgument, NotApplicable, NotFound
from ..service import ProfileService
from .compare_table import BASE, DELTA, DELTA_PCT, EXP
from .tables import table_frame, tables_of

ADDED, REMOVED, COMMON = "added", "removed", "common"
DUPLICATE = "duplicate"  # the n-th row of one key on one side, when a key repeats
_PROGRAM_ID = re.compile(r"\(\d+\)$")
_MODULE_ID = re.compile(r"\((\d+)\)$")
SUMMARY_CHANGES = 3
NAME_CHARS = 60


@dataclasses.dataclass(frozen=True)
class Side:
    """One side of a comparison: a run of a service, optionally one host and one step."""

    service: ProfileService
    run: str
    host: Optional[str] = None
    step: Optional[str] = None
    role: str = "experiment"
    scope: Optional[str] = None  # which calls pytorch_operators counts (SCOPES)

    def answer(self, tool: str) -> Any:
        params = {"run": self.run}
        if self.scope:
            params["scope"] = self.scope
        try:
            result = self.service.tool_data(self.run, tool, host=self.host, params=params)
        except NotApplicable as e:
            raise NotApplicable(f"The {self.role} run {self.run!r}: {e.message}") from None
        except InvalidArgument as e:
            which = "base_host" if self.role == "baseline" else "host"
            raise InvalidArgument(
                f"The {self.role} run {self.run!r}: {e.message.rstrip('.')} (parameter {which})."
            ) from None
        parsed = result.json()
        if parsed is None:
            raise InvalidArgument(f"Tool {tool} streams its answer; it cannot be compared.")
        return parsed


@dataclasses.dataclass(frozen=True)
class Spec:
    """How one tool's answer becomes comparable rows: ``frame`` reads them from the tool's
    parsed JSON, ``keys`` align them, ``values`` are compared (the first one sorts and
    summarises)."""

    keys: tuple
    values: tuple
    frame: Callable[[Any], pd.DataFrame]
    what: str  # the first value in the user's words, for the summary
    additive: bool = True  # the first value sums over rows (not a tree of inclusive times)


def _table(index: int) -> Callable[[Any], pd.DataFrame]:
    return lambda answer: table_frame(tables_of(answer)[index])


def _step_table(answer: Any) -> pd.DataFrame:
    for table in tables_of(answer):
        frame = table_frame(table)
        if "stepnum" in frame.columns or "step" in frame.columns:
            return frame
    raise NotApplicable("This profile marks no steps; there is no step time to compare.")


def _program_name(module: str) -> str:
    """``jit_train_step(32)`` -> ``jit_train_step``: the id changes from run to run."""
    return _PROGRAM_ID.sub("", module)


def _with_program_names(frame: pd.DataFrame, side: Side) -> pd.DataFrame:
    """HLO stats rows with ``program``: the name of the program their ``program_id`` names."""
    names = {}
    for module in side.service.module_list(side.run):
        match = _MODULE_ID.search(module)
        if match:
            names[match.group(1)] = _program_name(module)
    ids = frame["program_id"].astype("string").fillna("")
    return frame.assign(program=ids.map(names).fillna(ids).astype("string"))


def _op_profile_rows(answer: Any) -> pd.DataFrame:
    """The op_profile tree (by program) as one row per node, keyed by its path of names."""
    paths, times, occurrences, flops = [], [], [], []
    root = answer.get("byProgram") if isinstance(answer, dict) else None
    stack = [(child, "") for child in reversed((root or {}).get("children") or [])]
    while stack:
        node, parent = stack.pop()
        name = str(node.get("name", ""))
        path = f"{parent}/{name}" if parent else _program_name(name)
        metrics = node.get("metrics") or {}
        paths.append(path)
        times.append(float(metrics.get("rawTime") or 0) / 1e6)  # ps -> us
        occurrences.append(float(metrics.get("occurrences") or 0))
        flops.append(float(metrics.get("rawFlops") or 0))
        stack.extend((child, path) for child in reversed(node.get("children") or []))
    return pd.DataFrame(
        {
            "path": pd.array(paths, dtype="string"),
            "time_us": np.array(times, dtype=np.float64),
            "occurrences": np.array(occurrences, dtype=np.float64),
            "flops": np.array(flops, dtype=np.float64),
        }
    )


def _memory_peaks(answer: Any) -> pd.DataFrame:
    """memory_profile's peak figures, one row per allocator (bytes)."""
    allocators, peak, stack, heap, capacity = [], [], [], [], []
    for name, profile in sorted(((answer or {}).get("memoryProfilePerAllocator") or {}).items()):
        summary = profile.get("profileSummary") or {}
        stats = summary.get("peakStats") or {}
        allocators.append(name)
        peak.append(float(stats.get("peakBytesInUse") or 0))
        stack.append(float(stats.get("stackReservedBytes") or 0))
        heap.append(float(stats.get("heapAllocatedBytes") or 0))
        capacity.append(float(summary.get("memoryCapacity") or 0))
    return pd.DataFrame(
        {
            "allocator": pd.array(allocators, dtype="string"),
            "peak_bytes_in_use": np.array(peak, dtype=np.float64),
            "peak_heap_allocated_bytes": np.array(heap, dtype=np.float64),
            "peak_stack_reserved_bytes": np.array(stack, dtype=np.float64),
            "memory_capacity_bytes": np.array(capacity, dtype=np.float64),
        }
    )


_OP_TREE = Spec(
    ("path",),
    ("self_time_us", "total_time_us", "occurrences_run"),
    _table(0),
    "self time (us)",
)
ROW_TOOLS = {
    "framework_op_stats": Spec(
        ("host_or_device", "type", "operation"),
        ("total_self_time_us", "total_time_us", "occurrences", "avg_self_time_us"),
        _table(0),
        "total self time (us)",
    ),
    "pytorch_operators": Spec(
        ("name",),
        ("device_self_us", "device_total_us", "host_self_us", "host_total_us", "calls"),
        _table(0),
        "device self time (us)",
    ),
    "kernel_stats": Spec(
        ("kernel_name", "block_dim", "grid_dim"),
        ("total_duration_us", "occurrences", "avg_duration_us"),
        _table(0),
        "kernel time (us)",
    ),
    "pytorch_kernels": Spec(
        ("name",), ("total_us", "calls", "mean_us"), _table(0), "kernel time (us)"
    ),
    "hlo_stats": Spec(
        ("program", "hlo_op_name"),
        ("total_self_time_us", "total_time_us", "occurrences", "avg_self_time_us"),
        _table(0),
        "total self time (us)",
    ),
    "op_types": _OP_TREE,
    "scope_view": _OP_TREE,
    "op_profile": Spec(
        ("path",), ("time_us", "occurrences", "flops"), _op_profile_rows, "time (us)", False
    ),
    "memory_profile": Spec(
        ("allocator",),
        (
            "peak_bytes_in_use",
            "peak_heap_allocated_bytes",
            "peak_stack_reserved_bytes",
            "memory_capacity_bytes",
        ),
        _memory_peaks,
        "peak memory (bytes)",
    ),
    "tensor_memory": Spec(
        ("allocator",),
        ("peak_bytes", "counter_peak_bytes", "live_tensors"),
        _table(0),
        "peak of live tensors (bytes)",
    ),
    "pytorch_memory": Spec(
        ("device",),
        ("peak_allocated_bytes", "peak_reserved_bytes"),
        _table(0),
        "peak allocated memory (bytes)",
    ),
}
STEP_TOOLS = ("overview_page", "input_pipeline_analyzer", "pytorch_overview")
COMPARABLE = tuple(sorted(set(ROW_TOOLS) | set(STEP_TOOLS)))
SCOPED_TOOLS = ("pytorch_operators",)  # the tools that take ``scope``


def compare_runs(base: Side, exp: Side, tool: str, scope: Optional[str] = None) -> pd.DataFrame:
    """The comparison of ``tool`` between two runs (see the module docstring). ``scope``
    (``pytorch_operators`` only, both sides): ``all`` threads (the default) or
    ``main_thread_steps``, as torch-tb-profiler's diff view counts."""
    if tool not in COMPARABLE:
        raise InvalidArgument(
            f"Tool {tool} cannot be compared; the tools that can: {', '.join(COMPARABLE)}."
        )
    if scope and scope not in SCOPES:
        raise InvalidArgument(f"scope must be one of {', '.join(SCOPES)}; got {scope!r}.")
    if scope and scope != ALL_THREADS and tool not in SCOPED_TOOLS:
        raise InvalidArgument(
            f"scope {scope} applies to {', '.join(SCOPED_TOOLS)} only, not to {tool}; "
            "leave it out (or set it to all)."
        )
    scope = scope if tool in SCOPED_TOOLS and scope != ALL_THREADS else None
    base = dataclasses.replace(base, role="baseline", scope=scope)
    exp = dataclasses.replace(exp, scope=scope)
    with concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="compare") as pool:
        futures = [pool.submit(side.answer, tool) for side in (base, exp)]
        base_answer, exp_answer = [f.result() for f in futures]
    spec = ROW_TOOLS.get(tool)
    if spec is None:
        frame = compare_steps(
            _step_table(base_answer), _step_table(exp_answer), base.step, exp.step
        )
        what = "step time"
    else:
        sides = [spec.frame(base_answer), spec.frame(exp_answer)]
        if tool == "hlo_stats":
            sides = [_with_program_names(f, side) for f, side in zip(sides, (base, exp))]
        frame = join(sides[0], sides[1], spec.keys, spec.values)
        what = spec.what
    frame.attrs.update(tool=tool, base_run=base.run, exp_run=exp.run)
    if tool in SCOPED_TOOLS:
        frame.attrs["scope"] = scope or ALL_THREADS
    frame.attrs["summary"] = summary(frame, what, spec is None or spec.additive)
    return frame


def compare_in_logdir(
    service: ProfileService,
    run: str,
    base_run: str,
    tool: str,
    host: Optional[str] = None,
    base_host: Optional[str] = None,
    step: Optional[str] = None,
    base_step: Optional[str] = None,
    scope: Optional[str] = None,
) -> pd.DataFrame:
    """``tool`` of ``run`` (the experiment) against ``base_run`` of the same log directory."""
    runs = service.runs()
    for name, value in (("run", run), ("base_run", base_run)):
        if value not in runs:
            listed = ", ".join(runs[:10]) + (", ..." if len(runs) > 10 else "")
            raise NotFound(
                f"No run {value!r} ({name}) in this log directory; its runs are {listed}."
            )
    base = Side(service, base_run, base_host or None, base_step or None)
    return compare_runs(base, Side(service, run, host or None, step or None), tool, scope or None)


def join(base: pd.DataFrame, exp: pd.DataFrame, keys: tuple, values: tuple) -> pd.DataFrame:
    """Rows of both sides aligned on ``keys``: for each value its base, exp, delta and
    delta_pct columns, and ``status`` (common, added, removed); largest |delta| first."""
    keys = tuple(keys)
    for name, frame in (("baseline", base), ("experiment", exp)):
        missing = [c for c in keys + tuple(values) if c not in frame.columns]
        if missing:
            raise InvalidArgument(f"The {name} table has no column {', '.join(missing)}.")
    sides = [_keyed(frame, keys, values) for frame in (base, exp)]
    if any(DUPLICATE in s.columns for s in sides):
        keys += (DUPLICATE,)
        sides = [s if DUPLICATE in s.columns else s.assign(**{DUPLICATE: 0}) for s in sides]
    merged = pd.merge(
        sides[0],
        sides[1],
        on=list(keys),
        how="outer",
        suffixes=("_" + BASE, "_" + EXP),
        indicator=True,
        sort=False,
    )
    status = merged.pop("_merge").map({"both": COMMON, "left_only": REMOVED, "right_only": ADDED})
    out = merged[list(keys)].copy()
    out.insert(len(keys), "status", pd.array(status.astype(str), dtype="string"))
    for value in values:
        b, e = merged[f"{value}_{BASE}"], merged[f"{value}_{EXP}"]
        delta = e.fillna(0.0) - b.fillna(0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where((b.to_numpy() != 0) & b.notna().to_numpy(), delta / b * 100.0, np.nan)
        out[f"{value}_{BASE}"] = b.to_numpy(dtype=np.float64)
        out[f"{value}_{EXP}"] = e.to_numpy(dtype=np.float64)
        out[f"{value}_{DELTA}"] = delta.to_numpy(dtype=np.float64)
        out[f"{value}_{DELTA_PCT}"] = pct.astype(np.float64)
    order = np.argsort(-np.abs(out[f"{values[0]}_{DELTA}"].to_numpy()), kind="stable")
    out = out.iloc[order].reset_index(drop=True)
    out.attrs.update(keys=list(keys), values=list(values))
    return out


def _keyed(frame: pd.DataFrame, keys: tuple, values: tuple) -> pd.DataFrame:
    """The key and value columns; empty keys as "", numbered when a key repeats."""
    out = frame[list(keys) + list(values)].copy()
    for key in keys:
        if not pd.api.types.is_numeric_dtype(out[key]):
            out[key] = out[key].astype("string").fillna("")
    for value in values:
        out[value] = pd.to_numeric(out[value], errors="coerce").astype(np.float64)
    repeat = out.groupby(list(keys), sort=False, dropna=False).cumcount()
    if len(repeat) and int(repeat.max()) > 0:
        out[DUPLICATE] = repeat.to_numpy()
    return out


def compare_steps(
    base: pd.DataFrame, exp: pd.DataFrame, base_step: Optional[str], exp_step: Optional[str]
) -> pd.DataFrame:
    """The step time and its breakdown (one row per part) of two step tables."""
    parts = [
        c
        for c in base.columns
        if c in exp.columns and pd.api.types.is_numeric_dtype(base[c]) and c not in ("stepnum",)
    ]
    total = "step_time_ms" if "step_time_ms" in parts else "total_us"
    parts = [total] + [p for p in parts if p != total]
    rows = [
        _step_values(frame, parts, step) for frame, step in ((base, base_step), (exp, exp_step))
    ]
    sides = [pd.DataFrame({"part": pd.array(parts, dtype="string"), "time": r}) for r in rows]
    out = join(sides[0], sides[1], ("part",), ("time",))
    rank = {p: i for i, p in enumerate(parts)}  # the tool's order: total first
    out = out.iloc[np.argsort(out["part"].map(rank).to_numpy(), kind="stable")]
    out = out.reset_index(drop=True).rename(
        columns={
            c: c.replace("time_", "time_ms_" if total == "step_time_ms" else "time_us_", 1)
            for c in out.columns
            if c.startswith("time_")
        }
    )
    out.attrs.update(keys=["part"], values=["time_ms" if total == "step_time_ms" else "time_us"])
    return out


def _step_values(frame: pd.DataFrame, parts: list, step: Optional[str]) -> np.ndarray:
    name = "stepnum" if "stepnum" in frame.columns else "step"
    labels = frame[name].astype("string").fillna("")
    if step is None:
        average = labels == "Average"  # PyTorch's own first row: the tool's average
        if average.any():
            return frame.loc[average, parts].iloc[0].to_numpy(dtype=np.float64)
        steps = frame.loc[~average, parts]
        if steps.empty:
            raise NotApplicable("This profile marks no steps; there is no step time to compare.")
        return steps.mean().to_numpy(dtype=np.float64)
    chosen = labels == str(step)
    if not chosen.any():
        known = [s for s in labels.tolist() if s != "Average"]
        listed = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "")
        raise InvalidArgument(f"No step {step!r} in this run; its steps are {listed}.")
    return frame.loc[chosen, parts].iloc[0].to_numpy(dtype=np.float64)


def summary(frame: pd.DataFrame, what: str, additive: bool = True) -> str:
    """ "step time 95.7 -> 72.1 ms (-24.7%); the largest changes: ..." for one comparison."""
    keys, values = frame.attrs["keys"], frame.attrs["values"]
    value = values[0]
    b, e = frame[f"{value}_{BASE}"], frame[f"{value}_{EXP}"]
    if frame.empty:
        return f"{what}: no rows on either side."
    if keys == ["part"]:
        head = f"{what} {_num(b.iloc[0])} -> {_num(e.iloc[0])} {value.rsplit('_', 1)[-1]}"
        head += _pct(b.iloc[0], e.iloc[0])
        rest = frame.iloc[1:]
    elif additive:
        head = f"{what} in all rows {_num(b.sum())} -> {_num(e.sum())}" + _pct(b.sum(), e.sum())
        rest = frame
    else:
        head, rest = what, frame
    changed = rest[rest[f"{value}_{DELTA}"] != 0].head(SUMMARY_CHANGES)
    label = changed[[k for k in keys if k != DUPLICATE]].astype("string").fillna("")
    names = label.agg(" ".join, axis=1).tolist() if len(changed) else []
    names = [n if len(n) <= NAME_CHARS else n[: NAME_CHARS - 1] + "…" for n in names]
    deltas = changed[f"{value}_{DELTA}"].tolist()
    statuses = changed["status"].tolist()
    parts = [
        f"{n} ({'+' if d > 0 else ''}{_num(d)}{'' if s == COMMON else ', ' + s})"
        for n, d, s in zip(names, deltas, statuses)
    ]
    if parts:
        head += "; the largest changes: " + ", ".join(parts)
    if keys != ["part"]:
        added, removed = (
            int((frame["status"] == ADDED).sum()),
            int((frame["status"] == REMOVED).sum()),
        )
        head += f"; {added} rows added, {removed} removed"
    return head


def _num(value: float) -> str:
    if value != value:  # NaN
        return "-"
    return f"{value:,.1f}" if abs(value) >= 1 else f"{value:.3g}"


def _pct(base: float, exp: float) -> str:
    if not base or base != base:
        return ""
    return f" ({(exp - base) / base * 100:+.1f}%)"

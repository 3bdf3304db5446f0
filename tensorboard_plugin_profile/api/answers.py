"""Short answers about a profile, as plain JSON values: what the agent CLI prints and the
MCP server returns.

Each function takes a ``Profile`` (one run) and returns a dict of JSON types only (lists,
str, int, float, None), small enough for a context window: tables come with their
``columns``, a page of ``rows`` (lists in column order) and ``total_rows``, so a caller
knows what it did not get. The numbers are the facade's, so the tools'.

Usage::

    with open_profile("logs/") as p:
        top_ops(p, limit=5)   # {"run": ..., "columns": [...], "rows": [[...], ...], ...}
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pandas as pd

from ..analysis.trace.safe_regex import match_strings
from ..common.errors import InvalidArgument, NotFound
from .sql import run_query

DEFAULT_ROWS = 20
MAX_ROWS = 1000
TOP_OPS_KEYS = {  # the op stats of each format: (its name columns, its time columns)
    "operation": (["type", "operation"], ["total_self_time_us", "total_time_us"], "occurrences"),
    "name": (
        ["name"],
        ["device_self_us", "host_self_us", "device_total_us", "host_total_us"],
        "calls",
    ),
}


def runs(p: Any) -> dict:
    """Every run of the profile's path, with its hosts."""
    return {"runs": [{"run": r, "hosts": p.with_run(r).hosts} for r in p.runs]}


def tools(p: Any) -> dict:
    return {"run": p.run, "hosts": p.hosts, "tools": p.tools}


def summary(p: Any) -> dict:
    """Step time and its breakdown, the top ops, the environment: the overview in short."""
    ops = top_ops(p, limit=5)
    return {
        "run": p.run,
        "format": p.source_format,
        "hosts": p.hosts,
        "steps": _step_summary(p.steps()),
        "top_ops": {"columns": ops["columns"], "rows": ops["rows"]},
        "environment": p.environment(),
    }


def _step_summary(steps: pd.DataFrame) -> Optional[dict]:
    if not len(steps):
        return None
    total = steps["step_time_ms"]
    breakdown = []
    for column in steps.columns[3:]:
        unit = column.rsplit("_", 1)[-1]
        whole = f"step_time_{unit}"
        if whole == column or whole not in steps or steps[column].dtype.kind != "f":
            continue
        average = float(steps[column].mean())
        if average > 0:
            share = 100.0 * average / float(steps[whole].mean()) if steps[whole].mean() else None
            breakdown.append(
                {"part": column, "average": round(average, 3), "percent": _round(share)}
            )
    breakdown.sort(key=lambda b: -b["average"])
    return {
        "count": int(len(steps)),
        "average_ms": round(float(total.mean()), 3),
        "min_ms": round(float(total.min()), 3),
        "max_ms": round(float(total.max()), 3),
        "breakdown": breakdown,
    }


def top_ops(p: Any, limit: int = 10, host: Optional[str] = None) -> dict:
    """The ops that took the most self time, summed over hosts (or on ``host``)."""
    ops = p.op_stats()
    if host is not None:
        _check_host(p, host)
        ops = ops[ops["host"] == host]
    kind = next((k for k in TOP_OPS_KEYS if k in ops.columns), None)
    if kind is None or not len(ops):
        return {"run": p.run, "columns": [], "rows": [], "total_rows": 0}
    keys, times, count = TOP_OPS_KEYS[kind]
    if "type" in keys:
        ops = ops[ops["type"] != "IDLE"]  # idle time is no op
    grouped = ops.groupby(keys, observed=True, sort=False)[[count] + times].sum().reset_index()
    self_time = grouped[[t for t in times if "self" in t]].sum(axis=1)
    whole = float(self_time.sum())
    grouped["self_percent"] = (100.0 * self_time / whole).round(2) if whole else 0.0
    grouped = grouped.iloc[np.argsort(-self_time.to_numpy(), kind="stable")]
    page = page_of(grouped, 0, limit)
    return {"run": p.run, "host": host, **page}


def steps(p: Any, host: Optional[str] = None, offset: int = 0, limit: int = 50) -> dict:
    frame = p.steps()
    if host is not None:
        _check_host(p, host)
        frame = frame[frame["host"] == host]
    return {"run": p.run, "summary": _step_summary(frame), **page_of(frame, offset, limit)}


def search(
    p: Any, text: str, regex: bool = False, host: Optional[str] = None, limit: int = 10
) -> dict:
    """Trace events whose name contains ``text`` (or matches the regular expression):
    per name, count and time; and the first ``limit`` events in time."""
    if not text:
        raise InvalidArgument("Give the text (or --regex pattern) to search event names for.")
    names = p.event_names(host)
    if regex:  # an agent's pattern runs in a worker process with a deadline
        hits = match_strings(text, [str(n) for n in names])
    else:
        hits = np.asarray(names.str.contains(text, case=False, regex=False), dtype=bool)
    found = list(names[hits])
    events = p.events(host=host, names=found) if found else None
    if events is None or not len(events):
        return {"run": p.run, "query": text, "matches": 0, "names": [], "events": []}
    per_name = events.groupby("name", observed=True)["duration_ps"].agg(["count", "sum", "max"])
    per_name = per_name.sort_values("sum", ascending=False).reset_index()
    per_name = pd.DataFrame(
        {
            "name": per_name["name"].astype(str),
            "count": per_name["count"],
            "total_us": per_name["sum"] / 1e6,
            "max_us": per_name["max"] / 1e6,
        }
    )
    first = events.iloc[np.argsort(events["start_ps"].to_numpy(), kind="stable")[:limit]]
    first = pd.DataFrame(
        {
            "host": first["host"].astype(str),
            "plane": first["plane"].astype(str),
            "line": first["line"].astype(str),
            "name": first["name"].astype(str),
            "start_us": first["start_ps"] / 1e6,
            "duration_us": first["duration_ps"] / 1e6,
        }
    )
    return {
        "run": p.run,
        "query": text,
        "matches": int(len(events)),
        "names": page_of(per_name, 0, limit),
        "events": page_of(first, 0, limit),
    }


def sql(p: Any, query: str, limit: int = 100, timeout_s: float = 30.0) -> dict:
    limit = _bounded(limit)
    answer = run_query(p, query, timeout_s, max_rows=limit + 1)
    page = page_of(answer, 0, limit)
    page["total_rows"] = None if len(answer) > limit else len(answer)  # unknown past limit
    page["next_offset"] = None  # no paging: narrow the query or raise the limit
    page["truncated"] = len(answer) > limit
    return {"run": p.run, **page}


def table(
    p: Any,
    tool: str,
    host: Optional[str] = None,
    index: Optional[int] = None,
    offset: int = 0,
    limit: int = 50,
    params: Optional[dict] = None,
) -> dict:
    """One page of a tool's table, with its labels and how many rows it has."""
    frame = p.table(tool, host=host, table=index, **(params or {}))
    page = page_of(frame, offset, limit)
    page["labels"] = [frame.attrs["labels"].get(c, "") for c in frame.columns]
    return {"run": p.run, "tool": tool, "host": host, **page}


def advice(p: Any, host: Optional[str] = None) -> dict:
    found = p.advise(host)
    rows = [
        {k: getattr(f, k) for k in ("check", "severity", "title", "evidence", "advice")}
        for f in found
    ]
    return {"run": p.run, "framework": found.framework, "findings": rows}


def page_of(frame: pd.DataFrame, offset: int, limit: int) -> dict:
    """Columns, rows[offset:offset+limit] as JSON values, and where the next page starts."""
    if offset < 0:
        raise InvalidArgument(f"offset must be 0 or more, not {offset}.")
    limit = _bounded(limit)
    part = frame.iloc[offset : offset + limit]
    values = part.astype(object).where(part.notna(), None).values.tolist()
    rows = [[_json_value(v) for v in row] for row in values]
    end = offset + len(rows)
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": rows,
        "offset": offset,
        "total_rows": int(len(frame)),
        "next_offset": end if end < len(frame) else None,
    }


def _check_host(p: Any, host: str) -> None:
    """NotFound, naming the run's hosts, unless ``host`` is one of them."""
    if host not in p.hosts:
        raise NotFound(f"No host {host!r} in run {p.run!r}; the hosts are {', '.join(p.hosts)}.")


def _bounded(limit: int) -> int:
    if not 0 <= limit <= MAX_ROWS:
        raise InvalidArgument(f"limit must be between 0 and {MAX_ROWS}, not {limit}.")
    return int(limit)


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return _round(value, 6)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return _json_value(value.item())
    return value


def _round(value: Optional[float], digits: int = 2) -> Optional[float]:
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), digits)

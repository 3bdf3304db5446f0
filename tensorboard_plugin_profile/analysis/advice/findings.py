"""The advisor's checks: findings over the analyses we already have.

Each check reads the op statistics, step database, kernels, device timelines or
tf.data pipelines of a session and returns zero or more ``Finding``s: a
severity, a one-line title, the evidence (numbers, and a link to the page or
trace window that shows them, as a query of the page's URL) and what to do.
Advice is phrased for the framework that made the profile: a JAX run never gets
tf.data or TF2 FAQ advice.

Checks stay quiet when their input is missing (no steps, no device): an idle
capture yields only the one finding that says nothing ran.

Usage::

    report = advise([("vm", space)], run="run1")
    [f.title for f in report.findings]
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Sequence
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from ...common import formats
from ...preprocessing.preprocess import preprocess
from ...xspace import schema
from ...xspace.model import Space
from ..input_pipeline import breakdown as ia
from ..ops.attribution import source_format
from ..ops.op_stats import OpStats, op_stats_of_hosts
from ..ops.timeline import timeline_op_stats

CRITICAL, WARNING, INFO = "critical", "warning", "info"
SEVERITY_ORDER = {CRITICAL: 0, WARNING: 1, INFO: 2}
TENSORFLOW, JAX, PYTORCH, UNKNOWN = "TensorFlow", "JAX", "PyTorch", "unknown"


@dataclasses.dataclass
class Finding:
    check: str  # stable id, e.g. "input_bound"
    severity: str
    title: str
    evidence: str  # numbers, in words
    advice: str  # what to do
    link: dict = dataclasses.field(default_factory=dict)  # page query: tool, start_ms, ...
    numbers: dict = dataclasses.field(default_factory=dict)  # machine-readable evidence


@dataclasses.dataclass
class Context:
    """What every check may read, computed once per report."""

    hosts: Sequence[tuple]
    spaces: list
    stats: OpStats
    details: pd.DataFrame
    framework: str
    run: str
    host: str


@dataclasses.dataclass
class Report:
    framework: str
    findings: list

    def as_json(self) -> dict:
        return {
            "framework": self.framework,
            "findings": [dataclasses.asdict(f) for f in self.findings],
        }


def advise(hosts: Sequence[tuple], run: str = "", host: str = "") -> Report:
    """Runs every check (``CHECKS``) and returns the findings, most severe first."""
    from .checks import CHECKS

    ctx = context_of(hosts, run, host)
    findings: list = []
    if source_format(hosts) == formats.PYTORCH:  # its checks read the PyTorch analyses
        from .pytorch import pytorch_checks

        findings = pytorch_checks(ctx)
    else:
        for check in CHECKS:
            findings.extend(check(ctx))
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])  # stable: check order within
    return Report(ctx.framework, findings)


def context_of(hosts: Sequence[tuple], run: str = "", host: str = "") -> Context:
    """What the checks read, computed once from the (name, Space) hosts."""
    source = source_format(hosts)
    if source == formats.XSPACE:
        spaces = [preprocess(space) for _, space in hosts]
        stats = op_stats_of_hosts(hosts)
    else:  # Chrome traces: a ProfilerHook's executor ops (PyTorch has none of those)
        spaces = [space for _, space in hosts]
        stats = timeline_op_stats(hosts)
    return Context(
        hosts=hosts,
        spaces=spaces,
        stats=stats,
        details=ia.step_details(stats.steps),
        framework=PYTORCH if source == formats.PYTORCH else framework_of(spaces, stats),
        run=run,
        host=host,
    )


def framework_of(spaces: Sequence[Space], stats: Optional[OpStats] = None) -> str:
    """The framework that made the profile, from what its planes say about themselves."""
    for space in spaces:
        metadata = space.plane(schema.METADATA_PLANE)
        if metadata is not None and "jax_version" in metadata.stat_names.values():
            return JAX
    if stats is not None and stats.steps.framework:
        return str(stats.steps.framework)
    for space in spaces:
        host = space.plane(schema.HOST_PLANE)
        if host is None:
            continue
        names = pd.Series(host.event_metadata["name"], dtype=object).astype(str)
        if names.str.startswith("aten::").any():
            return PYTORCH
        if names.str.startswith(("PjitFunction", "PjRt")).any():
            return JAX
        lines = host.lines["name"].astype(str)
        if lines.str.startswith("tf_").any() or names.str.startswith("Iterator::").any():
            return TENSORFLOW
    if stats is not None and not stats.host_ops.without_idle().empty:
        return TENSORFLOW
    return UNKNOWN


def page_link(ctx: Context, tool: str, **params: object) -> dict:
    """A link as the page's URL query (``?run=&tool=&host=`` plus view parameters)."""
    query = {"run": ctx.run, "tool": tool}
    if ctx.host:
        query["host"] = ctx.host
    query.update({k: _param(v) for k, v in params.items() if v is not None})
    return {"tool": tool, "query": "?" + urlencode(query)}


def trace_window(ctx: Context, begin_ps: int, end_ps: int) -> dict:
    """A link to the trace viewer showing [begin, end] (ms on the trace clock) with margins."""
    margin = max((end_ps - begin_ps) // 20, 1)
    return page_link(
        ctx,
        "trace_viewer@",
        start_ms=(begin_ps - margin) / 1e9,
        end_ms=(end_ps + margin) / 1e9,
    )


def _param(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


def duration_text(ps: float) -> str:
    """A duration for a sentence: ms from 1 ms on, else us (a tiny trace is not "0.0 ms")."""
    return f"{ps / 1e9:.1f} ms" if ps >= 1e9 else f"{ps / 1e6:.1f} us"


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


# Interval helpers read planes of millions of events: they work a block of events at a
# time, so the advisor's temporaries stay a few megabytes above the kept profile.
_BLOCK = 1 << 16


def latest_end_ps(begin: np.ndarray, duration: np.ndarray) -> int:
    """``max(begin + duration)`` of a non-empty plane, without an end array per event."""
    return max(
        int((begin[i : i + _BLOCK] + duration[i : i + _BLOCK]).max())
        for i in range(0, len(begin), _BLOCK)
    )


def busy_time_ps(begin: np.ndarray, duration: np.ndarray) -> int:
    """Length of the union of intervals ``[begin, begin + duration]``.

    In begin order, each interval adds what it reaches beyond the latest end before it
    (``reach - max(begin, earlier reach)``: the runs of overlapping intervals summed
    piece by piece). Only the order is a whole-plane array; the rest is per block.
    """
    order = np.argsort(begin, kind="stable")
    total, reach = 0, None
    for i in range(0, len(order), _BLOCK):
        rows = order[i : i + _BLOCK]
        block_begin = begin[rows]
        block_reach = np.maximum.accumulate(block_begin + duration[rows])
        if reach is not None:
            np.maximum(block_reach, reach, out=block_reach)
        earlier = np.empty_like(block_reach)
        earlier[0] = block_begin[0] if reach is None else reach  # nothing earlier: the begin
        earlier[1:] = block_reach[:-1]
        total += int((block_reach - np.maximum(block_begin, earlier)).sum())
        reach = block_reach[-1]
    return total


Check = Callable[[Context], list]

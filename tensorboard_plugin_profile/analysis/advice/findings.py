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
from typing import Any, Callable, Sequence
from urllib.parse import urlencode

import pandas as pd

from ...common import formats
from ...preprocessing.preprocess import preprocess
from ..input_pipeline import breakdown as ia
from ..input_pipeline.tf_data import tf_data_stats
from ..ops.attribution import op_records, source_format
from ..ops.op_stats import OpStats, op_stats_of_hosts
from ..ops.timeline import timeline_op_stats
from .facts import PYTORCH, framework_from, host_facts

CRITICAL, WARNING, INFO = "critical", "warning", "info"
SEVERITY_ORDER = {CRITICAL: 0, WARNING: 1, INFO: 2}


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

    hosts: Sequence[tuple]  # (name, Space), or (name, summary) for a pod session
    facts: list  # HostFacts per host
    stats: OpStats
    details: pd.DataFrame
    framework: str
    run: str
    host: str
    records: Callable[[], pd.DataFrame]  # the op records (``ops.attribution``), on demand
    tf_data: Callable[[], Any]  # the tf.data pipelines (``input_pipeline.tf_data``), on demand


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
    return advise_in(context_of(hosts, run, host))


def advise_in(ctx: Context) -> Report:
    """``advise`` over a context already made (``context_of``, ``summaries_context``)."""
    from .checks import CHECKS

    findings: list = []
    if source_format(ctx.hosts) == formats.PYTORCH:  # its checks read the PyTorch analyses
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
    facts = [host_facts(space) for space in spaces]
    return Context(
        hosts=hosts,
        facts=facts,
        stats=stats,
        details=ia.step_details(stats.steps),
        framework=PYTORCH if source == formats.PYTORCH else framework_from(facts, stats),
        run=run,
        host=host,
        records=lambda: op_records(hosts),
        tf_data=lambda: tf_data_stats(hosts),
    )


def summaries_context(hosts: Sequence[tuple], run: str = "", host: str = "") -> Context:
    """``context_of`` for XSpace hosts given as (name, summary) pairs (``host_summary``):
    the same numbers from what each host's summary kept of its planes."""
    from ..host_summary import combined_op_stats, op_records_of, tf_data_of

    summaries = [s for _, s in hosts]
    stats = combined_op_stats(summaries)
    facts = [s.facts for s in summaries]
    return Context(
        hosts=hosts,
        facts=facts,
        stats=stats,
        details=ia.step_details(stats.steps),
        framework=framework_from(facts, stats),
        run=run,
        host=host,
        records=lambda: op_records_of(summaries),
        tf_data=lambda: tf_data_of(hosts),
    )


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


Check = Callable[[Context], list]

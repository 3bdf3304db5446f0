"""advisor: the findings of the advisor's checks (``analysis/advice``) as one DataTable.

Columns: severity, check id, title, evidence, what to do, the page link (URL query
of the page: ``?run=..&tool=..``) and the evidence's numbers as JSON. ``p`` holds
the detected framework and its documentation links.

Usage::

    table = convert([("vm", space)], {"run": "run1"})
"""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from ..analysis.advice.facts import JAX, PYTORCH, TENSORFLOW
from ..analysis.advice.findings import Report, advise, advise_in, summaries_context
from .datatable import Column, data_table

COLUMNS = (
    Column("severity", "Severity", "string"),
    Column("check", "Check", "string"),
    Column("title", "Finding", "string"),
    Column("evidence", "Evidence", "string"),
    Column("advice", "What to do", "string"),
    Column("link", "Link", "string"),
    Column("numbers", "Numbers (JSON)", "string"),
)
RESOURCES = {
    TENSORFLOW: "https://www.tensorflow.org/guide/profiler",
    JAX: "https://docs.jax.dev/en/latest/profiling.html",
    PYTORCH: "https://pytorch.org/docs/stable/profiler.html",
}


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    # No host in the links: the page keeps its own host selection (and the cache key ignores it).
    report = advise(hosts, run=params.get("run", ""))
    return report_table(report)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> dict:
    """The findings of a pod session from each host's summary (``analysis/host_summary.py``)."""
    return report_table(advise_in(summaries_context(summaries, run=params.get("run", ""))))


def report_table(report: Report) -> dict:
    rows = [
        [
            f.severity,
            f.check,
            f.title,
            f.evidence,
            f.advice,
            f.link.get("query", ""),
            json.dumps(f.numbers, sort_keys=True),
        ]
        for f in report.findings
    ]
    p = {"framework": report.framework, "guide": RESOURCES.get(report.framework, "")}
    return data_table(COLUMNS, rows, p)

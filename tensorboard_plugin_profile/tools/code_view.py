"""code_view: op time attributed to the Python lines that created or launched the ops.

Frames come from XLA's HLO metadata (JAX: the call stack of each traced
operation) or from Python-tracer events enclosing the ops on a host thread.
Ops with no known source are kept under one "(no Python source)" node, so the
root's total stays the total op time.

Options (order, depth, name filters, ``format=pprof``): ``tree_options``.

Usage::

    table = convert([("host", space)], {})     # a tree DataTable (see tree_table)
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.host_summary import op_records_of
from ..analysis.ops.attribution import op_records
from ..analysis.ops.op_tree import build_tree
from ..common.errors import NotApplicable
from . import ToolAnswer, ToolOutput
from .pprof import CONTENT_TYPE, once, pprof_bytes
from .tree_options import accounted, shaped, tree_options
from .tree_table import tree_table

NO_SOURCE = "(no Python source)"


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    return _table(op_records(hosts), params)


def reduce(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    """A pod session's table from each host's summary and details (``host_summary``)."""
    return _table(op_records_of([h for _, h in hosts]), params)


def _table(records, params: Mapping[str, str]) -> ToolAnswer:
    if not any(records["frames"]):
        raise NotApplicable(
            "No op in this profile has a Python call site: profile a JAX program, or "
            "enable the Python tracer (python_tracer_level=1) when capturing."
        )
    options = tree_options(params)
    records = accounted(records, options)
    paths = [
        (f or (NO_SOURCE,)) + (f"{n} ({s})",)
        for f, n, s in zip(records["frames"], records["name"], records["side"])
    ]
    if options.format == "pprof":
        return ToolOutput(CONTENT_TYPE, chunks=once(pprof_bytes(records, paths)))
    nodes = shaped(build_tree(records, paths, "frame"), options)
    return tree_table(nodes, {"view": "code_view"}, options.select)

"""scope_view: time and memory over the name-scope tree (tfprof's scope view).

TensorFlow op names are their scopes (``sequential/conv2d/Conv2D``); XLA ops
(JAX) take the scope path of the framework op recorded in their HLO metadata
(``jit(train_step)/jvp()/dot_general``) with the HLO instruction as the leaf.

Options (order, depth, name filters, ``format=pprof``): ``tree_options``.

Usage::

    table = convert([("host", space)], {})     # a tree DataTable (see tree_table)
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.host_summary import op_records_of
from ..analysis.ops.attribution import op_records
from ..analysis.ops.op_tree import build_tree
from . import ToolAnswer, ToolOutput
from .pprof import CONTENT_TYPE, once, pprof_bytes
from .tree_options import accounted, shaped, tree_options
from .tree_table import tree_table


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    return _table(op_records(hosts), params)


def reduce(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    """A pod session's table from each host's summary and details (``host_summary``)."""
    return _table(op_records_of([h for _, h in hosts]), params)


def _table(records, params: Mapping[str, str]) -> ToolAnswer:
    options = tree_options(params)
    records = accounted(records, options)
    if options.format == "pprof":
        return ToolOutput(CONTENT_TYPE, chunks=once(pprof_bytes(records, records["scope"])))
    nodes = shaped(build_tree(records, records["scope"], "scope"), options)
    return tree_table(nodes, {"view": "scope_view"}, options.select)

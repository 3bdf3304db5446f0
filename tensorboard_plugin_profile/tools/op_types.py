"""op_types: time per op type, as tfprof's op view (total, accelerator and CPU time,
requested bytes, occurrences run | defined), each type drilling down into its ops.

Options (order, depth, name and type filters): ``tree_options``.

Usage::

    table = convert([("host", space)], {})     # a tree DataTable (see tree_table)
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.host_summary import op_records_of
from ..analysis.ops.attribution import op_records
from ..analysis.ops.op_tree import build_tree
from ..common.errors import InvalidArgument
from .tree_options import accounted, shaped, tree_options
from .tree_table import tree_table


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    return _table(op_records(hosts), params)


def reduce(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    """A pod session's table from each host's summary and details (``host_summary``)."""
    return _table(op_records_of([h for _, h in hosts]), params)


def _table(records, params: Mapping[str, str]) -> dict:
    options = tree_options(params)
    if options.format != "json":
        raise InvalidArgument(
            "op_types has no pprof form (its tree is not a call stack): "
            "ask scope_view or code_view with format=pprof."
        )
    records = accounted(records, options)
    paths = [
        (t, f"{n} ({s})") for t, n, s in zip(records["type"], records["name"], records["side"])
    ]
    nodes = shaped(build_tree(records, paths, "type"), options)
    return tree_table(nodes, {"view": "op_types"}, options.select)

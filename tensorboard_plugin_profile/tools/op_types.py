"""op_types: time per op type, as tfprof's op view (total, accelerator and CPU time,
requested bytes, occurrences run | defined), each type drilling down into its ops.

Usage::

    table = convert([("host", space)], {})     # a tree DataTable (see tree_table)
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.host_summary import op_records_of
from ..analysis.ops.attribution import op_records
from ..analysis.ops.op_tree import build_tree
from .tree_table import tree_table


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    return _table(op_records(hosts))


def reduce(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    """A pod session's table from each host's summary and details (``host_summary``)."""
    return _table(op_records_of([h for _, h in hosts]))


def _table(records) -> dict:
    paths = [
        (t, f"{n} ({s})") for t, n, s in zip(records["type"], records["name"], records["side"])
    ]
    return tree_table(build_tree(records, paths, "type"), {"view": "op_types"})

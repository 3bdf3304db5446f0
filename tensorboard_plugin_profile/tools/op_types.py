"""op_types: time per op type, as tfprof's op view (total, accelerator and CPU time,
requested bytes, occurrences run | defined), each type drilling down into its ops.

Usage::

    table = convert([("host", space)], {})     # a tree DataTable (see tree_table)
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.ops.attribution import op_records
from ..analysis.ops.op_tree import build_tree
from .tree_table import tree_table


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> dict:
    records = op_records(hosts)
    paths = [
        (t, f"{n} ({s})") for t, n, s in zip(records["type"], records["name"], records["side"])
    ]
    return tree_table(build_tree(records, paths, "type"), {"view": "op_types"})

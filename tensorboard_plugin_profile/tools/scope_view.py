"""scope_view: time and memory over the name-scope tree (tfprof's scope view).

TensorFlow op names are their scopes (``sequential/conv2d/Conv2D``); XLA ops
(JAX) take the scope path of the framework op recorded in their HLO metadata
(``jit(train_step)/jvp()/dot_general``) with the HLO instruction as the leaf.

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
    return tree_table(build_tree(records, records["scope"], "scope"), {"view": "scope_view"})

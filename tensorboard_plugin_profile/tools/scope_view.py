"""scope_view: time and memory over the name-scope tree (tfprof's scope view).

TensorFlow op names are their scopes (``sequential/conv2d/Conv2D``); XLA ops
(JAX) take the scope path of the framework op recorded in their HLO metadata
(``jit(train_step)/jvp()/dot_general``) with the HLO instruction as the leaf.

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
    return tree_table(build_tree(records, records["scope"], "scope"), {"view": "scope_view"})

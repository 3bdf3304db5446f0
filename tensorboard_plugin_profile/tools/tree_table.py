"""The drill-down tree table shared by op_types, scope_view and code_view.

A tree is a DataTable whose rows come depth-first, each with its ``id``, its
``parent`` id (-1 for the root) and ``depth``; the page indents and folds rows
by them and CSV export keeps them (plus the full ``path``) so a spreadsheet can
rebuild the tree. Times are in microseconds.

Usage::

    table = tree_table(build_tree(records, paths, "scope"), {"view": "scope"})
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common.errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns

# Sent whatever ``select`` asks: the page draws the tree from them.
ALWAYS_SENT = ("name", "kind", "id", "parent", "depth", "path")
COLUMNS = (
    Column("name", "Name", "string"),
    Column("kind", "Kind", "string"),
    Column("total_time_us", "Total time (us)", "number"),
    Column("self_time_us", "Self time (us)", "number"),
    Column("device_time_us", "Accelerator time (us)", "number"),
    Column("host_time_us", "CPU time (us)", "number"),
    Column("total_time_percent", "Total time (%)", "number"),
    Column("occurrences", "Occurrences (run)", "number"),
    Column("ops", "Ops (defined)", "number"),
    Column("bytes", "Bytes", "number"),
    Column("id", "Id", "number"),
    Column("parent", "Parent id", "number"),
    Column("depth", "Depth", "number"),
    Column("path", "Path", "string"),
)


def tree_table(
    nodes: pd.DataFrame,
    properties: Mapping[str, str],
    select: Optional[Sequence[str]] = None,
) -> dict:
    """The DataTable of a ``build_tree`` frame; ``select`` names the columns (None: all)."""
    if len(nodes) <= 1:
        raise NotApplicable("This profile records no op that this view can attribute.")
    return _table(nodes, properties, select)


def _table(nodes: pd.DataFrame, properties: Mapping[str, str], select) -> dict:
    root_total = float(nodes["total_time_ps"].iloc[0]) or 1.0
    cells = {
        "name": nodes["name"],
        "kind": nodes["kind"],
        "total_time_us": nodes["total_time_ps"].to_numpy(dtype=np.float64) / 1e6,
        "self_time_us": nodes["self_time_ps"].to_numpy(dtype=np.float64) / 1e6,
        "device_time_us": nodes["device_time_ps"].to_numpy(dtype=np.float64) / 1e6,
        "host_time_us": nodes["host_time_ps"].to_numpy(dtype=np.float64) / 1e6,
        "total_time_percent": 100 * nodes["total_time_ps"].to_numpy(dtype=np.float64) / root_total,
        "occurrences": nodes["occurrences"],
        "ops": nodes["ops"],
        "bytes": nodes["bytes"],
        "id": nodes["id"],
        "parent": nodes["parent"],
        "depth": nodes["depth"],
        "path": nodes["path"],
    }
    columns = [c for c in COLUMNS if select is None or c.id in select or c.id in ALWAYS_SENT]
    rows = rows_from_columns(*(cells[c.id] for c in columns))
    p = {"tree": "true", "bytes_recorded": "true" if nodes["bytes"].iloc[0] > 0 else "false"}
    p.update(properties)
    return data_table(columns, rows, p)

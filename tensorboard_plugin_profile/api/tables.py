"""A tool's DataTable JSON as a pandas DataFrame: typed columns, units in the names.

The values are the JSON's, unchanged, so a DataFrame and the table it came from say the
same thing (tests/api/test_profile.py checks it on every fixture). Only the names and the
dtypes change:

- a column's name is its id in snake_case, with the unit of its label appended when the id
  does not end with it already: ``total_time`` labelled "Total time (us)" becomes
  ``total_time_us``, ``deviceComputeTimeMs`` becomes ``device_compute_time_ms``;
- ``number`` columns are float64 (missing cells NaN), ``string`` columns pandas' nullable
  ``string``, ``boolean`` columns nullable ``boolean``;
- ``df.attrs`` keeps the tool's ``labels`` (name -> label), the table's properties (``p``)
  and the tool name.

As in the tools' JSON, a ``(%)`` column of the TF-stats, HLO-stats and overview tables
holds a fraction (0.25 for 25%), as upstream writes it; the PyTorch tables hold percents.

Usage::

    frame = table_frame(service.tool_data(run, "framework_op_stats").json()[0], "tf stats")
    frame.sort_values("total_self_time_us", ascending=False).head()
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

_UNIT = re.compile(r"\((?:in )?([^()]+)\)\s*$")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_NOT_WORD = re.compile(r"[^0-9a-zA-Z]+")
_UNIT_WORDS = {"%": "percent"}


def tables_of(obj: Any) -> list:
    """The DataTables in a tool's parsed JSON: one table, or the tables of a list."""
    if isinstance(obj, dict) and "cols" in obj:
        return [obj]
    if isinstance(obj, list):
        return [t for t in obj if isinstance(t, dict) and "cols" in t]
    return []


def column_name(column_id: str, label: str) -> str:
    """``column_id`` in snake_case, ending with the unit of ``label`` (see above)."""
    name = _snake(_CAMEL.sub(r"\1_\2", column_id or label or "column"))
    match = _UNIT.search(label or "")
    if match:
        unit = match.group(1).strip()
        unit = _snake(_UNIT_WORDS.get(unit, unit.replace("/", " per ")))
        if unit and not name.endswith(unit):
            name = f"{name}_{unit}"
    return name


def _snake(text: str) -> str:
    return _NOT_WORD.sub("_", text).strip("_").lower()


def table_frame(table: Mapping[str, Any], tool: str = "") -> pd.DataFrame:
    """One DataTable (``{"cols": [...], "rows": [{"c": [{"v": ...}]}]}``) as a DataFrame."""
    cols = list(table.get("cols") or [])
    rows = list(table.get("rows") or [])
    names = _unique([column_name(str(c.get("id", "")), str(c.get("label", ""))) for c in cols])
    values: list = [[] for _ in cols]  # tool tables are small: one pass over the cells
    for row in rows:
        cells = row.get("c", []) if isinstance(row, dict) else []
        for i in range(len(cols)):
            cell = cells[i] if i < len(cells) else None
            values[i].append(cell.get("v") if isinstance(cell, dict) else None)
    data = {
        name: _typed(vals, str(col.get("type", ""))) for name, vals, col in zip(names, values, cols)
    }
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(rows)))
    frame.attrs["tool"] = tool
    frame.attrs["labels"] = {n: str(c.get("label", "")) for n, c in zip(names, cols)}
    frame.attrs["properties"] = dict(table.get("p") or {})
    return frame


def _typed(values: list, kind: str) -> Any:
    if kind == "number":
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    if kind == "boolean":
        return pd.array(values, dtype="boolean")
    if kind == "string":
        return pd.array([None if v is None else str(v) for v in values], dtype="string")
    return pd.array(values, dtype=object)


def _unique(names: list) -> list:
    seen: dict = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out

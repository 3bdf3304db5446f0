"""Google-Charts DataTable JSON exactly as upstream's C++ writer emits it, and CSV.

Upstream (spec/conversion.md §5.1) writes objects with sorted keys, compact
separators, numbers as doubles and every custom property (``p``) as a string.
We build plain dicts in that key order, so both ``json.dumps`` (as the service
does) and :func:`dumps` give the reference bytes.

Usage::

    columns = [Column("rank", "Rank", "number"), Column("name", "Name", "string")]
    table = data_table(columns, [[1, "a"], [2, "b"]], {"note": "x"})
    dumps(table)   # '{"cols":[...],"p":{"note":"x"},"rows":[{"c":[{"v":1.0},{"v":"a"}]},...]}'
    to_csv(table)  # '"Rank","Name"\\n"1.0","a"\\n...'
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

EMPTY_TABLE: dict[str, list] = {"cols": [], "rows": []}


class Column(NamedTuple):
    id: str
    label: str
    type: str  # "number", "string" or "boolean"
    p: Optional[Mapping[str, str]] = None


def _cast(kind: str) -> Any:
    if kind == "number":
        return float
    if kind == "boolean":
        return bool
    return str


def data_table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[Any]],
    properties: Optional[Mapping[str, Any]] = None,
) -> dict:
    """A DataTable dict: ``rows`` hold Python values in column order."""
    casts = [_cast(c.type) for c in columns]
    out: dict = {"cols": [_column_json(c) for c in columns]}
    if properties:
        out["p"] = {k: str(v) for k, v in sorted(properties.items())}
    out["rows"] = [{"c": [{"v": f(v)} for f, v in zip(casts, row)]} for row in rows]
    return out


def rows_from_columns(*columns: Iterable[Any]) -> list:
    """Rows from column sequences (numpy arrays become Python scalars once)."""
    lists = [c.tolist() if hasattr(c, "tolist") else list(c) for c in columns]
    return [list(r) for r in zip(*lists)]


def _column_json(column: Column) -> dict:
    out: dict[str, Any] = {"id": column.id, "label": column.label}
    if column.p:
        out["p"] = dict(sorted(column.p.items()))
    out["type"] = column.type
    return out


def dumps(obj: Any) -> str:
    """Compact JSON with sorted keys and literal UTF-8, as upstream writes it."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def to_csv(table: Mapping[str, Any]) -> str:
    """One table as CSV (spec/api.md §4): labels, ``str(v)`` cells, all quoted."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    cols = table.get("cols", [])
    writer.writerow([_no_formula(c.get("label") or c.get("id", "")) for c in cols])
    text_columns = [c.get("type") == "string" for c in cols]
    for row in table.get("rows", []):
        cells = row.get("c", []) if isinstance(row, dict) else []
        values = ["" if not c or c.get("v") is None else str(c["v"]) for c in cells]
        values = [_no_formula(v) if t else v for v, t in zip(values, text_columns)] + values[
            len(text_columns) :
        ]
        writer.writerow(values + [""] * (len(cols) - len(values)))  # short rows padded
    return out.getvalue()


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _no_formula(text: str) -> str:
    """Text from a profile (op names, frames) never starts a spreadsheet formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


# --- number formatting shared by the tools (spec §5.1) -------------------------
def one_digit(x: float) -> str:
    return _fixed(x, 1)


def two_digits(x: float) -> str:
    return _fixed(x, 2)


def three_digits(x: float) -> str:
    return _fixed(x, 3)


def percent(fraction_percent: float) -> str:
    """``"%.1f%%"`` of a value already in percent; negative means unknown."""
    if fraction_percent < 0:
        return "unknown"
    return _fixed(fraction_percent, 1) + "%"


def _fixed(x: float, digits: int) -> str:
    # Upstream's NaNs come from 0/0, whose default NaN is negative on x86: "-nan".
    if math.isnan(x):
        return "-nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"

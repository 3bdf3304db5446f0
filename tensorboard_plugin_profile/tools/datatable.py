"""Google-Charts DataTable JSON exactly as upstream's C++ writer emits it, and CSV.

Upstream (docs/conversion.md §5.1) writes objects with sorted keys, compact
separators, numbers as doubles and every custom property (``p``) as a string.
We build plain dicts in that key order, so both ``json.dumps`` (as the service
does) and :func:`dumps` give the reference bytes.

Usage::

    columns = [Column("rank", "Rank", "number"), Column("name", "Name", "string")]
    table = data_table(columns, [[1, "a"], [2, "b"]], {"note": "x"})
    dumps(table)   # '{"cols":[...],"p":{"note":"x"},"rows":[{"c":[{"v":1.0},{"v":"a"}]},...]}'
    to_csv(table)  # '"Rank","Name"\\n"1","a"\\n...'

CSV cells are safe to open in a spreadsheet: a text cell starting with ``= + - @``,
TAB or CR gets a leading ``'`` (OWASP's advice against formula injection); numbers
stay numbers, integers are written without ``.0``, and the columns labelled ``(%)`` that
hold a fraction in the JSON, as upstream's do (``FRACTION_COLUMNS``: TF stats, HLO stats,
the overview's top ops), are written in percent so that the header and the values agree;
our own ``(%)`` columns (PyTorch views, op trees) already hold percent and stay as they are.
Non-finite numbers become empty cells.
"""

from __future__ import annotations

import csv
import html
import io
import math
import numbers
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

from ..common import json_out

EMPTY_TABLE: dict[str, list] = {"cols": [], "rows": []}


class Column(NamedTuple):
    id: str
    label: str
    type: str  # "number", "string" or "boolean"
    p: Optional[Mapping[str, str]] = None


# A number column's unit, as the page reads it (frontend/src/table/units.ts): each value is shown
# in the unit that suits it (µs → ms → s, bytes → KiB → MiB), the raw value in a tooltip and CSV.
# Upstream's tables carry no column properties; the page reads their label's "(us)" suffix.
UNIT_US = {"unit": "us"}
UNIT_MS = {"unit": "ms"}
UNIT_BYTES = {"unit": "bytes"}


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


def column_table(
    columns: Sequence[Column],
    values: Sequence[Sequence[Any]],
    properties: Optional[Mapping[str, Any]] = None,
) -> dict:
    """``data_table`` from one sequence of Python values per column (equal lengths).

    The same dict; its cells are made a column at a time (one cast per column, no
    per-cell ``zip``), about a third faster for thousands of rows.
    """
    table = data_table(columns, [], properties)
    cells = [[{"v": v} for v in map(_cast(c.type), col)] for c, col in zip(columns, values)]
    table["rows"] = [{"c": list(row)} for row in zip(*cells)]
    return table


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
    return json_out.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PERCENT_LABEL = "(%)"
# Column ids whose "(%)" values are fractions (0.31 for 31 %), as upstream writes them.
FRACTION_COLUMNS = frozenset(
    {
        "device_total_self_time_percent",
        "device_cumulative_total_self_time_percent",
        "host_total_self_time_percent",
        "Host_cumulative_total_self_time_percent",
        "total_self_time_percent",
        "cumulative_total_self_time_percent",
        "selfTimePercent",
        "cumulativeTimePercent",
    }
)


def to_csv(table: Mapping[str, Any]) -> str:
    """One table as CSV (docs/http_api.md): labels, then cells, all quoted (see above)."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    cols = table.get("cols", [])
    labels = [str(c.get("label") or c.get("id", "")) for c in cols]
    writer.writerow([csv_text(label) for label in labels])
    scales = [
        100 if label.endswith(_PERCENT_LABEL) and c.get("id") in FRACTION_COLUMNS else 1
        for label, c in zip(labels, cols)
    ]
    for row in table.get("rows", []):
        cells = row.get("c", []) if isinstance(row, dict) else []
        values = [csv_cell(c.get("v") if c else None, scale) for c, scale in zip(cells, scales)]
        writer.writerow(values + [""] * (len(cols) - len(values)))  # short rows padded
    text = out.getvalue()
    try:
        text.encode()  # a lone surrogate (from a JSON trace's name) cannot be sent
    except UnicodeEncodeError:
        text = json_out.well_formed(text)
    return text


def csv_cell(value: Any, scale: int = 1) -> str:
    """One cell's text: numbers as numbers, text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return csv_text(str(value))
    if not math.isfinite(value):
        return ""
    # 12 significant digits drop the multiplication's fuzz: 0.31 -> 31, not 31.000000000000004.
    value = float(value) if scale == 1 else float(f"{float(value) * scale:.12g}")
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def csv_text(text: str) -> str:
    """Text a spreadsheet shows as text: no leading character that starts a formula."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


# --- text shared by the tools -------------------------------------------------------
def link(url: str, text: str) -> str:
    """An advice link as upstream writes it (opens a new tab); both parts are escaped."""
    return f'<a href="{html.escape(url)}" target="_blank">{html.escape(text)}</a>'


# --- number formatting shared by the tools (docs/conversion.md §5.1) -------------------------
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

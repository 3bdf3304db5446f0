"""A comparison frame (``api/compare.py``) as the tools' DataTable JSON, with readable labels.

Each column keeps its stable name as ``id`` (the CSV header, the DataFrame column); its
``label`` is for people ("Device self (us) — baseline"), and times and sizes declare their
unit (``p.unit``) so the page shows each value in a readable one.

Usage::

    table = to_datatable(compare_runs(base, exp, "pytorch_operators"))
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

# A compared value's columns: ``<value>_base``, ``_exp``, ``_delta``, ``_delta_pct``.
BASE, EXP, DELTA, DELTA_PCT = "base", "exp", "delta", "delta_pct"

# A column's words and unit for the page: "device_self_us" reads "Device self (us)".
_UNITS = {"us": "us", "ms": "ms", "bytes": "bytes"}
_WORDS = {
    "hlo": "HLO",
    "avg": "average",
    "flops": "FLOPs",
    "run": "",
    "or": "or",
}
_LABELS = {
    "peak_bytes_in_use": "Peak in use (bytes)",
    "total_us": "Total time (us)",
    "peak_bytes": "Peak of live tensors (bytes)",
    "counter_peak_bytes": "Allocator counter peak (bytes)",
    "live_tensors": "Tensors live at the peak",
}
_UNIT_IN_LABEL = re.compile(r"\((us|ms|bytes)\)")
_SIDE_WORDS = {BASE: "baseline", EXP: "experiment", DELTA: "Δ", DELTA_PCT: "Δ%"}


def column_label(column: str, values: tuple = ()) -> str:
    """The readable header of one comparison column: "Device self (us) — baseline" for
    ``device_self_us_base`` ("Device self — Δ%" for the share); keys and status read as
    words ("HLO op name"). Ids stay the stable names (JSON ``id``, CSV header, DataFrame
    column); labels are for people."""
    for value in values:
        for side, words in _SIDE_WORDS.items():
            if column == f"{value}_{side}":
                text = _words(value)
                if side == DELTA_PCT:  # a share has no unit
                    text = _UNIT_IN_LABEL.sub("", text).replace("  ", " ").strip()
                return f"{text} — {words}"
    return _words(column)


def _words(name: str) -> str:
    if name in _LABELS:
        return _LABELS[name]
    parts = [p for p in name.split("_") if p]
    unit = _UNITS.get(parts[-1]) if len(parts) > 1 else None
    if unit:
        parts = parts[:-1]
    words = [_WORDS.get(p, p) for p in parts]
    text = " ".join(w for w in words if w)
    text = text[:1].upper() + text[1:]
    return f"{text} ({unit})" if unit else text


def to_datatable(frame: pd.DataFrame) -> dict:
    """A comparison as DataTable JSON (the tools' table format), summary in ``p``; each
    column's ``id`` is its stable name, its ``label`` the readable header (``column_label``)."""
    cols = []
    values = tuple(frame.attrs.get("values") or ())
    for name in frame.columns:
        kind = "number" if pd.api.types.is_numeric_dtype(frame[name]) else "string"
        col = {"id": name, "label": column_label(name, values), "type": kind}
        unit = _UNIT_IN_LABEL.search(col["label"])
        if kind == "number" and unit and not name.endswith(f"_{DELTA_PCT}"):
            col["p"] = {"unit": unit.group(1)}  # the page shows each value in a readable unit
        cols.append(col)
    columns: list = []
    for name, col in zip(frame.columns, cols):
        series = frame[name]
        if col["type"] == "number":
            data = series.astype(np.float64).to_numpy()
            columns.append([None if v != v else float(v) for v in data.tolist()])
        else:
            columns.append([None if v is pd.NA else str(v) for v in series.tolist()])
    rows = [{"c": [{"v": v} for v in row]} for row in zip(*columns)] if columns else []
    properties = {k: v for k, v in frame.attrs.items() if isinstance(v, (str, list))}
    return {"cols": cols, "rows": rows, "p": properties}

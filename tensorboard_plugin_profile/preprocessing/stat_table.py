"""The long stats table of an edited plane: old rows (minus replaced ones) and new rows,
stably sorted by event.

Each column is written straight to its place, part by part: a new stat that many events
get (``is_eager``, ``flow``) costs its events and values, not a copy of every column.
Compiled (``stat_merge``: the parts merged by event, or placed by a counting sort, every
row written once) when built, else numpy (a stable sort, then a scatter per column and
part; identical tables). Only double rows touch ``float_value``, which stays as sparse as
the decoder made it.

Usage::

    parts = [StatRows(events, "is_eager", KIND_INT64, ints=flags)]
    stats = merged_stats(plane.stats, parts, {"is_eager": events}, new_row=None)
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Union

import numpy as np
import pandas as pd

from ..common.memsize import sparse_values
from ..xspace import schema
from ..xspace.columns import code_categorical, code_dtype, event_dtype, object_index
from . import stat_merge
from .edit_passes import stable_dest, used_codes
from .placement import sorted_used


@dataclasses.dataclass
class StatRows:
    """One addition of a stat to some events (``ints``/``floats`` None = all zero)."""

    events: np.ndarray
    name: str
    kind: int
    ints: Optional[np.ndarray] = None
    floats: Optional[np.ndarray] = None
    strs: Optional[np.ndarray] = None  # objects, None = no string value


@dataclasses.dataclass
class _Part:
    """Rows of the merged table in one piece: old kept rows or one ``StatRows``."""

    events: np.ndarray
    code: Union[int, np.ndarray]
    kind: Union[int, np.ndarray]
    ints: Optional[np.ndarray]
    floats: Optional[np.ndarray]
    str_codes: Optional[np.ndarray]
    keep: Optional[np.ndarray] = None  # the rows that stay (bools), None = all

    def kept(self) -> _Part:
        """This part with only its kept rows (the numpy path's input)."""
        if self.keep is None:
            return self
        keep = self.keep

        def pick(values):
            return None if values is None else np.asarray(values)[keep]

        floats = pick(self.floats)
        if floats is not None and not floats.view(np.int64).any():
            floats = None  # every bit pattern counts, -0.0 too
        code, kind = pick(self.code), pick(self.kind)
        return _Part(self.events[keep], code, kind, pick(self.ints), floats, pick(self.str_codes))


def merged_stats(
    old: pd.DataFrame,
    added: list,
    replaced: dict,
    new_row,
    int_names=(),
    num_events: int = 0,
    pure_python: Optional[bool] = None,
    threads: Optional[int] = None,
) -> tuple:
    """(stats table, {name: typed event column} of ``int_names``, stats that ``added``
    sets). ``new_row``: event row before -> after the edit (None: rows did not move);
    ``num_events``: events after the edit; ``threads``: of the compiled merge (None: by
    its size, ``compiled.pass_threads``)."""
    if not len(old) and not added:
        return old.copy(), {}
    parts, code_of, strings = _parts(old, added, replaced)
    # A stat whose old rows were all replaced is set again, so it is used either way.
    used = used_codes(np.asarray(parts[0].code), len(code_of))
    used[np.array([p.code for p in parts[1:]], dtype=np.int64)] = True
    categories, remap = sorted_used(list(code_of), used)
    codes = {code_of[name]: name for name in int_names}
    merged = stat_merge.merge(
        parts, remap, strings, new_row, num_events, codes, pure_python, threads
    )
    if merged is not None:
        out, typed = merged
        columns = {codes[c]: _typed(typed[c], codes[c] in schema.UINT_STATS) for c in codes}
        event, code, kind, ints, floats, str_codes = out
        return _table(event, code, kind, ints, floats, str_codes, categories, strings), columns
    parts = [part.kept() for part in parts]
    events = _event_rows(parts, new_row)
    columns = {
        name: _int_column(parts, events, code_of[name], num_events, name in schema.UINT_STATS)
        for name in int_names
    }
    return _assemble(parts, events, remap, categories, strings), columns


def _typed(column: tuple, unsigned: bool):
    data, missing = column
    return pd.arrays.IntegerArray(data.view(np.uint64) if unsigned else data, missing)


def kept_old_rows(old: pd.DataFrame, replaced: dict) -> np.ndarray:
    """Whether each row of the old stats table stays (no ``set_stat`` replaced it)."""
    code_of = {str(name): i for i, name in enumerate(old["stat"].cat.categories.tolist())}
    return _kept_rows(old["event"].to_numpy(), old["stat"].array.codes, code_of, replaced)


def _parts(old: pd.DataFrame, added: list, replaced: dict) -> tuple:
    """(parts: old kept rows then each addition, stat name -> code, string table)."""
    names = [str(c) for c in old["stat"].cat.categories.tolist()]
    code_of = {name: i for i, name in enumerate(names)}
    codes = old["stat"].array.codes  # a view (`.cat.codes` copies them)
    kept = kept_old_rows(old, replaced)
    strings = list(old["str_value"].cat.categories)
    string_of = {s: i for i, s in enumerate(strings)}
    parts = [
        _Part(
            old["event"].to_numpy(),
            codes,
            old["kind"].to_numpy(),
            old["int_value"].to_numpy(),
            old["float_value"].to_numpy(),
            old["str_value"].array.codes,
            keep=None if kept.all() else kept,
        )
    ]
    for rows in added:
        code = code_of.setdefault(rows.name, len(code_of))
        str_codes = None
        if rows.strs is not None:  # new string values join the table once per distinct value
            str_codes = np.array(
                [-1 if v is None else string_of.setdefault(v, len(string_of)) for v in rows.strs],
                dtype=np.int64,
            )
        parts.append(_Part(rows.events, code, rows.kind, rows.ints, rows.floats, str_codes))
    return parts, code_of, list(string_of)


def _int_column(parts: list, events: np.ndarray, code: int, n: int, unsigned: bool):
    """An integer stat's event column straight from the rows being merged: what
    ``well_known_columns`` reads from the merged table (the last value of an event wins:
    rows are written in table order), without finding and gathering them there."""
    data = sparse_values(n, np.int64, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    missing = np.ones(n, dtype=bool)
    start = 0
    for part in parts:
        rows = events[start : start + len(part.events)]
        start += len(part.events)
        values: Union[np.ndarray, int] = part.ints if part.ints is not None else 0
        if isinstance(part.code, np.ndarray):  # the old rows: those of this stat
            mine = np.flatnonzero(part.code == code)
            rows, values = rows[mine], np.asarray(values)[mine]
        elif part.code != code:
            continue
        data[rows] = values
        missing[rows] = False
    return pd.arrays.IntegerArray(data.view(np.uint64) if unsigned else data, missing)


def _kept_rows(event_col: np.ndarray, codes: np.ndarray, code_of: dict, replaced: dict):
    """Old stat rows that no ``set_stat`` replaced."""
    keep = np.ones(len(event_col), dtype=bool)
    for name, events in replaced.items():
        rows = np.flatnonzero(codes == code_of.get(name, -2))
        if not len(rows):  # a new stat: nothing to drop
            continue
        # Membership through a flag per event row (np.isin would sort both sides).
        owners = event_col[rows]
        hit = np.zeros(max(int(owners.max()), int(events.max())) + 1, dtype=bool)
        hit[events] = True
        keep[rows[hit[owners]]] = False
    return keep


def _event_rows(parts: list, new_row) -> np.ndarray:
    """Each part's events, moved to their rows in the edited table, in one array."""
    events = np.empty(sum(len(p.events) for p in parts), dtype=np.int64)
    start = 0
    for part in parts:
        piece = events[start : start + len(part.events)]
        if new_row is None:
            piece[:] = part.events
        else:
            piece[:] = new_row[part.events]  # new_row may be int32
        start += len(part.events)
    return events


def _assemble(parts: list, events, remap, categories, strings: list) -> pd.DataFrame:
    total = len(events)
    # A stable counting sort by event: input row i goes to dest[i].
    dest = stable_dest(events, int(events.max()) + 1 if total else 0)  # events now sorted
    code = np.empty(total, dtype=remap.dtype)
    kind = np.empty(total, dtype=np.int8)
    ints = np.empty(total, dtype=np.int64)
    str_codes: np.ndarray = np.full(total, -1, dtype=code_dtype(len(strings)))
    float_rows, float_values = [], []
    start = 0
    for part in parts:
        at = dest[start : start + len(part.events)]
        start += len(part.events)
        code[at] = remap[part.code]
        kind[at] = part.kind
        ints[at] = 0 if part.ints is None else part.ints
        if part.floats is not None:
            nonzero = np.flatnonzero(part.floats.view(np.int64))
            float_rows.append(at[nonzero])
            float_values.append(part.floats[nonzero])
        if part.str_codes is not None:
            present = np.flatnonzero(part.str_codes >= 0)
            str_codes[at[present]] = part.str_codes[present]
    rows = np.concatenate(float_rows) if float_rows else np.zeros(0, dtype=np.int64)
    values = np.concatenate(float_values) if float_values else np.zeros(0)
    floats = sparse_values(total, np.float64, rows, values)
    narrow = events.astype(event_dtype(int(events[-1]) + 1 if total else 0), copy=False)
    return _table(narrow, code, kind, ints, floats, str_codes, categories, strings)


def _table(events, code, kind, ints, floats, str_codes, categories, strings: list):
    """The stats frame of these columns (codes made here are valid: not checked again)."""
    return pd.DataFrame(
        {
            "event": events,
            "stat": code_categorical(code, categories),
            "kind": kind,
            "int_value": ints,
            "float_value": floats,
            "str_value": code_categorical(str_codes, object_index(strings)),
        },
        copy=False,
    )

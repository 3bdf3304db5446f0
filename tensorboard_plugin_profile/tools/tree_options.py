"""tfprof's display options for the tree views (op_types, scope_view, code_view).

Each option is a query parameter (the same names over HTTP, in ``tbprof convert
--param`` and on the page); docs/tfprof_views.md maps them to tfprof's flags:

- ``account_type_regexes``: only ops whose type fully matches one pattern count;
- ``show_name_regexes`` / ``hide_name_regexes``: a node is shown when its name fully
  matches a show pattern (default: all) and no hide pattern; the shown nodes under a
  hidden one move up to its nearest shown ancestor, as in tfprof;
- ``max_depth``: nodes at most this many levels under the root;
- ``min_micros``: nodes whose total time is at least this many microseconds;
- ``order_by``: the column that orders siblings (names A to Z, numbers largest first);
- ``select``: the columns to send (the tree's own columns always come along).

Totals stay those of the whole subtree, hidden nodes included: hiding a node changes
what is listed, not what was measured. Patterns are user input: ``common/name_patterns``
checks them and bounds the matching work before any runs.

Usage::

    options = tree_options(params)
    records = accounted(records, options)
    nodes = shaped(build_tree(records, paths, "scope"), options)
"""

from __future__ import annotations

import dataclasses
from typing import List, Mapping, Optional, Tuple

import numpy as np
import pandas as pd

from ..common.errors import InvalidArgument
from ..common.name_patterns import Pattern, matching, parse_patterns
from ..common.params import float_param, int_param

# Columns a user may select or order by, and the node column each one sorts on.
SORT_KEYS = {
    "name": "name",
    "kind": "kind",
    "total_time_us": "total_time_ps",
    "self_time_us": "self_time_ps",
    "device_time_us": "device_time_ps",
    "host_time_us": "host_time_ps",
    "total_time_percent": "total_time_ps",
    "occurrences": "occurrences",
    "ops": "ops",
    "bytes": "bytes",
}
# tfprof's names for the same columns (its -select and -order_by values).
TFPROF_NAMES = {
    "micros": "total_time_us",
    "accelerator_micros": "device_time_us",
    "cpu_micros": "host_time_us",
    "occurrence": "occurrences",
    "bytes": "bytes",
    "name": "name",
}
FORMATS = ("json", "pprof")


@dataclasses.dataclass(frozen=True)
class TreeOptions:
    select: Optional[Tuple[str, ...]] = None  # None: every column
    order_by: str = "total_time_us"
    max_depth: Optional[int] = None
    min_micros: float = 0.0
    show: Tuple[Pattern, ...] = ()
    hide: Tuple[Pattern, ...] = ()
    account: Tuple[Pattern, ...] = ()
    format: str = "json"


def tree_options(params: Mapping[str, str]) -> TreeOptions:
    """The options of a request; a bad value is an ``InvalidArgument`` naming it."""
    fmt = params.get("format") or "json"
    if fmt not in FORMATS:
        raise InvalidArgument(f"Parameter 'format' must be one of {', '.join(FORMATS)}.")
    select = None
    if params.get("select"):
        select = tuple(_column(c, "select") for c in params["select"].split(",") if c)
    max_depth = params.get("max_depth")
    return TreeOptions(
        select=select,
        order_by=_column(params.get("order_by") or "total_time_us", "order_by"),
        max_depth=int_param(params, "max_depth", 0, 0, 10**6) if max_depth else None,
        min_micros=float_param(params, "min_micros") or 0.0,
        show=tuple(parse_patterns(params, "show_name_regexes")),
        hide=tuple(parse_patterns(params, "hide_name_regexes")),
        account=tuple(parse_patterns(params, "account_type_regexes")),
        format=fmt,
    )


def _column(name: str, param: str) -> str:
    column = TFPROF_NAMES.get(name.strip(), name.strip())
    if column not in SORT_KEYS:
        known = sorted(set(SORT_KEYS) | set(TFPROF_NAMES))
        raise InvalidArgument(
            f"Parameter {param!r}: unknown column {name[:40]!r}; use one of {', '.join(known)}."
        )
    return column


def accounted(records: pd.DataFrame, options: TreeOptions) -> pd.DataFrame:
    """The records whose op type matches ``account_type_regexes`` (all when none)."""
    if not options.account:
        return records
    types = pd.unique(records["type"].astype(str))
    keep = set(
        t for t, ok in zip(types, matching(options.account, types, "account_type_regexes")) if ok
    )
    return records[records["type"].astype(str).isin(keep)].reset_index(drop=True)


def shaped(nodes: pd.DataFrame, options: TreeOptions) -> pd.DataFrame:
    """The ``build_tree`` nodes the options show, ordered, with their shown parent and depth."""
    if _shows_all(options) and options.order_by == "total_time_us":
        return nodes  # build_tree's own order: the answer without options, unchanged
    shown = _shown(nodes, options)
    parents = nodes["parent"].to_numpy().tolist()
    position = {int(i): k for k, i in enumerate(nodes["id"].to_numpy().tolist())}
    # Nodes come parents first: the nearest shown ancestor of each node in one pass.
    shown_parent = np.full(len(nodes), -1, dtype=np.int64)
    depth = np.zeros(len(nodes), dtype=np.int64)
    for k in range(1, len(nodes)):  # once per tree node, not per event
        p = position[parents[k]]
        shown_parent[k] = p if shown[p] else shown_parent[p]
        depth[k] = depth[shown_parent[k]] + 1
    kept = np.flatnonzero(shown)
    order = _depth_first(nodes, kept, shown_parent, options.order_by)
    out = nodes.iloc[order].copy()
    ids = nodes["id"].to_numpy()
    above = shown_parent[order]
    out["parent"] = np.where(above >= 0, ids[np.maximum(above, 0)], -1)
    out["depth"] = depth[order]
    return out.reset_index(drop=True)


def _shows_all(options: TreeOptions) -> bool:
    return (
        options.max_depth is None
        and options.min_micros <= 0
        and not options.show
        and not options.hide
    )


def _shown(nodes: pd.DataFrame, options: TreeOptions) -> np.ndarray:
    shown = nodes["total_time_ps"].to_numpy(dtype=np.float64) >= options.min_micros * 1e6
    if options.max_depth is not None:
        shown &= nodes["depth"].to_numpy() <= options.max_depth
    names: List[str] = nodes["name"].astype(str).tolist()
    if options.show:
        shown &= np.asarray(matching(options.show, names, "show_name_regexes"), dtype=bool)
    if options.hide:
        shown &= ~np.asarray(matching(options.hide, names, "hide_name_regexes"), dtype=bool)
    shown[0] = True  # the root holds the tree together
    return shown


def _depth_first(nodes: pd.DataFrame, kept: np.ndarray, parent: np.ndarray, order_by: str):
    """Positions of the kept nodes, depth-first, siblings by ``order_by``."""
    key = pd.Series(nodes[SORT_KEYS[order_by]].iloc[kept].to_numpy(), index=kept)
    numeric = pd.api.types.is_numeric_dtype(key)  # numbers largest first, names A to Z
    rank = key.sort_values(ascending=not numeric, kind="stable").index.to_numpy()
    children: dict = {}
    for k in rank.tolist():
        if k:
            children.setdefault(int(parent[k]), []).append(k)
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children.get(k, [])))
    return order

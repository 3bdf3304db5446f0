"""Aggregating op records over a tree of paths (name scopes, Python call stacks).

Each record (one distinct op) has a path: the scopes or frames above it, the op
last. A node's *self* numbers are those of the records whose path ends at it,
its *total* numbers those of its whole subtree, so the root's total is the sum
over all records. Nodes come out depth-first, children by total time (longest
first), which is the order a drill-down table shows them in.

Work is per distinct path prefix (ops and scopes), never per event.

Usage::

    nodes = build_tree(records, paths=records["scope"], kinds=("scope", "op"))
    nodes[["depth", "name", "self_time_ps", "total_time_ps"]]
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

NODE_COLUMNS = (
    "id",
    "parent",
    "depth",
    "name",
    "path",
    "kind",
    "self_time_ps",
    "total_time_ps",
    "device_time_ps",
    "host_time_ps",
    "occurrences",
    "bytes",
    "ops",
)
ROOT_NAME = "(all)"


def build_tree(
    records: pd.DataFrame, paths: Iterable[Sequence[str]], inner_kind: str, leaf_kind: str = "op"
) -> pd.DataFrame:
    """One row per tree node (the root first), from records with a ``path`` each.

    ``records`` needs ``side``, ``self_time_ps``, ``occurrences`` and ``bytes``.
    """
    index: dict = {}  # (parent node, name) -> node
    parent = [-1]
    names = [ROOT_NAME]
    full_paths = [""]
    leaf_of = np.empty(len(records), dtype=np.int64)
    for i, path in enumerate(paths):  # once per distinct op
        node = 0
        for part in path:
            key = (node, str(part))
            found = index.get(key)
            if found is None:
                found = index[key] = len(names)
                parent.append(node)
                names.append(key[1])
                full_paths.append(f"{full_paths[node]} / {key[1]}" if node else key[1])
            node = found
        leaf_of[i] = node
    n = len(names)
    self_time = _sum_at(leaf_of, records["self_time_ps"], n)
    device = _sum_at(leaf_of, records["self_time_ps"].where(records["side"] == "Device", 0), n)
    own = {
        "self_time_ps": self_time,
        "device_time_ps": device,
        "host_time_ps": self_time - device,
        "occurrences": _sum_at(leaf_of, records["occurrences"], n),
        "bytes": _sum_at(leaf_of, records["bytes"], n),
        "ops": np.bincount(leaf_of, minlength=n).astype(np.int64),
    }
    parents = np.asarray(parent, dtype=np.int64)
    depth = _depths(parents)
    totals = {k: _subtree_sums(v, parents, depth) for k, v in own.items()}
    is_leaf = np.bincount(parents[1:], minlength=n) == 0
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "parent": parents,
            "depth": depth,
            "name": names,
            "path": full_paths,
            "kind": np.where(is_leaf, leaf_kind, inner_kind),
            "self_time_ps": own["self_time_ps"],
            "total_time_ps": totals["self_time_ps"],
            "device_time_ps": totals["device_time_ps"],
            "host_time_ps": totals["host_time_ps"],
            "occurrences": totals["occurrences"],
            "bytes": totals["bytes"],
            "ops": totals["ops"],
        }
    )
    frame.loc[0, "kind"] = "root"
    return frame.iloc[_depth_first(parents, totals["self_time_ps"])].reset_index(drop=True)


def _sum_at(where: np.ndarray, values: pd.Series, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, where, values.to_numpy(dtype=np.int64))
    return out


def _depths(parents: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parents), dtype=np.int64)
    for node in range(1, len(parents)):  # parents are created before their children
        depth[node] = depth[parents[node]] + 1
    return depth


def _subtree_sums(values: np.ndarray, parents: np.ndarray, depth: np.ndarray) -> np.ndarray:
    total = values.copy()
    for level in range(int(depth.max(initial=0)), 0, -1):  # deepest level first
        at = np.flatnonzero(depth == level)
        np.add.at(total, parents[at], total[at])
    return total


def _depth_first(parents: np.ndarray, total: np.ndarray) -> list:
    children: dict = {}
    for node in np.lexsort((np.arange(len(parents)), -total)).tolist():
        if parents[node] >= 0:
            children.setdefault(int(parents[node]), []).append(node)
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(children.get(node, [])))
    return order

"""Which TensorFlow op launched each GPU event, when the event itself does not say.

GPU kernels normally carry the op that launched them in a ``tf_op`` stat. Older
TensorFlow GPU profiles (``gpu_multi_worker``: 8 GPUs, 2,660 kernel launches) do not:
the op is known only on the host, where the CUDA launch (an event named after the
kernel, with a ``correlation_id``) runs inside the op's ``name:Type`` TraceMe on the
executor thread. The kernel on the GPU carries the same ``correlation_id``. So:

1. on the host, nest the launches among the TensorFlow op events of their thread
   (``kernels.nesting.nest``, one stack pass over sorted arrays) and keep, per launch,
   its innermost enclosing op (or the launch's own ``tf_op`` when it has one);
2. on each GPU, look up the events without ``tf_op`` by ``correlation_id`` in the sorted
   launch ids (``searchsorted``).

Nothing here is per event in Python: the op names are parsed once per distinct name.

Usage::

    launched = launch_ops(space.plane("/host:CPU"))
    tf_op = launched.tf_ops_of(gpu_plane.events["correlation_id"])   # "" where unknown
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
import pandas as pd

from ...kernels import per_name
from ...kernels.nesting import nest
from ...xspace import op_names, schema
from ...xspace.model import Plane


@dataclasses.dataclass(frozen=True)
class LaunchOps:
    """The TensorFlow op (``name:Type``) of each host launch, by correlation id."""

    correlation_ids: np.ndarray  # uint64, sorted, distinct
    tf_ops: np.ndarray  # object: the op of the launch with that id

    @classmethod
    def empty(cls) -> LaunchOps:
        return cls(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=object))

    def __len__(self) -> int:
        return len(self.correlation_ids)

    def tf_ops_of(self, correlation_ids: pd.Series) -> np.ndarray:
        """Per value of a nullable id column: the launch's op, "" when not known."""
        found = np.full(len(correlation_ids), "", dtype=object)
        present = correlation_ids.notna().to_numpy()
        if not len(self) or not present.any():
            return found
        ids = correlation_ids.to_numpy(dtype=np.uint64, na_value=0)[present]
        at = np.searchsorted(self.correlation_ids, ids)
        at_clipped = np.minimum(at, len(self) - 1)
        hit = (at < len(self)) & (self.correlation_ids[at_clipped] == ids)
        values = np.full(len(ids), "", dtype=object)
        values[hit] = self.tf_ops[at_clipped[hit]]
        found[present] = values
        return found


def launch_ops(host: Optional[Plane]) -> LaunchOps:
    """The op of every launch on the host plane that has a ``correlation_id``."""
    if host is None or host.events.empty or schema.CORRELATION_ID not in host.events:
        return LaunchOps.empty()
    ev = host.events
    real = _real_lines(host)[ev["line"].to_numpy()]
    launches = np.flatnonzero(ev[schema.CORRELATION_ID].notna().to_numpy() & real)
    if not len(launches):
        return LaunchOps.empty()
    codes, names = per_name.distinct_native(ev["name"])
    is_op = (op_names.parse_op_names(names.tolist())["category"] == op_names.TENSORFLOW).to_numpy()
    op_rows = per_name.rows_where(is_op, codes)
    op_rows = op_rows[real[op_rows]]
    op_rows = op_rows[~np.isin(op_rows, launches, assume_unique=True)]
    enclosing = _enclosing_op(ev, launches, op_rows)
    launch_names = np.full(len(launches), "", dtype=object)
    has_op = enclosing >= 0
    launch_names[has_op] = per_name.lookup(names.to_numpy(), codes[enclosing[has_op]], "")
    own = _own_tf_op(ev, launches)
    launch_names = np.where(own != "", own, launch_names)
    ids = ev[schema.CORRELATION_ID].to_numpy(dtype=np.uint64, na_value=0)[launches]
    keep = launch_names != ""
    ids, launch_names = ids[keep], launch_names[keep]
    ids, first = np.unique(ids, return_index=True)  # an id launched twice: its first launch
    return LaunchOps(ids, launch_names[first])


def _real_lines(plane: Plane) -> np.ndarray:
    line_ids = plane.lines["id"].to_numpy(dtype=np.int64)
    return ~((line_ids >= schema.DERIVED_LINE_ID_MIN) & (line_ids <= schema.DERIVED_LINE_ID_MAX))


def _enclosing_op(ev: pd.DataFrame, launches: np.ndarray, op_rows: np.ndarray) -> np.ndarray:
    """Per launch: the row of its innermost enclosing op event on its line, -1 if none."""
    rows = np.concatenate([op_rows, launches])
    line = ev["line"].to_numpy()[rows].astype(np.int64)
    order = np.lexsort((rows, line))  # grouped by line, in insertion order within each
    rows, line = rows[order], line[order]
    begin = ev["begin_ps"].to_numpy()[rows]
    end = begin + ev["duration_ps"].to_numpy()[rows]
    parent = nest(line, begin, end, rows).parent
    is_launch = np.isin(rows, launches, assume_unique=True)
    parent_row = np.where(parent >= 0, rows[np.maximum(parent, 0)], -1)
    # A launch's parent is an op (launches contain nothing); unmatched nesting gives -1.
    parent_row = np.where(np.isin(parent_row, op_rows, assume_unique=False), parent_row, -1)
    result = np.full(len(launches), -1, dtype=np.int64)
    position = np.searchsorted(launches, rows[is_launch])
    result[position] = parent_row[is_launch]
    return result


def _own_tf_op(ev: pd.DataFrame, launches: np.ndarray) -> np.ndarray:
    """Per launch: its own ``tf_op`` stat ("" when absent)."""
    if schema.TF_OP not in ev:
        return np.full(len(launches), "", dtype=object)
    codes, values = per_name.distinct(ev[schema.TF_OP], launches)
    return per_name.lookup(values.to_numpy(dtype=object), codes, "")

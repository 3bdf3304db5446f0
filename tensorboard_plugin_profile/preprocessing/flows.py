"""Flow synthesis (``AddFlowsToXplane``, docs/conversion.md §3.3).

Adds ``flow`` stats (uint64) that tie a kernel launch to its kernel
(``correlation_id``) and a TraceMe producer to its consumers (``_pt``/``_p``,
``_ct``/``_c``), written as ``xspace/flow_codes.py`` encodes them.

Usage::

    add_flows(edit, host_id=host_fingerprint(space), is_host_plane=True)
"""

from __future__ import annotations

import numpy as np

from ..xspace import schema
from ..xspace.event_stats import int_stat
from ..xspace.flow_codes import (  # noqa: F401 (host_fingerprint: for preprocess)
    FLOW_IN,
    FLOW_OUT,
    encode,
    flow_ids,
    host_fingerprint,
)
from ..xspace.model import KIND_UINT64
from .plane_edit import PlaneEdit


def add_flows(edit: PlaneEdit, host_id: int, is_host_plane: bool) -> None:
    """Adds every flow of one plane (launches first, then producers, then consumers)."""
    plane = edit.plane
    stats = plane.stats
    # Only uint64-typed correlation ids make flows (an int64 one reads as absent).
    launches = stats[(stats["stat"] == schema.CORRELATION_ID) & (stats["kind"] == KIND_UINT64)]
    if len(launches):
        rows = launches["event"].to_numpy()
        ids = launches["int_value"].to_numpy().view(np.uint64)
        category = np.full(len(rows), schema.CONTEXT_TYPE_GPU_LAUNCH, dtype=np.uint64)
        flows = encode(flow_ids(host_id, ids, np.zeros(len(rows))), 0, category)
        direction = FLOW_OUT if is_host_plane else FLOW_IN
        edit.add_stat(rows, schema.FLOW_STAT, flows | np.uint64(direction), KIND_UINT64)
    sides = (
        (schema.PRODUCER_TYPE, schema.PRODUCER_ID, FLOW_OUT),
        (schema.CONSUMER_TYPE, schema.CONSUMER_ID, FLOW_IN),
    )
    for type_stat, id_stat, direction in sides:
        typed, contexts = int_stat(plane, type_stat)  # the rows that carry it, no column
        with_id, id_values = int_stat(plane, id_stat)
        rows = np.intersect1d(typed, with_id, assume_unique=True)
        if not len(rows):
            continue
        context = contexts[np.searchsorted(typed, rows)]
        # Unknown context types count as Generic (0).
        context = np.where((context < 0) | (context > schema.CONTEXT_TYPE_MAX), 0, context)
        ids = id_values[np.searchsorted(with_id, rows)].view(np.uint64)
        flows = encode(flow_ids(host_id, ids, context), direction, context)
        edit.add_stat(rows, schema.FLOW_STAT, flows, KIND_UINT64)

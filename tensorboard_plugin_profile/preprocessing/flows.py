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
from ..xspace.event_stats import int_stats, table_rows
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
    sides = (
        (schema.PRODUCER_TYPE, schema.PRODUCER_ID, FLOW_OUT),
        (schema.CONSUMER_TYPE, schema.CONSUMER_ID, FLOW_IN),
    )
    # Every stat read here in one pass over the stats table each (rows only where a stat
    # is set, no mask or filtered copy of the whole table).
    found = int_stats(plane, [name for side in sides for name in side[:2]])
    # Only uint64-typed correlation ids make flows (an int64 one reads as absent).
    launches = table_rows(plane, [schema.CORRELATION_ID]).get(schema.CORRELATION_ID)
    if launches is not None:
        launches = launches[stats["kind"].to_numpy()[launches] == KIND_UINT64]
    if launches is not None and len(launches):
        rows = stats["event"].to_numpy()[launches]
        ids = stats["int_value"].to_numpy()[launches].view(np.uint64)
        category = np.full(len(rows), schema.CONTEXT_TYPE_GPU_LAUNCH, dtype=np.uint64)
        flows = encode(flow_ids(host_id, ids, np.zeros(len(rows))), 0, category)
        direction = FLOW_OUT if is_host_plane else FLOW_IN
        edit.add_stat(rows, schema.FLOW_STAT, flows | np.uint64(direction), KIND_UINT64)
    for type_stat, id_stat, direction in sides:
        typed, contexts = found[type_stat]  # the rows that carry it, no column
        with_id, id_values = found[id_stat]
        if not len(typed) or not len(with_id):
            continue
        # Both ascend without repeats: the rows carrying both, found by a search of one in
        # the other (intersect1d concatenated and sorted them), and their values with them.
        at = np.minimum(np.searchsorted(with_id, typed), len(with_id) - 1)
        both = with_id[at] == typed
        rows = typed[both]
        if not len(rows):
            continue
        context = contexts[both]
        # Unknown context types count as Generic (0).
        context = np.where((context < 0) | (context > schema.CONTEXT_TYPE_MAX), 0, context)
        ids = id_values[at[both]].view(np.uint64)
        flows = encode(flow_ids(host_id, ids, context), direction, context)
        edit.add_stat(rows, schema.FLOW_STAT, flows, KIND_UINT64)

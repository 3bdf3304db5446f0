"""Flow synthesis (``AddFlowsToXplane``, docs/conversion.md §3.3).

Adds ``flow`` stats (uint64) that tie a kernel launch to its kernel
(``correlation_id``) and a TraceMe producer to its consumers (``_pt``/``_p``,
``_ct``/``_c``). Encoding: bits 0-1 direction (1 in, 2 out), bits 2-57 flow id,
bits 58-63 category (the context type). Flow ids are a stable 64-bit mix of
(host, id[, type]); upstream salts its hash, so only which events share a flow
id is meaningful.

Usage::

    add_flows(edit, host_id=host_fingerprint(space), is_host_plane=True)
"""

from __future__ import annotations

import zlib

import numpy as np

from ...xspace import schema
from ...xspace.event_stats import int_stat
from ...xspace.model import KIND_UINT64
from .plane_edit import PlaneEdit

FLOW_IN = 1
FLOW_OUT = 2
_ID_MASK = np.uint64((1 << 56) - 1)


def host_fingerprint(hostnames: list) -> int:
    """A 32-bit id of the first host name (0 without one)."""
    return zlib.crc32(hostnames[0].encode()) if hostnames else 0


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def flow_ids(host_id: int, ids: np.ndarray, context_type: np.ndarray) -> np.ndarray:
    """56-bit flow ids for (host, id, type) triples."""
    with np.errstate(over="ignore"):
        h = _mix(np.full(len(ids), host_id, dtype=np.uint64))
        h = _mix(h ^ ids.astype(np.uint64))
        h = _mix(h ^ context_type.astype(np.uint64))
    return h & _ID_MASK


def encode(ids: np.ndarray, direction: int, category: np.ndarray) -> np.ndarray:
    """The uint64 ``flow`` stat values."""
    return (
        np.uint64(direction)
        | (ids.astype(np.uint64) << np.uint64(2))
        | (category.astype(np.uint64) << np.uint64(58))
    )


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

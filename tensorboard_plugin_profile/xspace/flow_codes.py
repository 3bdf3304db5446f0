"""How a flow is written into a ``flow`` stat (uint64): bits 0-1 direction (1 in, 2 out),
bits 2-57 flow id, bits 58-63 category (the context type).

Flow ids are a stable 64-bit mix of (host, id[, type]); upstream salts its hash, so only
which events share a flow id is meaningful. Preprocessing (``preprocessing/flows.py``)
and the Chrome-trace reader (``chrome_trace/raw.py``) both write flows this way.
"""

from __future__ import annotations

import zlib

import numpy as np

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

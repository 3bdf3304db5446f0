"""TraceMe 2.0 mutators (docs/conversion.md §3.1): stats and events that old
runtimes did not record but grouping and flows need.

* root levels for batching events (``_r``);
* producer/consumer pairs connected through a hash of shared stats (TPU runtime
  request and launch events), added only when the plane has both sides;
* ``run_id`` of TPU launch events masked to its low 27 bits;
* ``ThreadpoolListener::StartRegion``/``StopRegion`` pairs → one
  ``ThreadpoolListener::Region`` span (JAX and TF CPU thread pools).

Context ids are a stable 64-bit hash of the stat values (upstream uses a salted
hash; only equality matters).

Usage::

    edit = PlaneEdit(plane)
    apply_stat_mutators(edit)
    add_threadpool_regions(edit)
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from ..xspace import schema
from ..xspace.event_stats import int_stat
from .plane_edit import PlaneEdit

_RUN_ID_MASK = (1 << 27) - 1
_CONTEXT_TPU_STREAM = 11
_CONTEXT_TPU_LAUNCH = 12
_TPU_REQUESTS = (
    "RunProgramRequest",
    "HostCallbackRequest",
    "TransferH2DRequest",
    "TransferPreprocessedH2DRequest",
    "TransferD2HRequest",
    "OnDeviceSendRequest",
    "OnDeviceRecvRequest",
    "OnDeviceSendRecvLocalRequest",
    "CustomWait",
    "OnDeviceSendRequestMulti",
    "OnDeviceRecvRequestMulti",
    "PjrtAsyncWait",
)
# (producer, consumers, stats hashed into the context id, defaults, context type)
_CONNECTED: tuple[tuple[str, tuple[str, ...], tuple[str, ...], dict[str, int], int], ...] = (
    (
        schema.EXECUTOR_STATE_PROCESS,
        ("TpuExecuteOp",),
        (schema.STEP_ID, schema.ITER_NUM),
        {},
        schema.CONTEXT_TYPE_LEGACY,
    ),
    ("EnqueueRequestLocked", _TPU_REQUESTS, ("request_id", "queue_addr"), {}, _CONTEXT_TPU_STREAM),
    (
        "DoEnqueueProgram",
        ("CompleteCallbacks",),
        ("device_ordinal", "queue_id", "run_id", "core_type"),
        {"core_type": 0},
        _CONTEXT_TPU_LAUNCH,
    ),
)
_RUN_ID_EVENTS = ("DoEnqueueProgram", "CompleteCallbacks", "DoEnqueueContinuationProgram")


def apply_stat_mutators(edit: PlaneEdit) -> None:
    """Root levels, connected pairs and run-id masks on one plane."""
    names = edit.plane.events["name"]
    present = set(edit.plane.event_metadata["name"].tolist())
    for event_name, level in [(schema.BATCHING_SESSION_RUN, 1)] + [
        (n, 2) for n in schema.PROCESS_BATCH
    ]:
        if event_name in present:
            rows = np.flatnonzero((names == event_name).to_numpy())
            edit.set_stat(rows, schema.ROOT_LEVEL, np.full(len(rows), level))
    for producer, consumers, keys, defaults, context in _CONNECTED:
        if producer in present and not present.isdisjoint(consumers):
            _connect(edit, producer, consumers, keys, defaults, context)
    _mask_run_ids(edit, present)


def _connect(edit, producer, consumers, keys, defaults, context) -> None:
    plane = edit.plane
    names = plane.events["name"]
    sides = (
        (np.flatnonzero((names == producer).to_numpy()), schema.PRODUCER_TYPE, schema.PRODUCER_ID),
        (
            np.flatnonzero(names.isin(consumers).to_numpy()),
            schema.CONSUMER_TYPE,
            schema.CONSUMER_ID,
        ),
    )
    # The keys' values at the connected events only (not a column of objects per event).
    asked = np.union1d(sides[0][0], sides[1][0])
    columns = [plane.event_stat(k, at=asked).tolist() for k in keys]
    for side_rows, type_stat, id_stat in sides:
        rows, ids = [], []
        for row, at in zip(side_rows.tolist(), np.searchsorted(asked, side_rows).tolist()):
            values = [col[at] for col in columns]
            values = [defaults.get(k, v) if v is None else v for k, v in zip(keys, values)]
            if any(v is None for v in values):
                continue
            rows.append(row)
            ids.append(stable_hash(values))
        edit.set_stat(rows, type_stat, np.full(len(rows), context))
        edit.set_stat(rows, id_stat, np.asarray(ids, dtype=np.uint64).view(np.int64))


def _mask_run_ids(edit: PlaneEdit, present: set) -> None:
    if present.isdisjoint(_RUN_ID_EVENTS):
        return
    named = np.flatnonzero(edit.plane.events["name"].isin(_RUN_ID_EVENTS).to_numpy())
    run_ids = edit.plane.event_stat(schema.RUN_ID, at=named)
    present_ids = run_ids.notna().to_numpy()
    rows = named[present_ids]
    values = [int(v) & _RUN_ID_MASK for v in run_ids[present_ids]]
    edit.set_stat(rows, schema.RUN_ID, np.asarray(values, dtype=np.int64))


def stable_hash(values) -> int:
    """A 64-bit hash of a tuple of ints/strings, the same in every process."""
    text = "\x1f".join(f"{type(v).__name__}:{v}" for v in values).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def add_threadpool_regions(edit: PlaneEdit) -> None:
    """One ``ThreadpoolListener::Region`` per StopRegion that follows a StartRegion.

    The start is the latest StartRegion carrying a consumer id (``_c``) on the same
    line; like upstream, a start is reused by every later stop until the next
    start. Regions carry that consumer id (type ThreadpoolEvent) and are added
    after grouping and flows, as upstream 2.24.2 output shows (no ``group_id`` or
    ``flow`` on regions).
    """
    plane = edit.plane
    present = set(plane.event_metadata["name"].tolist())
    if not {schema.THREADPOOL_START_REGION, schema.THREADPOOL_STOP_REGION} <= present:
        return
    ev = plane.events
    # Only the rows that carry a consumer id, and one byte per event for the two names:
    # no typed column (8 B + a mask per event) and no Series per comparison.
    consumer_rows, consumer_ids = int_stat(plane, schema.CONSUMER_ID)
    kind = _name_kinds(ev["name"], (schema.THREADPOOL_START_REGION, schema.THREADPOOL_STOP_REGION))
    rows = np.flatnonzero(kind)
    kind = kind[rows]
    starts_at, stops_at = kind == 1, kind == 2  # at ``rows``
    starts_at[starts_at] = _present(consumer_rows, rows[starts_at])  # a start needs its id
    kept = starts_at | stops_at
    rows, starts_at, stops_at = rows[kept], starts_at[kept], stops_at[kept]
    if not len(rows):
        return
    # Forward-fill the latest start row within each line.
    line = ev["line"].to_numpy()[rows]
    last_start = pd.Series(np.where(starts_at, rows, np.nan)).groupby(line).ffill().to_numpy()
    begin = ev["begin_ps"].to_numpy()
    is_stop = stops_at & ~np.isnan(last_start)
    start_rows = last_start[is_stop].astype(np.int64)
    stop_rows = rows[is_stop]
    valid = begin[start_rows] != 0  # upstream treats a zero start time as "no start"
    start_rows, stop_rows = start_rows[valid], stop_rows[valid]
    if not len(stop_rows):
        return
    meta = edit.metadata_id(schema.THREADPOOL_REGION)
    # Regions are numbered line by line (then by stop row), as one add per line would.
    region_line = line[is_stop][valid]
    by_line = np.argsort(region_line, kind="stable")
    start_rows, stop_rows = start_rows[by_line], stop_rows[by_line]
    new = edit.add_events(
        region_line[by_line],
        np.full(len(by_line), meta),
        begin[start_rows],
        begin[stop_rows] - begin[start_rows],
    )
    region_ids = consumer_ids[np.searchsorted(consumer_rows, start_rows)]  # every start has one
    edit.set_stat(new, schema.CONSUMER_ID, region_ids)
    edit.set_stat(
        new, schema.CONSUMER_TYPE, np.full(len(new), schema.CONTEXT_TYPE_THREADPOOL_EVENT)
    )


def _name_kinds(names: pd.Series, wanted: tuple) -> np.ndarray:
    """int8 per event: k + 1 where its name is ``wanted[k]``, else 0 (per name, not per event:
    one lookup in the categorical's codes)."""
    categories = names.cat.categories
    table = np.zeros(len(categories) + 1, dtype=np.int8)  # the last entry: a missing name (-1)
    for k, name in enumerate(wanted):
        if name in categories:
            table[categories.get_loc(name)] = k + 1
    return table[names.array.codes]


def _present(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows``: whether it is one of the increasing ``sorted_rows``."""
    if not len(sorted_rows):
        return np.zeros(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return sorted_rows[at] == rows

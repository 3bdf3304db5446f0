"""Upstream's streaming ``trace_viewer@`` envelope of a whole trace, for old clients.

Key order and metadata events follow docs/conversion.md §6.2. Every event comes as a
complete event (``ph: "X"``, µs ``ts``/``dur``, at least 1 ps long) with
``args.group_id`` when grouped; an event carrying a flow gets ``bind_id`` (our dense
flow number), ``flow_in``/``flow_out`` and ``cat``. Nothing is filtered by visibility.
The text is produced ``chunk_events`` events at a time from the index columns, so a
large trace is never held as one string.

Usage::

    body = b"".join(envelope_chunks(index))
"""

from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from ..analysis.trace.trace_flows import CATEGORY_NAMES
from ..analysis.trace.trace_index import TraceIndex
from ..common import json_out

CHUNK_EVENTS = 8192


def _head(index: TraceIndex) -> str:
    lo, hi = index.span_ps
    return (
        '{"displayTimeUnit":"ns","metadata":{"highres-ticks":true}, "codeLink":"",'
        '"useNewBackend": false,"details":[{"name":"mpmd_pipeline_view","value":false}],'
        f'"returnedEventsSize":{index.num_events},"filteredByVisibility":false,'
        f'"fullTimespan":[{lo / 1e9:.6g},{hi / 1e9:.6g}],"stackFrames":{{}},"traceEvents":['
    )


_TAIL = '], "showCounterMessage": "" ,"totalCounterEvents":0}'


def _dumps(obj) -> str:
    return json_out.dumps(obj, separators=(",", ":"))


def metadata_events(index: TraceIndex) -> list:
    thread_count: dict = {}
    for pid, _, _ in index.threads:
        thread_count[pid] = thread_count.get(pid, 0) + 1
    out = []
    for pid, name in index.processes:
        out.append(
            {"args": {"name": name}, "name": "process_name", "ph": "M", "pid": pid,
             "thread_count": thread_count.get(pid, 0)}
        )  # fmt: skip
        out.append({"args": {"sort_index": pid}, "name": "process_sort_index", "ph": "M",
                    "pid": pid})  # fmt: skip
        for p, tid, thread in index.threads:
            if p != pid:
                continue
            if thread:
                out.append({"args": {"name": thread}, "name": "thread_name", "ph": "M",
                            "pid": pid, "tid": tid})  # fmt: skip
            out.append({"args": {"sort_index": tid}, "name": "thread_sort_index", "ph": "M",
                        "pid": pid, "tid": tid})  # fmt: skip
    return out


def _flow_fields(index: TraceIndex) -> dict:
    """Position → text of its flow keys (the first flow of an event with several)."""
    flows = index.flows
    out: dict = {}
    for pos, flow, direction, category in zip(
        flows.end_pos.tolist(),
        flows.end_flow.tolist(),
        flows.end_direction.tolist(),
        flows.end_category.tolist(),
    ):
        if pos in out:
            continue
        text = f'"bind_id":{flow},'
        cat = CATEGORY_NAMES[category] if 0 <= category < len(CATEGORY_NAMES) else ""
        if cat:
            text += f'"cat":{json.dumps(cat)},'
        if direction & 1:
            text += '"flow_in":true,'
        if direction & 2:
            text += '"flow_out":true,'
        out[pos] = text
    return out


def envelope_chunks(index: TraceIndex, chunk_events: int = CHUNK_EVENTS) -> Iterator[bytes]:
    yield _head(index).encode()
    meta = metadata_events(index)
    yield ",".join(_dumps(e) for e in meta).encode()
    names = [json.dumps(s) for s in index.strings]
    flow_text = _flow_fields(index)
    separator = "," if meta else ""
    for lo in range(0, index.num_events, chunk_events):
        hi = min(lo + chunk_events, index.num_events)
        yield (separator + ",".join(_event_texts(index, lo, hi, names, flow_text))).encode()
        separator = ","
    yield _TAIL.encode()


def _event_texts(index: TraceIndex, lo: int, hi: int, names: list, flow_text: dict):
    positions = np.arange(lo, hi)
    rows = index.rows_at(positions)
    pids = index.row_pid[rows].tolist()
    tids = index.row_tid[rows].tolist()
    begin = index.begins_at(positions)
    ts = (begin / 1e6).tolist()
    dur = (np.maximum(index.durations_at(positions), 1) / 1e6).tolist()
    groups = index.group_id[lo:hi].tolist()
    name_ids = index.name_id[lo:hi].tolist()
    for pos, pid, tid, t, d, g, n in zip(range(lo, hi), pids, tids, ts, dur, groups, name_ids):
        args = f'{{"group_id":{g}}}' if g >= 0 else "{}"
        yield (
            f'{{"pid":{pid},"tid":{tid},"name":{names[n]},"ts":{t!r},"dur":{d!r},'
            f'{flow_text.get(pos, "")}"ph":"X","args":{args}}}'
        )

"""The ``trace_viewer@`` tool: windows, search and details over a trace index.

The index (``analysis.trace.trace_index``) is built once per host set and kept as long as the
decoded Spaces live, so every window, search or detail request of a session after the
first costs only its own query. Formats: docs/trace_viewer.md. Without any query
parameter the answer is upstream's streaming envelope of the whole trace
(``trace_envelope``), for old clients.

Usage::

    output = convert([("vm", space)], {"start_time_ms": "10", "end_time_ms": "20"})
    json.loads(output)["rows"][0]["ts"]
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from ..analysis.trace import counters, trace_search, trace_window
from ..analysis.trace.one_clock import on_one_clock
from ..analysis.trace.trace_index import TraceIndex, TracePlane, build_index
from ..common import json_out
from ..common.errors import InvalidArgument
from ..common.memo import memoized
from ..common.params import float_param, int_list_param, int_param
from ..preprocessing.preprocess import preprocess
from . import ToolOutput, trace_details, trace_envelope
from .trace_viewer import trace_planes

DEFAULT_RESOLUTION = 2000
DEFAULT_MAX_RESULTS = 1000
# The most a request may ask for. Each item costs a few Python numbers while the answer
# is built and ~35 bytes of JSON: for max_events=100000000 a 4.2M-event trace answered
# 134 MB and peaked ~650 MB higher than with the default; at this maximum, 32 MB and no
# higher peak (docs/trace_viewer.md).
MAX_EVENTS_LIMIT = 1_000_000
MAX_FLOWS_LIMIT = 200_000
MAX_RESULTS_LIMIT = 100_000
WINDOW_PARAMS = ("start_time_ms", "end_time_ms", "resolution", "pids", "tids", "max_events")


def convert(hosts: list, params: Mapping[str, str]):
    index = trace_index_of(hosts)
    if params.get("details"):
        return _json(trace_details.details(index, int_param(params, "details", -1)))
    if params.get("search") or params.get("search_regex"):
        return _json(search_json(index, params))
    if params.get("format") == "columnar" or any(params.get(k) for k in WINDOW_PARAMS):
        return _json(window_json(index, params))
    _ = index.group_id  # made now, so the memory charged after this request includes it
    return ToolOutput(
        content_type="application/json", chunks=lambda: trace_envelope.envelope_chunks(index)
    )


# --- the index, once per host set ----------------------------------------------------
def trace_index_of(hosts: list) -> TraceIndex:
    """The index of (host name, Space) pairs, reused while those Spaces live."""
    hosts = on_one_clock(hosts)  # ProfilerHook steps drawn together follow in time
    names = ",".join(name for name, _ in hosts)
    return memoized(
        [space for _, space in hosts],
        f"trace_index:{names}",
        lambda: build_index(shown_planes(hosts)),
    )


def shown_planes(hosts: list) -> list:
    """Planes as upstream's streaming viewer shows them: pid + 1000 × (host + 1)."""
    shown = []
    for i, (name, space) in enumerate(hosts):
        for pid, plane in trace_planes(preprocess(space)):
            shown.append(TracePlane(1000 * (i + 1) + pid, f"{name} {plane.name}", plane))
    return shown


def selected_rows(index: TraceIndex, params: Mapping[str, str]) -> Optional[np.ndarray]:
    pids, tids = int_list_param(params, "pids"), int_list_param(params, "tids")
    if pids is None and tids is None:
        return None
    mask = np.ones(len(index.row_pid), dtype=bool)
    if pids is not None:
        mask &= np.isin(index.row_pid, pids)
    if tids is not None:
        mask &= np.isin(index.row_tid, tids)
    return np.flatnonzero(mask)


def window_of(index: TraceIndex, params: Mapping[str, str]) -> tuple:
    """(start_ps, end_ps) clamped to the trace; end 0 or absent = end of trace."""
    lo, hi = index.span_ps
    start, end = float_param(params, "start_time_ms"), float_param(params, "end_time_ms")
    start_ps = lo if start is None else min(max(int(round(start * 1e9)), lo), hi)
    end_ps = hi if not end else min(max(int(round(end * 1e9)), lo), hi)
    return start_ps, max(start_ps, end_ps)


# --- answers -------------------------------------------------------------------------
def _json(obj) -> bytes:
    return json_out.utf8(json_out.dumps(obj, separators=(",", ":"), ensure_ascii=False))


def _ms(ps: int) -> float:
    return float(f"{ps / 1e9:.6g}")


def window_json(index: TraceIndex, params: Mapping[str, str]) -> dict:
    start_ps, end_ps = window_of(index, params)
    resolution = max(int_param(params, "resolution", DEFAULT_RESOLUTION), 0)
    pixel_ps = (end_ps - start_ps) / resolution if resolution else 0.0
    items = trace_window.query_window(
        index,
        start_ps,
        end_ps,
        pixel_ps,
        rows=selected_rows(index, params),
        max_events=_cap(params, "max_events", trace_window.DEFAULT_MAX_EVENTS, MAX_EVENTS_LIMIT),
        max_flows=_cap(params, "max_flows", trace_window.DEFAULT_MAX_FLOWS, MAX_FLOWS_LIMIT),
    )
    origin_ns = start_ps // 1000
    rows, flows = _rows_and_flows(index, items, origin_ns * 1000)
    lo, hi = index.span_ps
    return {
        "version": 1,
        "window": [start_ps / 1e9, end_ps / 1e9],
        "origin_ns": origin_ns,
        "fullTimespan": [_ms(lo), _ms(hi)],
        "resolution": resolution,
        "strings": index.strings,
        "processes": [{"pid": p, "name": n, "sort": p} for p, n in index.processes],
        "threads": [{"pid": p, "tid": t, "name": n} for p, t, n in index.threads],
        "rows": rows,
        "flows": flows,
        "events": items.events,
        "visible": items.visible,
        "returned": len(items.first),
        "merged": items.merged,
        "truncated": items.truncated,
        "flows_truncated": items.flows_truncated,
        "hint": _hint(items),
    }


def _cap(params: Mapping[str, str], name: str, default: int, limit: int) -> int:
    """A cap on the items of an answer (negative = 0); above ``limit`` a clear 400."""
    value = max(int_param(params, name, default), 0)
    if value > limit:
        raise InvalidArgument(
            f"Parameter {name!r} must be at most {limit:,}, not {value:,}: larger answers "
            "take hundreds of MB to build. Zoom in, choose fewer rows (pids, tids) or a "
            "narrower search."
        )
    return value


def _hint(items: trace_window.WindowItems) -> str:
    parts = []
    boxes = int((items.count > 1).sum())
    if boxes:
        parts.append(
            f"{items.merged} events narrower than a pixel are merged into {boxes} boxes; "
            "zoom in to see them."
        )
    if items.truncated:
        parts.append(
            f"Showing {len(items.first)} items, capped per row; zoom in or choose fewer rows."
        )
    return " ".join(parts)


def _rows_and_flows(index: TraceIndex, items: trace_window.WindowItems, origin_ps: int) -> tuple:
    """Columnar rows (ns offsets from origin) and arrows pointing into them."""
    flows = index.flows
    a_from, a_to = flows.arrow_from[items.arrows], flows.arrow_to[items.arrows]
    row_from, row_to = index.rows_at(a_from), index.rows_at(a_to)
    used = np.unique(np.concatenate([items.row, row_from, row_to]))
    slot = np.full(len(index.row_pid), -1, dtype=np.int64)
    slot[used] = np.arange(len(used))
    starts = np.searchsorted(items.row, used, side="left").tolist()
    stops = np.searchsorted(items.row, used, side="right").tolist()
    ts = (items.begin_ps - origin_ps) // 1000
    dur = -((items.begin_ps - items.end_ps_) // 1000)  # ceil: a 1 ps event stays visible
    columns = {
        "ts": ts.tolist(),
        "dur": dur.tolist(),
        "name": items.name_id.tolist(),
        "depth": items.depth.tolist(),
        "merged": items.count.tolist(),
        "event": items.first.tolist(),
    }
    # Counter rows also carry each item's value (a box's peak): the page draws them as charts.
    peaks = None
    if index.value is not None and index.row_counter.any():
        peaks = counters.item_peaks(index.value, items.first, items.count)
    rows = []
    for r, lo, hi in zip(used.tolist(), starts, stops):
        row = {"pid": int(index.row_pid[r]), "tid": int(index.row_tid[r])}
        row.update({key: values[lo:hi] for key, values in columns.items()})
        if peaks is not None and index.row_counter[r]:
            row["value"] = peaks[lo:hi].tolist()
        rows.append(row)
    arrows = {
        "from_row": slot[row_from].tolist(),
        "from_ts": ((index.begins_at(a_from) - origin_ps) // 1000).tolist(),
        "to_row": slot[row_to].tolist(),
        "to_ts": ((index.begins_at(a_to) - origin_ps) // 1000).tolist(),
        "from_event": a_from.tolist(),
        "to_event": a_to.tolist(),
        "flow": flows.arrow_flow[items.arrows].tolist(),
        "cat": trace_details.category_names(flows.arrow_category[items.arrows]),
    }
    return rows, arrows


def search_json(index: TraceIndex, params: Mapping[str, str]) -> dict:
    text = params.get("search") or ""
    regex = params.get("search_regex") or ""
    if regex:
        matcher = trace_search.regex_matcher(regex)
    else:
        matcher = trace_search.substring_matcher(text)
    found = trace_search.search_positions(index, matcher, selected_rows(index, params))
    limit = _cap(params, "max_results", DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT)
    shown = found[:limit]
    names, local = np.unique(index.names_at(shown), return_inverse=True)
    row = index.rows_at(shown)
    return {
        "version": 1,
        "query": regex or text,
        "total": int(len(found)),
        "truncated": bool(len(found) > limit),
        "strings": [index.strings[i] for i in names.tolist()],
        "matches": {
            "pid": index.row_pid[row].tolist(),
            "tid": index.row_tid[row].tolist(),
            "ts": (index.begins_at(shown) / 1e6).tolist(),
            "dur": (index.durations_at(shown) / 1e6).tolist(),
            "name": local.reshape(-1).tolist(),
            "event": shown.tolist(),
        },
    }

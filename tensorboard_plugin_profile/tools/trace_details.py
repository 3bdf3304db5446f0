"""Everything about one event of a trace index: times, every argument, its flows.

Arguments are shown as ``trace_viewer`` shows them (metadata stats first, then event
stats, internal ones hidden, ``long_name`` when a display name replaced the name), but
only the stats of this one event are read.

Usage::

    details(index, position)["args"]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..analysis.trace.trace_flows import CATEGORY_NAMES, DIRECTIONS
from ..analysis.trace.trace_index import TraceIndex
from ..common.errors import InvalidArgument
from ..xspace import schema
from ..xspace.event_stats import stats_in_order
from .trace_viewer import stat_strings

MAX_FLOW_EVENTS = 100
_CATEGORIES = np.array(CATEGORY_NAMES + ("",), dtype=object)


def category_names(context_types: npt.ArrayLike) -> list:
    """Flow category strings of context types (unknown types have none)."""
    types = np.asarray(context_types, dtype=np.int64)
    types = np.where((types < 0) | (types >= len(CATEGORY_NAMES)), len(CATEGORY_NAMES), types)
    return _CATEGORIES[types].tolist()


def details(index: TraceIndex, position: int) -> dict:
    if not 0 <= position < index.num_events:
        raise InvalidArgument(f"No event {position} in this trace.")
    return {
        "version": 1,
        **_brief(index, position),
        "depth": int(index.depths_at(np.array([position]))[0]),
        "args": event_args(index, position),
        "flows": _flows_of(index, position),
    }


def _brief(index: TraceIndex, position: int) -> dict:
    row = int(index.rows_at(np.array([position]))[0])
    return {
        "event": int(position),
        "pid": int(index.row_pid[row]),
        "tid": int(index.row_tid[row]),
        "name": index.strings[int(index.names_at(np.array([position]))[0])],
        "ts": int(index.begins_at(np.array([position]))[0]) / 1e6,
        "dur": int(index.durations_at(np.array([position]))[0]) / 1e6,
    }


def _visible(table):
    names = table["stat"].astype(object).to_numpy()
    keep = ~np.isin(names, list(schema.INTERNAL_STATS))
    return names[keep], stat_strings(table[keep])


def event_args(index: TraceIndex, position: int) -> dict:
    plane = index.planes[int(index.plane_no[position])].plane
    event_row = int(index.event_row[position])
    ev = plane.events
    meta_id = int(ev["metadata_id"].iloc[event_row])
    args: dict = {}
    meta = plane.metadata_stats
    names, values = _visible(meta[(meta["metadata_id"] == meta_id).to_numpy()])
    args.update(zip(names.tolist(), list(values)))
    display = ev["display_name"].iloc[event_row]
    if isinstance(display, str) and display:
        args["long_name"] = str(ev["name"].iloc[event_row])
    names, values = _visible(stats_in_order(plane, event_row))
    args.update(zip(names.tolist(), list(values)))
    return args


def _flows_of(index: TraceIndex, position: int) -> list:
    flows = index.flows
    out = []
    for k in np.flatnonzero(flows.end_pos == position).tolist():
        flow = int(flows.end_flow[k])
        ends = flows.end_pos[flows.ends_of(flow)]
        out.append(
            {
                "flow": flow,
                "direction": DIRECTIONS[int(flows.end_direction[k])],
                "cat": category_names([flows.end_category[k]])[0],
                "events": [_brief(index, int(p)) for p in ends[:MAX_FLOW_EVENTS].tolist()],
                "num_events": int(len(ends)),
            }
        )
    return out

"""The non-streaming ``trace_viewer`` tool (docs/conversion.md §6.1): Chrome trace JSON.

Output shape, as upstream's ``TraceEventsJsonStream``::

    {"displayTimeUnit":"ns","metadata":{"highres-ticks":true},
    "traceEvents":[
    {"args": {"name": "/host:CPU"}, "name": "process_name", "ph": "M", "pid": 701},
    ...metadata events sorted by pid, then tid...,
    {"args": {"group_id": "0"}, "dur": 3.08, "name": "data_load", "ph": "X", ...},
    {}]}

Processes: ``/host:CPU`` is pid 701, device planes (GPU, else TPU, else custom) are
``1 + plane.id``; threads are lines (tid = ``(display_id or id) mod 2**32``). Events
come in table order (host lines first, then device planes), zero-length ones as
``"ph": "i"``; args are every non-internal stat as a string, metadata stats first.
Several hosts: pids are offset by ``1000 × (host index + 1)`` and process names
prefixed with the host name. A Chrome-trace profile (ProfilerHook, PyTorch) gets its
counters back as ``"ph": "C"`` samples (``{series: value}``, named by the counter's row)
and its objects as ``N`` / ``O`` (the snapshot's fields) / ``D``, not as slices.

Per event we only build its JSON line; names, metadata args and stat strings are
prepared per metadata id or by column.

Usage::

    text = "".join(trace_events_json(read_xspace(path)))
"""

from __future__ import annotations

import json
import zlib
from typing import Iterable, Iterator, Mapping

import numpy as np

from ..analysis.trace.one_clock import on_one_clock
from ..chrome_trace.collect import COUNTER_CATEGORY, COUNTER_VALUE
from ..chrome_trace.objects import OBJECT_ID
from ..common import json_out
from ..common.errors import InvalidArgument
from ..common.formats import XSPACE, format_of
from ..preprocessing.preprocess import preprocess
from ..xspace import schema
from ..xspace.event_stats import stats_in_order
from ..xspace.model import KIND_BYTES, KIND_DOUBLE, KIND_INT64, KIND_UINT64, Plane, Space
from . import ToolAnswer, ToolOutput

HOST_PID = 701
MAX_EVENTS = 5_000_000
_HEADER = '{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},\n"traceEvents":[\n'
_FOOTER = "{}]}\n"
_CHUNK_LINES = 4096
_FOOTER_BYTES = _FOOTER.encode()
_SENTINEL_END = b",\n" + _FOOTER_BYTES


def convert(hosts: list, params: Mapping[str, str]) -> ToolAnswer:
    """Tool registry entry: one host → its trace; several → the merged trace.
    ``size=estimate`` answers what the trace would weigh instead (``size_estimate``)."""
    size = params.get("size")
    if size == "estimate":
        return size_estimate(hosts)
    if size:
        raise InvalidArgument(f"size must be 'estimate' (or absent for the trace), not {size!r}.")

    def chunks() -> Iterable[bytes]:
        parts = (
            trace_events_json(hosts[0][1]) if len(hosts) == 1 else trace_events_multi_host(hosts)
        )
        for part in parts:
            yield part.encode()

    return ToolOutput(content_type="application/json", chunks=chunks)


def trace_events_json(space: Space, max_events: int = MAX_EVENTS) -> Iterator[str]:
    """The trace of one host's space, as text chunks."""
    return _trace([("", preprocess(space), 0)], max_events)


def trace_events_multi_host(spaces: list, max_events: int = MAX_EVENTS) -> Iterator[str]:
    """The trace of several hosts: ``[(host name, space), ...]`` in host order."""
    return _trace(_prepared(spaces), max_events)


def trace_planes(space: Space) -> list:
    """(pid, plane) pairs shown in the trace: the host plane, then device planes."""
    if format_of(space) != XSPACE:
        return [(1 + p.index, p) for p in space.planes]  # Chrome traces: every process
    shown = []
    host = space.plane(schema.HOST_PLANE)
    if host is not None:
        shown.append((HOST_PID, host))
    devices = space.planes_with_prefix(schema.GPU_PLANE_PREFIX)
    if not devices:
        devices = [p for p in space.planes if schema.is_tpu_core_plane(p.name)]
    if not devices:
        devices = [p for p in space.planes if schema.is_custom_plane(p.name)]
    shown += [(1 + p.id, p) for p in devices]
    return shown


def _prepared(hosts: list) -> list:
    """(host name, preprocessed space, pid offset) as ``convert`` draws ``hosts``."""
    hosts = on_one_clock(hosts)
    if len(hosts) == 1:
        return [("", preprocess(hosts[0][1]), 0)]
    return [(host, preprocess(space), 1000 * (i + 1)) for i, (host, space) in enumerate(hosts)]


def _shown_planes(hosts: list) -> tuple:
    """([(pid, process name, plane)], ids of the Chrome-trace planes) of prepared hosts."""
    shown = [
        (offset + pid, f"{host} {plane.name}" if host else plane.name, plane)
        for host, space, offset in hosts
        for pid, plane in trace_planes(space)
    ]
    chrome = {id(p) for _, space, _ in hosts if format_of(space) != XSPACE for p in space.planes}
    return shown, chrome


def _metadata_text(shown: list) -> str:
    metadata = []
    for pid, process_name, plane in sorted(shown, key=lambda s: s[0]):
        metadata += _process_metadata(pid, process_name, plane)
    return "".join(line + ",\n" for line in metadata)


def _trace(hosts: list, max_events: int) -> Iterator[str]:
    yield _HEADER
    shown, chrome = _shown_planes(hosts)
    yield _metadata_text(shown)
    cutoff = _time_cutoff([plane for _, _, plane in shown], max_events)
    for pid, _, plane in shown:
        batch = []
        for line in _event_lines(plane, pid, cutoff, id(plane) in chrome):
            batch.append(line)
            if len(batch) >= _CHUNK_LINES:
                yield ",\n".join(batch) + ",\n"
                batch = []
        if batch:
            yield ",\n".join(batch) + ",\n"
    yield _FOOTER


def size_estimate(hosts: list, sample_per_plane: int = 2000, max_events: int = MAX_EVENTS) -> dict:
    """What the trace of ``hosts`` weighs, before sending it: ``events`` (lines drawn),
    ``bytes`` (the JSON) and ``gzipBytes`` (gzip level 6, as the server compresses),
    ``exact`` when every event was rendered. Each plane renders at most ``sample_per_plane``
    events; its size is their average times its event count."""
    shown, chrome = _shown_planes(_prepared(hosts))
    head = (_HEADER + _metadata_text(shown)).encode()
    cutoff = _time_cutoff([plane for _, _, plane in shown], max_events)
    events, estimate, exact = 0, float(len(head) + len(_FOOTER)), True
    sample = [head]
    for pid, _, plane in shown:
        count = _drawn_count(plane, cutoff)
        if not count:
            continue
        lines = [
            (line + ",\n").encode()
            for line in _event_lines(plane, pid, cutoff, id(plane) in chrome, sample_per_plane)
        ]
        sampled = sum(len(b) for b in lines)
        estimate += sampled * count / len(lines)
        exact &= len(lines) == count
        events += count
        sample += lines
    sample_bytes = b"".join(sample)
    ratio = len(zlib.compress(sample_bytes, 6)) / max(len(sample_bytes), 1)
    return {
        "events": events,
        "bytes": int(round(estimate)),
        "gzipBytes": int(round(estimate * ratio)),
        "exact": exact,
    }


def _drawn_count(plane: Plane, cutoff) -> int:
    """Events of ``plane`` that ``_event_lines`` draws (objects count once)."""
    return int(_drawn(plane, cutoff).sum()) if len(plane.events) else 0


def _drawn(plane: Plane, cutoff) -> np.ndarray:
    """Mask of the events drawn: on shown lines, not internal, begun by ``cutoff``."""
    ev = plane.events
    shown_lines = (plane.lines["label"] != schema.ASYNC_XLA_OPS_LINE).to_numpy()
    keep = shown_lines[ev["line"].to_numpy()] & ~ev["name"].isin(schema.INTERNAL_EVENTS).to_numpy()
    if cutoff is not None:
        keep &= ev["begin_ps"].to_numpy() <= cutoff
    return keep


def without_sentinel(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The trace's bytes with its closing ``{}`` event left out (upstream writes one; other
    viewers such as Perfetto's expect every event to have a phase). Holds back only a few bytes."""
    tail = b""
    for chunk in chunks:
        data = tail + chunk
        tail = data[-len(_SENTINEL_END) :]
        if len(data) > len(tail):
            yield data[: len(data) - len(tail)]
    if tail.endswith(_FOOTER_BYTES):
        body = tail[: -len(_FOOTER_BYTES)]
        tail = (body[:-2] if body.endswith(b",\n") else body) + b"\n]}\n"
    yield tail


def _dumps(obj) -> str:
    return json_out.dumps(obj, sort_keys=True)


def _process_metadata(pid: int, name: str, plane: Plane) -> list:
    out = []
    if name:
        out.append(_dumps({"args": {"name": name}, "name": "process_name", "ph": "M", "pid": pid}))
    out.append(
        _dumps({"args": {"sort_index": pid}, "name": "process_sort_index", "ph": "M", "pid": pid})
    )
    threads = {}
    for tid, label in zip(*_shown_lines(plane)):
        threads[tid] = label
    for tid in sorted(threads):
        if threads[tid]:
            thread = {"args": {"name": threads[tid]}, "name": "thread_name", "ph": "M"}
            out.append(_dumps({**thread, "pid": pid, "tid": tid}))
        sort = {"args": {"sort_index": tid}, "name": "thread_sort_index", "ph": "M"}
        out.append(_dumps({**sort, "pid": pid, "tid": tid}))
    return out


def _shown_lines(plane: Plane) -> tuple:
    lines = plane.lines
    keep = (lines["label"] != schema.ASYNC_XLA_OPS_LINE).to_numpy()
    return lines["tid"].to_numpy()[keep].tolist(), lines["label"].to_numpy()[keep].tolist()


def _time_cutoff(planes: list, max_events: int):
    """Begin time (ps) below which events are kept when the trace is too large."""
    total = sum(len(p.events) for p in planes)
    if total <= max_events:
        return None
    begins = np.concatenate([p.events["begin_ps"].to_numpy() for p in planes])
    return int(np.partition(begins, max_events - 1)[max_events - 1])


def stat_strings(table) -> np.ndarray:
    """ToString of long-form stat rows: ints, uints, ``%g`` doubles, text."""
    kinds = table["kind"].to_numpy()
    out = table["str_value"].to_numpy(dtype=object, copy=True)
    ints = table["int_value"].to_numpy()
    for kind, values in (
        (KIND_INT64, lambda m: ints[m]),
        (KIND_UINT64, lambda m: ints[m].view(np.uint64)),
    ):
        mask = kinds == kind
        if mask.any():
            out[mask] = [str(v) for v in values(mask).tolist()]
    doubles = kinds == KIND_DOUBLE
    if doubles.any():
        out[doubles] = [f"{v:g}" for v in table["float_value"].to_numpy()[doubles].tolist()]
    out[kinds == KIND_BYTES] = "<opaque bytes>"
    return out


def _visible_stats(table):
    names = table["stat"].astype(object).to_numpy()
    keep = ~np.isin(names, list(schema.INTERNAL_STATS))
    return table[keep], names[keep]


def _metadata_args(plane: Plane) -> dict:
    """Metadata id → {stat: string} of the non-internal metadata stats."""
    table, names = _visible_stats(plane.metadata_stats)
    out: dict = {}
    for mid, name, value in zip(table["metadata_id"].tolist(), names, stat_strings(table)):
        out.setdefault(mid, {})[name] = value
    return out


def _event_args(plane: Plane) -> dict:
    """Event row → {stat: string} of its non-internal stats (later values win)."""
    table, names = _visible_stats(stats_in_order(plane))
    out: dict = {}
    for row, name, value in zip(table["event"].tolist(), names, stat_strings(table)):
        args = out.get(row)
        if args is None:
            out[row] = {name: value}
        else:
            args[name] = value
    return out


def _event_lines(
    plane: Plane, pid: int, cutoff, chrome: bool = False, sample: int = 0
) -> Iterator[str]:
    """Each drawn event's JSON; ``sample`` > 0: only that many, spread evenly over the plane."""
    ev = plane.events
    if not len(ev):
        return
    begin = ev["begin_ps"].to_numpy()
    rows = np.flatnonzero(_drawn(plane, cutoff))
    if 0 < sample < len(rows):
        rows = rows[np.linspace(0, len(rows) - 1, sample).astype(np.int64)]
    tids = plane.lines["tid"].to_numpy()[ev["line"].to_numpy()[rows]].tolist()
    ts = (begin[rows] / 1e6).tolist()
    dur_ps = ev["duration_ps"].to_numpy()[rows]
    durs = (dur_ps / 1e6).tolist()
    names = ev["name"].astype(object).to_numpy()[rows].tolist()
    displays = ev["display_name"].astype(object).to_numpy()[rows].tolist()
    meta_ids = ev["metadata_id"].to_numpy()[rows].tolist()
    meta_args = _metadata_args(plane)
    event_args = _event_args(plane)
    head = f'"pid": {pid}, "tid": '
    objects = _object_ids(plane) if chrome else {}
    line_names = plane.lines["name"].astype(object).tolist() if chrome else []
    lines = ev["line"].to_numpy()
    for row, tid, t, d, d_ps, name, display, mid in zip(
        rows.tolist(), tids, ts, durs, dur_ps.tolist(), names, displays, meta_ids
    ):
        args = dict(meta_args.get(mid, ()))
        if display:
            args["long_name"] = name
            name = display
        extra = event_args.get(row)
        if extra:
            args.update(extra)
        name = args.get(schema.STEP_NAME, name)
        if chrome and (row in objects or _is_counter_sample(args)):
            line_name = line_names[lines[row]]
            yield _chrome_object_or_counter(args, name, line_name, objects.get(row), pid, tid, t, d)
            continue
        prefix = "{" + (f'"args": {_dumps(args)}, ' if args else "")
        if d_ps > 0:
            yield (
                f'{prefix}"dur": {d!r}, "name": {json.dumps(name)}, "ph": "X", '
                f'{head}{tid}, "ts": {t!r}}}'
            )
        else:
            yield (
                f'{prefix}"name": {json.dumps(name)}, "ph": "i", "pid": {pid}, "s": "t", '
                f'"tid": {tid}, "ts": {t!r}}}'
            )


def _object_ids(plane: Plane) -> dict:
    """Event row → object id of the Chrome-trace objects (``chrome_trace/objects.py``)."""
    table = stats_in_order(plane)
    if not len(table):
        return {}
    marked = (table["stat"].astype(object) == OBJECT_ID).to_numpy()
    if not marked.any():
        return {}
    rows = table["event"].to_numpy()[marked].tolist()
    return dict(zip(rows, stat_strings(table[marked])))


def _is_counter_sample(args: dict) -> bool:
    return args.get("cat") == COUNTER_CATEGORY and COUNTER_VALUE in args


def _chrome_object_or_counter(
    args: dict, name: str, line_name: str, object_id, pid: int, tid: int, ts: float, dur: float
) -> str:
    """A counter sample as ``C``; an object as its ``N``, ``O`` and ``D`` events."""
    if object_id is None:
        value = _number(args[COUNTER_VALUE])
        return _dumps({"args": {name: value}, "name": line_name, "ph": "C", "pid": pid, "ts": ts})
    cat = args.pop("cat", "")
    head = {"cat": cat, "id": object_id, "name": name, "pid": pid, "tid": tid}
    snapshot = {**head, "args": {"snapshot": args}, "ph": "O", "ts": ts}
    return ",\n".join(
        _dumps(e)
        for e in ({**head, "ph": "N", "ts": ts}, snapshot, {**head, "ph": "D", "ts": ts + dur})
    )


def _number(text: str):
    """A counter value back as a JSON number (the stat strings are text)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value

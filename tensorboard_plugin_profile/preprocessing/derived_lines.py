"""Derived GPU timelines (docs/conversion.md §3.5): rows the profiler did not record.

For each GPU plane of a freshly grouped space:

* ungrouped device events inherit the group of the latest earlier event;
* ``Steps`` (id StepInfo): one event per run of one group, named by the group id
  with ``group_id`` and ``step_name`` stats;
* per stream (compute streams first, then busiest first): ``Framework Name Scope``,
  ``Framework Ops``, ``XLA Modules``, ``XLA Ops`` and ``Source code`` lines built
  from the kernels' ``tf_op`` / ``hlo_module`` / ``hlo_op`` / ``source`` stats, each
  named ``<line> - from #<stream id>``; an event at a level is stretched while the
  next kernel has the same name and group, else a new one starts (resetting the
  deeper levels). Streams get display ids 1, 8, 15…, their derived rows the next
  ids (2.24.2 reserves a block of 7 per stream); empty derived rows are not added;
* ``Launch Stats`` (id KernelLaunch): per group, the host launches aimed at this GPU
  (``device_id``), with ``num_launches``, ``max_launch_time_us``,
  ``avg_launch_time_us``.

Kernels are walked once per stream in time order (the stretch-or-add rule is
sequential); everything else is column arithmetic.

Usage::

    planes = derive(planes, group_names)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..kernels import per_name
from ..xspace import op_names, schema
from ..xspace.event_stats import typed_column
from ..xspace.model import KIND_DOUBLE, KIND_INT64, KIND_STR
from .plane_edit import PlaneEdit

_BLOCK = 7  # display ids per stream: the stream row and six derived rows
_STREAM_LINE_BASE = schema.DERIVED_LINE_ID_BASE + 290  # first per-stream derived id
_DERIVED = (
    schema.FRAMEWORK_NAME_SCOPE_LINE,
    schema.FRAMEWORK_OPS_LINE,
    schema.XLA_MODULES_LINE,
    schema.XLA_OPS_LINE,
    schema.SOURCE_LINE,
)


def derive(planes: list, group_names: dict) -> list:
    """Planes with derived GPU lines added (non-GPU planes are returned as is)."""
    gpus = sorted((p for p in planes if schema.is_gpu_plane(p.name)), key=lambda p: p.id)
    launches = _launch_stats(planes, len(gpus), group_names)
    derived = {}
    for ordinal, plane in enumerate(gpus):
        edit = PlaneEdit(plane)
        group = _propagate_groups(edit)
        _add_steps(edit, group, group_names)
        _add_stream_lines(edit, group)
        _add_launch_stats(edit, launches.get(ordinal), group_names)
        derived[id(plane)] = edit.build()
    return [derived.get(id(p), p) for p in planes]


def _group_column(events: pd.DataFrame) -> np.ndarray:
    return events[schema.GROUP_ID].to_numpy(dtype=np.int64, na_value=-1)


def _propagate_groups(edit: PlaneEdit) -> np.ndarray:
    """Ungrouped events take the group of the latest earlier event (by begin)."""
    events = edit.plane.events
    group = _group_column(events)
    order = np.argsort(events["begin_ps"].to_numpy(), kind="stable")
    filled = pd.Series(np.where(group[order] >= 0, group[order], np.nan)).ffill()
    new = group.copy()
    new[order] = filled.fillna(-1).to_numpy(dtype=np.int64)
    changed = np.flatnonzero(new != group)
    edit.set_groups(new[changed], changed)
    return new


def _add_steps(edit: PlaneEdit, group: np.ndarray, group_names: dict) -> None:
    events = edit.plane.events
    order = np.argsort(events["begin_ps"].to_numpy(), kind="stable")
    order = order[group[order] >= 0]
    if not len(order):
        return
    g = group[order]
    run = np.concatenate([[0], np.cumsum(g[1:] != g[:-1])])
    begin = events["begin_ps"].to_numpy()[order]
    end = begin + events["duration_ps"].to_numpy()[order]
    runs = pd.DataFrame({"run": run, "group": g, "begin": begin, "end": end}).groupby("run")
    spans = runs.agg(group=("group", "first"), begin=("begin", "min"), end=("end", "max"))
    line = edit.add_line(schema.DERIVED_STEP_INFO, schema.STEPS_LINE)
    metas = [edit.metadata_id(str(gid)) for gid in spans["group"].tolist()]
    rows = edit.add_events(line, metas, spans["begin"], spans["end"] - spans["begin"])
    edit.set_groups(spans["group"].to_numpy(), rows)
    names = [group_names.get(gid, str(gid)) for gid in spans["group"].tolist()]
    edit.set_stat(rows, schema.STEP_NAME, names, KIND_STR)


def _stream_order(plane, derived: np.ndarray) -> list:
    counts = np.bincount(plane.events["line"].to_numpy(), minlength=len(plane.lines))
    rows = [i for i in range(len(plane.lines)) if not derived[i]]
    labels = plane.lines["label"].tolist()
    return sorted(rows, key=lambda i: ("Compute" not in labels[i], -counts[i], i))


def _add_stream_lines(edit: PlaneEdit, group: np.ndarray) -> None:
    plane = edit.plane
    ids = plane.lines["id"].to_numpy()
    derived = (ids >= schema.DERIVED_LINE_ID_MIN) & (ids <= schema.DERIVED_LINE_ID_MAX)
    ev = plane.events
    is_kernel = ev[schema.KERNEL_DETAILS].notna().to_numpy()
    levels = _kernel_levels(plane)
    display_ids = plane.lines["display_id"].to_numpy().copy()
    for k, stream in enumerate(_stream_order(plane, derived)):
        display_ids[stream] = 1 + _BLOCK * k
        rows = np.flatnonzero(is_kernel & (ev["line"].to_numpy() == stream))
        rows = rows[np.argsort(ev["begin_ps"].to_numpy()[rows], kind="stable")]
        slot = 2 + _BLOCK * k
        for j, line_name in enumerate(_DERIVED):
            spans = _stretch_or_add(ev, rows, levels[j], group)
            if not spans:
                continue
            line = edit.add_line(
                _STREAM_LINE_BASE + 5 * k + j,
                f"{line_name} - from #{int(ids[stream])}",
                display_id=slot,
            )
            slot += 1
            _emit(edit, line, spans)
    edit.set_line_display_ids(display_ids)


def _kernel_levels(plane) -> list:
    """Per derived line: per event, the list of (name, display name) levels."""
    ev = plane.events
    n = len(ev)

    def text(name):
        if name not in ev and name not in schema.WELL_KNOWN_STATS:
            return [None] * n
        return typed_column(plane, name).to_numpy(dtype=object, na_value=None).tolist()

    tf_ops, modules, hlo_ops = text(schema.TF_OP), text(schema.HLO_MODULE), text(schema.HLO_OP)
    sources = text(schema.SOURCE)
    programs = typed_column(plane, schema.PROGRAM_ID).astype(object).tolist()
    parsed = op_names.parse_op_names([t or "" for t in tf_ops])
    scopes, ops = [], []
    for full, cat, name, op_type in zip(tf_ops, parsed["category"], parsed["name"], parsed["type"]):
        framework = bool(full) and cat in (op_names.TENSORFLOW, op_names.JAX)
        parts = name.split("/")[:-1] if framework else []
        scopes.append([(p, "") for p in parts])
        ops.append([(full, op_type)] if framework else [])
    mods, xla_ops = [], []
    for module, op, program in zip(modules, hlo_ops, programs):
        program = None if program is None or pd.isna(program) else int(program)
        suffix = "" if program is None else f"({program})"
        mods.append([(f"{module}{suffix}", "")] if module else [])
        prefix = "" if program is None else f"{program}/"
        xla_ops.append([(f"{prefix}{p}", p) for p in op.split("::")] if op else [])
    src = [[(s, "")] if s else [] for s in sources]
    return [scopes, ops, mods, xla_ops, src]


def _stretch_or_add(ev, rows, levels: list, group: np.ndarray) -> list:
    """Spans (level name, display, begin, end, group) of one derived line."""
    begin = ev["begin_ps"].to_numpy()
    end = begin + ev["duration_ps"].to_numpy()
    open_: list = []  # per level: [name, display, begin, end, group]
    done: list = []
    for row in rows.tolist():
        keys = levels[row]
        if not keys:
            continue
        b, e, g = int(begin[row]), int(end[row]), int(group[row])
        for level, (name, display) in enumerate(keys):
            if level < len(open_) and open_[level][0] == name and open_[level][4] == g:
                open_[level][3] = max(open_[level][3], e)
                continue
            done += open_[level:]
            del open_[level:]
            open_.append([name, display, b, e, g])
        done += open_[len(keys) :]
        del open_[len(keys) :]
    return done + open_


def _emit(edit: PlaneEdit, line: int, spans: list) -> None:
    metas = [edit.metadata_id(name, display) for name, display, _, _, _ in spans]
    begin = np.array([s[2] for s in spans], dtype=np.int64)
    end = np.array([s[3] for s in spans], dtype=np.int64)
    rows = edit.add_events(line, metas, begin, end - begin)
    edit.set_groups(np.array([s[4] for s in spans], dtype=np.int64), rows)


def _launch_stats(planes: list, num_gpus: int, group_names: dict) -> dict:
    """GPU ordinal → per-group launch aggregates from the host plane."""
    host = next((p for p in planes if p.name == schema.HOST_PLANE), None)
    if host is None or not num_gpus or not len(host.events):
        return {}
    ev = host.events
    device = ev[schema.DEVICE_ID].to_numpy(dtype=np.int64, na_value=-1)
    group = _group_column(ev)
    keep = (
        ~per_name.per_value(ev["name"], lambda names: names.str.startswith("cu").to_numpy())
        & (group >= 0)
        & (device >= 0)
        & (device < num_gpus)
        & ev[schema.CORRELATION_ID].notna().to_numpy()
    )
    table = pd.DataFrame(
        {
            "device": device[keep],
            "group": group[keep],
            "begin": ev["begin_ps"].to_numpy()[keep],
            "dur": ev["duration_ps"].to_numpy()[keep],
        }
    )
    table["end"] = table["begin"] + table["dur"]
    agg = table.groupby(["device", "group"]).agg(
        begin=("begin", "min"),
        end=("end", "max"),
        count=("dur", "size"),
        max_dur=("dur", "max"),
        mean_dur=("dur", "mean"),
    )
    return {int(d): part.droplevel(0) for d, part in agg.groupby(level=0)}


def _add_launch_stats(edit: PlaneEdit, agg, group_names: dict) -> None:
    if agg is None or not len(agg):
        return
    line = edit.add_line(schema.DERIVED_KERNEL_LAUNCH, schema.LAUNCH_STATS_LINE)
    groups = agg.index.to_numpy()
    metas = [
        edit.metadata_id(f"Launch Stats for {group_names.get(int(g), str(g))}") for g in groups
    ]
    rows = edit.add_events(line, metas, agg["begin"], agg["end"] - agg["begin"])
    edit.set_groups(groups, rows)
    edit.set_stat(rows, schema.NUM_LAUNCHES, agg["count"].to_numpy(), KIND_INT64)
    edit.set_stat(rows, schema.MAX_LAUNCH_TIME_US, agg["max_dur"].to_numpy() / 1e6, KIND_DOUBLE)
    edit.set_stat(rows, schema.AVG_LAUNCH_TIME_US, agg["mean_dur"].to_numpy() / 1e6, KIND_DOUBLE)

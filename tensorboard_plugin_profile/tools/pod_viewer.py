"""pod_viewer: the step-time breakdown of every core of every host, step by step.

See docs/conversion.md §5.7.

Proto-JSON of ``PodViewerDatabase`` (fields in field-number order, doubles
without a trailing ``.0``, map keys sorted). Each host contributes its step
rows as core ``host_index * 1000 + 1`` (upstream's generic step info lives on
core 1); hosts are aligned step by step as for the other step tools, but unlike
them the first and last steps are kept (upstream's pod viewer does not drop
them).

Usage::

    out = convert([("host", space)], {})
    db = out.json_obj
    db["podStatsSequence"]["podStatsMap"][0]["podStatsPerCore"]["1"]["bottleneck"]
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis.host_summary import combined_op_stats, summaries_of
from ..analysis.steps import build as steps_module
from ..common import errors, json_out
from . import ToolOutput
from .overview_page import overview_diagnostics

# (id, name, step event types) of the nine breakdown entries.
STEP_BREAKDOWN = (
    (1, "Device compute", ("DEVICE_COMPUTE_32", "DEVICE_COMPUTE_16")),
    (2, "Device to device", ("DEVICE_TO_DEVICE", "DEVICE_WAIT_DEVICE")),
    (3, "Device collective communication", ("DEVICE_COLLECTIVES",)),
    (4, "Host compute", ("HOST_COMPUTE",)),
    (5, "Kernel launch", ("HOST_PREPARE",)),
    (6, "Input", ("HOST_WAIT_INPUT", "HOST_TO_DEVICE", "DEVICE_WAIT_HOST")),
    (7, "Output", ("DEVICE_TO_HOST",)),
    (8, "Compilation", ("HOST_COMPILE",)),
    (9, "All others", ("UNKNOWN_TIME",)),
)
_CORE = 1  # upstream keys generic (CPU/GPU) step info by core 1
_CORES_PER_HOST = 1000


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolOutput:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> ToolOutput:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    if not any(s.has_planes for _, s in summaries):
        raise errors.NotApplicable(
            "The profile holds no trace at all (no host or device timeline), so there are no "
            "steps to show per core."
        )
    db = pod_viewer_database(summaries)
    data = json_out.utf8(proto_json(db))
    return ToolOutput(json_obj=db, chunks=lambda: [data])


def pod_viewer_database(summaries: Sequence[tuple]) -> dict:
    """``PodViewerDatabase`` of (host name, summary) pairs."""
    stats = combined_op_stats([s for _, s in summaries])  # cached combination
    info, warnings, errors_ = overview_diagnostics(stats)
    return {
        "podStatsSequence": {"podStatsMap": pod_stats_maps(summaries)},
        "diagnostics": {"info": info, "warnings": warnings, "errors": errors_},
        "stepBreakdownEvents": [{"id": i, "name": name} for i, name, _ in STEP_BREAKDOWN],
        "deviceType": _device_type(stats.run_environment.device_type),
    }


def pod_stats_maps(summaries: Sequence[tuple]) -> list:
    """One ``PodStatsMap`` per aligned step: every host's record for that step."""
    per_host = [s.op_stats for _, s in summaries]
    frames = [s.steps.with_incomplete_steps for s in per_host]
    if len(frames) == 1:
        aligned, step_nums = frames, frames[0]["step_num"].to_numpy()
    else:
        aligned = steps_module.align_hosts(frames) or []
        step_nums = np.arange(len(aligned[0])) if aligned else np.zeros(0, dtype=np.int64)
    cores = [
        (i * _CORES_PER_HOST + _CORE, _host_name(name, summary, stats))
        for i, ((name, summary), stats) in enumerate(zip(summaries, per_host))
    ]
    records = [
        _records(frame, step_nums, host_name) for frame, (_, host_name) in zip(aligned, cores)
    ]
    out = []
    for k, step_num in enumerate(step_nums.tolist()):  # one entry per step (hundreds)
        per_core = {str(core): recs[k] for (core, _), recs in zip(cores, records)}
        out.append(
            {
                "stepNum": int(step_num),
                "podStatsPerCore": dict(sorted(per_core.items(), key=lambda kv: int(kv[0]))),
                "channelDb": [],
                "coreIdToReplicaIdMap": {},
                "allReduceOpDb": [],
            }
        )
    return out


def _records(steps: pd.DataFrame, step_nums: np.ndarray, host_name: str) -> list:
    """``PodStatsRecord`` dicts of one host's aligned steps."""
    us = (
        np.column_stack(
            [
                sum(steps[t].to_numpy(dtype=np.float64) for t in types)
                for _, _, types in STEP_BREAKDOWN
            ]
        ).reshape(len(steps), len(STEP_BREAKDOWN))
        / 1e6
    )
    bottleneck = _bottlenecks(us)
    total_us = _proto_numbers(steps["duration_ps"].to_numpy(dtype=np.float64) / 1e6)
    keys = [str(i) for i, _, _ in STEP_BREAKDOWN]
    rows = [dict(zip(keys, row)) for row in _proto_numbers(us).tolist()]
    return [
        {
            "hostName": host_name,
            "chipId": 0,
            "nodeId": 0,
            "stepNum": int(num),
            "totalDurationUs": total,
            "bottleneck": label,
            "stepBreakdownUs": breakdown,
        }
        for num, total, label, breakdown in zip(
            step_nums.tolist(), total_us.tolist(), bottleneck, rows
        )
    ]


def _proto_numbers(values: np.ndarray) -> np.ndarray:
    """Doubles as protobuf's JSON prints them: integral values as integers (``470``)."""
    out = values.astype(object)
    integral = np.isfinite(values) & (values == np.floor(values))
    out[integral] = values[integral].astype(np.int64).astype(object)
    return out


def _bottlenecks(us: np.ndarray) -> list:
    """Per step, the name of the largest entry; ties go to the greatest name."""
    names = np.array([name for _, name, _ in STEP_BREAKDOWN], dtype=object)
    by_name = np.argsort(names)[::-1]  # greatest name first, so argmax prefers it
    if not len(us):
        return []
    return names[by_name][np.argmax(us[:, by_name], axis=1)].tolist()


def _host_name(name: str, summary, stats) -> str:
    hostnames = stats.run_environment.hostnames or summary.hostnames
    return hostnames[0] if hostnames else name


def _device_type(device_type: str) -> str:
    return "GPU" if "GPU" in device_type else device_type


def proto_json(db: dict) -> str:
    """Compact JSON; numbers are already in protobuf's style (see ``_proto_numbers``)."""
    return json_out.dumps(db, separators=(",", ":"), ensure_ascii=False)

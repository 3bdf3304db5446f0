"""``pytorch_memory``: allocator memory peaks of a PyTorch worker (``analysis/pytorch/memory``).

One table, one row per device (CPU, GPU 0, ...): the peak of the allocator's allocated
bytes, the peak of its reserved bytes, when the allocated peak was reached (ms from the
trace's first sample) and how many ``[memory]`` samples there were. Listed only for traces
recorded with ``torch.profiler.profile(profile_memory=True)``.

Usage::

    [table] = convert([("worker0", space)], {})
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.pytorch.memory import memory_peaks
from ..common.errors import NotApplicable
from .datatable import Column, data_table, rows_from_columns

NO_MEMORY = (
    "This trace has no [memory] events, so no memory to show: record it with "
    "torch.profiler.profile(profile_memory=True)."
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    peaks = memory_peaks(hosts[0][1])
    if peaks.empty:
        raise NotApplicable(NO_MEMORY)
    return [
        data_table(
            (
                Column("device", "Device", "string"),
                Column("peak_allocated_bytes", "Peak allocated (bytes)", "number"),
                Column("peak_reserved_bytes", "Peak reserved (bytes)", "number"),
                Column("peak_ms", "Time of the allocated peak (ms)", "number"),
                Column("samples", "Samples", "number"),
            ),
            rows_from_columns(
                peaks["device"],
                [None if v != v else v for v in peaks["peak_allocated_bytes"].tolist()],
                [None if v != v else v for v in peaks["peak_reserved_bytes"].tolist()],
                [None if v != v else v / 1e9 for v in peaks["peak_ps"].tolist()],
                peaks["samples"],
            ),
            {"title": "Memory peaks per device"},
        )
    ]

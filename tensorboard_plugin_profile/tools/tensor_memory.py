"""``tensor_memory``: the memory view of a ProfilerHook timeline (``analysis/memory/timeline``).

Three DataTables: per allocator (peak of live tensor bytes, when, how many tensors were
live, the allocator counter's own peak), the tensors live at each peak (largest first),
and live bytes over time per allocator (sampled to at most 2000 points each).

Usage::

    summary, live, timeline = convert([("timeline-4", space)], {})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis.memory.timeline import tensor_memory
from ..chrome_trace.objects import DTYPE, REQUESTED_BYTES, SHAPE
from ..common.errors import NotApplicable
from .datatable import UNIT_BYTES, UNIT_MS, Column, data_table, rows_from_columns

_MS = 1e9


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    memory = tensor_memory(hosts[0][1])
    if memory.summary.empty:
        raise NotApplicable(
            "This timeline has no tensor memory: record it with ProfilerHook(show_memory=True)."
        )
    s, live, line, start = memory.summary, memory.live_at_peak, memory.timeline, memory.start_ps
    summary = data_table(
        (
            Column("allocator", "Allocator", "string"),
            Column("peak_bytes", "Peak of live tensors (bytes)", "number", UNIT_BYTES),
            Column("peak_ms", "Time of the peak (ms)", "number", UNIT_MS),
            Column("live_tensors", "Tensors live at the peak", "number"),
            Column("counter_peak_bytes", "Allocator counter peak (bytes)", "number", UNIT_BYTES),
        ),
        rows_from_columns(
            s["allocator"],
            _clean(s["peak_bytes"]),
            _clean((s["peak_ps"] - start) / _MS),
            s["live_tensors"],
            _clean(s["counter_peak_bytes"]),
        ),
        {"title": "Allocators"},
    )
    tensors = data_table(
        (
            Column("allocator", "Allocator", "string"),
            Column("tensor", "Tensor", "string"),
            Column("bytes", "Requested bytes", "number"),
            Column("dtype", "Data type", "string"),
            Column("shape", "Shape", "string"),
            Column("allocated_ms", "Allocated at (ms)", "number", UNIT_MS),
            Column("freed_ms", "Freed at (ms)", "number", UNIT_MS),
        ),
        rows_from_columns(
            live["allocator"],
            live["name"],
            live[REQUESTED_BYTES],
            live[DTYPE].fillna(""),
            live[SHAPE].fillna(""),
            (live["begin_ps"] - start) / _MS,
            (live["end_ps"] - start) / _MS,
        ),
        {"title": "Tensors live at the peak"},
    )
    timeline = data_table(
        (
            Column("allocator", "Allocator", "string"),
            Column("time_ms", "Time (ms)", "number", UNIT_MS),
            Column("live_bytes", "Live tensor bytes", "number"),
        ),
        rows_from_columns(line["allocator"], (line["time_ps"] - start) / _MS, line["live_bytes"]),
        {"title": "Live tensor bytes over time"},
    )
    return [summary, tensors, timeline]


def _clean(values) -> list:
    """NaN (no such number) becomes 0 in the table."""
    return np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0).tolist()

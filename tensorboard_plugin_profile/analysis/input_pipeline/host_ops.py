"""Host-side input operations and where input time goes (docs/conversion.md §5.3, "Host input ops").

The input-pipeline analyzer lists the host ops that feed the program — tf.data
iterators (``Iterator::...``, op type ``Dataset``), input-pipeline stages
(``_ipl_stage_cat``), infeed enqueues and host-to-device copies — each with a
category, and splits the input time into enqueuing, reading on demand, reading
in advance, preprocessing and the rest.

Usage::

    ops = input_ops(stats.host_ops)                # one row per input op, by self time
    breakdown = input_time_breakdown(ops, details)  # InputTimeBreakdown (µs)
    breakdown.tf_data_in_use
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...common.memo import memoized
from ..ops.metrics import OpMetricsDb

ENQUEUE = "Enqueue"
DEMANDED_FILE_READ = "Demanded file read"
ADVANCED_FILE_READ = "Advanced file read"
PREPROCESSING = "Preprocessing"
UNKNOWN = "Unknown"
# Input-pipeline stage categories (lower case) → category shown.
_STAGE_CATEGORIES = {
    "enqueue": ENQUEUE,
    "read": DEMANDED_FILE_READ,
    "preprocessing": PREPROCESSING,
    "unknown": UNKNOWN,
}
_DATASET = "Dataset"
_FILE_READERS = r"::(?:TFRecord|TextLine|FixedLengthRecord|SSTable|RecordIO|ArrayRecord)$"
# A file reader under one of these reads ahead of the consumer.
_READ_AHEAD = r"::(?:MemoryReader|MemoryWriter|Interleave|Prefetch|ParallelMap)"


@dataclasses.dataclass
class InputTimeBreakdown:
    enqueue_us: float = 0.0
    demanded_file_read_us: float = 0.0
    advanced_file_read_us: float = 0.0
    preprocessing_us: float = 0.0
    unclassified_non_enqueue_us: float = 0.0

    @property
    def tf_data_in_use(self) -> bool:
        return (
            self.demanded_file_read_us > 0
            or self.advanced_file_read_us > 0
            or self.preprocessing_us > 0
        )


def input_ops(host_ops: OpMetricsDb) -> pd.DataFrame:
    """Input ops of the host op db: name, occurrences, time_ps, self_time_ps, category.

    Sorted by self time (longest first), then name. Once per op database (the overview
    and the input-pipeline analyzer both ask): read-only.
    """
    return memoized([host_ops], "input_ops", lambda: _input_ops(host_ops))


def _input_ops(host_ops: OpMetricsDb) -> pd.DataFrame:
    ops = host_ops.without_idle()
    op_type = ops["category"].astype(str)
    lower = op_type.str.lower()
    stage = lower.isin(list(_STAGE_CATEGORIES))
    enqueue = op_type.str.startswith("InfeedEnqueue") | (op_type == "MemcpyHToD")
    dataset = op_type == _DATASET
    chosen = ops[(stage | enqueue | dataset).to_numpy()]
    names = chosen["name"].astype(str)
    reader = names.str.contains(_FILE_READERS, regex=True)
    ahead = names.str.contains(_READ_AHEAD, regex=True)
    category = np.select(
        [
            stage[chosen.index].to_numpy(),
            enqueue[chosen.index].to_numpy(),
            (reader & ahead).to_numpy(),
            reader.to_numpy(),
        ],
        [
            lower[chosen.index].map(_STAGE_CATEGORIES).to_numpy(dtype=object),
            ENQUEUE,
            ADVANCED_FILE_READ,
            DEMANDED_FILE_READ,
        ],
        default=PREPROCESSING,
    )
    out = pd.DataFrame(
        {
            "name": names.to_numpy(dtype=object),
            "occurrences": chosen["occurrences"].to_numpy(dtype=np.int64),
            "time_ps": chosen["time_ps"].to_numpy(dtype=np.int64),
            "self_time_ps": chosen["self_time_ps"].to_numpy(dtype=np.int64),
            "category": category.astype(object),
        }
    )
    out = out.sort_values(["self_time_ps", "name"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def input_time_breakdown(ops: pd.DataFrame, details: pd.DataFrame) -> InputTimeBreakdown:
    """Input time by kind (µs), from the input ops and the per-step details.

    Without infeed, the share of non-enqueue time comes from the host-to-device
    share of the average step: when the steps move data to the device but no
    enqueue op took time, nothing of the host input time is attributed.
    """
    self_us = ops.groupby("category")["self_time_ps"].sum() / 1e6
    enqueue = float(self_us.get(ENQUEUE, 0.0))
    parts = {
        "demanded_file_read_us": float(self_us.get(DEMANDED_FILE_READ, 0.0)),
        "advanced_file_read_us": float(self_us.get(ADVANCED_FILE_READ, 0.0)),
        "preprocessing_us": float(self_us.get(PREPROCESSING, 0.0)),
    }
    classified = sum(parts.values())
    ratio = _host_to_device_ratio(details)
    non_enqueue = enqueue * (1 - ratio) / ratio if ratio > 0 else classified
    scale = non_enqueue / classified if classified > 0 else 0.0
    parts = {k: v * scale for k, v in parts.items()}
    return InputTimeBreakdown(
        enqueue_us=enqueue,
        unclassified_non_enqueue_us=max(0.0, non_enqueue - sum(parts.values())),
        **parts,
    )


def _host_to_device_ratio(details: pd.DataFrame) -> float:
    if details.empty:
        return 0.0
    step_ms = float(details["step_time_ms"].mean())
    if step_ms <= 0:
        return 0.0
    return min(1.0, float(details["host_to_device_ms"].mean()) / step_ms)

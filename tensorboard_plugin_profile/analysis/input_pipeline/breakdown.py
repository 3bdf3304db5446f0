"""Generic (GPU/CPU) step-time breakdown and bottleneck analysis (docs/conversion.md §5.3).

The overview page and the input-pipeline analyzer share this: per-step details
in milliseconds, their summary statistics, and the bottleneck classification
with upstream's statements.

Usage::

    details = step_details(stats.steps)             # one row per step, ms columns
    summary = summarize(details["step_time_ms"])    # Summary(avg, sdv, min, max)
    bottleneck = classify(details, tf_data_in_use(stats.host_ops))
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import numpy.typing as npt
import pandas as pd

from ...common.memo import memoized
from ..ops.metrics import OpMetricsDb
from ..steps.step_db import StepDb
from . import host_ops as input_ops

# Detail (ms column) → the step event types it adds up (docs/conversion.md §5.3 table).
DETAIL_TYPES = {
    "unknown_time_ms": ("UNKNOWN_TIME",),
    "host_wait_input_ms": ("HOST_WAIT_INPUT",),
    "host_to_device_ms": ("HOST_TO_DEVICE", "DEVICE_WAIT_HOST"),
    "output_ms": ("DEVICE_TO_HOST",),
    "device_compute_ms": ("DEVICE_COMPUTE_16", "DEVICE_COMPUTE_32"),
    "device_to_device_ms": ("DEVICE_TO_DEVICE", "DEVICE_WAIT_DEVICE"),
    "device_collectives_ms": ("DEVICE_COLLECTIVES",),
    "host_compute_ms": ("HOST_COMPUTE",),
    "host_prepare_ms": ("HOST_PREPARE",),
    "host_compile_ms": ("HOST_COMPILE",),
}
NO_STEP_STATEMENT = (
    "No step time measured. Therefore we cannot tell where the performance bottleneck is."
)


@dataclasses.dataclass
class Summary:
    average: float = 0.0
    standard_deviation: float = 0.0
    minimum: float = 0.0
    maximum: float = 0.0


@dataclasses.dataclass
class Bottleneck:
    input_classification: str = "unknown"
    input_statement: str = NO_STEP_STATEMENT
    kernel_launch_classification: str = "no"
    kernel_launch_statement: str = ""
    all_other_classification: str = "no"
    all_other_statement: str = ""
    device_collectives_classification: str = "no"
    device_collectives_statement: str = ""


def step_details(db: StepDb) -> pd.DataFrame:
    """Per step: ``step_name``, ``step_time_ms``, ``max_step_time_ms`` and the details.
    Once per step database (the overview, the input-pipeline analyzer and the advisor
    read the same one): read-only."""
    return memoized([db], "step_details", lambda: _step_details(db))


def _step_details(db: StepDb) -> pd.DataFrame:
    steps = db.steps
    out = pd.DataFrame({"step_name": steps["step_name"].astype(str).to_numpy()})
    out["step_time_ms"] = steps["duration_ps"].to_numpy(dtype=np.float64) / 1e9
    out["max_step_time_ms"] = steps["max_duration_ps"].to_numpy(dtype=np.float64) / 1e9
    for detail, types in DETAIL_TYPES.items():
        total = sum(steps[t].to_numpy(dtype=np.float64) for t in types)
        out[detail] = total / 1e9 if len(steps) else np.zeros(0)
    out["input_ms"] = out["host_wait_input_ms"] + out["host_to_device_ms"]
    return out


def summarize(values: npt.ArrayLike) -> Summary:
    """avg, sample sdv, min, max — with upstream's ``tsl::Stat`` quirk.

    That class starts its maximum at the smallest positive double, so a sample of
    zeros is "not all the same" and a single zero gives 0/0 = NaN ("-nan").
    """
    samples = np.asarray(values, dtype=np.float64)
    n = len(samples)
    if n == 0:
        return Summary()
    total, squares = float(samples.sum()), float((samples * samples).sum())
    low, high = float(samples.min()), max(float(samples.max()), sys.float_info.min)
    if low == high:
        sdv = 0.0
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = np.float64(squares - total * total / n) / np.float64(n - 1)
            sdv = float(np.sqrt(variance))
    return Summary(total / n, sdv, low, high)


def tf_data_in_use(host_ops: OpMetricsDb, details: pd.DataFrame) -> bool:
    """Whether host input ops (tf.data datasets or input stages) took time."""
    return input_ops.input_time_breakdown(input_ops.input_ops(host_ops), details).tf_data_in_use


def classify(details: pd.DataFrame, tf_data: bool) -> Bottleneck:
    total_ms = float(details["step_time_ms"].sum()) if len(details) else 0.0
    if total_ms <= 0:
        return Bottleneck()

    def percent(column: str) -> float:
        return 100.0 * float(details[column].sum()) / total_ms

    out = Bottleneck()
    input_pct, all_other_pct = percent("input_ms"), percent("unknown_time_ms")
    out.input_classification, out.input_statement, other_reported = _input(input_pct, all_other_pct)
    launch = percent("host_prepare_ms")
    out.kernel_launch_classification = _level(launch, 15, 3)
    if out.kernel_launch_classification != "no":
        contention = (
            " It could be due to CPU contention with tf.data. In this case, you may try to "
            "set the environment variable TF_GPU_THREAD_MODE=gpu_private."
        )
        out.kernel_launch_statement = (
            f"{launch:.1f} % of the total step time sampled is spent on 'Kernel Launch'."
            + (contention if tf_data else "")
        )
    if not other_reported:
        out.all_other_classification = _level(all_other_pct, 15, 3)
        if out.all_other_classification != "no":
            out.all_other_statement = (
                f"{all_other_pct:.1f} % of the total step time sampled is spent on "
                "'All Others' time. This could be due to Python execution overhead."
            )
    collectives = percent("device_collectives_ms")
    out.device_collectives_classification = _level(collectives, 15, 3)
    if out.device_collectives_classification != "no":
        out.device_collectives_statement = (
            f"{collectives:.1f} % of the total step time sampled is spent on "
            "'Device Collective Communication'."
        )
    return out


def _level(pct: float, high: float, moderate: float) -> str:
    return "high" if pct >= high else "moderate" if pct >= moderate else "no"


def _input(input_pct: float, all_other_pct: float) -> tuple:
    """(classification, statement, all-other already reported)."""
    x = f"{input_pct:.1f}"
    if input_pct >= 20:
        return (
            "host",
            (
                f"Your program is HIGHLY input-bound because {x}% of the total step time sampled "
                "is waiting for input. Therefore, you should first focus on reducing the input "
                "time."
            ),
            False,
        )
    if input_pct >= 5:
        return (
            "both",
            (
                f"Your program is MODERATELY input-bound because {x}% of the total step time "
                "sampled is waiting for input. Therefore, you would need to reduce both the input "
                "time and other time."
            ),
            False,
        )
    if all_other_pct >= 3:
        return (
            "both",
            (
                f"Your program is POTENTIALLY input-bound because {all_other_pct:.1f}% of the "
                "total step time sampled is spent on 'All Others' time (which could be due to I/O "
                "or Python execution or both)."
            ),
            True,
        )
    return (
        "device",
        (
            f"Your program is NOT input-bound because only {x}% of the total step time sampled is "
            "waiting for input. Therefore, you should focus on reducing other time."
        ),
        False,
    )


def summary_next_step(bottleneck: Bottleneck, tf_data: bool) -> str:
    if bottleneck.input_classification in ("host", "both"):
        if tf_data:
            return "Look at Section 3 for the breakdown of input time on the host."
        return (
            'Consider using <a href="https://www.tensorflow.org/guide/data" target="_blank">'
            "the tf.data API</a> to enable profiler's host-side analysis for input pipeline. "
            "Profiler currently does not support custom input pipeline (please ignore "
            "Section 3 below)."
        )
    return "You may skip the rest of this page."

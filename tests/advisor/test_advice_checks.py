"""Checks the fixtures do not trigger, on real contexts with one analysis replaced by hand.

Each test starts from a fixture's real context and swaps in a kernel table or step table whose
numbers are easy to check by hand, then asserts the check fires (or stays quiet) with them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from tools.compare_tables import fixture_hosts

from tensorboard_plugin_profile.analysis.advice import (
    checks as advice_checks,
)
from tensorboard_plugin_profile.analysis.advice import (
    op_checks as advice_ops,
)
from tensorboard_plugin_profile.analysis.advice.findings import context_of
from tensorboard_plugin_profile.analysis.ops.kernels import COLUMNS

MS = 10**9  # ps


def context(name="jax_cpu_train"):
    return context_of(list(fixture_hosts(name)), run="r")


def with_kernels(ctx, rows):
    """rows: (name, occurrences, total_ns, eligible, uses_tensor_cores)."""
    frame = pd.DataFrame(
        [
            {
                "name": n,
                "grid_dim": "1,1,1",
                "block_dim": "1,1,1",
                "registers_per_thread": 0,
                "static_shmem_bytes": 0,
                "dynamic_shmem_bytes": 0,
                "is_kernel_using_tensor_core": uses,
                "is_op_tensor_core_eligible": eligible,
                "op_name": "op",
                "occupancy_pct": 0.0,
                "occurrences": count,
                "total_duration_ns": total,
                "min_duration_ns": 0,
                "max_duration_ns": 0,
            }
            for n, count, total, eligible, uses in rows
        ],
        columns=COLUMNS,
    )
    return dataclasses.replace(ctx, stats=dataclasses.replace(ctx.stats, kernels=frame))


def with_steps(ctx, begin_ms, duration_ms, **columns):
    steps = pd.DataFrame(
        {
            "step_num": np.arange(len(begin_ms)),
            "step_name": [f"s{i}" for i in range(len(begin_ms))],
            "begin_ps": np.asarray(begin_ms, dtype=np.int64) * MS,
            "duration_ps": np.asarray(duration_ms, dtype=np.int64) * MS,
            **{k: np.asarray(v, dtype=np.int64) * MS for k, v in columns.items()},
        }
    )
    db = dataclasses.replace(ctx.stats.steps, steps=steps)
    return dataclasses.replace(ctx, stats=dataclasses.replace(ctx.stats, steps=db))


def test_many_tiny_kernels_are_launch_bound():
    ctx = with_kernels(
        context(), [("small", 3000, 3000 * 4000, False, False), ("big", 10, 10**7, False, False)]
    )
    (finding,) = advice_ops.tiny_kernels(ctx)
    assert finding.numbers["launches"] == 3010
    assert finding.numbers["tiny_launch_percent"] == share(3000, 3010)
    assert "XLA fuses them" in finding.advice  # JAX advice for a JAX profile
    few = with_kernels(context(), [("small", 900, 900 * 4000, False, False)])
    assert advice_ops.tiny_kernels(few) == []  # under 1000 launches: not worth a finding


def share(part, whole):
    return 100.0 * part / whole


def test_eligible_ops_not_using_tensor_cores():
    rows = [("sgemm", 10, 6 * 10**6, True, False), ("hgemm_tc", 10, 4 * 10**6, True, True)]
    (finding,) = advice_ops.tensor_cores(with_kernels(context("tf_keras2_fit"), rows))
    assert finding.numbers["missed_percent"] == 60.0
    assert "mixed_precision" in finding.advice  # TensorFlow advice
    using = [("hgemm_tc", 10, 4 * 10**6, True, True)]
    assert advice_ops.tensor_cores(with_kernels(context("tf_keras2_fit"), using)) == []


def test_layout_conversions_around_convolutions():
    rows = [
        ("void nhwcToNchwKernel<float>", 5, 10**6, False, False),
        ("conv", 5, 9 * 10**6, True, False),
    ]
    (finding,) = advice_ops.nhwc_convolutions(with_kernels(context("tf_keras2_fit"), rows))
    assert finding.numbers["layout_percent"] == 10.0 and finding.severity == "warning"
    assert advice_ops.nhwc_convolutions(with_kernels(context(), [rows[1]])) == []


def test_idle_gaps_between_steps_link_the_longest_gap():
    ctx = with_steps(context(), [0, 20, 60], [10, 10, 10])  # gaps 10 and 30 ms in 70 ms
    findings = advice_checks.steps_timing(ctx)
    gap = next(f for f in findings if f.check == "idle_between_steps")
    assert gap.numbers["gap_percent"] == 100.0 * 40 / 70
    assert gap.link["query"].endswith("&start_ms=28.5&end_ms=61.5")  # the gap, 5 % margins
    tight = with_steps(context(), [0, 10, 20], [10, 10, 10])
    assert not [f for f in advice_checks.steps_timing(tight) if f.check == "idle_between_steps"]


def test_slow_steps_against_the_median():
    ctx = with_steps(context(), [0, 10, 20, 30], [10, 10, 10, 25])
    (slow,) = [f for f in advice_checks.steps_timing(ctx) if f.check == "slow_steps"]
    assert slow.numbers == {"median_ms": 10.0, "slow_steps": ["s3"]}


def test_host_device_copies_in_the_step():
    ctx = with_steps(context(), [0, 10], [10, 10], HOST_TO_DEVICE=[1, 1], DEVICE_TO_HOST=[0, 1])
    (finding,) = advice_checks.host_device_copies(ctx)
    assert finding.numbers["copy_percent"] == 15.0
    quiet = with_steps(context(), [0, 10], [10, 10], HOST_TO_DEVICE=[0, 0])
    assert advice_checks.host_device_copies(quiet) == []

"""Limits of live captures (capture/in_process.py) that need no framework.

The captures themselves run inside real JAX and TensorFlow loops in tests/advisor/test_live.py.
"""

from __future__ import annotations

import pytest

from tensorboard_plugin_profile.capture.in_process import (
    LIVE_TARGET,
    InProcessProfiler,
    TraceLimits,
)
from tensorboard_plugin_profile.capture.jobs import CaptureManager, CaptureParams
from tensorboard_plugin_profile.capture.options import ProfilerOptions
from tensorboard_plugin_profile.capture.routes import capture_profile_route
from tensorboard_plugin_profile.common.errors import InvalidArgument


def test_limits_must_be_positive_integers():
    assert TraceLimits().max_duration_ms == 120_000
    assert TraceLimits().max_trace_bytes == 512 << 20
    for bad in (0, -1, 1.5, True, "60000"):
        with pytest.raises(InvalidArgument):
            TraceLimits(max_duration_ms=bad)
        with pytest.raises(InvalidArgument):
            TraceLimits(max_trace_bytes=bad)


def test_a_duration_or_delay_above_the_limit_is_refused_before_anything_starts():
    profiler = InProcessProfiler("JAX", TraceLimits(max_duration_ms=5000))
    profiler.check(CaptureParams(LIVE_TARGET, duration_ms=5000))
    with pytest.raises(InvalidArgument, match="at most 5000 ms"):
        profiler.check(CaptureParams(LIVE_TARGET, duration_ms=5001))
    with pytest.raises(InvalidArgument, match="the delay asked is 6000 ms"):
        profiler.check(CaptureParams(LIVE_TARGET, options=ProfilerOptions(delay_ms=6000)))
    # Through the page's route: refused at once (HTTP 400), no job started (nothing imports JAX).
    manager = CaptureManager(local=profiler)
    args = {"service_addr": LIVE_TARGET, "duration": "600000"}
    with pytest.raises(InvalidArgument, match="at most 5000 ms"):
        capture_profile_route("/nonexistent/logdir", args, manager)
    assert manager._jobs == {}

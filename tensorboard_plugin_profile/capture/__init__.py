"""Capture profiles from running TensorFlow / JAX profiler servers (spec §5).

``trace`` and ``monitor`` are the Python API (same arguments as TensorFlow's
``tf.profiler.experimental.client``); ``jobs`` runs captures in worker threads
for the HTTP routes; ``cli`` adds ``tbprof capture`` and ``tbprof monitor``.
"""

from __future__ import annotations

from tensorboard_plugin_profile.capture.client import monitor, trace
from tensorboard_plugin_profile.capture.options import ProfilerOptions
from tensorboard_plugin_profile.capture.outcomes import CaptureResult

__all__ = ["CaptureResult", "ProfilerOptions", "monitor", "trace"]

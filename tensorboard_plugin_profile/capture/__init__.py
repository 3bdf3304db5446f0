"""Capture profiles from running TensorFlow / JAX profiler servers (docs/capture.md).

``trace`` and ``monitor`` are the Python API (same arguments as TensorFlow's
``tf.profiler.experimental.client``); ``jobs`` runs captures in worker threads
for the HTTP routes; ``cli`` adds ``tbprof capture`` and ``tbprof monitor``;
``in_process`` captures the calling process itself, without gRPC (live tracing).
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use: importing grpc costs ~80 ms that `tbprof convert` and the
# plugin's start-up should not pay just because the package is imported.
_EXPORTS = {
    "trace": "client",
    "monitor": "client",
    "ProfilerOptions": "options",
    "CaptureResult": "outcomes",
}

__all__ = ["CaptureResult", "ProfilerOptions", "monitor", "trace"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)

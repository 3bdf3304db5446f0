"""The input formats, named once: what ``Space.source_format`` holds.

A profile comes as an ``.xplane.pb`` (TensorFlow, JAX), a TensorFlow ``ProfilerHook``
timeline or a PyTorch profiler trace. The decoders stamp the format's name on the ``Space``
they build; analyses and tools that treat a format differently compare with the names here
(``format_of(space) == PYTORCH``), never with string literals.

The names sit here, in the first stage, so the decoders themselves can use them.

Usage::

    if format_of(space) == PROFILER_HOOK: ...
"""

from __future__ import annotations

from typing import Any

XSPACE = "xspace"  # <host>.xplane.pb (xspace/)
PROFILER_HOOK = "profiler_hook"  # tf.train.ProfilerHook's timeline-<step>.json (chrome_trace/)
PYTORCH = "pytorch"  # torch.profiler's <worker>.<span>.pt.trace.json[.gz] (chrome_trace/)
CHROME_TRACE_FORMATS = (PROFILER_HOOK, PYTORCH)


def format_of(space: Any) -> str:
    """The format a Space was read from (a Space built in code is an XSpace)."""
    return getattr(space, "source_format", XSPACE)


def is_chrome_trace(space: Any) -> bool:
    return format_of(space) in CHROME_TRACE_FORMATS

"""Which files are Chrome-trace profiles, and what their names say (format, session, host).

Each format has its own matcher (``timeline_file_name``, ``pytorch_file_name``: the registry in
``store/formats.py`` holds them); ``parse_trace_file_name`` tries both, as the reader does to
tell a file's format before it looks at its content.
"""

from __future__ import annotations

import re
from typing import Optional

from ..common.formats import PROFILER_HOOK, PYTORCH, FileName

# tf.train.ProfilerHook: timeline-<global step>.json
_TIMELINE = re.compile(r"(timeline-(\d+))\.json(?:\.gz)?")
# torch.profiler.tensorboard_trace_handler: <worker>.<span>.pt.trace.json[.gz]; the worker
# name may itself hold dots (host name + pid), the span is the last part before .pt.
_PYTORCH = re.compile(r"(?:(.+)\.)?(\d+)\.pt\.trace\.json(?:\.gz)?|(.+)\.pt\.trace\.json(?:\.gz)?")
# Any Chrome-trace JSON given on its own: the file is its session and its host.
_LOOSE_SUFFIXES = (".json.gz", ".json")


def timeline_file_name(name: str) -> Optional[FileName]:
    """``timeline-4.json``: session and host ``timeline-4``; None for other names."""
    match = _TIMELINE.fullmatch(name)
    return FileName(PROFILER_HOOK, match.group(1), match.group(1)) if match else None


def pytorch_file_name(name: str) -> Optional[FileName]:
    """``rank0.1.pt.trace.json.gz``: session (the span) ``1``, host ``rank0``; None for others."""
    match = _PYTORCH.fullmatch(name)
    if match is None:
        return None
    if match.group(3) is not None:
        return FileName(PYTORCH, "trace", match.group(3))
    return FileName(PYTORCH, match.group(2), match.group(1) or "worker")


def parse_trace_file_name(name: str) -> Optional[FileName]:
    """The format, session and host of a Chrome-trace file name, or None for other files."""
    return timeline_file_name(name) or pytorch_file_name(name)


def loose_trace_file_name(name: str) -> Optional[FileName]:
    """A ``*.json[.gz]`` given on its own, named after itself. Its format is a guess the reader
    corrects from the content: a trace without PyTorch's keys reads as a ProfilerHook one."""
    for suffix in _LOOSE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)]
            return FileName(PROFILER_HOOK, stem, stem)
    return None

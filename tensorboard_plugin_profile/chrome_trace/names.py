"""Which files are Chrome-trace profiles, and what their names say (kind, worker, span)."""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from ..common.formats import PROFILER_HOOK, PYTORCH

# tf.train.ProfilerHook: timeline-<global step>.json
_TIMELINE = re.compile(r"(timeline-(\d+))\.json(?:\.gz)?")
# torch.profiler.tensorboard_trace_handler: <worker>.<span>.pt.trace.json[.gz]; the worker
# name may itself hold dots (host name + pid), the span is the last part before .pt.
_PYTORCH = re.compile(r"(?:(.+)\.)?(\d+)\.pt\.trace\.json(?:\.gz)?|(.+)\.pt\.trace\.json(?:\.gz)?")


@dataclasses.dataclass(frozen=True)
class TraceFileName:
    kind: str  # PROFILER_HOOK or PYTORCH
    session: str  # the session it belongs to ("timeline-4", or the span "1")
    host: str  # the host it shows as (the worker; the timeline's own name)


def parse_trace_file_name(name: str) -> Optional[TraceFileName]:
    """The kind, session and host of a Chrome-trace file name, or None for other files."""
    match = _TIMELINE.fullmatch(name)
    if match:
        return TraceFileName(PROFILER_HOOK, match.group(1), match.group(1))
    match = _PYTORCH.fullmatch(name)
    if match:
        if match.group(3) is not None:
            return TraceFileName(PYTORCH, "trace", match.group(3))
        worker = match.group(1) or "worker"
        return TraceFileName(PYTORCH, match.group(2), worker)
    return None

"""Several ProfilerHook timelines on one time line (the ``all_steps`` run, issue 28 item 10).

The Chrome-trace reader keeps each file's times relative to its first event (its
``time_base_ns``), so three steps read separately all start at 0. Drawn together, each is
moved by its own base minus the earliest one: the steps then follow each other as they ran.
Other host sets (XSpace hosts, PyTorch ranks) are returned unchanged. A moved host is a copy
whose events' ``begin_ps`` column is new and whose other tables are shared; it is made once
per Space and shift and dropped with the Space.

Usage::

    hosts = on_one_clock([("timeline-4", space4), ("timeline-8", space8)])
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ...common.formats import PROFILER_HOOK
from ...common.memo import memoized
from ...xspace.model import Space


def on_one_clock(hosts: Sequence[tuple]) -> list:
    """(name, Space) pairs; ProfilerHook timelines moved onto the earliest one's clock."""
    hosts = list(hosts)
    if len(hosts) < 2 or any(space.source_format != PROFILER_HOOK for _, space in hosts):
        return hosts
    earliest = min(space.time_base_ns for _, space in hosts)
    return [(name, _moved(space, space.time_base_ns - earliest)) for name, space in hosts]


def _moved(space: Space, shift_ns: int) -> Space:
    if shift_ns == 0:
        return space
    return memoized([space], f"one_clock:{shift_ns}", lambda: _copy(space, shift_ns))


def _copy(space: Space, shift_ns: int) -> Space:
    shift_ps = shift_ns * 1000
    planes = [
        dataclasses.replace(p, events=p.events.assign(begin_ps=p.events["begin_ps"] + shift_ps))
        for p in space.planes
    ]
    return dataclasses.replace(space, planes=planes, time_base_ns=space.time_base_ns - shift_ns)

"""What the advisor reads of one host's planes, as a few numbers per host.

Most checks read merged statistics (op stats, steps); a few look at the planes
themselves: whether any device or XLA op ran, how busy each device was over the
profiled span, what framework wrote the profile, whether tf.data ran. ``host_facts``
reduces a host to those few numbers, so a pod session's advisor merges them from the
hosts' summaries (``analysis/host_summary.py``) instead of holding every host's planes,
and a single host gets the same findings from the same code.

Usage::

    facts = host_facts(space)            # a preprocessed XSpace or a Chrome-trace Space
    framework_from([facts], stats)       # "JAX", "TensorFlow", ...
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ...xspace import schema
from ...xspace.event_stats import set_rows
from ..environment import device_planes
from ..input_pipeline.tf_data import has_tf_data

TENSORFLOW, JAX, PYTORCH, UNKNOWN = "TensorFlow", "JAX", "PyTorch", "unknown"

# Lines preprocessing derives from a device's real lines (their events are copies).
_SUMMARY_LINES = (
    schema.STEPS_LINE,
    schema.XLA_MODULES_LINE,
    schema.XLA_OPS_LINE,
    schema.FRAMEWORK_OPS_LINE,
    schema.FRAMEWORK_NAME_SCOPE_LINE,
    schema.SOURCE_LINE,
    schema.LAUNCH_STATS_LINE,
    "TensorFlow Ops",
    "TensorFlow Name Scope",
)


@dataclasses.dataclass
class HostFacts:
    device_events: int  # events on the host's device planes
    has_xla_ops: bool  # the host plane has events carrying ``hlo_op``
    devices: list  # [(device name, busy ps)] per device plane, in plane order
    span: tuple  # (first begin, last end) over every plane; (0, 0) when it has no device
    jax_metadata: bool  # the metadata plane names a jax_version
    name_hint: Optional[str]  # the framework the host plane's names give, if any
    has_tf_data: bool  # tf.data iterator events on the host plane


def host_facts(space: Any) -> HostFacts:
    devices = device_planes(space)
    host = space.plane(schema.HOST_PLANE)
    metadata = space.plane(schema.METADATA_PLANE)
    return HostFacts(
        device_events=sum(plane.num_events for plane in devices),
        has_xla_ops=host is not None and len(set_rows(host, schema.HLO_OP)) > 0,
        devices=[(p.name.replace("/device:", ""), _plane_busy_ps(p)) for p in devices],
        # The span reads every plane's events: only for a host with devices.
        span=_profile_span(space) if devices else (0, 0),
        jax_metadata=metadata is not None and "jax_version" in metadata.stat_names.values(),
        name_hint=_name_hint(host) if host is not None else None,
        has_tf_data=has_tf_data(space),
    )


def framework_from(facts: Sequence[HostFacts], stats: Any = None) -> str:
    """The framework that made the profile, from what its planes say about themselves."""
    if any(f.jax_metadata for f in facts):
        return JAX
    if stats is not None and stats.steps.framework:
        return str(stats.steps.framework)
    for f in facts:
        if f.name_hint:
            return f.name_hint
    if stats is not None and not stats.host_ops.without_idle().empty:
        return TENSORFLOW
    return UNKNOWN


def _name_hint(host: Any) -> Optional[str]:
    names = pd.Series(host.event_metadata["name"], dtype=object).astype(str)
    if names.str.startswith("aten::").any():
        return PYTORCH
    if names.str.startswith(("PjitFunction", "PjRt")).any():
        return JAX
    lines = host.lines["name"].astype(str)
    if lines.str.startswith("tf_").any() or names.str.startswith("Iterator::").any():
        return TENSORFLOW
    return None


def _profile_span(space: Any) -> tuple:
    begins, ends = [], []
    for plane in space.planes:
        ev = plane.events
        if len(ev):
            begins.append(int(ev["begin_ps"].min()))
            ends.append(latest_end_ps(ev["begin_ps"].to_numpy(), ev["duration_ps"].to_numpy()))
    return (min(begins), max(ends)) if begins else (0, 0)


def _plane_busy_ps(plane: Any) -> int:
    ev = plane.events
    if ev.empty:
        return 0
    line_ids = plane.lines["id"].to_numpy(dtype=np.int64)
    real = ~((line_ids >= schema.DERIVED_LINE_ID_MIN) & (line_ids <= schema.DERIVED_LINE_ID_MAX))
    # Older TF wrote its derived lines with ordinary ids: recognise them by name too.
    real &= ~plane.lines["name"].astype(str).isin(_SUMMARY_LINES).to_numpy()
    begin = ev["begin_ps"].to_numpy(dtype=np.int64)
    duration = ev["duration_ps"].to_numpy(dtype=np.int64)
    if not real.all():  # copies of the real lines' events only when the plane has derived lines
        keep = real[ev["line"].to_numpy()]
        begin, duration = begin[keep], duration[keep]
    return busy_time_ps(begin, duration)


# Interval helpers read planes of millions of events: they work a block of events at a
# time, so the advisor's temporaries stay a few megabytes above the kept profile.
_BLOCK = 1 << 16


def latest_end_ps(begin: np.ndarray, duration: np.ndarray) -> int:
    """``max(begin + duration)`` of a non-empty plane, without an end array per event."""
    return max(
        int((begin[i : i + _BLOCK] + duration[i : i + _BLOCK]).max())
        for i in range(0, len(begin), _BLOCK)
    )


def busy_time_ps(begin: np.ndarray, duration: np.ndarray) -> int:
    """Length of the union of intervals ``[begin, begin + duration]``.

    In begin order, each interval adds what it reaches beyond the latest end before it
    (``reach - max(begin, earlier reach)``: the runs of overlapping intervals summed
    piece by piece). Only the order is a whole-plane array; the rest is per block.
    """
    order = np.argsort(begin, kind="stable")
    total, reach = 0, None
    for i in range(0, len(order), _BLOCK):
        rows = order[i : i + _BLOCK]
        block_begin = begin[rows]
        block_reach = np.maximum.accumulate(block_begin + duration[rows])
        if reach is not None:
            np.maximum(block_reach, reach, out=block_reach)
        earlier = np.empty_like(block_reach)
        earlier[0] = block_begin[0] if reach is None else reach  # nothing earlier: the begin
        earlier[1:] = block_reach[:-1]
        total += int((block_reach - np.maximum(block_begin, earlier)).sum())
        reach = block_reach[-1]
    return total

"""Tracer options, timing rules and the exact gRPC requests a capture sends.

Timing, in one place:

* every host starts at the same absolute time ``start_timestamp_ns = now + delay``;
  with more than one host the delay is at least ``MIN_MULTI_HOST_DELAY_MS`` so the
  parallel requests all arrive before that moment (upstream forces 3000 ms and
  ignores the user's value; we keep the user's value when it is larger);
* the gRPC deadline of one attempt is ``delay + max(60 s, 2 x duration) + margin``.
  Upstream leaves the delay out, so long delays end in DEADLINE_EXCEEDED.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.protobuf import (
    profiler_analysis_pb2,
    profiler_options_pb2,
    profiler_service_pb2,
)

# How long the pre-flight check waits for a profiler server to answer.
DEFAULT_CONNECT_TIMEOUT_S = 3.0
MIN_MULTI_HOST_DELAY_MS = 1000
_MAX_UINT32 = 2**32 - 1
MIN_DEADLINE_S = 60.0
DEADLINE_MARGIN_S = 5.0
# Legacy fields the upstream client still sends; TPU servers read `tools`,
# XSpace servers ignore both.
MAX_EVENTS = 1_000_000
LEGACY_TOOLS = (
    "trace_viewer",
    "op_profile",
    "input_pipeline",
    "kernel_stats",
    "memory_viewer",
    "memory_profile",
    "overview_page",
    "pod_viewer",
    "tensorflow_stats",
    "xplane.pb",
)


# Accepted tracer levels (the founding TF documentation of ``ProfilerOptions`` and the
# capture dialog): host 0 off, 1 critical, 2 info, 3 verbose; device 0 off, 1 on, and 2
# for the verbose device tracing the options proto leaves to each device; python 0 off,
# 1 on. Anything else is a typo: servers silently fall back to their defaults.
TRACER_LEVELS = {
    "host_tracer_level": (0, 3),
    "device_tracer_level": (0, 2),
    "python_tracer_level": (0, 1),
}


@dataclasses.dataclass(frozen=True)
class ProfilerOptions:
    """What to trace. Levels as in the capture dialog; ``delay_ms=None`` means 0."""

    host_tracer_level: int = 2
    python_tracer_level: int = 0
    device_tracer_level: int = 1
    delay_ms: int | None = None

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None or field.name != "delay_ms":
                object.__setattr__(self, field.name, _checked_uint32(field.name, value))
        for name, (low, high) in TRACER_LEVELS.items():
            level = getattr(self, name)
            if not low <= level <= high:
                raise InvalidArgument(
                    f"{name} must be between {low} and {high}, got {level}; "
                    f"see docs/capture.md for what each level traces."
                )

    @classmethod
    def coerce(cls, options: Any = None, **overrides: Any) -> ProfilerOptions:
        """The options however the caller spelled them.

        ``options`` is None, this class, a dict (``options['delay_ms'] = 1000`` as in
        TensorFlow's multi-GPU example), or any object with these attributes (TF's
        ``ProfilerOptions`` namedtuple); ``overrides`` are keyword arguments that win
        over it. An unknown key raises ``InvalidArgument``, as does a bad level.
        """
        given = _as_mapping(options)
        given.update(overrides)
        unknown = sorted(str(key) for key in given if key not in _FIELD_NAMES)
        if unknown:
            raise InvalidArgument(
                f"Unknown profiler option(s) {', '.join(unknown)[:200]}; the options are "
                f"{', '.join(_FIELD_NAMES)}."
            )
        if not overrides and isinstance(options, cls):
            return options
        return cls(**given)


_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(ProfilerOptions))


def _as_mapping(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if isinstance(options, Mapping):
        return dict(options)
    if isinstance(options, ProfilerOptions):
        return dataclasses.asdict(options)
    as_dict = getattr(options, "_asdict", None)  # a namedtuple: every field it has
    if callable(as_dict):
        return dict(as_dict())
    found = {name: getattr(options, name) for name in _FIELD_NAMES if hasattr(options, name)}
    if not found:
        raise InvalidArgument(
            f"options must be a ProfilerOptions, a dict or a namedtuple with "
            f"{', '.join(_FIELD_NAMES)}; got {type(options).__name__}."
        )
    return found


def _checked_uint32(name: str, value: Any) -> int:
    if isinstance(value, bool):
        value = int(value)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}.") from None
    if not 0 <= number <= _MAX_UINT32:
        raise InvalidArgument(f"{name} must be between 0 and {_MAX_UINT32}, got {number}.")
    return number


def effective_delay_ms(options: ProfilerOptions, num_hosts: int) -> int:
    delay_ms = options.delay_ms or 0
    if num_hosts > 1:
        return max(delay_ms, MIN_MULTI_HOST_DELAY_MS)
    return delay_ms


def attempt_deadline_s(duration_ms: int, delay_ms: int) -> float:
    """Seconds one attempt may take from sending the request to the last byte."""
    return delay_ms / 1000 + max(MIN_DEADLINE_S, 2 * duration_ms / 1000) + DEADLINE_MARGIN_S


def check_duration(duration_ms: Any, max_duration_ms: int) -> int:
    """``duration_ms`` as an int in 1..``max_duration_ms``; ``InvalidArgument`` otherwise."""
    return check_ms("duration_ms", duration_ms, 1, max_duration_ms, "MAX_DURATION_MS")


def check_ms(name: str, value: Any, low: int, high: int, limit_field: str) -> int:
    """A whole number of milliseconds in ``low..high``; the message names ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value)
        except (TypeError, ValueError, OverflowError):
            raise InvalidArgument(f"{name} must be an integer, got {value!r:.40}.") from None
    if value < low:
        raise InvalidArgument(
            f"{name} must be greater than zero." if low == 1 else f"{name} must not be negative."
        )
    if value > high:
        raise InvalidArgument(
            f"{name} may be at most {high} ms ({high / 60_000:g} min), got {str(value)[:40]}; "
            f"TBPROF_CAPTURE_{limit_field} raises the limit."
        )
    return value


def profile_request(
    *,
    repository_root: str,
    session_id: str,
    host_name: str,
    duration_ms: int,
    start_timestamp_ns: int,
    options: ProfilerOptions,
    emit_xspace: bool,
) -> profiler_service_pb2.ProfileRequest:
    """The request the upstream client sends (docs/capture.md), plus ``emit_xspace``.

    ``opts.repository_path`` stays empty ("no-op when empty" in the upstream proto): the
    server never needs our logdir to trace. ``repository_root`` is only read by servers
    that write the files themselves; the caller decides who gets it (``CapturePlan``).
    """
    opts = profiler_options_pb2.ProfileOptions(
        version=1,
        include_dataset_ops=True,
        host_tracer_level=options.host_tracer_level,
        device_tracer_level=options.device_tracer_level,
        python_tracer_level=options.python_tracer_level,
        enable_hlo_proto=True,
        start_timestamp_ns=start_timestamp_ns,
        duration_ms=duration_ms,
    )
    return profiler_service_pb2.ProfileRequest(
        duration_ms=duration_ms,
        max_events=MAX_EVENTS,
        tools=LEGACY_TOOLS,
        opts=opts,
        repository_root=repository_root,
        session_id=session_id,
        host_name=host_name,
        emit_xspace=emit_xspace,
    )


def new_session_request(
    request: profiler_service_pb2.ProfileRequest, hosts: list[str]
) -> profiler_analysis_pb2.NewProfileSessionRequest:
    """Cloud-TPU mode: the TPU-side service fans out to ``hosts`` and writes the files."""
    return profiler_analysis_pb2.NewProfileSessionRequest(
        request=request,
        repository_root=request.repository_root,
        hosts=hosts,
        session_id=request.session_id,
    )


def start_timestamp_ns(delay_ms: int) -> int:
    return time.time_ns() + delay_ms * 1_000_000

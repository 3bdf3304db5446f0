"""How much one capture may ask of this process, and take from a profiler server.

A capture makes this server connect to the addresses it is given and keep what they
send, so each dimension a request or a server controls has a bound: how long it traces
and waits, how many addresses it names, how many bytes and tool files one host may
send. Past a bound the request is refused at once (``InvalidArgument``) or the host
fails with a message naming the bound and how to raise it; nothing of that host is
written. The defaults sit above real captures (a busy TPU host's XSpace is a few
hundred MB; upstream clients capture seconds, not hours); each can be raised with an
environment variable, ``TBPROF_CAPTURE_<FIELD>`` (``TBPROF_CAPTURE_MAX_HOST_BYTES``).

>>> limits = CaptureLimits.from_env()
>>> limits.max_duration_ms
600000
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from tensorboard_plugin_profile.common.errors import InvalidArgument

ENV_PREFIX = "TBPROF_CAPTURE_"


@dataclasses.dataclass(frozen=True)
class CaptureLimits:
    """Bounds of one capture; ``from_env`` reads ``TBPROF_CAPTURE_<FIELD>`` overrides."""

    max_duration_ms: int = 600_000  # 10 min of tracing
    max_delay_ms: int = 600_000  # 10 min before tracing starts
    max_addresses: int = 256  # service addresses (and TPU workers) in one capture
    # One host's whole answer (the gRPC message). gRPC refuses a larger one from its length,
    # before receiving it; one it accepts costs ~3x its size in memory while it arrives
    # (gRPC's buffer, one contiguous copy, the Python bytes), so this bounds memory too.
    max_host_bytes: int = 512 << 20
    max_tool_files: int = 32  # legacy tool files one host may send
    max_tool_bytes: int = 256 << 20  # those files together, per host
    max_probes: int = 32  # TCP probes of unreachable addresses at a time

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidArgument(f"{field.name} must be a positive integer, got {value!r}.")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CaptureLimits:
        environ = os.environ if environ is None else environ
        values = {}
        for field in dataclasses.fields(cls):
            text = environ.get(env_name(field.name), "").strip()
            if not text:
                continue
            if not (text.isascii() and text.isdigit()):
                raise InvalidArgument(
                    f"{env_name(field.name)} must be a positive whole number, got {text[:40]!r}."
                )
            values[field.name] = int(text)
        return cls(**values)

    def check_addresses(self, count: int, what: str = "service addresses") -> None:
        if count > self.max_addresses:
            raise InvalidArgument(
                f"A capture takes at most {self.max_addresses} {what}; this list has more "
                f"({env_name('max_addresses')} raises the limit)."
            )


def env_name(field: str) -> str:
    """The variable that sets ``field``: ``max_host_bytes`` → ``TBPROF_CAPTURE_MAX_HOST_BYTES``."""
    return ENV_PREFIX + field.upper()


def describe_bytes(count: int) -> str:
    if count >= 1 << 20:
        return f"{count / (1 << 20):.0f} MiB"
    return f"{count} bytes"

"""What a capture produced, and gRPC failures turned into advice a user can act on.

Upstream reports every failure (refused connection, wrong port, deadline, a busy
profiler) as one generic "No trace event was collected". Here each failure keeps
its cause and says what to do about it.
"""

from __future__ import annotations

import dataclasses

import grpc

from tensorboard_plugin_profile.common.errors import DeadlineExceeded, ProfileError, Unavailable

START_SERVER_HINT = (
    "start the profiler server in the program (tf.profiler.experimental.server.start(port) "
    "or jax.profiler.start_server(port)); in JAX keep a reference to the object "
    "start_server() returns"
)
_BUSY_MARKER = "another profiling session active"
_MAX_DETAILS = 300


class CaptureCancelled(ProfileError):
    """Someone stopped the capture (the page's Cancel, ``capture_cancel``, Ctrl-C)."""

    http_status = 409
    code = "CANCELLED"


@dataclasses.dataclass(frozen=True)
class HostFailure:
    """Why one host gave no profile; ``retryable`` when another attempt may help."""

    error: ProfileError
    retryable: bool = False
    busy: bool = False

    @property
    def reason(self) -> str:
        return self.error.message


@dataclasses.dataclass(frozen=True)
class CaptureResult:
    """One finished capture.

    ``session_dir`` is local when ``hosts_written`` is non-empty; hosts in
    ``hosts_written_by_server`` saved their file themselves, under the same
    session id but on *their* filesystem (servers that ignore ``emit_xspace``,
    Cloud TPU sessions, ``gs://`` logdirs).
    """

    session_id: str
    session_dir: str
    hosts_written: tuple[str, ...]
    hosts_written_by_server: tuple[str, ...]
    hosts_failed: dict[str, str]
    files: tuple[str, ...]
    attempts: int
    elapsed_s: float
    logdir: str = ""
    notes: tuple[str, ...] = ()  # e.g. a live capture stopped early (``in_process``)

    @property
    def shown_dir(self) -> str:
        """``session_dir`` relative to the logdir: replies never reveal the server's layout."""
        prefix = self.logdir.rstrip("/\\")
        if prefix and self.session_dir.startswith(prefix):
            rest = self.session_dir[len(prefix) :].replace("\\", "/").strip("/")
            return f"<logdir>/{rest}"
        return f"<logdir>/plugins/profile/{self.session_id}"

    def summary(self) -> str:
        parts = []
        if self.hosts_written:
            parts.append(
                f"Session {self.session_id} written to {self.shown_dir} "
                f"({', '.join(self.hosts_written)})."
            )
        if self.hosts_written_by_server:
            parts.append(
                f"The profiler server wrote session {self.session_id} itself, on its own "
                f"filesystem under {self.shown_dir} "
                f"({', '.join(self.hosts_written_by_server)}); it shows up here only if that "
                "machine shares this logdir."
            )
        for host, reason in sorted(self.hosts_failed.items()):
            parts.append(f"{host} failed: {reason}")
        parts.extend(self.notes)
        return " ".join(parts)


def empty_trace_failure(target: str, duration_ms: int) -> HostFailure:
    return HostFailure(
        Unavailable(
            f"{target}: no trace events were collected: was the program running "
            f"(executing steps) during the {duration_ms} ms window?"
        ),
        retryable=True,
    )


def not_listening_failure(target: str, timeout_s: float) -> HostFailure:
    return HostFailure(
        Unavailable(
            f"Nothing listens at {target} (no connection within {timeout_s:g} s); "
            f"{START_SERVER_HINT}."
        )
    )


def silent_listener_failure(target: str, timeout_s: float) -> HostFailure:
    return HostFailure(
        Unavailable(
            f"Something at {target} accepted the connection but did not answer as a gRPC "
            f"server within {timeout_s:g} s: is this the profiler's port (the one passed to "
            "start_server()), and is the program responsive?"
        )
    )


def rpc_failure(error: grpc.RpcError, target: str, deadline_s: float, service: str) -> HostFailure:
    """Turns one failed call into advice; ``service`` names the RPC for messages."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = _details(error)
    if _BUSY_MARKER in details.lower():
        return HostFailure(
            Unavailable(
                f"{target} is already profiling (another profiling session is active: a "
                "programmatic start_trace() or another capture); wait until it ends and retry."
            ),
            retryable=True,
            busy=True,
        )
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return HostFailure(
            DeadlineExceeded(
                f"{target}: the capture took longer than {deadline_s:.0f} s (delay + duration + "
                "collection); the program may be too busy to answer or the profile too large. "
                "Try a shorter duration or lower tracer levels."
            )
        )
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return HostFailure(Unavailable(_unimplemented_advice(target, service)))
    if code == grpc.StatusCode.UNAVAILABLE:
        return HostFailure(
            Unavailable(
                f"{target} became unreachable during the capture ({details or 'unavailable'}): "
                "did the program exit or crash? If it keeps running, " + START_SERVER_HINT + "."
            ),
            retryable=True,
        )
    retryable = code == grpc.StatusCode.ALREADY_EXISTS or (
        code == grpc.StatusCode.UNKNOWN and "stream removed" in details.lower()
    )
    return HostFailure(
        Unavailable(f"{target} answered {code.name}: {details or 'no details'}"),
        retryable=retryable,
    )


def combined_error(failures: dict[str, HostFailure]) -> ProfileError:
    """One error for a capture where no host produced a profile."""
    if len(failures) == 1:
        return next(iter(failures.values())).error
    kinds = {type(f.error) for f in failures.values()}
    kind = kinds.pop() if len(kinds) == 1 else Unavailable
    reasons = " ".join(f.reason for _, f in sorted(failures.items()))
    return kind(f"No trace event was collected from any host. {reasons}")


def _unimplemented_advice(target: str, service: str) -> str:
    if service == "NewSession":
        return (
            f"{target} does not offer the Cloud TPU ProfileAnalysis service; leave the worker "
            "list empty to capture from JAX or TensorFlow profiler servers."
        )
    if service == "Monitor":
        return (
            f"{target} does not implement Monitor (JAX profiler servers do not; TensorFlow's "
            "do); use capture instead."
        )
    return (
        f"{target} does not speak the profiler service (UNIMPLEMENTED): is this the port the "
        "program passed to start_server()?"
    )


def _details(error: grpc.RpcError) -> str:
    details = error.details() if hasattr(error, "details") else ""
    details = (details or "").strip()
    if len(details) > _MAX_DETAILS:
        details = details[:_MAX_DETAILS] + "..."
    return details

"""The ``/capture_profile`` and ``capture_status`` semantics, without HTTP (docs/capture.md).

Each takes the query arguments as a plain mapping. A parameter that is not a whole
number in its range (``duration=nan``, ``-5``, ``2**64``, past ``CaptureLimits``), an
address list that does not parse or is too long, raises ``InvalidArgument``: the HTTP
layer answers 400 with a message naming the parameter. Past those checks the capture
routes return a dict that ``http_api.Routes`` sends as JSON with status 200:
``{"result": ...}``, ``{"error": ...}``, or with ``async=1`` ``{"job": id}`` at once.
The capture itself runs in a job's worker thread; the blocking form just waits for it.
``capture_cancel_route`` stops a job.

>>> capture_profile_route("/tmp/logs", {"service_addr": "localhost:9999", "duration": "1000"})
... # doctest: +SKIP
{'result': 'Capture profile successfully. Please refresh. Session ...'}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from tensorboard_plugin_profile.capture.client import MAX_ATTEMPTS
from tensorboard_plugin_profile.capture.jobs import (
    DEFAULT_MANAGER,
    CaptureManager,
    CaptureParams,
    error_text,
    success_text,
)
from tensorboard_plugin_profile.capture.limits import CaptureLimits, env_name
from tensorboard_plugin_profile.capture.options import TRACER_LEVELS, ProfilerOptions
from tensorboard_plugin_profile.common.errors import InvalidArgument, ProfileError

logger = logging.getLogger("tensorboard_plugin_profile.capture")

NO_LOGDIR = "logdir is not set, abort capturing."
NO_TENSORFLOW = "TensorFlow is not installed, but is required to use TPU names."
_TPU_MASTER_PORT, _TPU_PROFILER_PORT = ":8470", ":8466"
_MAX_UINT32 = 2**32 - 1
_MAX_DIGITS = 20
# Integer query parameters: default (the dialog's; retry 0 on the server), lowest value, and
# the highest, or the CaptureLimits field that holds it.
_INT_PARAMS: dict[str, tuple[int, int, int | str]] = {
    "duration": (1000, 1, "max_duration_ms"),
    "num_retry": (0, 0, MAX_ATTEMPTS - 1),
    "host_tracer_level": (2, *TRACER_LEVELS["host_tracer_level"]),
    "device_tracer_level": (1, *TRACER_LEVELS["device_tracer_level"]),
    "python_tracer_level": (0, *TRACER_LEVELS["python_tracer_level"]),
    "delay": (0, 0, "max_delay_ms"),
}


def capture_profile_route(
    logdir: str,
    args: Mapping[str, str],
    manager: CaptureManager | None = None,
    on_success: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Runs a capture as ``/capture_profile`` does; blocks unless ``async=1``.

    ``on_success()`` runs in the capture thread once the session is written (for
    example to refresh the run list), for blocking and ``async=1`` captures alike.
    Raises ``InvalidArgument`` for a bad parameter (see the module's docstring).
    """
    manager = manager or DEFAULT_MANAGER
    params = parse_capture_args(args, manager.limits)
    try:
        if _is_true(args.get("is_tpu_name")):
            params = _resolve_tpu_name(params)  # upstream's replies, as the page expects them
    except ProfileError as e:
        return {"error": e.message}
    if not logdir:
        return {"error": NO_LOGDIR}
    try:
        job_id = manager.start(logdir, params, on_success)
    except InvalidArgument:
        raise  # a request past a limit, or addresses that do not parse: 400
    except ProfileError as e:
        return {"error": e.message}
    if _is_true(args.get("async")):
        return {"job": job_id}
    job = manager.job(job_id)
    job.done.wait()
    if job.error is not None:
        return {"error": error_text(job.error)}
    assert job.result is not None
    return {"result": success_text(job.result)}


def capture_status_route(
    args: Mapping[str, str], manager: CaptureManager | None = None
) -> dict[str, Any]:
    """``capture_status?job=<id>``: the job's status dict, or ``{"error": ...}``."""
    manager = manager or DEFAULT_MANAGER
    job_id = (args.get("job") or "").strip()
    if not job_id:
        return {"error": 'Missing "job" parameter.'}
    try:
        return manager.status(job_id)
    except ProfileError as e:
        return {"error": e.message}


def capture_cancel_route(
    args: Mapping[str, str], manager: CaptureManager | None = None
) -> dict[str, Any]:
    """``capture_cancel`` with ``job=<id>``: stops the job; its status (``state`` ``cancelled``
    once it has stopped, or how it ended if it had already). Raises ``InvalidArgument``
    without a job id, ``NotFound`` for an unknown one."""
    manager = manager or DEFAULT_MANAGER
    job_id = (args.get("job") or "").strip()
    if not job_id:
        raise InvalidArgument('Missing "job" parameter: the id capture_profile answered.')
    return manager.cancel(job_id)


def parse_capture_args(
    args: Mapping[str, str], limits: CaptureLimits | None = None
) -> CaptureParams:
    """Query arguments → ``CaptureParams``; ``InvalidArgument`` names a bad parameter."""
    limits = limits or CaptureLimits()
    values = {}
    for name, (default, low, high) in _INT_PARAMS.items():
        limit = high if isinstance(high, str) else None
        highest = getattr(limits, high) if isinstance(high, str) else high
        values[name] = _int_arg(args, name, default, low, highest, limit)
    return CaptureParams(
        service_addr=(args.get("service_addr") or "").strip(),
        duration_ms=values["duration"],
        num_tracing_attempts=values["num_retry"] + 1,
        worker_list=(args.get("worker_list") or "").strip(),
        options=ProfilerOptions(
            host_tracer_level=values["host_tracer_level"],
            device_tracer_level=values["device_tracer_level"],
            python_tracer_level=values["python_tracer_level"],
            delay_ms=values["delay"],
        ),
    )


def _int_arg(
    args: Mapping[str, str], name: str, default: int, low: int, high: int, limit: str | None
) -> int:
    text = (args.get(name) or "").strip()
    if not text:
        return default
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        raise InvalidArgument(f"{name} must be an integer, got {text[:40]!r}.")
    if text.startswith("-") and digits.strip("0"):
        raise InvalidArgument(f"{name} must not be negative, got {text[:40]}.")
    value = int(digits) if len(digits.lstrip("0")) <= _MAX_DIGITS else high + 1
    if value < low:
        raise InvalidArgument(f"{name} must be at least {low}, got {value}.")
    if value > high:
        hint = f"; {env_name(limit)} raises the limit" if limit else ""
        raise InvalidArgument(f"{name} must be at most {high}, got {text[:40]}{hint}.")
    return value


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def _resolve_tpu_name(params: CaptureParams) -> CaptureParams:
    """Cloud TPU name → profiler address (master IP, port 8466) and worker list."""
    try:
        from tensorflow.distribute.cluster_resolver import TPUClusterResolver
    except ImportError:
        raise InvalidArgument(NO_TENSORFLOW) from None
    try:
        resolver = TPUClusterResolver(tpu=[params.service_addr])
        master = resolver.get_master()
    except Exception as e:  # TF raises many types here; its message is what users need.
        logger.warning("TPUClusterResolver failed: %r", e)
        raise InvalidArgument(f"Error initializing TPUClusterResolver: {e}") from None
    if not master:
        raise InvalidArgument(f"No TPU found with the name: {params.service_addr}")
    service_addr = master.replace("grpc://", "").replace(_TPU_MASTER_PORT, _TPU_PROFILER_PORT)
    workers = params.worker_list
    if not workers:
        cluster = resolver.cluster_spec().as_dict().get("worker", [])
        workers = ",".join(w.replace(_TPU_MASTER_PORT, _TPU_PROFILER_PORT) for w in cluster)
    return CaptureParams(
        service_addr=service_addr,
        duration_ms=params.duration_ms,
        num_tracing_attempts=params.num_tracing_attempts,
        worker_list=workers,
        options=params.options,
    )

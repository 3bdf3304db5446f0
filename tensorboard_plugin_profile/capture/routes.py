"""The ``/capture_profile`` and ``capture_status`` semantics, without HTTP (docs/capture.md).

Both take the query arguments as a plain mapping and always return a dict that
the HTTP layer (``http_api.Routes``) sends as JSON with status 200 (the frontend
only shows the message of 200 replies): ``{"result": ...}``, ``{"error": ...}``, or with
``async=1`` ``{"job": id}`` at once. The capture itself runs in a job's worker
thread; the blocking form just waits for it.

>>> capture_profile_route("/tmp/logs", {"service_addr": "localhost:9999", "duration": "1000"})
... # doctest: +SKIP
{'result': 'Capture profile successfully. Please refresh. Session ...'}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from tensorboard_plugin_profile.capture.jobs import (
    DEFAULT_MANAGER,
    CaptureManager,
    CaptureParams,
    error_text,
    success_text,
)
from tensorboard_plugin_profile.capture.options import ProfilerOptions
from tensorboard_plugin_profile.common.errors import InvalidArgument, ProfileError

logger = logging.getLogger("tensorboard_plugin_profile.capture")

NO_LOGDIR = "logdir is not set, abort capturing."
NO_TENSORFLOW = "TensorFlow is not installed, but is required to use TPU names."
_TPU_MASTER_PORT, _TPU_PROFILER_PORT = ":8470", ":8466"
# Integer query parameters and their defaults (the dialog's defaults, retry 0 on the server).
_INT_PARAMS = {
    "duration": 1000,
    "num_retry": 0,
    "host_tracer_level": 2,
    "device_tracer_level": 1,
    "python_tracer_level": 0,
    "delay": 0,
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
    """
    manager = manager or DEFAULT_MANAGER
    try:
        params = parse_capture_args(args)
        if _is_true(args.get("is_tpu_name")):
            params = _resolve_tpu_name(params)
        if not logdir:
            return {"error": NO_LOGDIR}
        job_id = manager.start(logdir, params, on_success)
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


def parse_capture_args(args: Mapping[str, str]) -> CaptureParams:
    """Query arguments → ``CaptureParams``; raises ``InvalidArgument`` for non-integers."""
    values = {name: _int_arg(args, name, default) for name, default in _INT_PARAMS.items()}
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


def _int_arg(args: Mapping[str, str], name: str, default: int) -> int:
    text = (args.get(name) or "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise InvalidArgument(f"{name} must be an integer, got {text[:40]!r}.") from None
    if value < 0:
        raise InvalidArgument(f"{name} must not be negative, got {value}.")
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

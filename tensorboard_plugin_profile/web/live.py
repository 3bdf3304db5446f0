"""Live tracing: the Profile page served from inside a training script.

One call starts our standalone server on ``logdir`` in a background thread of
this very process. Its capture dialog is pre-filled with ``this-process``: a
capture traces the running script through the framework's in-process profiler
(``capture/in_process.py``: ``jax.profiler.start_trace`` or
``tf.profiler.experimental.start``) and saves the session into ``logdir``, where
``tbprof serve LOGDIR`` reopens it later.

What it does not do, on purpose (docs/security.md):
- open a profiler port. The frameworks' profiler servers listen on every interface
  without authentication (their APIs take a port, no address), so anyone who
  reaches it can pull this process's trace. ``profiler_port=N`` still starts one,
  for other capture clients, with a warning saying so.
- serve whoever reaches its port. The page listens on loopback and every route
  needs the token of the link it prints (``access_token.py``), so another user of
  the machine, or a web page in the browser, can neither read the profiles nor
  make this process trace. It is also guarded as ``tbprof serve`` is (``guard.py``):
  it answers only its own host names (loopback, plus ``allowed_hosts`` or
  ``TBPROF_ALLOWED_HOSTS``), and a capture is a POST from the page itself that
  carries this process's capture token (``X-TBProf-Token``) besides the access token.
- trace without bounds: a capture lasts at most ``max_duration_ms`` and stops
  early once it has grown the process by ``max_trace_bytes``.

Idle, it costs the training loop nothing measurable: the web server's thread
sleeps in ``select`` (``bench/live_overhead.py`` measures it). It stops with the
``with`` block or the process.

Usage::

    from tensorboard_plugin_profile import live

    with live.tracing(logdir="/tmp/logs"):          # prints the page's link
        for step in range(steps):
            train_step()

    server = live.serve(port=8791, logdir="/tmp/logs")   # or keep it running
    for step in range(steps):
        with server.step():                  # listed on the page; "Capture next step" traces one
            train_step()
    server.stop()

    with live.timeline(logdir="/tmp/logs") as t:   # one block of code, saved as a session
        evaluate()
    print(t.session_dir)
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import threading
from typing import Any, Iterator, Optional, Sequence
from urllib.parse import quote

from werkzeug.serving import WSGIRequestHandler, make_server

from ..capture.in_process import (
    DEFAULT_MAX_DURATION_MS,
    DEFAULT_MAX_TRACE_BYTES,
    JAX,
    LIVE_TARGET,
    TENSORFLOW,
    BlockTrace,
    InProcessProfiler,
    TraceLimits,
    loaded_framework,
)
from ..capture.jobs import CaptureManager
from ..capture.live_steps import DEFAULT_MAX_STEPS, StepLog
from ..capture.options import ProfilerOptions
from ..common.errors import InvalidArgument, ProfileError
from . import access_token
from .guard import Guard, allowed_hosts_setting, is_loopback, parse_host_list
from .server import DEFAULT_HOST, DEFAULT_PORT, StandaloneApp

logger = logging.getLogger(__name__)

__all__ = ["JAX", "TENSORFLOW", "LiveServer", "loaded_framework", "serve", "timeline", "tracing"]


@dataclasses.dataclass
class LiveServer:
    """A running live session: the page's link, what it captures, how to stop."""

    url: str  # the link to open: it carries the access token
    base_url: str  # the server's root, without the token
    token: str
    framework: str
    logdir: str
    capture_target: str = LIVE_TARGET
    profiler_address: Optional[str] = None  # only with ``profiler_port`` (all interfaces)
    _http: Any = dataclasses.field(repr=False, default=None)
    _thread: Optional[threading.Thread] = dataclasses.field(repr=False, default=None)
    _profiler: Any = dataclasses.field(repr=False, default=None)
    _stopped: bool = dataclasses.field(repr=False, default=False)
    _steps: Optional[StepLog] = dataclasses.field(repr=False, default=None)

    def step(self, step_num: Optional[int] = None) -> Any:
        """``with server.step():`` around one training step: the page lists it, and traces
        the next one when asked (``capture/live_steps.py``). Yields the step's number."""
        if self._steps is None:
            raise ProfileError("This live server keeps no step list.")
        return self._steps.step(step_num)

    def route_url(self, route: str, **params: Any) -> str:
        """The URL of one route (``runs``, ``capture_profile``, ...) with the token."""
        query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
        return f"{self.base_url}{route}?token={self.token}" + (f"&{query}" if query else "")

    def stop(self) -> None:
        """Stops the page and the profiler server, if any (idempotent; also runs at exit)."""
        if self._stopped:
            return
        self._stopped = True
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        _stop_profiler_server(self.framework, self._profiler)
        atexit.unregister(self.stop)

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    port: int = DEFAULT_PORT,
    logdir: Optional[str] = None,
    host: str = DEFAULT_HOST,
    profiler_port: Optional[int] = None,
    quiet: bool = False,
    max_duration_ms: int = DEFAULT_MAX_DURATION_MS,
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES,
    allowed_hosts: Optional[Sequence[str]] = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> LiveServer:
    """Starts the page in a background thread; returns at once.

    ``port`` 0 picks a free port (see ``LiveServer.url``). ``logdir`` defaults to
    ``./profile_logs``. A capture lasts at most ``max_duration_ms`` and stops once
    the process has grown by ``max_trace_bytes`` while tracing. ``allowed_hosts``:
    names the page answers besides loopback (default: ``TBPROF_ALLOWED_HOSTS``); the
    access token is needed whatever the name. ``profiler_port`` (0: a free one) also
    starts the framework's gRPC profiler server, which listens on all interfaces
    without authentication: only for capture clients that need it. The page lists the
    last ``max_steps`` steps marked with ``server.step()``.
    """
    logdir = os.path.abspath(logdir or "profile_logs")
    os.makedirs(os.path.join(logdir, "plugins", "profile"), exist_ok=True)
    framework = loaded_framework()
    profiler = InProcessProfiler(framework, TraceLimits(max_duration_ms, max_trace_bytes))
    token = access_token.new_token()
    live_info = {"service_addr": LIVE_TARGET, "framework": framework, "pid": os.getpid()}
    steps = StepLog(profiler, logdir, max_steps)
    extra = (
        allowed_hosts_setting(None)
        if allowed_hosts is None
        else parse_host_list(",".join(allowed_hosts))
    )
    app = StandaloneApp(
        logdir,
        live=live_info,
        capture_manager=CaptureManager(local=profiler),
        access_token=token,
        guard=Guard.for_bind(host, extra),
        live_steps=steps,
    )
    http = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
    if not is_loopback(host):
        logger.warning("live page listening on %s: reachable from other machines", host)
    server = _start_page(http, framework, logdir, token, host)
    server._steps = steps
    atexit.register(server.stop)
    if profiler_port is not None:
        try:
            server._profiler, server.profiler_address = _start_profiler_server(
                framework, profiler_port
            )
        except BaseException:
            server.stop()
            raise
    if not quiet:
        print(f"Profile: live page at {server.url} (profiling {framework}, logdir {logdir})")
        if not app.guard.loopback_only:
            print(f"Profile: the live page answers {app.guard.describe()}")
    return server


def _start_page(http: Any, framework: str, logdir: str, token: str, host: str) -> LiveServer:
    thread = threading.Thread(target=http.serve_forever, name="tbprof-live", daemon=True)
    thread.start()
    shown = f"[{host}]" if ":" in host else host
    base_url = f"http://{shown}:{http.server_port}/"
    return LiveServer(
        url=f"{base_url}?token={token}",
        base_url=base_url,
        token=token,
        framework=framework,
        logdir=logdir,
        _http=http,
        _thread=thread,
    )


@contextlib.contextmanager
def tracing(
    port: int = DEFAULT_PORT, logdir: Optional[str] = None, **kwargs: Any
) -> Iterator[LiveServer]:
    """``with live.tracing(logdir=...):`` around the training loop (see ``serve``)."""
    server = serve(port=port, logdir=logdir, **kwargs)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def timeline(
    logdir: Optional[str] = None,
    options: Any = None,
    *,
    max_duration_ms: int = DEFAULT_MAX_DURATION_MS,
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES,
    **option_kwargs: Any,
) -> Iterator[BlockTrace]:
    """``with live.timeline(logdir=...) as t:`` traces this process for one block of code and
    writes it into ``logdir`` as a session (``t.session_dir`` after the block), as
    tftracer's ``Timeline`` did; no page, no port. ``options`` / keyword arguments are the
    capture options (``host_tracer_level=3``, ``python_tracer_level=1``, ...; a delay makes
    no sense here and is refused). Bounded as a live capture (``max_duration_ms``,
    ``max_trace_bytes``); a block that raises saves nothing."""
    chosen = ProfilerOptions.coerce(options, **option_kwargs)
    if chosen.delay_ms:
        raise InvalidArgument("live.timeline traces the block as it runs: delay_ms must be 0.")
    logdir = os.path.abspath(logdir or "profile_logs")
    profiler = InProcessProfiler(loaded_framework(), TraceLimits(max_duration_ms, max_trace_bytes))
    with profiler.trace_block(logdir, chosen) as trace:
        yield trace


def _start_profiler_server(framework: str, port: int) -> tuple:
    """The framework's gRPC server (opt-in): (handle, address). It binds ``[::]:port``."""
    import socket

    if port == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    logger.warning(
        "%s's profiler server on port %d listens on all interfaces without authentication "
        "(its API takes no address): anyone who can reach the port can read this process's "
        "trace. The live page does not need it; leave profiler_port unset unless another "
        "capture client must reach this process.",
        framework,
        port,
    )
    if framework == JAX:
        import jax.profiler

        return jax.profiler.start_server(port), f"localhost:{port}"  # keep it: dropping it stops
    import tensorflow as tf

    tf.profiler.experimental.server.start(port)
    return None, f"localhost:{port}"


def _stop_profiler_server(framework: str, handle: Any) -> None:
    if framework != JAX or handle is None:
        return  # none started, or TensorFlow's, which lives as long as the process
    try:
        import jax.profiler

        jax.profiler.stop_server()
    except Exception as e:  # noqa: BLE001 - stopping must never raise at exit
        logger.debug("stopping the JAX profiler server: %s", e)


class _QuietHandler(WSGIRequestHandler):
    """No access log: the training script's output is the user's, not ours."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass

"""Live tracing: the Profile page served from inside a training script.

One call starts, in background threads of this very process,
- the framework's profiler server (JAX's ``jax.profiler.start_server`` or
  TensorFlow's ``tf.profiler.experimental.server.start``, whichever is loaded), and
- our standalone server on ``logdir``, whose capture dialog is pre-filled with
  that profiler's address, so "Capture" traces the running script and saves the
  session into ``logdir`` (where ``tbprof serve LOGDIR`` reopens it later).

Idle, it costs the training loop nothing measurable: the web server's thread
sleeps in ``select`` and the profiler server only works while a capture runs
(``bench/live_overhead.py`` measures it). Both stop when the process exits.

The page is guarded as ``tbprof serve`` is (``guard.py``): it answers only its own host names
(loopback, plus ``allowed_hosts`` or ``TBPROF_ALLOWED_HOSTS``), and a capture must come from the
page itself, with this process's token.

Usage::

    from tensorboard_plugin_profile import live

    with live.tracing(logdir="/tmp/logs"):          # prints the page's URL
        for step in range(steps):
            train_step()

    server = live.serve(port=8791, logdir="/tmp/logs")   # or keep it running
    ...
    server.stop()
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import socket
import sys
import threading
from typing import Any, Iterator, Optional, Sequence

from werkzeug.serving import WSGIRequestHandler, make_server

from ..common.errors import ProfileError
from .guard import Guard, allowed_hosts_setting, parse_host_list
from .server import DEFAULT_HOST, DEFAULT_PORT, StandaloneApp

logger = logging.getLogger(__name__)

JAX, TENSORFLOW = "JAX", "TensorFlow"


@dataclasses.dataclass
class LiveServer:
    """A running live session: the page's URL, the profiler's address, how to stop."""

    url: str
    profiler_address: str
    framework: str
    logdir: str
    _http: Any = dataclasses.field(repr=False, default=None)
    _thread: Optional[threading.Thread] = dataclasses.field(repr=False, default=None)
    _profiler: Any = dataclasses.field(repr=False, default=None)
    _stopped: bool = dataclasses.field(repr=False, default=False)

    def stop(self) -> None:
        """Stops the page and the profiler server (idempotent; also runs at exit)."""
        if self._stopped:
            return
        self._stopped = True
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        _stop_profiler(self.framework, self._profiler)
        atexit.unregister(self.stop)

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    port: int = DEFAULT_PORT,
    logdir: Optional[str] = None,
    host: str = DEFAULT_HOST,
    profiler_port: int = 0,
    quiet: bool = False,
    allowed_hosts: Optional[Sequence[str]] = None,
) -> LiveServer:
    """Starts the profiler server and the page in background threads; returns at once.

    ``port`` 0 picks a free port (see ``LiveServer.url``), as does ``profiler_port``
    0 for the profiler. ``logdir`` defaults to ``./profile_logs``. ``allowed_hosts``:
    names the page answers besides loopback (default: ``TBPROF_ALLOWED_HOSTS``).
    """
    logdir = os.path.abspath(logdir or "profile_logs")
    os.makedirs(os.path.join(logdir, "plugins", "profile"), exist_ok=True)
    framework = loaded_framework()
    profiler_port = profiler_port or _free_port()
    profiler = _start_profiler(framework, profiler_port)
    address = f"localhost:{profiler_port}"
    live_info = {"service_addr": address, "framework": framework, "pid": os.getpid()}
    extra = (
        allowed_hosts_setting(None)
        if allowed_hosts is None
        else parse_host_list(",".join(allowed_hosts))
    )
    try:
        app = StandaloneApp(logdir, live=live_info, guard=Guard.for_bind(host, extra))
        http = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
    except BaseException:
        _stop_profiler(framework, profiler)
        raise
    thread = threading.Thread(target=http.serve_forever, name="tbprof-live", daemon=True)
    thread.start()
    shown = f"[{host}]" if ":" in host else host
    server = LiveServer(
        url=f"http://{shown}:{http.server_port}/",
        profiler_address=address,
        framework=framework,
        logdir=logdir,
        _http=http,
        _thread=thread,
        _profiler=profiler,
    )
    atexit.register(server.stop)
    if not quiet:
        print(f"Profile: live page at {server.url} (profiling {framework}, logdir {logdir})")
        if not app.guard.loopback_only:
            print(f"Profile: the live page answers {app.guard.describe()}")
    return server


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


def loaded_framework() -> str:
    """JAX or TensorFlow: the one this process imported (JAX first), else the one installed."""
    for module, name in (("jax", JAX), ("tensorflow", TENSORFLOW)):
        if module in sys.modules:
            return name
    for module, name in (("jax", JAX), ("tensorflow", TENSORFLOW)):
        try:
            __import__(module)
        except ImportError:
            continue
        return name
    raise ProfileError(
        "Live tracing needs JAX or TensorFlow in this process: neither can be imported."
    )


def _start_profiler(framework: str, port: int) -> Any:
    if framework == JAX:
        import jax.profiler

        return jax.profiler.start_server(port)  # keep the handle: dropping it stops it
    import tensorflow as tf

    tf.profiler.experimental.server.start(port)
    return None


def _stop_profiler(framework: str, handle: Any) -> None:
    if framework != JAX or handle is None:
        return  # TensorFlow's profiler server lives as long as the process
    try:
        import jax.profiler

        jax.profiler.stop_server()
    except Exception as e:  # noqa: BLE001 - stopping must never raise at exit
        logger.debug("stopping the JAX profiler server: %s", e)


class _QuietHandler(WSGIRequestHandler):
    """No access log: the training script's output is the user's, not ours."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

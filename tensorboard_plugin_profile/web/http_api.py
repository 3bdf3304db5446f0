"""The HTTP routes, shared by the TensorBoard plugin and the standalone server.

Each handler parses the request, calls the service, and shapes the response;
it computes nothing (STYLE.md lesson 1). Typed errors become JSON
``{"error": {"code", "message"}}`` with their status in one place
(``_error_response``); anything else is logged and answered with an opaque 500.
Before any handler runs, ``handles_errors`` checks the request's ``Host`` and method
(``guard.py`` says why); ``capture_profile`` and ``capture_cancel``, the routes that
change something, also check that the request comes from the page itself.

Routes are relative to ``/data/plugin/profile``; see docs/http_api.md.
"""

from __future__ import annotations

import gzip
import logging
import mimetypes
import os
import re
import zlib
from typing import Any, Callable, Iterable, Iterator, Optional

from werkzeug import Request, Response
from werkzeug.security import safe_join

from .. import __version__
from ..common import json_out, work
from ..common.errors import InvalidArgument, NotFound, ProfileError
from ..service import ProfileService
from . import conflicts
from .connection import OpenConnection
from .guard import LOOPBACK_NAMES, Guard

logger = logging.getLogger(__name__)

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATIC_DIR = os.path.join(PACKAGE_DIR, "static")
PLUGIN_PREFIX = "/data/plugin/profile"
# The page loads nothing from other origins and runs no inline code.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'self'",
    ]
)
_GZIP_MIN_BYTES = 1024
_UNSAFE_FILENAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
# Routes that only read; werkzeug answers HEAD with GET's headers and no body. Starting a
# capture is a POST (a page of another site can make a browser send any GET).
READ_METHODS = ("GET", "HEAD")
WRITE_METHODS = ("POST",)

Handler = Callable[[Request], Response]


def _security_headers(response: Response) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    # Data follows the files on disk: the browser asks again each time (static files
    # override this with their own lifetime).
    response.headers["Cache-Control"] = "no-cache"
    return response


def _json_response(request: Request, obj: Any, status: int = 200) -> Response:
    body = json_out.dumps(obj, sort_keys=True).encode()
    return _bytes_response(request, [body], "application/json", status)


def _accepts_gzip(request: Request) -> bool:
    # Parsed with q-values: "gzip;q=0" refuses gzip, "*" accepts it.
    return request.accept_encodings["gzip"] > 0


def _gzip_stream(chunks: Iterable[bytes]) -> Iterator[bytes]:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for chunk in chunks:
        out = compressor.compress(chunk)
        if out:
            yield out
    yield compressor.flush()


def _bytes_response(
    request: Request, chunks: Iterable[bytes], content_type: str, status: int = 200
) -> Response:
    if isinstance(chunks, list) and sum(len(c) for c in chunks) < _GZIP_MIN_BYTES:
        response = Response(chunks, status=status, content_type=content_type)
    elif _accepts_gzip(request):
        if isinstance(chunks, list):
            response = Response(
                gzip.compress(b"".join(chunks), 6), status=status, content_type=content_type
            )
        else:
            response = Response(_gzip_stream(chunks), status=status, content_type=content_type)
        response.headers["Content-Encoding"] = "gzip"
        response.vary.add("Accept-Encoding")
    else:
        response = Response(chunks, status=status, content_type=content_type)
    return _security_headers(response)


def _error_response(request: Request, error: ProfileError) -> Response:
    payload = {"error": {**error.details, "code": error.code, "message": error.message}}
    return _json_response(request, payload, error.http_status)


def _method_not_allowed(request: Request, methods: tuple) -> Response:
    message = f"Use {' or '.join(methods)}."
    payload = {"error": {"code": "METHOD_NOT_ALLOWED", "message": message}}
    response = _json_response(request, payload, 405)
    response.headers["Allow"] = ", ".join(methods)
    return response


def handles_errors(
    handler: Handler, guard: Optional[Guard] = None, methods: tuple = READ_METHODS
) -> Handler:
    """Checks Host and method, maps typed errors to their status, hides the rest behind a 500.

    Without a ``guard`` only loopback host names are answered.
    """
    guard = guard or Guard.for_bind(LOOPBACK_NAMES[0])

    def wrapped(request: Request) -> Response:
        try:
            guard.check_host(request)
            if request.method not in methods:
                return _method_not_allowed(request, methods)
            # Work done for this request stops when its client hangs up (common/work.py).
            with work.interest(OpenConnection.of(request.environ)):
                return handler(request)
        except ProfileError as e:
            return _error_response(request, e)
        except Exception:
            logger.exception("unexpected error on %s", request.path)
            message = "Internal error; see the server log."
            payload = {"error": {"code": "INTERNAL", "message": message}}
            return _json_response(request, payload, 500)

    wrapped.__name__ = handler.__name__
    return wrapped


def _required(request: Request, name: str) -> str:
    value = request.args.get(name, "")
    if not value:
        raise InvalidArgument(f"The {name!r} parameter is required.")
    return value


class Routes:
    """Route name → handler, for one service."""

    def __init__(
        self,
        service: ProfileService,
        hide_capture: bool = False,
        capture_manager: Optional[Any] = None,
        live: Optional[dict] = None,
        guard: Optional[Guard] = None,
        live_steps: Optional[Any] = None,
    ):
        self.service = service
        self.live_steps = live_steps  # live.serve's StepLog (capture/live_steps.py)
        self.hide_capture = hide_capture
        self.capture_manager = capture_manager  # None: the process-wide one
        self.live = live  # set by live.serve: this process's profiler, for the capture dialog
        self.guard = guard or Guard.for_bind(LOOPBACK_NAMES[0])

    def table(self) -> dict:
        routes = {
            "/runs": self.runs,
            "/run_tools": self.run_tools,
            "/hosts": self.hosts,
            "/module_list": self.module_list,
            "/data": self.data,
            "/data_csv": self.data_csv,
            "/config": self.config,
            "/version": self.version,
            "/diagnose": self.diagnose,
            "/progress": self.progress,
            "/index.js": self.static,
            "/index.html": self.static,
            "/capture_token": self.capture_token,
            "/capture_status": self.capture_status,
            "/session_export": self.session_export,
            "/trace_download": self.trace_download,
            "/live_steps": self.live_steps_list,
        }
        table = {name: handles_errors(handler, self.guard) for name, handler in routes.items()}
        for name, handler in (
            ("/capture_profile", self.capture_profile),
            ("/capture_cancel", self.capture_cancel),
            ("/live_capture_step", self.live_capture_step),
        ):
            table[name] = handles_errors(handler, self.guard, methods=WRITE_METHODS)
        return table

    def runs(self, request: Request) -> Response:
        return _json_response(request, self.service.runs())

    def run_tools(self, request: Request) -> Response:
        return _json_response(request, self.service.run_tools(_required(request, "run")))

    def hosts(self, request: Request) -> Response:
        run = _required(request, "run")
        return _json_response(request, self.service.hosts(run, _required(request, "tag")))

    def module_list(self, request: Request) -> Response:
        order = request.args.get("order") or "name"
        names = self.service.module_list(_required(request, "run"), order)
        return _bytes_response(request, [",".join(names).encode()], "text/plain; charset=utf-8")

    def data(self, request: Request) -> Response:
        args = request.args
        if args.get("base_run"):
            from ..api.compare_table import to_datatable

            table = to_datatable(self._compare(request))
            return _json_response(request, table)
        result = self.service.tool_data(
            _required(request, "run"),
            _required(request, "tag"),
            host=args.get("host") or None,
            hosts=args.get("hosts") or None,
            params=args.to_dict(),
        )
        chunks = result.chunks()
        return _bytes_response(request, chunks, result.content_type)

    def data_csv(self, request: Request) -> Response:
        if request.args.get("base_run"):
            frame = self._compare(request)
            text = frame.to_csv(index=False)
            name = f"{frame.attrs['tool']}_{frame.attrs['base_run']}_vs_{frame.attrs['exp_run']}"
            filename = _UNSAFE_FILENAME_CHARS.sub("_", name) + ".csv"
            response = _bytes_response(request, [text.encode()], "text/csv; charset=utf-8")
            response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        filename, text = self.service.tool_csv(
            _required(request, "run"),
            _required(request, "tag"),
            host=request.args.get("host") or None,
            params=request.args.to_dict(),
        )
        response = _bytes_response(request, [text.encode()], "text/csv; charset=utf-8")
        response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def session_export(self, request: Request) -> Response:
        """The run's profile files as one ``.zip`` download (``store/session_export.py``)."""
        filename, chunks = self.service.export_session(_required(request, "run"))
        response = Response(chunks, content_type="application/zip", direct_passthrough=True)
        response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
        return _security_headers(response)

    def trace_download(self, request: Request) -> Response:
        """The trace viewer's Chrome trace as a ``.json.gz`` file (what ui.perfetto.dev and
        chrome://tracing open): gzip-compressed as it streams, without the closing ``{}``."""
        from ..tools.trace_viewer import without_sentinel

        run, host = _required(request, "run"), request.args.get("host") or None
        result = self.service.tool_data(run, "trace_viewer", host=host)
        name = _UNSAFE_FILENAME_CHARS.sub("_", f"{run}_{host}" if host else run)
        body = _gzip_stream(without_sentinel(result.chunks()))
        response = Response(body, content_type="application/gzip", direct_passthrough=True)
        response.headers["Content-Disposition"] = f'attachment; filename="{name}.trace.json.gz"'
        return _security_headers(response)

    def _compare(self, request: Request) -> Any:
        """The comparison a ``base_run`` asks of /data or /data_csv (docs/compare.md)."""
        from ..api.compare import compare_in_logdir

        args = request.args
        return compare_in_logdir(
            self.service,
            _required(request, "run"),
            _required(request, "base_run"),
            _required(request, "tag"),
            host=args.get("host") or None,
            base_host=args.get("base_host") or None,
            step=args.get("step") or None,
            base_step=args.get("base_step") or None,
            scope=args.get("scope") or None,
        )

    def config(self, request: Request) -> Response:
        config = {
            "enableTabNameLabel": False,
            "hideCaptureProfileButton": self.hide_capture,
            "srcPathPrefix": "",
            "warnings": conflicts.conflict_warnings(),
        }
        if self.live:
            config["live"] = self.live
        return _json_response(request, config)

    def version(self, request: Request) -> Response:
        return _bytes_response(request, [__version__.encode()], "text/plain; charset=utf-8")

    def diagnose(self, request: Request) -> Response:
        return _json_response(request, self.service.diagnose())

    def progress(self, request: Request) -> Response:
        return _json_response(request, {"tasks": self.service.progress.snapshot()})

    def capture_token(self, request: Request) -> Response:
        """The token ``capture_profile`` requires; only a page of our own origin can read it."""
        self.guard.check_same_origin(request)
        return _json_response(request, {"token": self.guard.token})

    # A capture that got past the guard answers JSON with status 200, errors included: the
    # page shows only the message of 200 replies (docs/capture.md). Parameters come from the
    # form body or the query string. gRPC is imported on first use.
    def capture_profile(self, request: Request) -> Response:
        from ..capture.routes import capture_profile_route

        self.guard.check_write(request)
        logdir = self.service.logdir.root or ""
        reply = capture_profile_route(
            logdir, request.values, self.capture_manager, self.service.logdir.refresh
        )
        return _json_response(request, reply)

    def capture_cancel(self, request: Request) -> Response:
        from ..capture.routes import capture_cancel_route

        self.guard.check_write(request)
        return _json_response(request, capture_cancel_route(request.values, self.capture_manager))

    def capture_status(self, request: Request) -> Response:
        from ..capture.routes import capture_status_route

        return _json_response(request, capture_status_route(request.args, self.capture_manager))

    def _step_log(self) -> Any:
        if self.live_steps is None:
            raise NotFound(
                "Steps are listed on the live page only: live.serve() or live.tracing() in the "
                "training script, with its steps in `with server.step():`."
            )
        return self.live_steps

    def live_steps_list(self, request: Request) -> Response:
        """The steps this (live) process ran and the state of a step capture."""
        return _json_response(request, self._step_log().snapshot())

    def live_capture_step(self, request: Request) -> Response:
        """Asks the live process to trace its next step (guarded as ``capture_profile``)."""
        self.guard.check_write(request)
        steps = self._step_log()
        steps.request_capture()
        return _json_response(request, steps.snapshot())

    def static(self, request: Request) -> Response:
        return serve_static(request, request.path.rsplit("/", 1)[-1])


def serve_static(request: Request, name: str) -> Response:
    """A file of the built frontend; never anything outside ``static/``."""
    if not name or "\\" in name or name.startswith(("/", ".")):
        raise NotFound("No such file.")
    path = safe_join(STATIC_DIR, name)
    if path is None or not os.path.isfile(path):
        if name in ("index.html", "index.js") and not os.path.isdir(STATIC_DIR):
            raise NotFound(
                "The frontend is not built: run `npm ci && npm run build` in frontend/ "
                "(or reinstall the package)."
            )
        raise NotFound("No such file.")
    content_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    if content_type in ("text/javascript", "application/x-javascript"):
        content_type = "application/javascript"
    with open(path, "rb") as f:
        body = f.read()
    response = _bytes_response(request, [body], content_type)
    response.headers["Cache-Control"] = "no-cache" if name.startswith("index.") else "max-age=3600"
    return response


def static_files() -> list:
    """Names of every built frontend file (relative, '/'-separated)."""
    names = []
    for dirpath, _, filenames in os.walk(STATIC_DIR):
        for filename in filenames:
            rel = os.path.relpath(os.path.join(dirpath, filename), STATIC_DIR)
            names.append(rel.replace(os.sep, "/"))
    return sorted(names)


def static_handler(name: str, guard: Optional[Guard] = None) -> Handler:
    return handles_errors(lambda request: serve_static(request, name), guard)

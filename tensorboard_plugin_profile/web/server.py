"""The standalone server: the Profile tab without TensorBoard, on the same routes.

URL space (docs/http_api.md, "Standalone server"): every route under ``/data/plugin/profile/`` and
also at the root; the page at ``/``; a client-side path under the prefix
(no ``.`` in its last segment) also gets the page, so reloads work. Only requests addressed to
the names in its ``Guard`` are answered: loopback names, plus ``--allowed_hosts``
(docs/security.md). With an ``access_token`` (the live page) every route also needs
that token (``access_token.py``); the page and its static files do not.

Usage::

    python -m tensorboard_plugin_profile.web.server --logdir /tmp/logs --port 8791
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any, Optional

from werkzeug import Request, Response
from werkzeug.serving import run_simple

from ..service import ProfileService
from ..store.cache_config import CacheConfig, add_flags
from . import access_token as access
from . import http_api
from .guard import Guard, allowed_hosts_setting, is_loopback
from .guard import add_flags as add_host_flags

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8791
DEFAULT_HOST = "127.0.0.1"
_STATIC_ROUTES = ("/index.js", "/index.html")  # the page's code: no data, no token


class StandaloneApp:
    """A WSGI app serving one log directory."""

    def __init__(
        self,
        logdir: str,
        hide_capture: bool = False,
        service: Optional[Any] = None,
        live: Optional[dict] = None,
        config: Optional[CacheConfig] = None,
        guard: Optional[Guard] = None,
        capture_manager: Optional[Any] = None,
        access_token: Optional[str] = None,
        live_steps: Optional[Any] = None,
    ):
        self.service = service or ProfileService(logdir, config=config)
        self.guard = guard or Guard.for_bind(DEFAULT_HOST)
        routes = http_api.Routes(
            self.service,
            hide_capture=hide_capture,
            capture_manager=capture_manager,
            live=live,
            guard=self.guard,
            live_steps=live_steps,
        )
        self.routes = routes.table()
        if access_token:
            for path in set(self.routes) - set(_STATIC_ROUTES):
                self.routes[path] = access.gated(self.routes[path], access_token, self.guard)

    def __call__(self, environ: dict, start_response: Any) -> Any:
        request = Request(environ)
        return self.dispatch(request)(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        path = request.path
        under_prefix = path == http_api.PLUGIN_PREFIX or path.startswith(
            http_api.PLUGIN_PREFIX + "/"
        )
        if under_prefix:
            path = path[len(http_api.PLUGIN_PREFIX) :]
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        handler = self.routes.get(path)
        if handler is not None:
            return handler(request)
        last = path.rsplit("/", 1)[-1]
        if path in ("", "/") or (under_prefix and "." not in last):
            return http_api.static_handler("index.html", self.guard)(request)
        if "." in last:
            return http_api.static_handler(path.lstrip("/"), self.guard)(request)
        return Response("Not Found", status=404, content_type="text/plain")


def serve(
    logdir: str,
    port: int = DEFAULT_PORT,
    host: str = DEFAULT_HOST,
    config: Optional[CacheConfig] = None,
    allowed_hosts: tuple = (),
) -> None:
    """Serves until interrupted; ``allowed_hosts`` are names answered besides loopback."""
    guard = Guard.for_bind(host, allowed_hosts)
    app = StandaloneApp(logdir, config=config, guard=guard)
    shown = f"[{host}]" if ":" in host else host
    print(f"Profile: serving {app.service.logdir.path} at http://{shown}:{port}/", flush=True)
    disk = app.service.disk
    print(f"Profile: disk cache {disk.root if disk else 'off'}", flush=True)
    print(f"Profile: answering {guard.describe()}", flush=True)
    if not is_loopback(host):
        logger.warning("listening on %s: anyone who can reach it can read the profiles", host)
    if threading.current_thread() is threading.main_thread():
        # SIGTERM unwinds like Ctrl-C, so the worker processes stop with the server.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        run_simple(host, port, app, threaded=True, use_reloader=False)
    finally:
        app.service.close()


def _exit_on_sigterm(signum: int, frame: object) -> None:
    sys.exit(128 + signum)


def main(argv: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", required=True)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--host", default=DEFAULT_HOST)
    add_flags(parser)
    add_host_flags(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    allowed = allowed_hosts_setting(args.allowed_hosts)
    serve(args.logdir, args.port, args.host, CacheConfig.from_flags(args), allowed)


if __name__ == "__main__":
    main()

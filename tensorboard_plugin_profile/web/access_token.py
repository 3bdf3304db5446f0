"""A secret in the page's link, for a server that must answer only whoever was given it.

Binding to loopback keeps the network out, not the other users of the machine:
any of them can connect to ``127.0.0.1:PORT``. The live page (``live.py``) runs
inside a training process and drives its profiler, so it must not serve them,
nor a web page in the user's browser that sends requests to the port (CSRF) or
renames itself to it (DNS rebinding). Such a server makes a random token, prints
its link with ``?token=...``, and every route (not the page's static files, which
hold no data) then needs that token as a query parameter:

- the page reads it from its address, keeps it in ``localStorage`` (one
  origin: host and port) and adds it to each request, downloads included
  (``frontend/src/access-token.ts``);
- not a cookie: cookies are shared by every port of a host, so another user's
  server on another port would receive it from the user's browser;
- compared in constant time; the parameter is removed before the route sees the
  request, so it never reaches a cache key or a log line.

It comes on top of ``guard.py``, not instead: the ``Host`` is checked first (a
rebound name is refused even with the token), and ``capture_profile`` still takes
only a same-origin POST carrying the capture token in ``X-TBProf-Token``.

>>> token = new_token()
>>> require(Request.from_values(f"/runs?token={token}"), token)   # doctest: +SKIP
"""

from __future__ import annotations

import hmac
import secrets
from typing import Callable, Optional

from werkzeug import Request, Response

from ..common.errors import PermissionDenied
from .guard import Guard
from .http_api import READ_METHODS, WRITE_METHODS, handles_errors

TOKEN_PARAM = "token"
MISSING_TOKEN_MESSAGE = (
    "This page needs the link its server printed (it carries a token, ?token=...): "
    "open that link instead of the bare address."
)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def gated(
    handler: Callable[[Request], Response], token: str, guard: Optional[Guard] = None
) -> Callable[[Request], Response]:
    """``handler`` answering only requests that carry ``token`` (403 JSON error otherwise).

    ``handler`` is a route of ``http_api.Routes``, which checks the method and its own
    ``guard`` again; the ``Host`` is checked here first (with that same ``guard``), so a
    rebound name is refused as such whether or not it has the token. Every method a route
    may take gets through to it: ``capture_profile`` is a POST.
    """
    return handles_errors(
        lambda request: handler(require(request, token)),
        guard,
        methods=READ_METHODS + WRITE_METHODS,
    )


def require(request: Request, token: str) -> Request:
    """The request without its token; raises ``PermissionDenied`` unless it carries ``token``.

    The query is split as sent, not decoded: the token is URL-safe, and every other
    parameter reaches the route byte for byte.
    """
    parts = request.environ.get("QUERY_STRING", "").split("&")
    given = [p.partition("=")[2] for p in parts if p.partition("=")[0] == TOKEN_PARAM]
    if len(given) != 1 or not hmac.compare_digest(given[0].encode(), token.encode()):
        raise PermissionDenied(MISSING_TOKEN_MESSAGE)
    rest = "&".join(p for p in parts if p and p.partition("=")[0] != TOKEN_PARAM)
    return Request(dict(request.environ, QUERY_STRING=rest))

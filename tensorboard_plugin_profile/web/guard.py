"""Who may use the server: the host names it answers for, and the token that starts a capture.

A browser sends requests on behalf of any page it shows, so a server bound to loopback is still
reachable from the web in two ways, and each has its own defence here:

- **DNS rebinding.** A page at ``http://rebind.attacker.example:PORT/`` re-points its own name at
  127.0.0.1; the browser then takes our answers for the attacker's (same origin) and lets the
  page read them. Such requests carry the attacker's name in ``Host``, so every route answers
  only requests that name one of the server's own hosts (``Guard.check_host``). The port is not
  compared: it adds nothing against rebinding and would break ``ssh -L`` port forwarding.
- **Cross-site request forgery.** Any page can make the browser *send* a request (an
  ``<img>``, a form, a no-cors fetch) though it cannot read the answer. That is harmless for
  routes that only read, not for a capture, which makes the server connect somewhere and write
  into the logdir. So ``capture_profile`` takes only POST, refuses requests the browser marks as
  coming from another origin (``Sec-Fetch-Site``, else ``Origin``), and requires a random token
  of this server process in a header (``Guard.check_write``). Only a page of our own origin can
  read the token (``GET capture_token``): the server never sends CORS headers, and a header
  cannot be added by a form or a no-cors fetch.

Usage::

    guard = Guard.for_bind("127.0.0.1")            # localhost, 127.0.0.1, [::1]
    guard = Guard.for_bind("0.0.0.0", ["box.lan"])  # plus this machine's name and box.lan
    guard.check_host(request)                       # raises HostNotAllowed
    guard.check_write(request)                      # raises Forbidden
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import os
import secrets
import socket
from typing import Any, Iterable, Optional
from urllib.parse import urlsplit

from werkzeug import Request

from ..common.errors import Forbidden, HostNotAllowed

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
TOKEN_HEADER = "X-TBProf-Token"
ENV_ALLOWED_HOSTS = "TBPROF_ALLOWED_HOSTS"
ANY_HOST = "*"  # in --allowed_hosts: answer every Host (behind a proxy that checks it)
_WILDCARD_BINDS = ("", "0.0.0.0", "::", "[::]")
# "none" is a navigation the user started (address bar, bookmark): no page made it.
_SAME_ORIGIN_SITES = ("same-origin", "none")
_SHOWN_HOST_CHARS = 100


def host_name(value: str) -> str:
    """The name part of a ``Host`` header or an address: lowercase, no port, IPv6 in brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else value
    if value.count(":") > 1:  # a bare IPv6 address (a bind address; never a Host header)
        return f"[{value}]"
    return value.split(":", 1)[0]


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    name = host_name(host).strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_host_list(text: Optional[str]) -> tuple:
    """``"a.lan, 10.0.0.5:8791,[fe80::1]"`` → ``("a.lan", "10.0.0.5", "[fe80::1]")``."""
    names = (part.strip() for part in (text or "").split(","))
    return tuple(name if name == ANY_HOST else host_name(name) for name in names if name)


def allowed_hosts_setting(flag_value: Optional[str]) -> tuple:
    """The extra host names: ``--allowed_hosts`` when given, else ``TBPROF_ALLOWED_HOSTS``."""
    return parse_host_list(flag_value or os.environ.get(ENV_ALLOWED_HOSTS, ""))


def add_flags(parser: Any) -> None:
    """Adds ``--allowed_hosts`` to an argparse parser or group."""
    parser.add_argument(
        "--allowed_hosts",
        metavar="NAMES",
        default=None,
        help="comma-separated host names the server also answers for, besides loopback "
        f"(env {ENV_ALLOWED_HOSTS}; '*' for any, behind a proxy that checks Host)",
    )


def _new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclasses.dataclass(frozen=True)
class Guard:
    """The host names one server answers for and its capture token (random per process)."""

    hosts: frozenset
    token: str = dataclasses.field(default_factory=_new_token, repr=False)

    @classmethod
    def for_bind(cls, bind_host: str, allowed_hosts: Iterable[str] = ()) -> Guard:
        """Loopback names always; the bound name, or this machine's name for a wildcard bind."""
        names = set(LOOPBACK_NAMES)
        bind = (bind_host or "").strip()
        if bind in _WILDCARD_BINDS:
            names.add(socket.gethostname().lower())
        elif not is_loopback(bind):
            names.add(host_name(bind))
        names.update(allowed_hosts)
        return cls(frozenset(names))

    def describe(self) -> str:
        """For the startup log line: what ``Host`` is accepted."""
        if ANY_HOST in self.hosts:
            return "any host name (--allowed_hosts '*'): nothing guards against DNS rebinding"
        return "host names " + ", ".join(sorted(self.hosts)) + " (any port)"

    @property
    def loopback_only(self) -> bool:
        return self.hosts <= set(LOOPBACK_NAMES)

    def check_host(self, request: Request) -> None:
        """Refuses a request whose ``Host`` is not one of ours (or has none)."""
        if ANY_HOST in self.hosts:
            return
        header = request.environ.get("HTTP_HOST", "")
        if header and host_name(header) in self.hosts:
            return
        shown = header[:_SHOWN_HOST_CHARS] or "(none)"
        raise HostNotAllowed(
            f"This server does not answer requests addressed to host {shown!r} (a guard against "
            "DNS rebinding). If that is how you reach it, add the name with --allowed_hosts "
            f"or {ENV_ALLOWED_HOSTS} (docs/security.md)."
        )

    def check_same_origin(self, request: Request) -> None:
        """Refuses a request the browser says another origin's page made."""
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None:
            if site.strip().lower() in _SAME_ORIGIN_SITES:
                return
        else:
            origin = request.headers.get("Origin")
            if origin is None or _authority(origin) == request.environ.get("HTTP_HOST", "").lower():
                return
        raise Forbidden(
            f"{request.path.rsplit('/', 1)[-1]} answers only the Profile page itself; this "
            "request came from a page of another origin."
        )

    def check_write(self, request: Request) -> None:
        """A request that changes something: same origin, and this process's token."""
        self.check_same_origin(request)
        given = request.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            raise Forbidden(
                f"A capture needs this server's token in the {TOKEN_HEADER} header (the page "
                "reads it from capture_token). If the server was restarted, reload the page."
            )


def _authority(origin: str) -> str:
    """``http://Host:8791`` → ``host:8791``; ``null`` and garbage → ``""``."""
    try:
        return urlsplit(origin.strip()).netloc.lower()
    except ValueError:
        return ""

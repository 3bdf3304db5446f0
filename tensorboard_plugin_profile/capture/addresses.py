"""Parse and check profiler service addresses before any network call.

Users type a comma-separated list such as ``grpc://10.0.0.1:9999,localhost:9998``.
Each element may carry its own ``grpc://`` prefix (TensorFlow's client strips it
per element; xprof only from the whole string, which then fails on the second
host). IPv6 literals are accepted in brackets, ``[::1]:9999``, which the
upstream ``host:port`` check always rejected.

>>> [a.target for a in parse_service_addresses("grpc://localhost:1,[::1]:2")]
['localhost:1', '[::1]:2']
"""

from __future__ import annotations

import dataclasses
import ipaddress

from tensorboard_plugin_profile.common.errors import InvalidArgument

_GRPC_PREFIX = "grpc://"
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


@dataclasses.dataclass(frozen=True)
class ServiceAddress:
    """One profiler server: ``host`` without brackets, ``port`` as a number."""

    host: str
    port: int

    @property
    def target(self) -> str:
        """The address as gRPC and the profiler server expect it (``host:port``)."""
        if ":" in self.host:
            return f"[{self.host}]:{self.port}"
        return f"{self.host}:{self.port}"

    @property
    def file_stem(self) -> str:
        """File name stem of this host's profile: the target with ``:`` → ``_``.

        The same rule the profiler server applies to ``host_name`` when it writes
        the file itself, so client- and server-written files are named alike.
        """
        return self.target.replace(":", "_")

    @property
    def is_loopback(self) -> bool:
        if self.host.lower() in _LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def strip_grpc_prefix(text: str) -> str:
    text = text.strip()
    if text.lower().startswith(_GRPC_PREFIX):
        return text[len(_GRPC_PREFIX) :]
    return text


def parse_service_address(text: str) -> ServiceAddress:
    """Parses ``[grpc://]host:port`` or ``[grpc://][v6addr]:port``."""
    raw = strip_grpc_prefix(text)
    if raw.startswith("["):
        host, sep, port_text = _split_bracketed(raw)
    else:
        host, sep, port_text = raw.rpartition(":")
        if ":" in host:
            raise _bad_address(text, "write IPv6 addresses in brackets, e.g. [::1]:9999")
    if not sep or not host:
        raise _bad_address(text, "expected host:port, e.g. localhost:9999")
    if any(c.isspace() or c in "/?#@" for c in host):
        raise _bad_address(text, "the host name contains a character that is not allowed")
    return ServiceAddress(host=host, port=_parse_port(text, port_text))


def parse_service_addresses(text: str, stop_after: int | None = None) -> list[ServiceAddress]:
    """Parses a comma-separated list; empty elements are skipped, duplicates kept once.

    With ``stop_after``, parsing ends once ``stop_after + 1`` distinct addresses are found:
    enough for the caller to refuse a list that is too long without reading all of it.
    """
    if text is None or not str(text).strip():
        raise InvalidArgument("No service address provided: enter host:port, e.g. localhost:9999.")
    addresses: dict[ServiceAddress, None] = {}  # ordered, and a set
    for element in str(text).split(","):
        if not element.strip():
            continue
        addresses.setdefault(parse_service_address(element))
        if stop_after is not None and len(addresses) > stop_after:
            break
    if not addresses:
        raise InvalidArgument("No service address provided: enter host:port, e.g. localhost:9999.")
    return list(addresses)


def parse_worker_list(text: str) -> list[str]:
    """The TPU worker subset: comma-separated names, blanks dropped."""
    return [w.strip() for w in (text or "").split(",") if w.strip()]


def _split_bracketed(raw: str) -> tuple[str, str, str]:
    closing = raw.find("]")
    if closing < 0:
        raise _bad_address(raw, "missing ']' after the IPv6 address")
    host = raw[1:closing]
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        raise _bad_address(raw, f"{host!r} is not an IPv6 address") from None
    rest = raw[closing + 1 :]
    if not rest.startswith(":"):
        return host, "", ""
    return host, ":", rest[1:]


def _parse_port(original: str, port_text: str) -> int:
    if not port_text.isdigit() or not port_text.isascii():
        raise _bad_address(original, "the port must be a number")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise _bad_address(original, "the port must be between 1 and 65535")
    return port


def _bad_address(text: str, why: str) -> InvalidArgument:
    return InvalidArgument(f'Could not interpret "{text.strip()}" as a host-port pair: {why}.')

"""Whether the client of a request still waits for the answer.

A decode runs in the request's thread; WSGI tells nobody when the client hangs up, so a
closed browser tab used to leave a large decode running to its end. ``OpenConnection``
looks at the request's socket (werkzeug's ``werkzeug.socket``, in the standalone server
and inside TensorBoard alike) without reading from it: a peek that finds the end of the
stream means the client closed its end. The work's checkpoints ask it (``common/work.py``);
the cache stops a computation only when no request waiting for it is still open.

Usage::

    with work.interest(OpenConnection.of(request.environ)):
        return handler(request)
"""

from __future__ import annotations

import socket
from typing import Any, Optional

_SOCKET_KEY = "werkzeug.socket"


class OpenConnection:
    def __init__(self, sock: Any):
        self._sock = sock

    @classmethod
    def of(cls, environ: dict) -> Optional[OpenConnection]:
        """The request's connection; None (always waiting) when it cannot be watched."""
        sock = environ.get(_SOCKET_KEY)
        # TLS sockets cannot be peeked at without decrypting: treated as always waiting.
        if type(sock) is not socket.socket:
            return None
        return cls(sock)

    def wanted(self) -> bool:
        try:
            # Nothing to read: still there. The next request of a kept-alive connection: still
            # there. The end of the stream (b""), or a reset: gone.
            return self._sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except (OSError, ValueError):
            return False

"""Whether a listed file can be a Chrome trace, from its first bytes.

Discovery never parses a trace, so listing a logdir of large traces stays cheap; but a file
whose first bytes are not a JSON trace (empty, not JSON, a damaged gzip header) is skipped
with the reason (``store/logdir.py`` reports it in the empty-logdir diagnosis).
"""

from __future__ import annotations

import gzip
import zlib
from typing import Optional

_SNIFF_BYTES = 64


def unreadable_reason(path: str) -> Optional[str]:
    """Why the file cannot be a Chrome trace, from its first bytes; None when it may be one."""
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF_BYTES)
            if head[:2] == b"\x1f\x8b":
                f.seek(0)
                try:
                    head = gzip.GzipFile(fileobj=f).read(_SNIFF_BYTES)
                except (OSError, EOFError, zlib.error):
                    return "a damaged gzip file"
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    text = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not text:
        return "empty"
    if text[:1] not in (b"{", b"["):
        return "not a JSON trace (it does not start with '{' or '[')"
    return None

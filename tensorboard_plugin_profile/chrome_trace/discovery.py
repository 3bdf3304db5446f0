"""Finding Chrome-trace sessions in a folder, and sniffing files that cannot be read.

A folder holding ``timeline-<step>.json`` or ``<worker>.<span>.pt.trace.json[.gz]`` files is
a run; each timeline is a session of its own, each PyTorch span a session whose workers are
its hosts. Discovery only looks at names and the first bytes of a file (never parses it), so
listing a logdir of large traces stays cheap; a file whose first bytes are not a JSON trace
(empty, not JSON, a damaged gzip header) is skipped with the reason.
"""

from __future__ import annotations

import gzip
import os
import zlib
from typing import Optional

from .names import TraceFileName, parse_trace_file_name

_SNIFF_BYTES = 64


def sessions_in(filenames: list) -> dict:
    """Session name → sorted [(host, file name)] of the Chrome-trace files among ``filenames``."""
    sessions: dict = {}
    for name in sorted(filenames):
        parsed = parse_trace_file_name(name)
        if parsed is not None:
            sessions.setdefault(parsed.session, []).append((parsed.host, name))
    return sessions


def single_file_name(path: str) -> Optional[TraceFileName]:
    """How a file given on its own is read: a known name, or any ``*.json[.gz]`` as a trace."""
    name = os.path.basename(path)
    parsed = parse_trace_file_name(name)
    if parsed is not None:
        return parsed
    for suffix in (".json.gz", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)]
            return TraceFileName("", stem, stem)
    return None


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

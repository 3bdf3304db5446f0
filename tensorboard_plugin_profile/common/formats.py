"""The input formats, named once: what ``Space.source_format`` holds, and what a format registers.

A profile comes as an ``.xplane.pb`` (TensorFlow, JAX), a TensorFlow ``ProfilerHook``
timeline or a PyTorch profiler trace. The decoders stamp the format's name on the ``Space``
they build; analyses and tools that treat a format differently compare with the names here
(``format_of(space) == PYTORCH``), never with string literals.

The registry of formats (``store/formats.py``) fills one ``InputFormat`` per format: it
needs both decoders, so it sits in ``store/``; the names and the entry's shape sit here, in
the first stage, so the decoders themselves can use them.

Usage::

    if format_of(space) == PROFILER_HOOK: ...
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

XSPACE = "xspace"  # <host>.xplane.pb (xspace/)
PROFILER_HOOK = "profiler_hook"  # tf.train.ProfilerHook's timeline-<step>.json (chrome_trace/)
PYTORCH = "pytorch"  # torch.profiler's <worker>.<span>.pt.trace.json[.gz] (chrome_trace/)
CHROME_TRACE_FORMATS = (PROFILER_HOOK, PYTORCH)

# How discovery (store/logdir.py) groups a format's files into sessions and hosts.
# <run>/plugins/profile/<session>/<host>.<ext>: the folder is the session, the name the host.
SESSION_FOLDERS = "session_folders"
# Any folder is a run; each file's name says its session and host.
NAMED_FILES = "named_files"


@dataclasses.dataclass(frozen=True)
class FileName:
    """What a profile file's name says: its format, session and host.

    ``session`` is empty for ``SESSION_FOLDERS`` formats (the folder names the session); a
    file whose name leaves ``host`` empty is listed in no session.
    """

    format: str
    session: str
    host: str


def _no_reason(path: str) -> Optional[str]:
    return None


def _no_name(name: str) -> Optional[FileName]:
    return None


@dataclasses.dataclass(frozen=True)
class InputFormat:
    """One input format: how discovery finds its files and how they are read."""

    name: str  # the Space.source_format of what it reads
    display_name: str  # for people: "PyTorch profiler trace"
    file_pattern: str  # for people: "<worker>.<span>.pt.trace.json[.gz]"
    # The matcher: a file name → its session and host, None when it is not this format's.
    file_name: Callable[[str], Optional[FileName]]
    layout: str  # SESSION_FOLDERS or NAMED_FILES
    # Whether the reader takes a file the user names, by its name (may be wider than the
    # matcher: a compressed .xplane.pb.gz is read, not discovered).
    reads: Callable[[str], bool]
    read_path: Callable[[str], Any]  # a path the user names (CLI, notebooks) → Space
    # A file discovery listed (store.logdir.HostFile), through its checked open → Space.
    read_listed: Callable[[Any, bool], Any]  # (listed host file, with flows) -> Space
    # Why a listed file cannot be this format, from its first bytes; None when it may be.
    unreadable_reason: Callable[[str], Optional[str]] = _no_reason
    # How a file given on its own as the logdir is named when the matcher does not take it.
    loose_file_name: Callable[[str], Optional[FileName]] = _no_name


def format_of(space: Any) -> str:
    """The format a Space was read from (a Space built in code is an XSpace)."""
    return getattr(space, "source_format", XSPACE)


def is_chrome_trace(space: Any) -> bool:
    return format_of(space) in CHROME_TRACE_FORMATS

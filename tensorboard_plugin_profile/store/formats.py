"""The input-format registry: one entry per format, looped over by discovery and reading.

Each entry (``common.formats.InputFormat``) says how its files are recognised (the matcher:
a file name → session and host), how discovery groups them (``layout``), whether a listed
file can be read at all (``unreadable_reason``), and how it is read. ``store/logdir.py`` and
``store/profile_reader.py`` ask this module and never test a format themselves; adding a
format is an entry here and a decoder beside the others (docs/architecture.md, "Adding an
input format"). The entries sit in ``store/`` because it is the first stage that may import
every decoder.

Usage::

    match("vm.xplane.pb")                      # FileName(format="xspace", session="", host="vm")
    sessions_in(["rank0.1.pt.trace.json.gz"])  # {"1": [(FileName(...), "rank0.1.pt...")]}
    reader_for("timeline-4.json").read_path("run/timeline-4.json")   # a Space
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Optional

from ..chrome_trace import read_chrome_trace
from ..chrome_trace.event_file import graph_facts
from ..chrome_trace.names import loose_trace_file_name, pytorch_file_name, timeline_file_name
from ..chrome_trace.sniff import unreadable_reason as chrome_unreadable_reason
from ..common.errors import CorruptProfile, NotFound, PermissionDenied, Unavailable
from ..common.formats import (
    NAMED_FILES,
    PROFILER_HOOK,
    PYTORCH,
    SESSION_FOLDERS,
    XSPACE,
    FileName,
    InputFormat,
)
from ..preprocessing.preprocess import preprocess_decoded
from ..xspace import decode_xspace, read_xspace
from ..xspace.model import Space

XPLANE_SUFFIX = ".xplane.pb"
_XPLANE_HOST = re.compile(r"(?:(.*)\.)?(xplane\.pb)")
# What the XSpace reader takes when the user names a file; discovery lists plain ones only.
_XPLANE_READ_SUFFIXES = (XPLANE_SUFFIX, XPLANE_SUFFIX + ".gz")
# Profile files other tools write that no entry reads (the empty-logdir diagnosis names them).
NOT_READ_SUFFIXES = (".trace.json.gz", ".xplane.riegeli")


def _xspace_file_name(name: str) -> Optional[FileName]:
    """``vm.xplane.pb``: host ``vm`` (its folder is the session); an empty host for a name
    that is all suffix, which marks a session folder but lists no host."""
    if not name.endswith(XPLANE_SUFFIX):
        return None
    match = _XPLANE_HOST.fullmatch(name)
    return FileName(XSPACE, "", (match.group(1) or "") if match else "")


def _read_listed_xspace(host_file: Any, with_flows: bool = True) -> Space:
    """Preprocessed: every tool reads the preprocessed tables, so keeping the decoded ones
    beside them would hold each event twice (docs/cold_path.md, "Stage by stage"). Without flows
    for a copy that is only summarised (``pod/``)."""
    data = host_file.read_bytes()  # the decoder gives the memory back as it walks it
    return preprocess_decoded(decode_xspace(data, host_file.name), with_flows)


def _read_listed_chrome_trace(host_file: Any, with_flows: bool = True) -> Space:
    """A Chrome trace's flows come from the file itself: ``with_flows`` changes nothing.
    A ProfilerHook timeline also gets the variables of the graph in the event file
    beside it (the model view)."""
    path, size, opener = host_file.stream_source()  # a remote trace: read as it arrives
    space = read_chrome_trace(path, opener=opener, size=size)
    if space.source_format == PROFILER_HOOK:
        space.extras.update(_graph_beside(host_file))
    return space


def _graph_beside(host_file: Any) -> dict:
    """The graph's variables and op costs (``event_file.graph_facts``) from the newest event
    file with a graph beside the timeline, else ``{"graph_note": why not}``; a damaged event
    file never fails the trace. The host file lists and opens them (``HostFile.event_files_beside``,
    ``open_beside``), on disk or in a bucket alike."""
    try:
        names = host_file.event_files_beside()
    except OSError:
        names = []
    note = (
        "No events.out.tfevents.* file beside the timeline holds a graph: run the training "
        "with a summary writer (MonitoredTrainingSession writes one to its checkpoint_dir)."
    )
    for name in reversed(names):
        try:
            with host_file.open_beside(name) as f:
                facts = graph_facts(f)
        except (CorruptProfile, NotFound, PermissionDenied, Unavailable) as e:
            note = f"{name}: {e}"
            continue
        except OSError as e:  # its text may hold a server path: only the reason is shown
            note = f"{name} could not be read ({e.strerror or 'I/O error'})."
            continue
        if facts is not None:
            return {**facts, "graph_file": name}
    return {"graph_note": note}


def _named_by(matcher: Callable[[str], Optional[FileName]]) -> Callable[[str], bool]:
    """``reads`` for a format whose reader takes exactly the files its matcher names."""
    return lambda name: matcher(name) is not None


FORMATS = (
    InputFormat(
        name=XSPACE,
        display_name="XSpace (TensorFlow, JAX)",
        file_pattern="<run>/plugins/profile/<session>/<host>.xplane.pb",
        file_name=_xspace_file_name,
        layout=SESSION_FOLDERS,
        reads=lambda name: name.endswith(_XPLANE_READ_SUFFIXES),
        read_path=read_xspace,
        read_listed=_read_listed_xspace,
    ),
    InputFormat(
        name=PROFILER_HOOK,
        display_name="TensorFlow ProfilerHook timeline",
        file_pattern="timeline-<step>.json",
        file_name=timeline_file_name,
        layout=NAMED_FILES,
        reads=_named_by(timeline_file_name),
        read_path=read_chrome_trace,
        read_listed=_read_listed_chrome_trace,
        unreadable_reason=chrome_unreadable_reason,
        # A Chrome trace without PyTorch's keys reads as a ProfilerHook timeline.
        loose_file_name=loose_trace_file_name,
    ),
    InputFormat(
        name=PYTORCH,
        display_name="PyTorch profiler trace",
        file_pattern="<worker>.<span>.pt.trace.json[.gz]",
        file_name=pytorch_file_name,
        layout=NAMED_FILES,
        reads=_named_by(pytorch_file_name),
        read_path=read_chrome_trace,
        read_listed=_read_listed_chrome_trace,
        unreadable_reason=chrome_unreadable_reason,
    ),
)
BY_NAME = {entry.name: entry for entry in FORMATS}
# The reader of a file no entry claims by name: the Chrome-trace reader tells a trace's
# format from its content, and names the file in its error when it is none.
OTHER_FILES = BY_NAME[PROFILER_HOOK]


def match(name: str, layout: Optional[str] = None) -> Optional[FileName]:
    """What a file name says, from the first entry (of ``layout``, if given) that takes it."""
    for entry in FORMATS:
        if layout is None or entry.layout == layout:
            found = entry.file_name(name)
            if found is not None:
                return found
    return None


def single_file_name(name: str) -> Optional[FileName]:
    """How a file given on its own as the logdir is named: by a matcher, else by an entry
    that takes loose files (any ``*.json[.gz]`` is a Chrome trace); None for other files."""
    found = match(name)
    for entry in FORMATS:
        found = found or entry.loose_file_name(name)
    return found


# The run of one folder's ProfilerHook timelines together (issue 28 item 10): each timeline a
# "host" of it, so the trace viewer draws them on one time line, each step its own processes.
ALL_STEPS_SESSION = "all_steps"


def sessions_in(filenames: list) -> dict:
    """Session → sorted [(FileName, file name)] of the ``NAMED_FILES`` files among ``filenames``.

    PyTorch spans pair up by order, as torch-tb-profiler pairs them: each worker's spans
    sorted by number, the k-th span of every worker is one session. A real DDP job's ranks
    stamp their spans apart (``rank0.1795771884814333529``, ``rank1.1795771884892348605``), so
    grouping by the span's text alone made one run per rank. The session is named after the
    smallest span of its group (unchanged where the workers share their spans' names). With
    two or more ProfilerHook timelines, also ``ALL_STEPS_SESSION``, holding all of them.
    """
    found_names = []
    spans_by_worker: dict = {}
    for name in sorted(filenames):
        found = match(name, NAMED_FILES)
        if found is not None:
            found_names.append((found, name))
            if found.format == PYTORCH and found.session.isdigit():
                spans_by_worker.setdefault(found.host, set()).add(int(found.session))
    group: dict = {}  # (worker, span) -> k
    for worker, spans in spans_by_worker.items():
        for k, span in enumerate(sorted(spans)):
            group[(worker, span)] = k
    first_span: dict = {}  # k -> the smallest span of the k-th group
    for (_, span), k in group.items():
        first_span[k] = min(span, first_span.get(k, span))
    sessions: dict = {}
    for found, name in found_names:
        if found.format == PYTORCH and found.session.isdigit():
            span = first_span[group[(found.host, int(found.session))]]
            found = dataclasses.replace(found, session=str(span))
        sessions.setdefault(found.session, []).append((found, name))
    timelines = [
        (dataclasses.replace(found, session=ALL_STEPS_SESSION), name)
        for entries in sessions.values()
        for found, name in entries
        if found.format == PROFILER_HOOK
    ]
    if len(timelines) > 1 and ALL_STEPS_SESSION not in sessions:
        sessions[ALL_STEPS_SESSION] = sorted(timelines, key=lambda pair: host_order(pair[0].host))
    return sessions


def host_order(host: str) -> tuple:
    """Sort key that puts ``timeline-4`` before ``timeline-12`` (numbers by value)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", host)
    )


def layout_of(found: FileName) -> str:
    return BY_NAME[found.format].layout


def reader_for(name: str) -> InputFormat:
    """The entry whose reader takes the file of this name (``OTHER_FILES`` if none claims it)."""
    return next((entry for entry in FORMATS if entry.reads(name)), OTHER_FILES)

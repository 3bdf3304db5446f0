"""Finds runs, sessions and hosts under a log directory, safely.

Layout (docs/http_api.md): ``<logdir>[/<tb_run>]/plugins/profile/<session>/<host>.xplane.pb``.
A run's name is ``<session>`` for the logdir itself, else ``<tb_run>/<session>``.

Requests name runs and hosts; they are looked up in maps built by discovery
and never joined onto a path, so ``..``, absolute paths and encoded separators
can only miss. Files are also checked by real path, so a symlink pointing out
of the logdir is skipped. That check happens when listing; ``read_host_file``
(``safe_open.py``) checks again what it actually opened (the file may have been swapped for a link
since), so a race can neither read outside the logdir nor fail with a 500.

``LogDir`` also opens a single session folder or a single ``.xplane.pb`` file
(``tbprof serve --logdir some/session`` or ``--logdir vm.xplane.pb``): the run
is then named after the session folder.

Which files are profiles, and how they group, comes from the format registry
(``store/formats.py``), one entry per format; this module tests no format itself. The
``.xplane.pb`` layout above is ``SESSION_FOLDERS``. Chrome-trace profiles are ``NAMED_FILES``
and need no ``plugins/profile``: a folder holding ``timeline-<step>.json`` or
``<worker>.<span>.pt.trace.json[.gz]`` files is a run, ``<folder>/<session>`` (a timeline,
or a PyTorch span whose workers are hosts). A single such file can be given as the logdir too.

Usage::

    logdir = LogDir("/tmp/logs")
    for run in logdir.runs():
        session = logdir.session(run)
        print(run, session.hosts())
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import IO, Any, Callable, Optional

from ..chrome_trace.event_file import EVENT_FILE_PREFIX
from ..common.errors import InvalidArgument, NotFound, PermissionDenied
from ..common.formats import NAMED_FILES, SESSION_FOLDERS, InputFormat
from ..xspace.filebytes import FileBytes
from . import formats
from .safe_open import identity_of, inside, open_host_file, open_inside, read_host_file

logger = logging.getLogger(__name__)

# How long a discovery result is reused before the tree is walked again.
DISCOVERY_TTL_S = 5.0
# An unknown run name walks the tree again (it may be new), but at most this often:
# a stream of made-up names must not turn into a stream of full walks.
UNKNOWN_RUN_REWALK_S = 1.0
# How long TensorBoard's first is_active() may look for a session before discovery has finished.
QUICK_PROBE_BUDGET_S = 0.5


@dataclasses.dataclass(frozen=True)
class HostFile:
    host: str
    path: str
    size: int
    mtime_ns: int
    logdir_real: str = ""  # the logdir's real path: what reading it must stay inside
    inode: int = 0  # as listed, with ctime_ns: tells whether it was fingerprinted already
    ctime_ns: int = 0

    @property
    def key(self) -> tuple:
        """Identity of the file's content for caches: path, size, mtime, and of the file
        opened now its inode, ctime and a fingerprint of its first and last 64 KiB.

        Size and mtime alone let a file replaced by another of the same size and mtime
        (a copy that keeps times, ``os.utime``) be answered from the old file's entries
        after a restart. Any replacement changes the ctime (only the clock sets it) and
        a rename the inode; the fingerprint covers file systems whose ctimes or inodes
        are not kept, and edits in a file's ends. It is read once per listed identity.
        """
        return (self.path, self.size, self.mtime_ns) + identity_of(self)

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    def local_path(self) -> str:
        """Where the file's bytes are on this machine (a remote object is fetched first)."""
        return self.path

    def open(self) -> IO[bytes]:
        """The file, opened through ``open_host_file`` (never outside its logdir)."""
        return open_host_file(self)

    def stream_source(self) -> tuple:
        """(path naming the file, its size or None to ask the file system, opener) for a
        reader that streams the file from its start (a Chrome trace)."""
        return self.path, None, self.open

    def read(self, read: Callable[[IO[bytes]], Any]) -> Any:
        """What ``read`` takes from the open file (``read_host_file``)."""
        return read_host_file(self, read)

    def read_bytes(self) -> FileBytes:
        """The whole file's bytes, for a decoder that takes them (``FileBytes``)."""
        return self.read(FileBytes)

    def event_files_beside(self) -> list:
        """The names of the ``events.out.tfevents.*`` files in this file's folder, sorted
        (a ProfilerHook timeline's graph); raises ``OSError`` if the folder cannot be listed."""
        folder = os.path.dirname(self.path)
        return sorted(n for n in os.listdir(folder) if n.startswith(EVENT_FILE_PREFIX))

    def open_beside(self, name: str) -> IO[bytes]:
        """One of ``event_files_beside()``, opened without leaving the logdir (``open_inside``)."""
        folder = os.path.dirname(self.path)
        return open_inside(self.logdir_real or os.path.realpath(folder), os.path.join(folder, name))


@dataclasses.dataclass(frozen=True)
class Session:
    run: str
    path: str
    host_files: tuple  # of HostFile, sorted by host
    # One folder's ProfilerHook timelines as one run (formats.ALL_STEPS_SESSION), step order
    all_steps: bool = False

    def hosts(self) -> list:
        return [f.host for f in self.host_files]

    def host_file(self, host: str) -> HostFile:
        for f in self.host_files:
            if f.host == host:
                return f
        raise NotFound(f"No profile for host {host!r} in run {self.run!r}.")


@dataclasses.dataclass(frozen=True)
class _NamedFileSession:
    """Where a ``NAMED_FILES`` session's files are: their folder and the session's name."""

    folder: str
    session: str


@dataclasses.dataclass
class Diagnosis:
    """What discovery found and skipped, for an empty-logdir explanation."""

    logdir: str  # the folder's name only: the page need not learn the server's layout
    exists: bool = True
    sessions: int = 0
    skipped: list = dataclasses.field(default_factory=list)
    other_files: list = dataclasses.field(default_factory=list)
    unreadable: list = dataclasses.field(default_factory=list)  # relative folder paths


def _is_profile_dir(path: str) -> bool:
    """``<run>/plugins/profile``: the folder whose subfolders are sessions."""
    return (
        os.path.basename(path) == "profile" and os.path.basename(os.path.dirname(path)) == "plugins"
    )


class LogDir:
    """Discovery over one log directory (or one session folder or file)."""

    def __init__(self, path: str):
        self.path = os.path.abspath(os.path.expanduser(path)) if path else ""
        self._lock = threading.Lock()
        self._walk_lock = threading.Lock()  # one walk at a time; the others reuse it
        self._runs: Optional[dict] = None  # run name -> session dir
        self._discovered_at = 0.0
        self._walk_started = 0.0
        self._has_runs = False
        self._single_file: Optional[str] = None
        self._skipped: list = []  # (relative path, reason) of trace files that cannot be read
        if self.path and os.path.isfile(self.path):
            self._single_file = self.path
        self.root = os.path.dirname(self.path) if self._single_file else self.path
        self._root_real = os.path.realpath(self.root) if self.root else ""

    # --- discovery ---------------------------------------------------------
    def runs(self) -> list:
        """Run names, newest session first (reverse lexicographic)."""
        return sorted(self._run_map(), reverse=True)

    def has_runs_cached(self) -> Optional[bool]:
        """Last known answer to "are there runs?", without touching disk."""
        if self._has_runs:
            return True
        return None if self._runs is None else False

    def refresh(self) -> None:
        self._run_map(max_age_s=0.0)

    def probe_has_runs(self, budget_s: float = QUICK_PROBE_BUDGET_S) -> Optional[bool]:
        """A bounded look for any session: True at the first one, False when the whole tree
        was seen without one, None when the time budget ran out first.

        TensorBoard asks ``is_active()`` on its first page load, usually before the full
        discovery (which lists every session) has finished; this answers that first question.
        """
        known = self.has_runs_cached()
        if known is not None:
            return known
        if not self.path or not os.path.isdir(self.root):
            return False
        if self._single_file or self._is_session_dir(self.path):
            return True
        deadline = time.monotonic() + budget_s
        for dirpath, dirnames, _ in os.walk(self.path, followlinks=False):
            if _is_profile_dir(dirpath) and any(not name.startswith(".") for name in dirnames):
                return True
            if time.monotonic() > deadline:
                return None
        return False

    def _run_map(self, max_age_s: float = DISCOVERY_TTL_S) -> dict:
        """The run map, walking the tree again if the last walk is older than ``max_age_s``."""
        asked_at = time.monotonic()
        with self._walk_lock:
            with self._lock:
                age = time.monotonic() - self._discovered_at
                # A walk that started after we asked is as fresh as one of our own.
                if self._runs is not None and (age < max_age_s or self._walk_started > asked_at):
                    return self._runs
                self._walk_started = time.monotonic()
            runs = self._discover()
            with self._lock:
                self._runs = runs
                self._discovered_at = time.monotonic()
                self._has_runs = self._has_runs or bool(runs)
        return runs

    def _discover(self) -> dict:
        if not self.path or not os.path.isdir(self.root):
            return {}
        if self._single_file:
            single = formats.single_file_name(os.path.basename(self._single_file))
            if single is not None and formats.layout_of(single) == NAMED_FILES:
                return {single.session: _NamedFileSession(self.root, single.session)}
            return {os.path.basename(self.root) or "session": self.root}
        if self._is_session_dir(self.path):
            return {os.path.basename(self.path) or "session": self.path}
        runs: dict = {}
        self._skipped = []
        for dirpath, dirnames, filenames in os.walk(self.path, followlinks=False):
            dirnames.sort()
            self._add_named_file_sessions(runs, dirpath, filenames)
            if _is_profile_dir(dirpath):
                tb_run = os.path.relpath(os.path.dirname(os.path.dirname(dirpath)), self.path)
                self._add_sessions(runs, tb_run, dirpath)
        return runs

    def _add_sessions(self, runs: dict, tb_run: str, profile_dir: str) -> None:
        try:
            entries = sorted(os.scandir(profile_dir), key=lambda e: e.name)
        except OSError as e:
            logger.warning("cannot list %s: %s", profile_dir, e.strerror)
            return
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            if not inside(self._root_real, entry.path):
                logger.warning("skipping %s: it links outside the log directory", entry.path)
                continue
            prefix = "" if tb_run == "." else tb_run.replace(os.sep, "/") + "/"
            runs.setdefault(prefix + entry.name, entry.path)

    def _add_named_file_sessions(self, runs: dict, dirpath: str, filenames: list) -> None:
        rel = os.path.relpath(dirpath, self.path)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for session in formats.sessions_in(filenames):
            runs.setdefault(prefix + session, _NamedFileSession(dirpath, session))

    @staticmethod
    def _is_session_dir(path: str) -> bool:
        """A folder holding a file of a ``SESSION_FOLDERS`` format (given as the logdir)."""
        try:
            return any(formats.match(n, SESSION_FOLDERS) for n in os.listdir(path))
        except OSError:
            return False

    # --- lookups -----------------------------------------------------------
    def session(self, run: str) -> Session:
        """The session of a run name that discovery produced."""
        if not run:
            raise InvalidArgument("The 'run' parameter is required.")
        runs = self._run_map()
        if run not in runs:
            runs = self._run_map(max_age_s=UNKNOWN_RUN_REWALK_S)
        if run not in runs:
            raise NotFound(f"Run {run!r} was not found in the log directory.")
        path = runs[run]
        if isinstance(path, _NamedFileSession):
            files = self._named_host_files(path)
            if path.session == formats.ALL_STEPS_SESSION:
                files = sorted(files, key=lambda f: formats.host_order(f.host))
                return Session(run, path.folder, tuple(files), all_steps=True)
            return Session(run=run, path=path.folder, host_files=tuple(files))
        return Session(run=run, path=path, host_files=tuple(self._host_files(path)))

    def _named_host_files(self, where: _NamedFileSession) -> list:
        if self._single_file:
            single = formats.single_file_name(os.path.basename(self._single_file))
            pairs = [(single, self._single_file)] if single is not None else []
        else:
            try:
                listing = os.listdir(where.folder)
            except OSError:
                return []
            found = formats.sessions_in(listing).get(where.session, [])
            pairs = [(parsed, os.path.join(where.folder, name)) for parsed, name in found]
        files = []
        for parsed, path in pairs:
            reason = self._unreadable(path, formats.BY_NAME[parsed.format])
            if reason is not None:
                rel = os.path.relpath(path, self.root)
                if (rel, reason) not in self._skipped:
                    self._skipped.append((rel, reason))
                logger.warning("skipping %s: %s", path, reason)
                continue
            files.append(self._host_file(parsed.host, path, os.stat(path)))
        return sorted(files, key=lambda f: f.host)

    def _unreadable(self, path: str, input_format: InputFormat) -> Optional[str]:
        if not inside(self._root_real, path):
            return "it links outside the log directory"
        if not os.path.isfile(path):
            return "not a regular file"
        return input_format.unreadable_reason(path)

    def _host_files(self, session_dir: str) -> list:
        files = []
        try:
            entries = list(os.scandir(session_dir))
        except PermissionError:
            name = os.path.basename(session_dir)
            message = f"Session folder {name} cannot be read: permission denied."
            raise PermissionDenied(message) from None
        except OSError:
            return []
        for entry in entries:
            parsed = formats.match(entry.name, SESSION_FOLDERS)
            if parsed is None or not parsed.host:
                continue
            if self._single_file and entry.path != self._single_file:
                continue
            if not inside(self._root_real, entry.path):
                logger.warning("skipping %s: it links outside the log directory", entry.path)
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            if not entry.is_file():
                continue
            files.append(self._host_file(parsed.host, entry.path, st))
        return sorted(files, key=lambda f: f.host)

    def _host_file(self, host: str, path: str, st: os.stat_result) -> HostFile:
        return HostFile(
            host, path, st.st_size, st.st_mtime_ns, self._root_real, st.st_ino, st.st_ctime_ns
        )

    def diagnose(self) -> Diagnosis:
        """Explains an empty result: what is under the logdir and why it was skipped."""
        diag = Diagnosis(
            logdir=os.path.basename(self.path),
            exists=bool(self.path) and os.path.exists(self.path),
        )
        if not diag.exists:
            return diag
        runs = self._run_map(max_age_s=0.0)
        diag.sessions = len(runs)
        for run in sorted(runs):
            if isinstance(runs[run], _NamedFileSession):
                self.session(run)  # sniffs its files: unreadable ones land in _skipped
        diag.skipped += [f"{rel}: {reason}" for rel, reason in self._skipped]
        if diag.sessions or not os.path.isdir(self.path):
            return diag

        def note_unreadable(error: OSError) -> None:
            if isinstance(error, PermissionError) and error.filename:
                rel = os.path.relpath(error.filename, self.path)
                diag.unreadable.append(f"{rel}: permission denied")

        for dirpath, dirnames, filenames in os.walk(
            self.path, onerror=note_unreadable, followlinks=False
        ):
            dirnames.sort()
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), self.path)
                if formats.match(name, SESSION_FOLDERS):
                    diag.skipped.append(
                        f"{rel}: not inside <run>/plugins/profile/<session>/, "
                        "so it is not part of a session"
                    )
                elif name.endswith(formats.NOT_READ_SUFFIXES) and not formats.match(name):
                    diag.skipped.append(f"{rel}: this format is not read; an .xplane.pb is needed")
                elif len(diag.other_files) < 20:
                    diag.other_files.append(rel)
            if len(diag.skipped) > 50:
                break
        return diag

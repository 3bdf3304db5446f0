"""Discovery over a logdir in an object store (``gs://``, ``s3://``, ``az://``), read-only.

The same layout and run names as ``logdir.LogDir`` (docs/http_api.md), found with few
requests: one listing per folder, and a ``plugins/profile`` folder's sessions are listed
without opening them (their hosts are listed when a session is asked for). So a logdir of
1,000 sessions costs one request per folder level. The result is reused for
``DISCOVERY_TTL_S``; an older one is still answered at once while a background thread lists
again, and ``probe_has_runs`` never waits on the network (TensorBoard's ``is_active``).

Host files are ``RemoteHostFile``s: their cache identity is URL, size and ETag/generation, and
reading one first fetches it into the disk cache (``remote_fetch.fetch``), then reads the
local copy.

Usage::

    logdir = RemoteLogDir("s3://bucket/logs", cache_folder)
    logdir.runs()                          # ["run1/2024_01_01_00_00_00", ...]
    logdir.session(run).host_files[0].read(lambda f: f.read())
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import IO, Any, Callable, Optional, cast

from ..chrome_trace.event_file import EVENT_FILE_PREFIX
from ..common.errors import InvalidArgument, NotFound
from ..common.formats import NAMED_FILES, SESSION_FOLDERS
from ..xspace.filebytes import FileBytes
from . import formats, remote, remote_fetch
from .logdir import Diagnosis, HostFile, LogDir, Session

logger = logging.getLogger(__name__)

DISCOVERY_TTL_S = 30.0
# How many folders deep discovery looks for ``plugins/profile`` and named trace files.
MAX_DEPTH = 8
# The diagnosis lists at most this many skipped entries and other files (as LogDir's does).
MAX_SKIPPED = 50
MAX_OTHER_FILES = 20


@dataclasses.dataclass(frozen=True)
class RemoteHostFile(HostFile):
    """A listed object; ``path`` is its URL, ``local`` where its fetched copy lives."""

    version: str = ""
    local: str = ""
    # Event files listed in the same folder (a ProfilerHook timeline's graph, the model view).
    beside: tuple = ()

    def event_files_beside(self) -> list:
        """The names of ``beside``, sorted (listed with the folder: no request)."""
        return sorted(o.name for o in self.beside)

    def open_beside(self, name: str) -> IO[bytes]:
        """One of ``beside``, fetched once into the cache folder like the profile itself."""
        obj = next(o for o in self.beside if o.name == name)
        local = os.path.join(os.path.dirname(self.local), remote.cache_name(obj))
        return open(remote_fetch.fetch(obj, local), "rb")

    @property
    def key(self) -> tuple:
        return (self.path, self.size, self.version)

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def local_path(self) -> str:
        obj = remote.RemoteObject(self.path, self.size, self.version)
        return remote_fetch.fetch(obj, self.local)

    def open(self) -> IO[bytes]:
        try:
            return open(self.local_path(), "rb")
        except OSError:
            raise NotFound(f"The local copy of {self.path} vanished; reload the page.") from None

    def stream_source(self) -> tuple:
        """The object's URL and listed size, and an opener that reads its copy while it is
        downloaded (fetched before: the copy). A reader named by the URL, not by the copy."""
        return self.path, self.size, self._open_arriving

    def _open_arriving(self) -> IO[bytes]:
        obj = remote.RemoteObject(self.path, self.size, self.version)
        arriving = remote_fetch.open_arriving(obj, self.local)
        return cast(IO[bytes], arriving) if arriving is not None else self.open()

    def read(self, read: Callable[[IO[bytes]], Any]) -> Any:
        with self.open() as f:
            return read(f)

    def read_bytes(self) -> FileBytes:
        """Fetched now: the downloaded bytes themselves, as they arrive (the decoder walks
        them meanwhile; the copy is written from them, not read back); fetched before: the
        copy's."""
        obj = remote.RemoteObject(self.path, self.size, self.version)
        arrival = remote_fetch.fetch_arriving(obj, self.local)
        if arrival is not None:
            return FileBytes.arriving(arrival)
        return self.read(FileBytes)


class RemoteLogDir:
    """Discovery over one remote logdir, session folder or single file."""

    def __init__(self, url: str, cache_folder: Optional[str] = None, start_listing: bool = True):
        self.path = remote.shown(url).rstrip("/")
        self.root = self.path
        self._cache_folder = cache_folder
        self._lock = threading.Lock()
        self._runs: Optional[dict] = None
        self._notes = Diagnosis(logdir=self._name())  # what the last listing skipped, and why
        self._discovered_at = 0.0
        self._refreshing = False
        self._listing = threading.Lock()  # one listing of the whole logdir at a time
        self.requests = 0  # listings made
        if start_listing:
            # The store's client takes a moment to start (credentials, endpoint): do it and
            # the first listing now, so the page's first request finds them done.
            self._refresh_in_background()

    # --- discovery ---------------------------------------------------------
    def runs(self) -> list:
        return sorted(self._run_map(), reverse=True)

    def has_runs_cached(self) -> Optional[bool]:
        with self._lock:
            return None if self._runs is None else bool(self._runs)

    def probe_has_runs(self, budget_s: float = 0.0) -> Optional[bool]:
        """The cached answer; never waits on the network (starts a listing if there is none)."""
        known = self.has_runs_cached()
        if known is None:
            self._refresh_in_background()
        return known

    def refresh(self) -> None:
        with self._listing:
            self._store(*self._discover())

    def _run_map(self) -> dict:
        with self._lock:
            runs, age = self._runs, time.monotonic() - self._discovered_at
        if runs is None:
            with self._listing:  # a listing in flight (the first, started at once) is awaited
                with self._lock:
                    runs = self._runs
                if runs is None:
                    runs, notes = self._discover()
                    self._store(runs, notes)
            return runs
        if age > DISCOVERY_TTL_S:
            self._refresh_in_background()  # answer now from the last listing
        return runs

    def _refresh_in_background(self) -> None:
        with self._lock:
            if self._refreshing:
                return
            self._refreshing = True

        def run() -> None:
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - logged; the last listing stays
                logger.warning("listing %s failed", self.path, exc_info=False)
            finally:
                with self._lock:
                    self._refreshing = False

        threading.Thread(target=run, name="remote-discovery", daemon=True).start()

    def _store(self, runs: dict, notes: Diagnosis) -> None:
        with self._lock:
            self._runs = runs
            self._notes = notes
            self._discovered_at = time.monotonic()

    def _list(self, url: str) -> tuple:
        self.requests += 1
        return remote.list_folder(url)

    def _discover(self) -> tuple:
        """(run -> (folder URL, objects or None, event files), notes for ``diagnose``)."""
        notes = Diagnosis(logdir=self._name())
        single = remote.stat(self.path) if formats.single_file_name(self._name()) else None
        if single is not None:
            found = formats.single_file_name(single.name)
            parent = self.path.rsplit("/", 1)[0]
            if found is not None and formats.layout_of(found) == NAMED_FILES:
                return {found.session: (parent, [single], ())}, notes
            return {parent.rsplit("/", 1)[-1] or "session": (parent, [single], ())}, notes
        runs: dict = {}
        folders, objects = self._list(self.path)
        notes.exists = bool(folders or objects)  # a store has no empty folders
        if any(formats.match(o.name, SESSION_FOLDERS) for o in objects):
            return {self._name() or "session": (self.path, None, ())}, notes
        self._walk("", self.path, folders, objects, runs, 0, notes)
        return runs, notes

    def _name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def _walk(
        self, rel: str, url: str, folders: list, objects: list, runs: dict, depth: int,
        notes: Diagnosis,
    ) -> None:  # fmt: skip
        prefix = rel + "/" if rel else ""
        by_name = {o.name: o for o in objects}
        events = tuple(o for o in objects if o.name.startswith(EVENT_FILE_PREFIX))
        used: set = set()
        for session, files in formats.sessions_in(list(by_name)).items():
            runs.setdefault(prefix + session, (url, [by_name[name] for _, name in files], events))
            used.update(name for _, name in files)
            used.update(o.name for o in events)  # read beside the folder's timelines
        _note_objects(notes, prefix, [n for n in by_name if n not in used])
        for folder in folders:
            if folder.startswith("."):
                _skip(notes, f"{prefix}{folder}/: a hidden folder (its name starts with a dot)")
            elif depth >= MAX_DEPTH:
                _skip(notes, f"{prefix}{folder}/: more than {MAX_DEPTH} folders deep, not listed")
            elif folder == "plugins":
                self._walk_plugins(prefix, remote.join(url, folder), runs, notes)
            else:
                sub_url = remote.join(url, folder)
                sub_folders, sub_objects = self._list(sub_url)
                self._walk(
                    prefix + folder, sub_url, sub_folders, sub_objects, runs, depth + 1, notes
                )

    def _walk_plugins(self, prefix: str, url: str, runs: dict, notes: Diagnosis) -> None:
        """``<run>/plugins/``: only ``profile/`` is read, its sub-folders are sessions."""
        sub_folders, objects = self._list(url)
        for folder in sub_folders:
            if folder != "profile":
                _skip(notes, f"{prefix}plugins/{folder}/: another plugin's folder, not a profile")
        _note_objects(notes, prefix + "plugins/", [o.name for o in objects])
        if "profile" not in sub_folders:
            return
        sessions, objects = self._list(remote.join(url, "profile"))
        where = f"{prefix}plugins/profile/"
        for session in sessions:
            if session.startswith("."):
                _skip(notes, f"{where}{session}/: a hidden folder (an upload in progress?)")
            else:
                runs.setdefault(
                    prefix + session, (remote.join(url, "profile/" + session), None, ())
                )
        for o in objects:
            _skip(notes, f"{where}{o.name}: not inside a session folder, so not part of a session")

    # --- lookups -----------------------------------------------------------
    def session(self, run: str) -> Session:
        if not run:
            raise InvalidArgument("The 'run' parameter is required.")
        runs = self._run_map()
        if run not in runs:
            self.refresh()
            runs = self._run_map()
        if run not in runs:
            raise NotFound(f"Run {run!r} was not found in the log directory.")
        folder, objects, events = runs[run]
        if objects is None:  # a session folder: its hosts are listed now
            _, listed = self._list(folder)
            matched = [(formats.match(o.name, SESSION_FOLDERS), o) for o in listed]
            pairs = [(found.host, o) for found, o in matched if found is not None and found.host]
        else:
            pairs = [(self._host_of(o.name), o) for o in objects]
        files = [dataclasses.replace(self._host_file(h, o), beside=events) for h, o in pairs]
        if objects is not None and run.rsplit("/", 1)[-1] == formats.ALL_STEPS_SESSION:
            steps = sorted(files, key=lambda f: formats.host_order(f.host))
            return Session(run, folder, tuple(steps), all_steps=True)
        return Session(run=run, path=folder, host_files=tuple(sorted(files, key=lambda f: f.host)))

    @staticmethod
    def _host_of(name: str) -> str:
        found = formats.single_file_name(name)
        return found.host if found is not None and found.host else name

    def _host_file(self, host: str, obj: remote.RemoteObject) -> RemoteHostFile:
        folder = self._cache_folder or remote.scratch_folder()
        local = os.path.join(folder, remote.cache_name(obj))
        return RemoteHostFile(host, obj.url, obj.size, 0, "", 0, 0, obj.version, local)

    def diagnose(self) -> Diagnosis:
        """What the last listing found and skipped, and why: no request of its own (a listing
        is made only if none was). Session folders are not opened, so their files are not
        judged here."""
        runs = self._run_map()
        with self._lock:
            notes = self._notes
        return dataclasses.replace(
            notes, sessions=len(runs), skipped=list(notes.skipped),
            other_files=list(notes.other_files),
        )  # fmt: skip


def _skip(notes: Diagnosis, line: str) -> None:
    if len(notes.skipped) < MAX_SKIPPED:
        notes.skipped.append(line)


def _note_objects(notes: Diagnosis, prefix: str, names: list) -> None:
    """Objects of a listed folder that are no session's file: why each is skipped (a profile
    in the wrong place, a format that is not read) or, for anything else, an other file."""
    for name in sorted(names):
        if formats.match(name, SESSION_FOLDERS):
            reason = "not inside <run>/plugins/profile/<session>/, so it is not part of a session"
            _skip(notes, f"{prefix}{name}: {reason}")
        elif name.endswith(formats.NOT_READ_SUFFIXES) and not formats.match(name):
            _skip(notes, f"{prefix}{name}: this format is not read; an .xplane.pb is needed")
        elif len(notes.other_files) < MAX_OTHER_FILES:
            notes.other_files.append(prefix + name)


def open_logdir(path: str, disk: Any = None) -> Any:
    """``LogDir`` for a local path, ``RemoteLogDir`` for a gs://, s3:// or az:// URL, whose
    copies go into ``disk`` (a ``DiskCache``; a scratch folder when it is off)."""
    if not remote.is_remote(path):
        return LogDir(path)
    folder = disk.dir if disk is not None and disk._claim() else None
    return RemoteLogDir(path, folder)

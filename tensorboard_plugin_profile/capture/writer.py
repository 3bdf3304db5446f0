"""Write a captured session into the logdir atomically.

Files go into a hidden temporary directory inside ``<logdir>/plugins/profile/``
(same filesystem, so the final ``rename`` is atomic), and the whole directory is
renamed to ``<session_id>`` at the end. A reader never sees a half-written
session, and a failed capture leaves nothing behind.

Session ids are local time ``%Y_%m_%d_%H_%M_%S`` like every profiler writes, but
two captures in the same second get ``_1``, ``_2`` ... instead of sharing (and
mixing) one directory.

>>> writer = SessionWriter("/tmp/logs", allocate_session_id("/tmp/logs/plugins/profile"))
>>> writer.write("localhost_9999.xplane.pb", b"...")      # doctest: +SKIP
>>> writer.commit()                                       # doctest: +SKIP
'/tmp/logs/plugins/profile/2024_05_01_12_00_00'
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time

from tensorboard_plugin_profile.common.errors import ProfileError

TEMP_PREFIX = ".capture-"
_reserved_lock = threading.Lock()
# Ids handed out but not yet on disk, so concurrent captures in this process
# never pick the same one.
_reserved: set[str] = set()


class WriteFailed(ProfileError):
    """The session could not be written into the logdir (permissions, disk full)."""

    code = "INTERNAL"


def repository_root(logdir: str) -> str:
    return os.path.join(logdir, "plugins", "profile")


def is_local_logdir(logdir: str) -> bool:
    """False for ``gs://``-style logdirs, which only the profiler server can write to."""
    return "://" not in logdir


def allocate_session_id(root: str, now: float | None = None, base: str | None = None) -> str:
    """A fresh session id under ``root`` (``base``, default the local time, plus a suffix).

    Call ``release_session_id`` when the directory exists or the capture failed.
    """
    base = base or time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(now))
    with _reserved_lock:
        candidate, suffix = base, 0
        while candidate in _reserved or os.path.lexists(os.path.join(root, candidate)):
            suffix += 1
            candidate = f"{base}_{suffix}"
        _reserved.add(candidate)
    return candidate


def release_session_id(session_id: str) -> None:
    with _reserved_lock:
        _reserved.discard(session_id)


class SessionWriter:
    """Collects one session's files and moves them into place in ``commit``."""

    def __init__(self, logdir: str, session_id: str):
        self.root = repository_root(logdir)
        self.session_id = session_id
        self.session_dir = os.path.join(self.root, session_id)
        self._temp_dir: str | None = None
        self.files: list[str] = []

    def write(self, file_name: str, data: bytes) -> None:
        self._check_name(file_name)
        try:
            temp_dir = self._ensure_temp_dir()
            with open(os.path.join(temp_dir, file_name), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            self.discard()
            raise _write_failed(e) from e
        self.files.append(file_name)

    def move_in(self, file_name: str, source: str) -> None:
        """Moves the file at ``source`` in as ``file_name`` (a rename on the same filesystem)."""
        self._check_name(file_name)
        try:
            target = os.path.join(self._ensure_temp_dir(), file_name)
            shutil.move(source, target)
            with open(target, "rb") as f:
                os.fsync(f.fileno())
        except OSError as e:
            self.discard()
            raise _write_failed(e) from e
        self.files.append(file_name)

    def _check_name(self, file_name: str) -> None:
        plain = not any(c in file_name for c in (os.sep, "/", "\0"))
        if not plain or file_name[:1] in ("", "."):
            self.discard()
            raise ValueError(f"not a plain file name: {file_name!r}")

    def commit(self, merge_existing: bool = False) -> str:
        """Moves the written files into place; returns the session directory.

        ``merge_existing``: a server that ignored ``emit_xspace`` wrote into this
        session id itself, so an existing directory is ours to join. Otherwise an
        existing directory belongs to someone else (another process picked the
        same second) and we move to the next free id instead.
        """
        if self._temp_dir is None:
            return self.session_dir
        try:
            self._move_into_place(merge_existing)
        except OSError as e:
            self.discard()
            raise _write_failed(e) from e
        self._temp_dir = None
        return self.session_dir

    def discard(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def _ensure_temp_dir(self) -> str:
        if self._temp_dir is None:
            os.makedirs(self.root, exist_ok=True)
            # Not tempfile.mkdtemp: its 0700 mode would survive the rename and hide
            # the session from a TensorBoard running as another user.
            while self._temp_dir is None:
                name = f"{TEMP_PREFIX}{self.session_id}-{secrets.token_hex(4)}"
                try:
                    os.mkdir(os.path.join(self.root, name))
                    self._temp_dir = os.path.join(self.root, name)
                except FileExistsError:
                    continue
        return self._temp_dir

    def _move_into_place(self, merge_existing: bool) -> None:
        assert self._temp_dir is not None
        try:
            os.rename(self._temp_dir, self.session_dir)  # atomic; fails if it exists non-empty
            return
        except OSError:
            if not os.path.isdir(self.session_dir):
                raise
        if merge_existing:
            for name in self.files:  # one atomic rename per file
                os.replace(os.path.join(self._temp_dir, name), os.path.join(self.session_dir, name))
            os.rmdir(self._temp_dir)
            return
        taken = self.session_id
        self.session_id = allocate_session_id(self.root, base=taken)
        try:
            self.session_dir = os.path.join(self.root, self.session_id)
            os.rename(self._temp_dir, self.session_dir)
        finally:
            release_session_id(self.session_id)


def _write_failed(error: OSError) -> WriteFailed:
    reason = error.strerror or type(error).__name__
    # The reply goes to the page: name the folder by its place in the logdir, not by its path.
    return WriteFailed(
        f"Could not write the captured profile into <logdir>/plugins/profile: {reason}."
    )

"""A cache directory that survives restarts: tool results and decoded profiles.

Each entry is one file, ``<root>/v<FORMAT>/<kind>-<sha256 of key>.bin``, in the format
of ``cache_entry``: a checksum over the whole entry, the full key (a reader checks it,
so a hash collision or an entry of another version is a miss), and the payload's
arrays, read into memory (never mapped) from regular files only. Keys name a profile
by its identity and content (``logdir.HostFile.key``) and the code that produced the
value (``code_fingerprint``), so a changed profile or an upgraded plugin never reads
an old entry. Writes go to a temporary file that is renamed into place, so readers see
a whole entry or none, and two servers can share one directory without locks.
Anything that does not verify or does not rebuild is a miss: logged once, recomputed
and overwritten, never served; nothing is unpickled (see ``frames_codec``).

The directory is kept under ``max_bytes`` by deleting the least recently used
entries (by mtime, refreshed on every hit). Only a directory that is ours is
written to or deleted from, and only files named as the cache names them
(``cache_dir``: the marker file, adopting an unmarked old cache).

Usage::

    disk = DiskCache(default_cache_dir())
    disk.store_value(("space", ...), space)
    space = disk.load_value(("space", ...))        # None when absent or invalid
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from typing import Any, Optional

import numpy as np

from . import cache_dir, cache_entry, frames_codec
from .cache_entry import FORMAT_VERSION

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 10 << 30
# Entries that failed to verify, logged once each (bounded: a stream of them cannot grow it).
_MAX_BAD_LOGGED = 1024
_STALE_TEMP_S = 3600.0
# A background store waits until no request has been computing for this long (the next
# request of a page usually follows its previous answer within milliseconds), but never
# longer than the second figure in all.
_QUIET_S = 0.5
_MAX_DELAY_S = 10.0


def default_cache_dir() -> str:
    """``$TBPROF_CACHE_DIR``, else tensorboard-plugin-profile in ``$XDG_CACHE_HOME`` or ~/.cache."""
    explicit = os.environ.get("TBPROF_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "tensorboard-plugin-profile")


@functools.cache
def code_fingerprint(parts: tuple = ()) -> str:
    """A hash of this package's code (or some of its files and folders) and pandas/numpy versions.

    Part of every key, so an upgrade (or a local edit) never reads entries of other code.
    """
    import pandas as pd

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256(f"{FORMAT_VERSION} {pd.__version__} {np.__version__}".encode())
    for part in parts or ("",):
        for path in _code_files(os.path.join(package_dir, part)):
            with open(path, "rb") as f:
                digest.update(os.path.relpath(path, package_dir).encode() + b"\0" + f.read())
    return digest.hexdigest()[:16]


def _code_files(root: str) -> list:
    if os.path.isfile(root):
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("static", "__pycache__")]
        found += [os.path.join(dirpath, n) for n in filenames if n.endswith((".py", ".so", ".pyd"))]
    return sorted(found)


class DiskCache:
    def __init__(self, root: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = os.path.abspath(root)
        self.dir = os.path.join(self.root, f"v{FORMAT_VERSION}")
        self.max_bytes = max_bytes
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="disk-cache")
        self._warned = False
        self._quiet = threading.Condition()
        self._busy = 0  # requests computing now (``busy``)
        self._last_busy = 0.0  # when the last of them ended (time.monotonic)
        self._hurry = False  # ``flush``, or the interpreter exiting: store now
        self._claimed: Optional[bool] = None  # is the root ours (``cache_dir.claim``)
        self._bad_logged: set = set()  # entries that did not verify, already logged
        _hurry_at_exit(self)

    def usable(self) -> bool:
        """False (with a warning) when the root is a directory the cache did not make."""
        if cache_dir.state(self.root) != cache_dir.FOREIGN:
            return True
        logger.warning("%s", cache_dir.not_a_cache_message(self.root, "the disk cache stays off"))
        return False

    # --- entries -----------------------------------------------------------
    def path_of(self, kind: str, key: Any) -> str:
        digest = hashlib.sha256(_key_json(key).encode()).hexdigest()[:40]
        name = f"{kind}-{digest}.bin"
        if not cache_dir.is_entry_name(name):  # clear() deletes exactly these names
            raise ValueError(f"cache entry kinds are lower-case words, got {kind!r}")
        return os.path.join(self.dir, name)

    def store_bytes(self, kind: str, key: Any, data: bytes, meta: Optional[dict] = None) -> bool:
        array = np.frombuffer(data, dtype=np.uint8)
        return self._write(kind, key, {"meta": meta or {}, "tree": {"$a": 0}}, [array])

    def load_bytes(self, kind: str, key: Any) -> Optional[tuple]:
        """(meta, bytes) of a stored entry, or None."""
        entry = self._read(kind, key)
        if entry is None:
            return None
        header, arrays = entry
        if header["tree"] != {"$a": 0} or len(arrays) != 1 or arrays[0].dtype != np.uint8:
            self._drop(kind, key, "not a stored answer")
            return None
        return header["meta"], arrays[0].tobytes()

    def store_value(self, kind: str, key: Any, value: Any) -> bool:
        try:
            tree, arrays = frames_codec.encode(value)
        except frames_codec.Unsupported as e:
            logger.info("not caching %s on disk: %s", kind, e)
            return False
        return self._write(kind, key, {"meta": {}, "tree": tree}, arrays)

    def store_value_later(self, kind: str, key: Any, value: Any) -> None:
        """Stores in a background thread, once requests have stopped computing for a moment:
        a user waits for those answers, not for this entry (which serves the next start)."""
        self._writer.submit(self._store_when_quiet, kind, key, value)

    @contextlib.contextmanager
    def busy(self) -> Any:
        """Marks a request computing (background stores wait until none has been for a while)."""
        with self._quiet:
            self._busy += 1
        try:
            yield
        finally:
            with self._quiet:
                self._busy -= 1
                self._last_busy = time.monotonic()
                self._quiet.notify_all()

    def _store_when_quiet(self, kind: str, key: Any, value: Any) -> bool:
        give_up = time.monotonic() + _MAX_DELAY_S
        with self._quiet:
            while not self._hurry:
                now = time.monotonic()
                quiet_at = give_up if self._busy else self._last_busy + _QUIET_S
                if now >= min(quiet_at, give_up):
                    break
                self._quiet.wait(min(quiet_at, give_up) - now)  # or until ``busy`` ends
        return self.store_value(kind, key, value)

    def load_value(self, kind: str, key: Any) -> Any:
        entry = self._read(kind, key)
        if entry is None:
            return None
        header, arrays = entry
        try:
            return frames_codec.decode(header["tree"], arrays, self.max_bytes)
        except Exception as e:  # noqa: BLE001 - any tree that does not rebuild is a miss
            # The checksum rules out damage; what is left is a tree of other code (Stale)
            # or one written by hand: too deep (RecursionError), the wrong types, ...
            self._drop(kind, key, f"{type(e).__name__}: {e}")
            return None

    def flush(self) -> None:
        """Writes background stores now and waits for them (the CLI calls this before exiting)."""
        self._set_hurry(True)
        try:
            self._writer.submit(lambda: None).result()
        finally:
            self._set_hurry(False)

    def _set_hurry(self, hurry: bool) -> None:
        with self._quiet:
            self._hurry = hurry
            self._quiet.notify_all()

    # --- maintenance -------------------------------------------------------
    def usage(self) -> tuple:
        """(entries, bytes) of this format; ``InvalidArgument`` if the root is not a cache."""
        cache_dir.require_ours(self.root, "nothing was counted")
        entries = self._entries()
        return len(entries), sum(size for _, size, _ in entries)

    def clear(self) -> int:
        """Deletes the entries of every format version; returns how many.

        Only files named as the cache names them, inside ``v<N>/`` of a root that is
        ours; raises ``InvalidArgument`` (and deletes nothing) for any other directory.
        """
        if cache_dir.require_ours(self.root, "nothing was deleted") == cache_dir.MISSING:
            return 0
        removed = 0
        for folder in cache_dir.version_dirs(self.root):
            for entry in os.scandir(folder):
                if cache_dir.is_entry_name(entry.name):
                    removed += _remove(entry.path)
                elif cache_dir.is_temp_name(entry.name):
                    _remove(entry.path)
        return removed

    def prune(self) -> None:
        """Deletes least recently used entries until under ``max_bytes`` (keeps the newest)."""
        if not self._claim():
            return
        entries = sorted(self._entries(), key=lambda e: e[2])
        total = sum(size for _, size, _ in entries)
        for path, size, _ in entries[:-1]:
            if total <= self.max_bytes:
                break
            total -= size if _remove(path) else 0

    def _entries(self) -> list:
        try:
            scan = list(os.scandir(self.dir))
        except OSError:
            return []
        entries = []
        now = time.time()
        for entry in scan:
            try:
                st = entry.stat()
            except OSError:
                continue
            if cache_dir.is_temp_name(entry.name):
                if now - st.st_mtime > _STALE_TEMP_S:  # left by a killed writer
                    _remove(entry.path)
            elif cache_dir.is_entry_name(entry.name):
                entries.append((entry.path, st.st_size, st.st_mtime))
        return entries

    def _claim(self) -> bool:
        """Whether the root is ours, making it so when it is new or an unmarked old cache."""
        if self._claimed is None:
            try:
                self._claimed = cache_dir.claim(self.root, FORMAT_VERSION)
                problem = cache_dir.not_a_cache_message(self.root, "nothing is written there")
            except OSError as e:
                self._claimed, problem = False, f"cannot write the disk cache in {self.root}: {e}"
            if not self._claimed and not self._warned:
                logger.warning("%s", problem)
                self._warned = True
        return self._claimed

    # --- the file format ---------------------------------------------------
    def _write(self, kind: str, key: Any, header: dict, arrays: list) -> bool:
        layout, offset = cache_entry.layout_of(arrays)
        header = dict(header, format=FORMAT_VERSION, key=_key_json(key), arrays=layout)
        header["payload_bytes"] = offset
        path = self.path_of(kind, key)
        if offset > self.max_bytes:  # it would evict all others, and readers refuse it
            logger.info("not caching %s on disk: %d bytes, over the cap", kind, offset)
            return False
        if not self._claim():
            return False
        try:
            os.makedirs(self.dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.dir)
            try:
                with os.fdopen(fd, "wb") as f:
                    written = cache_entry.write(f, header, arrays)
                if written > self.max_bytes:  # the header tipped it over
                    logger.info("not caching %s on disk: %d bytes, over the cap", kind, written)
                    _remove(tmp)
                    return False
                os.replace(tmp, path)
            except BaseException:
                _remove(tmp)
                raise
        except OSError as e:
            if not self._warned:
                logger.warning("cannot write the disk cache in %s: %s", self.dir, e)
                self._warned = True
            return False
        self._bad_logged.discard(path)
        self.prune()
        return True

    def _read(self, kind: str, key: Any) -> Optional[tuple]:
        """(header, arrays) of a verified entry, or None (absent, or dropped and logged)."""
        path = self.path_of(kind, key)
        try:
            header, arrays = cache_entry.read(path, self.max_bytes)
        except FileNotFoundError:
            return None
        except Exception as e:  # noqa: BLE001 - bytes on disk are input: a failure is a miss
            self._drop(kind, key, f"{type(e).__name__}: {e}")
            return None
        if header["key"] != _key_json(key):
            return None  # another key with the same hash, or another version
        try:
            os.utime(path)  # the LRU clock
        except OSError:
            pass
        return header, arrays

    def _drop(self, kind: str, key: Any, reason: str) -> None:
        """An entry that did not verify: not used (the caller recomputes and overwrites
        it); logged once per entry."""
        path = self.path_of(kind, key)
        if path in self._bad_logged:
            return
        if len(self._bad_logged) >= _MAX_BAD_LOGGED:
            self._bad_logged.clear()
        self._bad_logged.add(path)
        logger.warning("ignoring disk cache entry %s, it will be recomputed: %s", path, reason)


# Caches whose held-back stores are written at once when the interpreter exits (Ctrl-C on a
# server): before the executors' exit hook joins their writer threads, not 10 s later.
_OPEN_CACHES: Any = None


def _hurry_at_exit(disk: DiskCache) -> None:
    global _OPEN_CACHES
    register = getattr(threading, "_register_atexit", None)  # runs before threads are joined
    if _OPEN_CACHES is None and register is not None:
        import weakref

        _OPEN_CACHES = weakref.WeakSet()
        register(_hurry_all)  # after the executor's own hook is registered: runs before it
    if _OPEN_CACHES is not None:
        _OPEN_CACHES.add(disk)


def _hurry_all() -> None:
    for disk in list(_OPEN_CACHES or ()):
        disk._set_hurry(True)


def _key_json(key: Any) -> str:
    return json.dumps(key, separators=(",", ":"), sort_keys=True, default=str)


def _remove(path: str) -> int:
    try:
        os.remove(path)
        return 1
    except OSError:
        return 0

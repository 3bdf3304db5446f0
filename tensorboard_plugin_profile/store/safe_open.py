"""Opening files of a log directory without ever reading outside it.

Discovery (``logdir.py``) lists only files whose real path is inside the logdir, but a file
may be swapped for a link between listing and reading. So a read opens first and checks
what it opened: the real path *now* must be inside the logdir and be the very file that
was opened (device and inode). Opens are non-blocking and take regular files only, so a
FIFO or a device cannot stall a request; every failure is a typed error (docs/security.md).

What identifies a host file's content for the caches is read here too (``identity_of``):
its inode and ctime as opened, and a hash of its first and last 64 KiB.

Usage::

    data = read_host_file(host_file)            # a listed ``logdir.HostFile``
    with open_inside(root_real, path) as f: ...
    inode, ctime_ns, fingerprint = identity_of(host_file)
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from typing import IO, Any, Callable

from ..common.errors import NotFound, PermissionDenied


def inside(root_real: str, path: str) -> bool:
    """Whether ``path`` resolves to somewhere inside ``root_real`` (a real path)."""
    try:
        real = os.path.realpath(path)
    except OSError:  # the path changed while it was resolved (a link swapped for a file)
        return False
    return _within(root_real, real)


def _within(root_real: str, real: str) -> bool:
    return real == root_real or real.startswith(root_real + os.sep)


def open_inside(root_real: str, path: str) -> IO[bytes]:
    """The regular file at ``path``, opened, if what was opened is inside ``root_real``.

    The file is opened first, then checked: the real path of ``path`` *now* must be
    inside the root and be the very file that was opened (same device and inode). A
    link swapped in before the open fails the first test, one swapped back after it
    the second. Non-blocking open: a FIFO or device cannot stall the request. The
    caller closes the file.
    """
    name = os.path.basename(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise _read_error(name, e) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or not _is_listed_file(root_real, path, opened):
            raise NotFound(f"Profile file {name} changed while it was opened; reload the page.")
        return os.fdopen(fd, "rb")
    except OSError as e:
        os.close(fd)
        raise _read_error(name, e) from None
    except BaseException:
        os.close(fd)
        raise


def read_inside(root_real: str, path: str) -> bytes:
    """The bytes of the regular file at ``path`` (checked as ``open_inside`` does)."""
    with open_inside(root_real, path) as f:
        try:
            return f.read()
        except OSError as e:
            raise _read_error(os.path.basename(path), e) from None


def _read_bytes(f: IO[bytes]) -> bytes:
    return f.read()


def open_host_file(host_file: Any) -> IO[bytes]:
    """A listed host file, opened; never anything outside its logdir."""
    if not host_file.logdir_real:
        raise NotFound(f"Profile file {host_file.name} was not listed from a log directory.")
    return open_inside(host_file.logdir_real, host_file.path)


def read_host_file(host_file: Any, read: Callable[[IO[bytes]], Any] = _read_bytes) -> Any:
    """The bytes of a listed host file, never anything outside its logdir; ``read`` takes
    them from the open file (``xspace.filebytes.FileBytes`` reads them into memory the
    decoder frees)."""
    with open_host_file(host_file) as f:
        try:
            return read(f)
        except OSError as e:
            raise _read_error(host_file.name, e) from None


def _is_listed_file(root_real: str, path: str, opened: os.stat_result) -> bool:
    try:
        real = os.path.realpath(path)
        now = os.stat(real)
    except OSError:  # changed again while being resolved: not provably the same file
        return False
    same = (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)
    return same and _within(root_real, real)


def _read_error(name: str, error: OSError) -> Exception:
    if isinstance(error, FileNotFoundError):
        return NotFound(f"Profile file {name} does not exist (any more); reload the page.")
    if isinstance(error, PermissionError):
        return PermissionDenied(f"Profile file {name} cannot be read: permission denied.")
    return NotFound(f"Profile file {name} cannot be read: {error.strerror or 'I/O error'}.")


# What fingerprinting read, per listed (path, size, mtime, inode, ctime); bounded.
_IDENTITIES: dict = {}
_IDENTITIES_LOCK = threading.Lock()
_MAX_IDENTITIES = 4096
FINGERPRINT_BYTES = 64 << 10  # read at each end of a file


def identity_of(host_file: Any) -> tuple:
    """(inode, ctime_ns, content fingerprint) of a listed host file as opened now, for
    ``HostFile.key``; read once per listed (path, size, mtime, inode, ctime)."""
    f = host_file
    listed = (f.path, f.size, f.mtime_ns, f.inode, f.ctime_ns)
    with _IDENTITIES_LOCK:
        known = _IDENTITIES.get(listed)
    if known is not None:
        return known

    def identify(opened: IO[bytes]) -> tuple:
        st = os.fstat(opened.fileno())
        if (st.st_size, st.st_mtime_ns) != (host_file.size, host_file.mtime_ns):
            raise NotFound(
                f"Profile file {host_file.name} changed while it was opened; reload the page."
            )
        return (st.st_ino, st.st_ctime_ns, content_fingerprint(opened, st.st_size))

    found = read_host_file(host_file, identify)  # checked open: never outside the logdir
    with _IDENTITIES_LOCK:
        if len(_IDENTITIES) >= _MAX_IDENTITIES:
            del _IDENTITIES[next(iter(_IDENTITIES))]  # the oldest
        _IDENTITIES[listed] = found
    return found


def content_fingerprint(f: IO[bytes], size: int) -> str:
    """A hash of a file's size and its first and last ``FINGERPRINT_BYTES``: cheap (two
    reads, whatever the size) and different for another file of the same size and
    times, unless the two differ only in the middle."""
    digest = hashlib.blake2b(str(size).encode(), digest_size=16)
    f.seek(0)
    digest.update(f.read(min(size, FINGERPRINT_BYTES)))
    tail = max(FINGERPRINT_BYTES, size - FINGERPRINT_BYTES)
    if tail < size:
        f.seek(tail)
        digest.update(f.read(size - tail))
    return digest.hexdigest()


def forget_fingerprints() -> None:
    """Forgets what was fingerprinted, as a restarted process would (tests)."""
    with _IDENTITIES_LOCK:
        _IDENTITIES.clear()

"""Opening files of a log directory without ever reading outside it.

Discovery (``logdir.py``) lists only files whose real path is inside the logdir, but a file
may be swapped for a link between listing and reading. So a read opens first and checks
what it opened: the real path *now* must be inside the logdir and be the very file that
was opened (device and inode). Opens are non-blocking and take regular files only, so a
FIFO or a device cannot stall a request; every failure is a typed error (docs/security.md).

Usage::

    data = read_host_file(host_file)            # a listed ``logdir.HostFile``
    with open_inside(root_real, path) as f: ...
"""

from __future__ import annotations

import os
import stat
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

"""One session as one file: a ``.zip`` of its profile files, to save or send elsewhere.

The zip holds the session's host files (``<host>.xplane.pb``, PyTorch or timeline traces)
under ``<session>/``, so unpacking it into ``<logdir>/plugins/profile/`` (or pointing
``tbprof serve --logdir`` at the unpacked folder) opens the same session again.

Only files discovery listed are read, each through ``HostFile.open`` (never outside the
logdir, symlinks included: ``safe_open.py``). The export is bounded: the files together
may hold at most ``max_bytes`` (``TBPROF_EXPORT_MAX_BYTES``, default 2 GiB), checked from
their listed sizes before anything is read, and the zip is built in a temporary file
(memory up to ``SPOOL_BYTES``), then streamed in chunks.

Usage::

    name, chunks = export_session(logdir.session(run))
    with open(name, "wb") as out:
        out.writelines(chunks)
"""

from __future__ import annotations

import os
import re
import tempfile
import zipfile
from typing import IO, Iterator, Optional

from ..common.errors import InvalidArgument, ProfileTooLarge

DEFAULT_MAX_BYTES = 2 << 30
SPOOL_BYTES = 16 << 20
CHUNK_BYTES = 1 << 20
ENV_MAX_BYTES = "TBPROF_EXPORT_MAX_BYTES"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


def max_export_bytes() -> int:
    text = os.environ.get(ENV_MAX_BYTES, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    if not text.isdigit() or int(text) <= 0:
        raise InvalidArgument(f"{ENV_MAX_BYTES} must be a positive number of bytes, got {text!r}.")
    return int(text)


def export_name(run: str) -> str:
    """The download's file name: the run name with every unsafe character as ``_``."""
    return (_UNSAFE.sub("_", run).strip("._") or "session")[:120] + ".zip"


def export_session(session, max_bytes: Optional[int] = None) -> tuple:
    """(file name, iterator of zip bytes) of one ``logdir.Session``."""
    limit = max_export_bytes() if max_bytes is None else max_bytes
    total = sum(f.size for f in session.host_files)
    if total > limit:
        raise ProfileTooLarge(
            f"Session {session.run!r} holds {total / 1e6:.0f} MB of profile files, above the "
            f"export limit of {limit / 1e6:.0f} MB; {ENV_MAX_BYTES} raises it, or copy the "
            "session folder itself."
        )
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    try:
        _write_zip(session, spool, limit)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return export_name(session.run), _chunks(spool)


def _write_zip(session, out: IO[bytes], limit: int) -> None:
    folder = session.run.rsplit("/", 1)[-1] or "session"
    left = limit  # a file that grew since it was listed still cannot pass the limit
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for host_file in session.host_files:
            entry = f"{folder}/{host_file.name}"
            big = host_file.size >= 1 << 31
            with host_file.open() as source, archive.open(entry, "w", force_zip64=big) as dest:
                while chunk := source.read(min(CHUNK_BYTES, left + 1)):
                    left -= len(chunk)
                    if left < 0:
                        raise ProfileTooLarge(
                            f"Session {session.run!r} grew past the export limit of "
                            f"{limit / 1e6:.0f} MB while it was being exported; "
                            f"{ENV_MAX_BYTES} raises it."
                        )
                    dest.write(chunk)


def _chunks(spool: IO[bytes]) -> Iterator[bytes]:
    try:
        while chunk := spool.read(CHUNK_BYTES):
            yield chunk
    finally:
        spool.close()

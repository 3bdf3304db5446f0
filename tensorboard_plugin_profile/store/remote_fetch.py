"""Fetching an object of a remote logdir into the disk cache, once (docs/remote_logdirs.md).

A profile is fetched once, keyed by URL, size and ETag/generation (``remote.cache_name``),
under a temporary name that is renamed only once its size is checked; large objects come in
ranged parts, in order, a few at a time (on S3 each part's body is read as it streams in).
An XSpace can be decoded while it arrives (``fetch_arriving``): the parts land in memory the
decoder walks as the prefix grows, and its result counts only once the copy is complete
under its final name, so nothing half-downloaded is ever decoded or kept. A Chrome trace is
read from the copy while it is written (``open_arriving``), with the same guarantee: its end
of file comes only once the copy is complete. Failures are
``remote.error_for``'s typed errors naming the URL.

Usage::

    local = fetch(obj, os.path.join(cache_folder, cache_name(obj)))  # same bytes, local
    arrival = fetch_arriving(obj, local)                              # or as they come
    f = open_arriving(obj, local)            # or the copy, read as it is written
"""

from __future__ import annotations

import concurrent.futures
import io
import logging
import os
import tempfile
import threading
from typing import Any, Optional

from ..common.errors import Unavailable
from ..xspace.filebytes import Arrival
from .remote import RemoteObject, _split, error_for, filesystem, shown

logger = logging.getLogger(__name__)

# Objects come in about PARTS ranged parts, in order, PARALLEL_PARTS at a time, each of
# MIN_PART_BYTES..MAX_PART_BYTES (``part_bytes``): few requests, since each costs a round trip
# (and more: see docs/remote_logdirs.md, "Download once"), yet a bounded size per part, and
# progress at every part. Few in flight, since the decoder walks the bytes in order as they
# come: what counts is how soon the front part arrives. Real stores advise parts of 8-16 MB
# and more.
MIN_PART_BYTES = 8 << 20
MAX_PART_BYTES = 64 << 20
PARTS = 4
PARALLEL_PARTS = 2
# An S3 part's body is read and written in pieces of at most this size as it streams in.
STREAM_PIECE_BYTES = 1 << 20

_FETCH_LOCKS: dict = {}
_FETCH_LOCKS_LOCK = threading.Lock()


def fetch(obj: RemoteObject, local: str) -> str:
    """``local``, holding the object's bytes: downloaded unless a complete copy is there."""
    with _lock_for(local):  # two requests for one object download it once
        if not _complete(local, obj.size):
            _download(obj, local, None)
    return local


def fetch_arriving(obj: RemoteObject, local: str) -> Optional[Arrival]:
    """The object's bytes as they arrive (an ``Arrival``, for a decoder that walks them
    meanwhile: ``FileBytes.arriving``), downloaded in the background into memory and into
    ``local``; None if a complete copy is there already (read it), or the object is empty.

    The arrival ends with all bytes only once the copy is complete under its final name,
    else with the download's typed error (and no copy, no temporary file). The download
    holds the object's lock until it ends: ``fetch`` of the same object waits for it."""
    started = _start_arriving(obj, local, into_memory=True)
    return started[0] if started is not None else None


def open_arriving(obj: RemoteObject, local: str) -> Optional[ArrivingFile]:
    """The object's copy as a file read while the download writes it (``ArrivingFile``),
    for a reader that streams it from its start (a Chrome trace); None if a complete copy is
    there already (open it), or the object is empty. Nothing is held in memory beyond what
    the reader reads: the bytes go to the copy only."""
    started = _start_arriving(obj, local, into_memory=False)
    if started is None:
        return None
    arrival, fd = started
    return ArrivingFile(arrival, fd)


def _start_arriving(obj: RemoteObject, local: str, into_memory: bool) -> Optional[tuple]:
    """(arrival, a file descriptor of the copy being written, or -1 for an arrival into
    memory) with the download started in the background, holding the object's lock until
    it ends; None when there is nothing to download (a complete copy, or an empty object,
    fetched now)."""
    if obj.size <= 0:
        fetch(obj, local)
        return None
    lock = _lock_for(local)
    lock.acquire()
    opened: Optional[tuple] = None
    reader_fd = -1
    try:
        if _complete(local, obj.size):
            lock.release()
            return None
        arrival = Arrival(obj.size, in_memory=into_memory)
        opened = _temporary(local)
        if not into_memory:
            reader_fd = os.dup(opened[0])
        thread = threading.Thread(
            target=_download_arriving, args=(obj, local, arrival, lock, opened), daemon=True
        )
        thread.start()
    except BaseException:
        if reader_fd >= 0:
            os.close(reader_fd)
        if opened is not None:
            os.close(opened[0])
            os.remove(opened[1])
        lock.release()
        raise
    return arrival, reader_fd


class ArrivingFile(io.RawIOBase):
    """A download's copy, read while it is written: a read waits until its bytes are in
    place, the end of the file comes only once the copy is complete under its final name,
    and a download that fails raises its typed error (naming the URL) in the read waiting
    for bytes that will not come, so no reader ever parses a cut-off file as if whole."""

    def __init__(self, arrival: Arrival, fd: int) -> None:
        super().__init__()
        self._arrival = arrival
        self._file = io.FileIO(fd, "rb", closefd=True)
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self._arrival.size - self._at)
        if want <= 0:
            self._arrival.finish()  # the end counts once the copy is whole
            return 0
        self._arrival.wait_for(self._at + want)
        self._file.seek(self._at)
        got = self._file.readinto(memoryview(buffer)[:want]) or 0
        self._at += got
        return got

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._arrival.size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._at = base + offset
        return self._at

    def tell(self) -> int:
        return self._at

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def _lock_for(local: str) -> threading.Lock:
    with _FETCH_LOCKS_LOCK:
        return _FETCH_LOCKS.setdefault(local, threading.Lock())


def _complete(local: str, size: int) -> bool:
    try:
        return os.path.getsize(local) == size
    except OSError:
        return False


def _download_arriving(
    obj: RemoteObject, local: str, arrival: Arrival, lock, opened: tuple
) -> None:
    try:
        _download(obj, local, arrival, opened)
    except BaseException as e:  # noqa: BLE001 - the reader gets it, typed
        arrival.end(error_for(obj.url, e))
    else:
        arrival.end()  # the copy has its final name: now the last byte counts
    finally:
        lock.release()


def _temporary(local: str) -> tuple:
    """(file descriptor, path) of a new temporary file beside ``local``'s final name."""
    folder = os.path.dirname(local)
    os.makedirs(folder, exist_ok=True)
    return tempfile.mkstemp(prefix=".tmp-", dir=folder)


def _download(
    obj: RemoteObject, local: str, arrival: Optional[Arrival], opened: Optional[tuple] = None
) -> None:
    """Into ``opened`` (``_temporary(local)``, made now if not given), then renamed ``local``."""
    fd, temp = opened if opened is not None else _temporary(local)
    try:
        _fetch_into(fd, obj, arrival)
        if os.fstat(fd).st_size != obj.size:
            raise Unavailable(f"{shown(obj.url)} changed while it was downloaded; reload the page.")
        os.close(fd)
        fd = -1
        os.replace(temp, local)  # only a complete copy ever has the final name
    finally:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(temp):
            os.remove(temp)


def part_bytes(size: int) -> int:
    """The part size for an object of ``size`` bytes: ``size / PARTS`` rounded up, within
    ``MIN_PART_BYTES``..``MAX_PART_BYTES``."""
    return max(MIN_PART_BYTES, min(MAX_PART_BYTES, -(-size // PARTS)))


class _Parts:
    """The parts of one download: where each piece goes (the copy, and the arrival's
    memory), and the prefix of the object that is complete, published to the arrival (all
    but the last byte: that one counts once the copy has its final name)."""

    def __init__(self, fd: int, obj: RemoteObject, arrival: Optional[Arrival]) -> None:
        step = part_bytes(obj.size)
        self.ranges = [(start, min(start + step, obj.size)) for start in range(0, obj.size, step)]
        self.fd, self.obj, self.arrival = fd, obj, arrival
        self.memory = arrival.memory if arrival is not None else None
        self.received = [0] * len(self.ranges)
        self.front = 0  # the first part not complete yet
        self.failed = False
        self._lock = threading.Lock()

    def put(self, part: int, at: int, data: bytes) -> None:
        end = at + len(data)
        if self.memory is not None:
            self.memory[at:end] = data
            data = self.memory[at:end]  # type: ignore[assignment]
        view = memoryview(data)
        while len(view):
            view = view[os.pwrite(self.fd, view, end - len(view)) :]
        with self._lock:
            self.received[part] += end - at
            while self.front < len(self.ranges) and self._done(self.front):
                self.front += 1
                if len(self.ranges) > 1:
                    logger.info(
                        "fetching %s: %d of %d MB",
                        shown(self.obj.url), self.prefix() >> 20, self.obj.size >> 20,
                    )  # fmt: skip
            if self.arrival is not None:
                self.arrival.arrived(min(self.prefix(), self.obj.size - 1))

    def _done(self, part: int) -> bool:
        start, end = self.ranges[part]
        return self.received[part] == end - start

    def prefix(self) -> int:
        if self.front == len(self.ranges):
            return self.obj.size
        return self.ranges[self.front][0] + self.received[self.front]


def _fetch_into(fd: int, obj: RemoteObject, arrival: Optional[Arrival]) -> None:
    """The object's parts written into ``fd`` (and the arrival's memory) at their offsets."""
    fs = filesystem(obj.url)
    _, path = _split(obj.url)
    parts = _Parts(fd, obj, arrival)
    streamed = hasattr(fs, "_call_s3")  # s3fs: a part's body is read as it comes

    def get(part: int) -> None:
        if parts.failed:  # another part failed: the download stops
            return
        start, end = parts.ranges[part]
        try:
            if streamed:
                got = _stream_s3_part(fs, path, obj, part, parts)
            else:
                data = fs.cat_file(path, start=start, end=end)
                got = len(data)
                if got == end - start:
                    parts.put(part, start, data)
            if got != end - start and not parts.failed:
                raise Unavailable(
                    f"{shown(obj.url)} changed while it was downloaded; reload the page."
                )
        except BaseException as e:
            parts.failed = True
            raise error_for(obj.url, e) from None

    if len(parts.ranges) <= 1:
        if parts.ranges:
            get(0)
        return
    with concurrent.futures.ThreadPoolExecutor(PARALLEL_PARTS) as pool:
        futures = [pool.submit(get, part) for part in range(len(parts.ranges))]  # in order
        for future in futures:
            future.result()


def _stream_s3_part(fs: Any, path: str, obj: RemoteObject, part: int, parts: _Parts) -> int:
    """One ranged GET through s3fs's own client, its body put piece by piece as it streams
    in (``cat_file`` would hold the whole part, then copy it); the bytes it got. The answer
    must carry the listed ETag (or version): else the object changed since it was listed."""
    import fsspec.asyn

    bucket, key, version_id = fs.split_path(path)
    start, end = parts.ranges[part]
    request = {"Bucket": bucket, "Key": key, "Range": f"bytes={start}-{end - 1}"}
    if version_id:
        request["VersionId"] = version_id

    async def get() -> int:
        response = await fs._call_s3("get_object", **request)
        body = response["Body"]
        try:
            tags = (str(response.get("ETag") or "").strip('"'), response.get("VersionId"))
            if obj.version and obj.version not in tags:
                raise Unavailable(
                    f"{shown(obj.url)} changed while it was downloaded; reload the page."
                )
            at = start
            while at < end and not parts.failed:
                piece = await body.read(min(STREAM_PIECE_BYTES, end - at))
                if not piece:
                    break
                parts.put(part, at, piece)
                at += len(piece)
            return at - start
        finally:
            body.close()

    return fsspec.asyn.sync(fs.loop, get)

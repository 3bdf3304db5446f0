"""Object-store URLs (``gs://``, ``s3://``, ``az://``/``abfs://``): listing and fetching, read-only.

Remote logdirs are read through fsspec and each store's own client (gcsfs, s3fs, adlfs: the
``[cloud]`` extra). Credentials and endpoints come from each client's standard environment
(``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ``GOOGLE_APPLICATION_CREDENTIALS``,
``STORAGE_EMULATOR_HOST``, ``AZURE_STORAGE_*``); no flag of ours carries them. Nothing here
writes to a bucket except ``upload_folder`` (capture into a remote logdir, docs/remote_logdirs.md).

A profile is fetched once into the disk cache, keyed by URL, size and ETag/generation, under a
temporary name that is renamed only once its size is checked; large objects come in ranged
parts, in order, a few at a time (on S3 each part's body is read as it streams in). An
XSpace can be decoded while it arrives (``fetch_arriving``): the parts land in memory the
decoder walks as the prefix grows, and its result counts only once the copy is complete
under its final name, so nothing half-downloaded is ever decoded or kept. Every failure of
the store becomes a typed error naming the URL (never credentials, never the client's own
text).

Usage::

    folders, objects = list_folder("s3://bucket/logs")    # one listing request
    local = fetch(objects[0], cache_folder)                # a local path with the same bytes
    arrival = fetch_arriving(objects[0], cache_folder)     # or its bytes as they come
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import logging
import os
import re
import tempfile
import threading
from typing import Any, Optional

from ..common.errors import NotFound, PermissionDenied, ProfileError, Unavailable
from ..xspace.filebytes import Arrival

logger = logging.getLogger(__name__)

# scheme -> (fsspec protocol, the client library that implements it)
SCHEMES = {
    "gs": ("gcs", "gcsfs"),
    "gcs": ("gcs", "gcsfs"),
    "s3": ("s3", "s3fs"),
    "az": ("az", "adlfs"),
    "abfs": ("abfs", "adlfs"),
    "abfss": ("abfs", "adlfs"),
}
_URL = re.compile(r"([a-z0-9]+)://(.*)", re.IGNORECASE | re.DOTALL)
EXTRA = "pip install 'tensorboard-plugin-profile[cloud]'"
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

_FILESYSTEMS: dict = {}
_FILESYSTEMS_LOCK = threading.Lock()
_FETCH_LOCKS: dict = {}
_FETCH_LOCKS_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class RemoteObject:
    url: str  # scheme://bucket/key
    size: int
    version: str  # ETag, generation or version id: what changes when the bytes do

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


def is_remote(path: Any) -> bool:
    match = _URL.fullmatch(str(path or ""))
    return match is not None and match.group(1).lower() in SCHEMES


def shown(url: str) -> str:
    """The URL as messages and logs show it: no query (SAS tokens) and no user info."""
    match = _URL.fullmatch(url)
    if not match:
        return url
    rest = match.group(2).split("?", 1)[0].split("#", 1)[0]
    return f"{match.group(1).lower()}://{rest}"


def join(url: str, name: str) -> str:
    return url.rstrip("/") + "/" + name


def _split(url: str) -> tuple:
    match = _URL.fullmatch(url)
    if not match or match.group(1).lower() not in SCHEMES:
        raise NotFound(f"{shown(url)} is not a gs://, s3:// or az:// URL.")
    return match.group(1).lower(), match.group(2).split("?", 1)[0].rstrip("/")


def filesystem(url: str) -> Any:
    """The fsspec file system of the URL's scheme (one per scheme and process)."""
    scheme, _ = _split(url)
    protocol, library = SCHEMES[scheme]
    with _FILESYSTEMS_LOCK:
        if protocol in _FILESYSTEMS:
            return _FILESYSTEMS[protocol]
        try:
            import fsspec

            __import__(library)
        except ImportError:
            raise Unavailable(
                f"Reading {scheme}:// URLs needs the {library} package, which is not installed: "
                f"{EXTRA}"
            ) from None
        options: dict = {"skip_instance_cache": True, "use_listings_cache": False}
        if protocol == "gcs" and os.environ.get("STORAGE_EMULATOR_HOST"):
            fs = _gcs_emulator_filesystem(options)
        else:
            fs = fsspec.filesystem(protocol, **options)
        if library == "adlfs":
            _no_connect_retries(fs)
        _FILESYSTEMS[protocol] = fs
        return fs


def _no_connect_retries(fs: Any) -> None:
    """A refused connection to an Azure endpoint is answered at once, not after minutes.

    The Azure SDK retries a failed connection 3 times per call, sleeping 15 s + 3^n s between
    tries, and adlfs makes several calls per listing: a closed endpoint was answered after more
    than 120 s. adlfs passes no retry setting to the SDK's client, so the client's own retry
    policy (shared by every container and blob client made from it) is told not to retry
    connecting. Read and status retries (a dropped download, a throttled store) and the
    timeouts stay the SDK's: a slow endpoint that answers still works.
    """
    config = getattr(getattr(fs, "service_client", None), "_config", None)
    policy = getattr(config, "retry_policy", None)
    if policy is not None and hasattr(policy, "connect_retries"):
        policy.connect_retries = 0
    else:  # another adlfs or SDK: keep its behaviour, say so
        logger.debug("could not bound the Azure client's connection retries")


def _gcs_emulator_filesystem(options: dict) -> Any:
    """gcsfs for ``STORAGE_EMULATOR_HOST``: anonymous, and over the JSON API only.

    An emulator takes no credentials (without ``token='anon'`` gcsfs first asks the cloud
    metadata server for some and waits for it to time out). And gcsfs's default class
    (``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT``, on by default in 2026 releases) first asks the
    Storage Control API over gRPC what kind of bucket it holds; an emulator does not speak
    gRPC, so every call waited 60 s for that question to time out. The plain class
    (``gcsfs.core``) reads over the JSON API the emulators serve.
    """
    from gcsfs.core import GCSFileSystem

    return GCSFileSystem(token="anon", **options)


def forget_filesystems() -> None:
    """Drops the clients, so the next call reads the environment again (tests)."""
    with _FILESYSTEMS_LOCK:
        _FILESYSTEMS.clear()


def error_for(url: str, error: BaseException) -> ProfileError:
    """A typed error naming the URL; the client's message is not shown (it may hold secrets)."""
    if isinstance(error, ProfileError):
        return error
    where = shown(url)
    if isinstance(error, FileNotFoundError):
        return NotFound(f"{where} does not exist (any more); reload the page.")
    if (
        isinstance(error, PermissionError)
        or _http_status(error) in (401, 403)
        or _gcsfs_forbidden(error)
        or "403" in str(error)
        or "AccessDenied" in str(error)
    ):
        return PermissionDenied(
            f"{where} cannot be read: access denied. Check the credentials in the store "
            "client's environment (docs/remote_logdirs.md)."
        )
    kind = type(error).__name__
    return Unavailable(f"{where} cannot be reached now ({kind}); try again in a moment.")


def _gcsfs_forbidden(error: BaseException) -> bool:
    """gcsfs raises a GCS 403 as a plain ``OSError("Forbidden: <path>\\n<GCS's message>")``,
    with no status on it."""
    return type(error) is OSError and str(error).startswith("Forbidden: ")


def _http_status(error: BaseException) -> Optional[int]:
    """The HTTP status a client's error carries: ``status_code`` (the Azure SDK's
    HttpResponseError, which adlfs passes on as is), ``code`` (gcsfs's HttpError)."""
    for name in ("status_code", "code"):
        value = getattr(error, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _version_of(info: dict) -> str:
    for key in ("generation", "VersionId", "ETag", "etag", "md5Hash", "last_modified", "mtime"):
        value = info.get(key)
        if value:
            return str(value).strip('"')
    return ""


def list_folder(url: str) -> tuple:
    """(sub-folder names, [RemoteObject]) directly inside ``url``: one listing request."""
    fs = filesystem(url)
    scheme, path = _split(url)
    try:
        entries = fs.ls(path, detail=True)
    except FileNotFoundError:
        return [], []
    except Exception as e:  # noqa: BLE001 - every client error becomes a typed one
        raise error_for(url, e) from None
    folders, objects = [], []
    for entry in entries:
        name = str(entry.get("name", "")).rstrip("/").rsplit("/", 1)[-1]
        if not name or str(entry.get("name", "")).rstrip("/") == path:
            continue
        if entry.get("type") == "directory":
            folders.append(name)
        else:
            size = int(entry.get("size") or 0)
            objects.append(RemoteObject(join(url, name), size, _version_of(entry)))
    return sorted(folders), sorted(objects, key=lambda o: o.url)


def stat(url: str) -> Optional[RemoteObject]:
    """The object at ``url`` (None if it is a folder or missing)."""
    fs = filesystem(url)
    _, path = _split(url)
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    except Exception as e:  # noqa: BLE001
        raise error_for(url, e) from None
    if info.get("type") == "directory":
        return None
    return RemoteObject(url, int(info.get("size") or 0), _version_of(info))


def cache_name(obj: RemoteObject) -> str:
    """The file name of an object's local copy: a hash of URL, size and version."""
    digest = hashlib.sha256(f"{obj.url}\0{obj.size}\0{obj.version}".encode()).hexdigest()
    return f"remote-{digest[:40]}.bin"


_SCRATCH: list = []


def scratch_folder() -> str:
    """Where copies go when the disk cache is off: one folder per process."""
    with _FETCH_LOCKS_LOCK:
        if not _SCRATCH:
            _SCRATCH.append(tempfile.mkdtemp(prefix="tbprof-remote-"))
        return _SCRATCH[0]


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
    if obj.size <= 0:
        fetch(obj, local)
        return None
    lock = _lock_for(local)
    lock.acquire()
    try:
        if _complete(local, obj.size):
            lock.release()
            return None
        arrival = Arrival(obj.size)
        thread = threading.Thread(
            target=_download_arriving, args=(obj, local, arrival, lock), daemon=True
        )
        thread.start()
    except BaseException:
        lock.release()
        raise
    return arrival


def _lock_for(local: str) -> threading.Lock:
    with _FETCH_LOCKS_LOCK:
        return _FETCH_LOCKS.setdefault(local, threading.Lock())


def _complete(local: str, size: int) -> bool:
    try:
        return os.path.getsize(local) == size
    except OSError:
        return False


def _download_arriving(obj: RemoteObject, local: str, arrival: Arrival, lock) -> None:
    try:
        _download(obj, local, arrival)
    except BaseException as e:  # noqa: BLE001 - the reader gets it, typed
        arrival.end(error_for(obj.url, e))
    else:
        arrival.end()  # the copy has its final name: now the last byte counts
    finally:
        lock.release()


def _download(obj: RemoteObject, local: str, arrival: Optional[Arrival]) -> None:
    folder = os.path.dirname(local)
    os.makedirs(folder, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
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


def upload_session(local_session: str, profile_root_url: str) -> str:
    """Uploads a captured session folder into ``<profile_root_url>/<session>/``; its URL.

    The files go first under a hidden ``.tmp-<session>-<random>/`` prefix (discovery skips
    names starting with a dot), then are copied to their final names by the store itself and
    the temporary objects deleted: a reader never sees a partial object, and a failed upload
    leaves nothing under the session's name. The only write to a bucket we ever make.
    """
    fs = filesystem(profile_root_url)
    session = os.path.basename(local_session.rstrip(os.sep))
    staging_url = join(profile_root_url, f".tmp-{session}-{os.urandom(4).hex()}")
    final_url = join(profile_root_url, session)
    names = sorted(
        n for n in os.listdir(local_session) if os.path.isfile(os.path.join(local_session, n))
    )
    _, staging = _split(staging_url)
    _, final = _split(final_url)
    try:
        for name in names:
            fs.put_file(os.path.join(local_session, name), f"{staging}/{name}")
        for name in names:
            fs.copy(f"{staging}/{name}", f"{final}/{name}")
    except Exception as e:  # noqa: BLE001
        raise error_for(final_url, e) from None
    finally:
        try:
            fs.rm([f"{staging}/{name}" for name in names])
        except Exception:  # noqa: BLE001 - a leftover hidden prefix is never listed
            logger.warning("could not delete the temporary upload %s", shown(staging_url))
    return shown(final_url)

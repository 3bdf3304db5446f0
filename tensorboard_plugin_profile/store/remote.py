"""Object-store URLs (``gs://``, ``s3://``, ``az://``/``abfs://``): listing and fetching, read-only.

Remote logdirs are read through fsspec and each store's own client (gcsfs, s3fs, adlfs: the
``[cloud]`` extra). Credentials and endpoints come from each client's standard environment
(``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ``GOOGLE_APPLICATION_CREDENTIALS``,
``STORAGE_EMULATOR_HOST``, ``AZURE_STORAGE_*``); no flag of ours carries them. Nothing here
writes to a bucket except ``upload_folder`` (capture into a remote logdir, docs/remote_logdirs.md).

Fetching an object into the disk cache is ``remote_fetch``. Every failure of the store
becomes a typed error naming the URL (never credentials, never the client's own text).

Usage::

    folders, objects = list_folder("s3://bucket/logs")    # one listing request
    local = os.path.join(cache_folder, cache_name(objects[0]))  # where remote_fetch puts it
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import tempfile
import threading
from typing import Any, Optional

from ..common.errors import NotFound, PermissionDenied, ProfileError, Unavailable

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
_FILESYSTEMS: dict = {}
_FILESYSTEMS_LOCK = threading.Lock()
_SCRATCH_LOCK = threading.Lock()


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
    with _SCRATCH_LOCK:
        if not _SCRATCH:
            _SCRATCH.append(tempfile.mkdtemp(prefix="tbprof-remote-"))
        return _SCRATCH[0]


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

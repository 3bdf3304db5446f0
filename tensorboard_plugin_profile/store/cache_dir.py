"""Which directory is our disk cache, and which files in it are ours to delete.

``--cache_dir`` is a path a user types, and a slip (``~/.cache`` instead of
``~/.cache/tensorboard-plugin-profile``) must never cost them files: a
``clear`` once deleted every ``*.bin`` below the directory, a Hugging Face
``pytorch_model.bin`` included. So:

- the cache writes a marker, ``tbprof-cache.json`` (naming this program and the
  entry format), at its root when it creates the directory;
- deleting (``clear``, ``prune``, stale temporary files) touches only files
  whose names are exactly the ones the cache writes (``<kind>-<40 hex>.bin``,
  ``.tmp-<8 chars>``), directly inside its versioned folders ``v<N>/``, and
  only under a root that is ours;
- a directory is ours when it holds the marker, or, without one, when it holds
  nothing but that layout (an empty folder, or a cache an older version wrote
  before markers existed): the cache adopts it by writing the marker at its
  first write or ``clear``. Anything else is *foreign*: the server leaves its
  disk cache off there, ``clear`` and ``info`` refuse it.

>>> state("/home/me/.cache")                                   # doctest: +SKIP
'foreign'
>>> claim("/home/me/.cache/tensorboard-plugin-profile", 1)      # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import os
import re
import tempfile

from ..common.errors import InvalidArgument

MARKER_NAME = "tbprof-cache.json"
PROGRAM = "tensorboard-plugin-profile"
MISSING, OURS, ADOPTABLE, FOREIGN = "missing", "ours", "adoptable", "foreign"

_ENTRY_NAME = re.compile(r"[a-z_]+-[0-9a-f]{40}\.bin")
# tempfile.mkstemp(prefix=".tmp-"): eight characters of [a-z0-9_] (every Python we support).
_TEMP_NAME = re.compile(r"\.tmp-[a-z0-9_]{8}")
_VERSION_DIR = re.compile(r"v[0-9]{1,6}")


def is_entry_name(name: str) -> bool:
    return _ENTRY_NAME.fullmatch(name) is not None


def is_temp_name(name: str) -> bool:
    return _TEMP_NAME.fullmatch(name) is not None


def state(root: str) -> str:
    """``missing``, ``ours`` (marked), ``adoptable`` (only our layout) or ``foreign``."""
    if not os.path.lexists(root):
        return MISSING
    if not os.path.isdir(root):
        return FOREIGN
    if _has_our_marker(root):
        return OURS
    return ADOPTABLE if _only_our_layout(root) else FOREIGN


def claim(root: str, entry_format: int) -> bool:
    """Makes ``root`` our cache (creating it, or marking an adoptable one); False if foreign.

    Raises ``OSError`` when the folder or its marker cannot be written.
    """
    current = state(root)
    if current in (OURS, FOREIGN):
        return current == OURS
    os.makedirs(root, exist_ok=True)
    _write_marker(root, entry_format)
    return state(root) == OURS


def require_ours(root: str, doing: str) -> str:
    """The state of ``root``; raises ``InvalidArgument`` (nothing was ``doing``) if foreign."""
    current = state(root)
    if current == FOREIGN:
        raise InvalidArgument(not_a_cache_message(root, doing))
    return current


def not_a_cache_message(root: str, consequence: str) -> str:
    return (
        f"{root} is not a tensorboard-plugin-profile cache: it has no {MARKER_NAME} marker "
        f"and holds files the cache did not write; {consequence}. Give --cache_dir the "
        "cache's own folder (default ~/.cache/tensorboard-plugin-profile) or a new one."
    )


def version_dirs(root: str) -> list:
    """The entry folders ``v<N>/`` directly under ``root`` (never links)."""
    try:
        scan = list(os.scandir(root))
    except OSError:
        return []
    return sorted(
        e.path for e in scan if _VERSION_DIR.fullmatch(e.name) and e.is_dir(follow_symlinks=False)
    )


def _has_our_marker(root: str) -> bool:
    path = os.path.join(root, MARKER_NAME)
    if os.path.islink(path):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            marker = json.loads(f.read(4096))
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("program") == PROGRAM


def _only_our_layout(root: str) -> bool:
    """Nothing but ``v<N>/`` folders of entries and temporary files (an unmarked old cache)."""
    try:
        return _layout_is_ours(root)
    except OSError:  # unreadable: never ours to write into or delete from
        return False


def _layout_is_ours(root: str) -> bool:
    for entry in os.scandir(root):
        if is_temp_name(entry.name) and entry.is_file(follow_symlinks=False):
            continue
        if not (_VERSION_DIR.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
            return False
        for inner in os.scandir(entry.path):
            ours = is_entry_name(inner.name) or is_temp_name(inner.name)
            if not (ours and inner.is_file(follow_symlinks=False)):
                return False
    return True


def _write_marker(root: str, entry_format: int) -> None:
    marker = {
        "program": PROGRAM,
        "entry_format": entry_format,
        "what": "Disk cache of decoded profiles and tool answers; safe to delete. "
        "`tbprof cache clear` deletes only the entries the cache wrote.",
    }
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(marker, f, indent=1)
            f.write("\n")
        os.replace(tmp, os.path.join(root, MARKER_NAME))  # two writers: identical content
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise

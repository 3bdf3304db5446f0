"""Detects upstream packages that register the same ``profile`` plugin.

TensorBoard refuses to start with "Duplicate plugins for name profile" when
two installed distributions register it; say which one and how to fix it.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

OUR_DISTRIBUTION = "tensorboard_plugin_profile"


def conflicting_distributions() -> list:
    """Other installed distributions that register a ``profile`` TensorBoard plugin."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return []
    found = []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").replace("-", "_").lower()
        if name == OUR_DISTRIBUTION:
            continue
        for ep in dist.entry_points:
            if ep.group == "tensorboard_plugins" and ep.name == "profile":
                found.append(dist.metadata["Name"])
    return sorted(set(found))


_CACHED: list = []


def conflict_warnings() -> list:
    """Messages for the page, computed once per process (installs don't change under us)."""
    if not _CACHED:
        found = conflicting_distributions()
        _CACHED.append(
            [
                f"{name} is installed too and also registers TensorBoard's 'profile' plugin; "
                f"TensorBoard may refuse to start. Remove it: pip uninstall {name}"
                for name in found
            ]
        )
    return _CACHED[0]


def warn_if_conflicting() -> list:
    found = conflicting_distributions()
    if found:
        logger.warning(
            "%s also registers the TensorBoard 'profile' plugin; TensorBoard may refuse "
            "to start. Uninstall it: pip uninstall %s",
            ", ".join(found),
            " ".join(found),
        )
    return found

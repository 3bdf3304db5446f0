"""The TensorBoard plugin: the Profile tab, served from the shared routes.

TensorBoard finds it through the ``tensorboard_plugins`` entry point ``profile``
(``profile_plugin_loader.ProfilePluginLoader``), loads ``index.js`` in an
iframe and calls its ``render()``, which opens ``index.html`` (docs/http_api.md).

TensorBoard checks neither ``Host`` nor ``Origin``, so our handlers do (``guard.py``). The
names answered follow TensorBoard's own bind: loopback names for the default (``localhost``),
plus the bound name for ``--host NAME``, plus this machine's name for ``--bind_all`` or a
wildcard ``--host``; ``--allowed_hosts`` (or ``TBPROF_ALLOWED_HOSTS``) adds others.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from tensorboard.plugins import base_plugin

from ..service import ProfileService
from ..store.cache_config import CacheConfig
from . import conflicts, http_api
from .guard import Guard, allowed_hosts_setting

logger = logging.getLogger(__name__)

PLUGIN_NAME = "profile"


class ProfilePlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: Any):
        logdir = getattr(context, "logdir", "") or ""
        # The loader defined the cache flags on TensorBoard's parser (docs/cache.md).
        config = CacheConfig.from_flags(getattr(context, "flags", None))
        self.service = ProfileService(logdir, config=config)
        hide_capture = bool(getattr(context, "hide_capture_profile_button", False))
        self.guard = guard_for_tensorboard(getattr(context, "flags", None))
        self._routes = http_api.Routes(self.service, hide_capture=hide_capture, guard=self.guard)
        self._refreshing = threading.Lock()
        conflicts.warn_if_conflicting()
        # Discovery starts now, not at the first is_active(): TensorBoard's first
        # plugins_listing decides whether the Profile tab exists at all.
        self._start_refresh()

    def get_plugin_apps(self) -> dict:
        apps = dict(self._routes.table())
        for name in http_api.static_files():
            apps.setdefault("/" + name, http_api.static_handler(name, self.guard))
        return {route: _as_wsgi(handler) for route, handler in apps.items()}

    def is_active(self) -> bool:
        """Fast: the last discovery's answer, or until there is one, a bounded look for a session.

        A negative answer also starts a background refresh, so runs written later show up.
        """
        known = self.service.is_active()
        if known is None:
            known = self.service.logdir.probe_has_runs()
        if not known:
            self._start_refresh()
        return bool(known)

    def _start_refresh(self) -> None:
        if self._refreshing.acquire(blocking=False):
            threading.Thread(target=self._refresh, name="profile-discovery", daemon=True).start()

    def _refresh(self) -> None:
        try:
            self.service.logdir.refresh()
        except Exception:  # discovery must never take TensorBoard down
            logger.exception("profile run discovery failed")
        finally:
            self._refreshing.release()

    def frontend_metadata(self) -> Any:
        return base_plugin.FrontendMetadata(es_module_path="/index.js")


def tensorboard_bind(flags: Any) -> str:
    """The address TensorBoard listens on, from its flags (its default is ``localhost``)."""
    if getattr(flags, "bind_all", False):
        return "0.0.0.0"
    return getattr(flags, "host", None) or "localhost"


def guard_for_tensorboard(flags: Any) -> Guard:
    """The names TensorBoard is reached by; logged when more than loopback."""
    extra = allowed_hosts_setting(getattr(flags, "allowed_hosts", None))
    guard = Guard.for_bind(tensorboard_bind(flags), extra)
    if not guard.loopback_only:
        logger.warning("Profile plugin: answering %s", guard.describe())
    return guard


def _as_wsgi(handler: Any) -> Any:
    from werkzeug import Request

    return Request.application(handler)

"""TensorBoard's entry point for the plugin (``tensorboard_plugins: profile``)."""

from __future__ import annotations

import argparse
from typing import Any

from tensorboard.plugins import base_plugin


class ProfilePluginLoader(base_plugin.TBLoader):
    def define_flags(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("profile plugin")
        try:
            group.add_argument(
                "--master_tpu_unsecure_channel",
                metavar="ADDR",
                type=str,
                default="",
                help="Cloud TPU master address for profile capture (unused by local logdirs).",
            )
        except argparse.ArgumentError:
            pass  # another plugin already defined it
        from ..store.cache_config import add_flags
        from .guard import add_flags as add_host_flags

        add_flags(group)
        try:
            add_host_flags(group)
        except argparse.ArgumentError:
            pass  # another plugin already defined it

    def load(self, context: Any) -> Any:
        from .plugin import ProfilePlugin

        return ProfilePlugin(context)

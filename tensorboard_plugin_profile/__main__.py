"""``python -m tensorboard_plugin_profile``: the ``tbprof`` command."""

import sys

from .web.cli import main

sys.exit(main())

"""``python -m tensorboard_plugin_profile``: the ``tbprof`` command."""

import sys

from .cli import main

sys.exit(main())

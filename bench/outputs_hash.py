"""A sha256 per tool answer on one profile: the check that a speed change moved no number.

    python bench/outputs_hash.py FILE.xplane.pb > before.txt     # on the base checkout
    python bench/outputs_hash.py FILE.xplane.pb | diff before.txt -   # on the change

A fresh service without the disk cache answers every host tool, three ``trace_viewer@``
requests (the first columnar window, a zoomed window at full resolution, the default
format) and prints one line per request: tool, parameters, hash and size (or the error a
tool gives where it does not apply). Two checkouts agree when the lines are identical.
"""

from __future__ import annotations

import hashlib
import os
import sys

from cold_path import OTHER_TOOLS  # bench/ is on sys.path when a script of it runs

# The host tools of the cold-path benchmark, and the op/scope/code views.
TOOLS = ("overview_page",) + OTHER_TOOLS + ("op_types", "scope_view", "code_view")
WINDOWS = (
    {"format": "columnar", "resolution": "2000"},
    {"format": "columnar", "resolution": "0", "start_time_ms": "100", "end_time_ms": "140"},
    {"resolution": "2000"},
)


def main() -> None:
    os.environ["TBPROF_NO_CACHE"] = "1"
    from tensorboard_plugin_profile.common.errors import ProfileError
    from tensorboard_plugin_profile.service import ProfileService

    service = ProfileService(sys.argv[1])
    run = service.runs()[0]
    requests = [(tool, {}) for tool in TOOLS] + [("trace_viewer@", w) for w in WINDOWS]
    for tool, params in requests:
        try:
            chunks = service.tool_data(run, tool, params=params).chunks()
            data = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
            print(tool, sorted(params.items()), hashlib.sha256(data).hexdigest(), len(data))
        except ProfileError as e:
            print(tool, sorted(params.items()), "error", type(e).__name__)


if __name__ == "__main__":
    main()

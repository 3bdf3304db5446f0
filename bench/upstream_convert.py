"""Runs upstream xprof's converter once (use the upstream virtualenv's python).

bench/.venv-xprof/bin/python bench/upstream_convert.py FILE.xplane.pb TOOL
"""

import os
import shutil
import sys
import tempfile

from xprof.convert import raw_to_tool_data


def main() -> None:
    path, tool = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # Upstream writes caches beside its input: give it a fresh copy every run.
        session = os.path.join(tmp, "session")
        os.makedirs(session)
        copy = os.path.join(session, os.path.basename(path))
        shutil.copyfile(path, copy)
        data, _ = raw_to_tool_data.xspace_to_tool_data([copy], tool, {})
        size = len(data) if data else 0
    print(f"upstream {tool}: {size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Times upstream xprof's XLA tools in one process (use the upstream virtualenv's python).

    bench/.venv-xprof/bin/python bench/upstream_xla.py FILE.xplane.pb MODULE

Prints one JSON line: per tool, the first call (cold: upstream extracts the HLO protos and
caches beside its input) and a second identical call (warm), in seconds. Works on a fresh
copy of the file, since upstream writes caches next to its inputs.
"""

import json
import os
import shutil
import sys
import tempfile
import time

from xprof.convert import raw_to_tool_data

TOOLS = (
    ("memory_viewer", {"module_name": None}),
    ("graph_viewer", {"graph_viewer_options": {"module_name": None, "type": "short_txt"}}),
    ("op_profile", {}),
    ("hlo_stats", {}),
    ("roofline_model", {}),
)


def _with_module(value, module):
    if isinstance(value, dict):
        return {k: _with_module(v, module) for k, v in value.items()}
    return module if value is None else value


def main() -> None:
    path, module = sys.argv[1], sys.argv[2]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        session = os.path.join(tmp, "session")
        os.makedirs(session)
        copy = os.path.join(session, os.path.basename(path))
        shutil.copyfile(path, copy)
        started = time.perf_counter()  # the module list: extracts <module>.hlo_proto.pb files
        raw_to_tool_data.xspace_to_tool_names([copy])
        out["module_list"] = [time.perf_counter() - started]
        for tool, params in TOOLS:
            params = {k: _with_module(v, module) for k, v in params.items()}
            times = []
            for _ in range(2):
                started = time.perf_counter()
                raw_to_tool_data.xspace_to_tool_data([copy], tool, params)
                times.append(time.perf_counter() - started)
            out[tool] = times
    print(json.dumps(out))


if __name__ == "__main__":
    main()

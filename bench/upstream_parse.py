"""Upstream's cheapest full read of an XSpace: its `tool_names` conversion (parse + scan).

    bench/.venv-xprof/bin/python bench/upstream_parse.py REPEAT FILE...

Prints one line per file: `<path> <median ms>`. Each run works on a fresh copy,
because upstream caches results beside its input.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

from xprof.convert import raw_to_tool_data


def main() -> None:
    repeat, paths = int(sys.argv[1]), sys.argv[2:]
    for path in paths:
        times = []
        for _ in range(repeat + 1):  # the first run warms the library up
            with tempfile.TemporaryDirectory() as tmp:
                copy = os.path.join(tmp, os.path.basename(path))
                shutil.copyfile(path, copy)
                started = time.perf_counter()
                raw_to_tool_data.xspace_to_tool_names([copy])
                times.append(time.perf_counter() - started)
        print(path, statistics.median(times[1:]) * 1e3, flush=True)


if __name__ == "__main__":
    main()

"""Runs one user regex over strings, in a process the server can kill (see safe_regex.py).

Standard library only, started with ``python -I -S``: reads ``{"pattern", "strings"}``
as JSON on stdin, writes one byte per string (``1`` = a match) to stdout.
"""

import json
import re
import sys


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    search = re.compile(request["pattern"]).search
    out = bytes(49 if search(s) is not None else 48 for s in request["strings"])
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()

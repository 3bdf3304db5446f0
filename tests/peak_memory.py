"""The process's peak resident memory over a stretch of a test (Linux; elsewhere unknown).

Usage::

    with peak_growth() as grown:
        ...
    assert grown.bytes is None or grown.bytes < 512 << 20
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator, Optional


class Growth:
    bytes: Optional[int] = None  # peak resident bytes above the start; None when unknown


@contextlib.contextmanager
def peak_growth() -> Iterator[Growth]:
    """Resets the kernel's peak-RSS mark (``/proc/self/clear_refs``), then measures it."""
    growth = Growth()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        yield growth
        return
    before = _status_kib("VmRSS")
    yield growth
    growth.bytes = (_status_kib("VmHWM") - before) << 10


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        match = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    return int(match.group(1)) if match else 0

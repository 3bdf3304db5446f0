"""JSON as every route sends it: never ``NaN`` or ``Infinity``.

Python's ``json`` writes non-finite floats as ``NaN`` / ``Infinity``, which no browser's
``JSON.parse`` accepts, so one damaged statistic (a ``fragmentation`` of 0/0, a NaN
double stat in a trace argument) would break a whole page. Every JSON writer of the
package goes through ``dumps``: it serialises with ``allow_nan=False`` (no cost on the
normal path) and, only if that refuses, writes the value again with every non-finite
float replaced by ``null``.

Usage::

    dumps({"fragmentation": float("nan")}, separators=(",", ":"))  # '{"fragmentation":null}'
"""

from __future__ import annotations

import json
import math
from typing import Any


def dumps(obj: Any, **options: Any) -> str:
    """``json.dumps(obj, **options)`` with non-finite floats written as ``null``."""
    try:
        return json.dumps(obj, allow_nan=False, **options)
    except ValueError:
        return json.dumps(finite(obj), allow_nan=False, **options)


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float (at any depth) replaced by ``None``."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj

"""JSON as every route sends it: never ``NaN`` or ``Infinity``, always valid UTF-8.

Python's ``json`` writes non-finite floats as ``NaN`` / ``Infinity``, which no browser's
``JSON.parse`` accepts, so one damaged statistic (a ``fragmentation`` of 0/0, a NaN
double stat in a trace argument) would break a whole page. Every JSON writer of the
package goes through ``dumps``: it serialises with ``allow_nan=False`` (no cost on the
normal path) and, only if that refuses, writes the value again with every non-finite
float replaced by ``null``.

A name in a Chrome-trace JSON file may hold a lone UTF-16 surrogate (``"\\ud800"``), which
Python's ``json`` decodes into a ``str`` that cannot be encoded as UTF-8. Writers turn their
text into bytes with ``utf8`` (CSV too): on the normal path that is ``str.encode``; only when
it refuses is the text made well-formed, each unpaired surrogate becoming U+FFFD (a valid
pair is joined into its character). That costs one pass over the answer, whatever the
number of events, and only for the profiles that need it.

Usage::

    dumps({"fragmentation": float("nan")}, separators=(",", ":"))  # '{"fragmentation":null}'
    utf8(dumps(["op\\ud800"], ensure_ascii=False))                  # b'["op\\xef\\xbf\\xbd"]'
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


def utf8(text: str) -> bytes:
    """``text`` in UTF-8, with unpaired surrogates written as U+FFFD."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return well_formed(text).encode()


def well_formed(text: str) -> str:
    """``text`` with each unpaired surrogate replaced by U+FFFD and pairs joined.

    The UTF-16 codec does both: ``surrogatepass`` writes every code unit as it is, and
    decoding pairs what pairs and replaces what cannot.
    """
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")

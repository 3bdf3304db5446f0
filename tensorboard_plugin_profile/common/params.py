"""Typed reading of request parameters (strings), with errors a user can act on.

Shared by the service and the tools, so every route words a bad number the same way.
A number no parameter can mean is refused here with a 400 naming the parameter, before
any arithmetic: ``nan`` and ``inf`` (``float()`` reads both), and magnitudes past what
the tables hold (times are int64 picoseconds, ids and counts int64), which used to end as
an ``OverflowError`` deep inside a tool (an opaque 500).
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

from .errors import InvalidArgument

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# A time in milliseconds whose picoseconds fit an int64 (about 106 days either way).
MAX_TIME_MS = INT64_MAX / 1e9


def int_param(
    params: Mapping[str, str],
    name: str,
    default: int,
    low: int = INT64_MIN,
    high: int = INT64_MAX,
) -> int:
    value = params.get(name)
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        message = f"Parameter {name!r} must be an integer, not {_shown(value)}."
        raise InvalidArgument(message) from None
    if not low <= number <= high:
        raise InvalidArgument(
            f"Parameter {name!r} must be an integer from {low} to {high}, not {_shown(value)}."
        )
    return number


def float_param(
    params: Mapping[str, str], name: str, limit: float = MAX_TIME_MS
) -> Optional[float]:
    """A finite number of at most ``limit`` in magnitude, or None when absent."""
    value = params.get(name)
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        message = f"Parameter {name!r} must be a number, not {_shown(value)}."
        raise InvalidArgument(message) from None
    if not (math.isfinite(number) and abs(number) <= limit):
        raise InvalidArgument(
            f"Parameter {name!r} must be a finite number from {-limit:.4g} to {limit:.4g}, "
            f"not {_shown(value)}."
        )
    return number


def int_list_param(params: Mapping[str, str], name: str) -> Optional[list]:
    value = params.get(name)
    if not value:
        return None
    try:
        numbers = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise InvalidArgument(f"Parameter {name!r} must be a comma list of integers.") from None
    if any(not INT64_MIN <= n <= INT64_MAX for n in numbers):
        raise InvalidArgument(
            f"Parameter {name!r} must list integers from {INT64_MIN} to {INT64_MAX}."
        )
    return numbers


def _shown(value: str) -> str:
    """The value as the user sent it, cut short (a 10,000-digit number stays readable)."""
    return repr(value if len(value) <= 40 else value[:37] + "...")

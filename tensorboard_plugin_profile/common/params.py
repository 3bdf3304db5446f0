"""Typed reading of request parameters (strings), with errors a user can act on.

Shared by the service and the tools, so every route words a bad number the same way.
"""

from __future__ import annotations

from typing import Mapping, Optional

from .errors import InvalidArgument


def int_param(params: Mapping[str, str], name: str, default: int) -> int:
    value = params.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidArgument(f"Parameter {name!r} must be an integer, not {value!r}.") from None


def float_param(params: Mapping[str, str], name: str) -> Optional[float]:
    value = params.get(name)
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise InvalidArgument(f"Parameter {name!r} must be a number, not {value!r}.") from None


def int_list_param(params: Mapping[str, str], name: str) -> Optional[list]:
    value = params.get(name)
    if not value:
        return None
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise InvalidArgument(f"Parameter {name!r} must be a comma list of integers.") from None

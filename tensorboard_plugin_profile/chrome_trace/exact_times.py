"""Chrome-trace times read from their text, to the picosecond.

Recent PyTorch writes ``ts`` and ``dur`` in microseconds with three decimals (nanoseconds),
``ts`` counted from the epoch: ``1661938466265087.123``. A double holds such a number to a
quarter of a microsecond only, so reading ``ts`` as a float moves each event by up to
0.125 us while its ``dur`` keeps its nanoseconds, and a call ending a few nanoseconds before
its parent could end after it: events that nest in the file did not nest for us. Both
readers therefore keep the text of every fractional number (``JsonFloat``, a float that
remembers it) and turn a time's text into integer picoseconds exactly (``micros_to_ps``);
the compiled scanner (``_collect.c``) does the same from the same text.

A number with an exponent (``1.5e3``) is left to the float rules (none of the writers uses
one for times).

Usage::

    json.JSONDecoder(parse_float=json_float)
    micros_to_ps("12.0005")   # 12000500
"""

from __future__ import annotations

from typing import Any, Optional


class JsonFloat(float):
    """A JSON number with a fraction; ``text`` is how the file wrote it."""

    text: str


def json_float(text: str) -> float:
    """``json`` ``parse_float`` hook: the float, carrying its text."""
    value = JsonFloat(text)
    value.text = text
    return value


def micros_to_ps(text: str) -> Optional[int]:
    """Microseconds written as ``[-]digits[.digits]`` → picoseconds, exactly (a seventh
    decimal and beyond round half to even); None for other forms (an exponent)."""
    if "e" in text or "E" in text:
        return None
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    ps = int(whole) * 1_000_000 + int(fraction[:6].ljust(6, "0"))
    rest = fraction[6:]
    if rest and (rest[0] > "5" or (rest[0] == "5" and (rest[1:].strip("0") or ps % 2))):
        ps += 1
    return -ps if negative else ps


def text_of(value: Any) -> Optional[str]:
    """The text a ``JsonFloat`` was read from, else None."""
    return value.text if type(value) is JsonFloat else None

"""User regular expressions, bounded: a shape check, then matching under a deadline.

Python's ``re`` backtracks: ``(\\w+\\s?)+$`` on one long name takes minutes, holding the
GIL, so one search would freeze every request of the server. Two guards:

1. ``check_pattern`` refuses at once what is known to blow up: patterns longer than
   ``MAX_PATTERN_CHARS``, back-references (no linear-time engine can run them) and a
   repeated group holding another variable repeat (``(a+)+``, ``(\\w*x?)*``), the shape of
   most catastrophic backtracking.
2. ``match_strings`` runs whatever passed in a separate Python process
   (``_regex_worker.py``, standard library only) and kills it after
   ``DEADLINE_S``. The request thread waits on a pipe without the GIL, so the server
   keeps answering; at most ``MAX_WORKERS`` searches run at once.

Matching is done once per distinct string (names, string arguments), never per event.

Usage::

    check_pattern(r"conv\\d+")                     # raises InvalidArgument if refused
    hits = match_strings(r"conv\\d+", ["conv1", "matmul"])   # array([True, False])
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from typing import Any, Sequence

import numpy as np

from ...common.errors import InvalidArgument

try:  # Python 3.11+ keeps the parser private; 3.9/3.10 expose it (deprecated later).
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre_parse  # type: ignore[no-redef]

MAX_PATTERN_CHARS = 500
DEADLINE_S = 5.0
MAX_WORKERS = 2
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_regex_worker.py")
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
_BACKREFS = {"GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_LOC_IGNORE"}
_UNBOUNDED = _sre_parse.MAXREPEAT
_slots = threading.BoundedSemaphore(MAX_WORKERS)


def check_pattern(pattern: str) -> None:
    """Raises ``InvalidArgument`` naming the reason when ``pattern`` is refused."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidArgument(
            f"search_regex is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}."
        )
    try:
        tree = _sre_parse.parse(pattern)
    except re.error as e:
        raise InvalidArgument(f"Bad search_regex: {e}.") from None
    problem = _shape_problem(tree, inside_repeat=False)
    if problem:
        raise InvalidArgument(f"search_regex refused: {problem}. Simplify the pattern.")


def _shape_problem(pattern: Any, inside_repeat: bool) -> str:
    for op, arg in pattern:
        name = getattr(op, "name", str(op))
        if name in _BACKREFS:
            return "back-references are not supported (they can take exponential time)"
        if name in _REPEATS:
            low, high, body = arg
            variable = high == _UNBOUNDED or high > low
            if variable and inside_repeat:
                return (
                    "a repeated group contains another repeat, like (a+)+, which can take "
                    "exponential time"
                )
            repeats = high == _UNBOUNDED or high > 1
            problem = _shape_problem(body, inside_repeat or repeats)
        else:
            problem = "".join(_shape_problem(p, inside_repeat) for p in _subpatterns(arg))
        if problem:
            return problem
    return ""


def _subpatterns(arg: Any) -> list:
    """The nested patterns of one parsed item's argument (groups, branches, asserts)."""
    if isinstance(arg, _sre_parse.SubPattern):
        return [arg]
    if isinstance(arg, (list, tuple)):
        return [p for item in arg for p in _subpatterns(item)]
    return []


def match_strings(pattern: str, strings: Sequence[str], deadline_s: float = 0.0) -> np.ndarray:
    """Mask of ``strings`` that ``pattern`` finds a match in, within the deadline."""
    check_pattern(pattern)
    if not len(strings):
        return np.zeros(0, dtype=bool)
    deadline_s = deadline_s or DEADLINE_S
    request = json.dumps({"pattern": pattern, "strings": list(strings)}).encode()
    with _slots:
        worker = subprocess.Popen(
            [sys.executable, "-I", "-S", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            out, _ = worker.communicate(request, timeout=deadline_s)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.communicate()
            raise InvalidArgument(
                f"search_regex took longer than {deadline_s:g} s over {len(strings)} distinct "
                "names and was stopped; use a simpler pattern or a plain search."
            ) from None
    if worker.returncode != 0 or len(out) != len(strings):
        raise InvalidArgument("search_regex could not be run on this trace.")
    return np.frombuffer(out, dtype=np.uint8) == ord("1")

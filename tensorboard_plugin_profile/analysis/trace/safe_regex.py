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

from ...common import regex_shape
from ...common.errors import InvalidArgument

MAX_PATTERN_CHARS = 500
DEADLINE_S = 5.0
MAX_WORKERS = 2
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_regex_worker.py")
_BACKREFS = {"GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_LOC_IGNORE"}
_slots = threading.BoundedSemaphore(MAX_WORKERS)


def check_pattern(pattern: str) -> None:
    """Raises ``InvalidArgument`` naming the reason when ``pattern`` is refused."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidArgument(
            f"search_regex is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}."
        )
    try:
        tree = regex_shape.parse(pattern)
    except re.error as e:
        raise InvalidArgument(f"Bad search_regex: {e}.") from None
    problem = _shape_problem(tree)
    if problem:
        raise InvalidArgument(f"search_regex refused: {problem}. Simplify the pattern.")


def _shape_problem(tree: Any) -> str:
    """The first refused shape, or "": only a variable repeat inside a repeat of more than one
    (``(a+)+``, but not ``(a+)?`` nor ``(ab|a)*``: the deadline covers the rest)."""
    for node in regex_shape.nodes(tree):
        if node.kind in _BACKREFS:
            return "back-references are not supported (they can take exponential time)"
        if node.kind in regex_shape.REPEATS:
            low, high, _ = node.arg
            repeated = any(around_high > 1 for _, around_high in node.repeats_around)
            if high > low and repeated:
                return (
                    "a repeated group contains another repeat, like (a+)+, which can take "
                    "exponential time"
                )
    return ""


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

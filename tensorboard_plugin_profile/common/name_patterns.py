"""Name patterns from users (the tree views' tfprof options), run by Python's ``re``
with a bound on the work and no deadline.

The trace search (``analysis/trace/safe_regex.py``) matches under a deadline in a worker
process. The tree views answer in the request, for every tree request, so their patterns
are bounded before they run instead, by shape and by an estimate of the work (a
backtracking engine can take exponential time on a few characters, ``(a+)+b``, and
polynomial time in the name length on chains of wildcards, ``.*.*.*x``):

- at most ``MAX_PATTERN_CHARS`` characters and ``MAX_PATTERNS`` patterns a list;
- no back-references, look-arounds or conditionals;
- no repeat or alternation inside a repeat (the exponential cases);
- the worst-case work of the whole match, estimated from the pattern's shape and
  the lengths of the names it will run on, stays under ``MAX_MATCH_WORK``. A pattern
  with ``q`` repeats tries at most C(n + q, q) ways to split a name of ``n``
  characters between them (times 2 per ``?`` and the branches of each ``|``).

A pattern past any of these is refused with ``InvalidArgument`` saying which rule,
before it matches anything. Names are matched whole (``fullmatch``), as tfprof does.

Usage::

    patterns = parse_patterns(params, "show_name_regexes")
    keep = matching(patterns, distinct_names)     # a bool per name
"""

from __future__ import annotations

import math
import re
from typing import List, Mapping, Sequence

from . import regex_shape
from .errors import InvalidArgument

MAX_PATTERN_CHARS = 256
MAX_PATTERNS = 16
# About half a second of backtracking steps in CPython's engine (2 ns a step, measured).
MAX_MATCH_WORK = 2e8

_FORBIDDEN = {
    "GROUPREF": "back-references",
    "GROUPREF_EXISTS": "conditional groups",
    "ASSERT": "look-arounds",
    "ASSERT_NOT": "look-arounds",
}


class Pattern:
    """One checked pattern: the compiled regex and its shape for the work estimate."""

    def __init__(self, text: str, name: str):
        if len(text) > MAX_PATTERN_CHARS:
            raise InvalidArgument(
                f"Parameter {name!r}: a pattern may have at most {MAX_PATTERN_CHARS} "
                f"characters, not {len(text)}."
            )
        self.text = text
        self.repeats = 0  # unbounded or long repeats: a factor of n each
        self.factor = 1  # optionals (x2) and alternations (branches)
        try:
            tree = regex_shape.parse(text)
        except (re.error, RecursionError, OverflowError) as e:
            raise InvalidArgument(
                f"Parameter {name!r}: {_shown(text)} is not a regex ({e})."
            ) from None
        self._check_shape(tree, name)  # refused shapes are never compiled
        try:
            self.regex = re.compile(text)
        except (re.error, RecursionError, OverflowError) as e:
            raise InvalidArgument(
                f"Parameter {name!r}: {_shown(text)} is not a regex ({e})."
            ) from None

    def _check_shape(self, tree, name: str) -> None:
        for node in regex_shape.nodes(tree):
            if node.kind in _FORBIDDEN:
                raise InvalidArgument(
                    f"Parameter {name!r}: {_shown(self.text)} uses {_FORBIDDEN[node.kind]}, "
                    "which the name filters do not support; write the pattern without them."
                )
            if node.kind not in regex_shape.REPEATS and node.kind != "BRANCH":
                continue
            if node.repeats_around:  # any repeat, even a ? (the tree views have no deadline)
                raise InvalidArgument(
                    f"Parameter {name!r}: {_shown(self.text)} repeats a group that repeats "
                    "or has alternatives (like (a+)+ or (ab|a)*), which can take exponential "
                    "time; write it without a repeated group, e.g. [ab]* for (a|b)*."
                )
            if node.kind == "BRANCH":
                self.factor *= max(len(node.arg[1]), 1)
            elif node.arg[1] == 1:  # an optional: x? or x{0,1}
                self.factor *= 2
            else:
                self.repeats += 1

    def work(self, length: int) -> int:
        """The most backtracking steps a full match on ``length`` characters can take."""
        return self.factor * (math.comb(length + self.repeats, self.repeats) + length)


def parse_patterns(params: Mapping[str, str], name: str) -> List[Pattern]:
    """The comma-separated patterns of parameter ``name`` (tfprof's list form), [] if absent."""
    value = params.get(name) or ""
    texts = [t for t in value.split(",") if t]
    if len(texts) > MAX_PATTERNS:
        raise InvalidArgument(
            f"Parameter {name!r} may list at most {MAX_PATTERNS} patterns, not {len(texts)}."
        )
    return [Pattern(t, name) for t in texts]


def matching(patterns: Sequence[Pattern], names: Sequence[str], name: str = "regex"):
    """A list of bools: whether each name fully matches any pattern (checked for work first)."""
    lengths = [len(n) for n in names]
    work = 0  # an int: the estimate of a long chain of wildcards outgrows any float
    for pattern in patterns:
        for length in lengths:
            work += pattern.work(length)
            if work > MAX_MATCH_WORK:
                raise InvalidArgument(
                    f"Parameter {name!r}: the patterns could take more than "
                    f"{MAX_MATCH_WORK:.0g} matching steps on this profile's {len(names)} "
                    "names; use fewer wildcards (.*) or more literal text."
                )
    return [any(p.regex.fullmatch(n) for p in patterns) for n in names]


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")

"""The shape of a user's regex: parsed once, walked once, judged by each caller.

Python's ``re`` backtracks, so a few characters such as ``(a+)+b`` can take exponential
time. Every place that takes a regex from a user looks at the parsed pattern before it
runs, but each has its own rules: the tree views (``name_patterns``) have no deadline
and refuse more, the trace search (``analysis/trace/safe_regex``) runs under a deadline
and refuses less. This module only parses and walks; the rules stay with the callers.

The walk is iterative (a pattern nested a few hundred groups deep needs no recursion)
and yields each item before what it contains, in the pattern's order, so a caller that
raises at the first refused item reports the leftmost, outermost problem.

Usage::

    for node in nodes(parse(r"(a+)+b")):
        if node.kind in REPEATS and node.repeats_around:
            ...  # a repeat inside a repeat
"""

from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple, Tuple

try:  # Python 3.11+ keeps the parser private; 3.9/3.10 expose it (deprecated later).
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre  # type: ignore[no-redef]

# The upper bound of an unbounded repeat (``*``, ``+``, ``{2,}``).
MAXREPEAT = _sre.MAXREPEAT
REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


class Node(NamedTuple):
    """One item of a parsed pattern."""

    kind: str  # the parser's name for it: "LITERAL", "MAX_REPEAT", "BRANCH", "GROUPREF", ...
    arg: Any  # the parser's argument: (min, max, body) for a repeat, (None, branches) ...
    repeats_around: Tuple[Tuple[int, int], ...]  # (min, max) of each enclosing repeat


def parse(text: str) -> Any:
    """The parser's tree of ``text``; raises ``re.error`` (or RecursionError) when it is not one."""
    return _sre.parse(text)


def nodes(tree: Any) -> Iterator[Node]:
    """Every item of ``tree``, each before the items nested in it, in pattern order."""
    stack: List[Tuple[Iterator[Any], Tuple[Tuple[int, int], ...]]] = [(iter(tree), ())]
    while stack:
        items, around = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            continue
        op, arg = item
        kind = getattr(op, "name", str(op))
        yield Node(kind, arg, around)
        inner = around + ((arg[0], arg[1]),) if kind in REPEATS else around
        for sub in reversed(_subpatterns(arg)):
            stack.append((iter(sub), inner))


def _subpatterns(arg: Any) -> list:
    """The nested patterns of one item's argument (groups, branches, repeats, asserts)."""
    if isinstance(arg, _sre.SubPattern):
        return [arg]
    if isinstance(arg, (list, tuple)):
        return [p for item in arg for p in _subpatterns(item)]
    return []

"""The one regex shape walker serves two callers with different rules; each keeps its own.

The tree views (``common/name_patterns``) have no deadline, so they also refuse
alternation inside a repeat, anything inside a ``?``-repeat that repeats, and
look-arounds. The trace search (``analysis/trace/safe_regex``) matches under a deadline,
so it refuses only back-references and a variable repeat inside a repeat of more than
one. The table pins what each refuses (the reason's keyword) and accepts (``None``).
"""

from __future__ import annotations

import sys

import pytest

from tensorboard_plugin_profile.analysis.trace.safe_regex import check_pattern
from tensorboard_plugin_profile.common import regex_shape
from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.common.name_patterns import Pattern

TREE_REPEAT = "exponential"  # name_patterns: a repeat or alternation inside a repeat
SEARCH_REPEAT = "another repeat"  # safe_regex: a variable repeat inside a repeat
BACKREF = "back-references"

# pattern, tree views' verdict, trace search's verdict
VERDICTS = [
    (r".*", None, None),
    (r"conv\d+", None, None),
    (r".*.*.*x", None, None),
    (r"MatMul|BiasAdd", None, None),
    (r"(ab){2}", None, None),
    (r"(a|b)+c", None, None),  # one-character branches parse as a set, [ab]
    (r"(a|b)?", None, None),
    (r"x{1,3}y", None, None),
    (r"a{0,1}b", None, None),
    (r"a++", None, None),
    (r"(?:a+)", None, None),
    (r"[a+]*", None, None),
    (r"(ab)*?c", None, None),
    (r"(?>(a|b))*", None, None),
    (r"(a+)+b", TREE_REPEAT, SEARCH_REPEAT),
    (r"(a*)*b", TREE_REPEAT, SEARCH_REPEAT),
    (r"(x+x+)+y", TREE_REPEAT, SEARCH_REPEAT),
    (r"(\w+\s?)+$", TREE_REPEAT, SEARCH_REPEAT),
    (r"(?:x*y?)*z", TREE_REPEAT, SEARCH_REPEAT),
    (r"((ab)*c)+", TREE_REPEAT, SEARCH_REPEAT),
    (r"(a?)+", TREE_REPEAT, SEARCH_REPEAT),
    (r"(a{2,3})+", TREE_REPEAT, SEARCH_REPEAT),
    (r"(a?){3}", TREE_REPEAT, SEARCH_REPEAT),
    (r"(x{1,2}){2}", TREE_REPEAT, SEARCH_REPEAT),
    (r"(?>a+)+", TREE_REPEAT, SEARCH_REPEAT),
    (r"(?i:a+)+", TREE_REPEAT, SEARCH_REPEAT),
    # Only the tree views refuse these: the trace search has its deadline.
    (r"(ab|a)*c", TREE_REPEAT, None),
    (r"(?:foo|bar)*", TREE_REPEAT, None),
    (r"(a{2})+", TREE_REPEAT, None),  # a fixed repeat inside a repeat
    (r"(a+)?", TREE_REPEAT, None),  # a repeat inside an optional
    (r"(?=a)a", "look-arounds", None),
    (r"(?<!a)b", "look-arounds", None),
    # The first refused shape gives the reason.
    (r"(?=(a+)+)b", "look-arounds", SEARCH_REPEAT),
    (r"(a+)+|(b)\1", TREE_REPEAT, SEARCH_REPEAT),
    (r"(a)\1", BACKREF, BACKREF),
    (r"(?P<n>a)(?P=n)", BACKREF, BACKREF),
    (r"((a)\2)*", BACKREF, BACKREF),
    (r"(a)?(?(1)b|c)", "conditional groups", BACKREF),
    (r"[", "not a regex", "Bad search_regex"),
    (r"(", "not a regex", "Bad search_regex"),
]


def _refusal(check, text):
    try:
        check(text)
    except InvalidArgument as e:
        return e.message
    return None


@pytest.mark.parametrize("text, tree_reason, search_reason", VERDICTS)
def test_each_caller_refuses_what_it_refused_before(text, tree_reason, search_reason):
    if sys.version_info < (3, 11) and ("++" in text or "(?>" in text):
        pytest.skip("possessive repeats and atomic groups are regex syntax from Python 3.11 on")
    for check, reason in (
        (lambda t: Pattern(t, "show_name_regexes"), tree_reason),
        (check_pattern, search_reason),
    ):
        message = _refusal(check, text)
        if reason is None:
            assert message is None, text
        else:
            assert message is not None and reason in message, (text, message)


def test_a_refusal_names_one_reason_even_when_two_branches_have_one():
    # Before the shared walker, the trace search joined every branch's reason into one run-on.
    message = _refusal(check_pattern, r"(a+)+|(b)\1")
    assert message.count("exponential") == 1 and BACKREF not in message


def test_nodes_come_parents_first_with_the_repeats_around_them():
    seen = [
        (node.kind, node.repeats_around)
        for node in regex_shape.nodes(regex_shape.parse(r"x(a{2}|b+)*"))
        if node.kind in ("LITERAL", "BRANCH") or node.kind in regex_shape.REPEATS
    ]
    unbounded = regex_shape.MAXREPEAT
    star = ((0, unbounded),)
    assert seen == [
        ("LITERAL", ()),
        ("MAX_REPEAT", ()),
        ("BRANCH", star),
        ("MAX_REPEAT", star),
        ("LITERAL", star + ((2, 2),)),
        ("MAX_REPEAT", star),
        ("LITERAL", star + ((1, unbounded),)),
    ]


def test_deep_nesting_walks_without_recursion():
    depth = 240
    tree = regex_shape.parse("(" * depth + "a" + ")" * depth)
    kinds = [node.kind for node in regex_shape.nodes(tree)]
    assert kinds.count("SUBPATTERN") == depth and kinds[-1] == "LITERAL"

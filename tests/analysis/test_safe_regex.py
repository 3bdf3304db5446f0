"""User regexes: refused shapes fail at once, slow ones stop at the deadline."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tensorboard_plugin_profile.analysis.trace import safe_regex
from tensorboard_plugin_profile.common.errors import InvalidArgument


@pytest.mark.parametrize(
    "pattern",
    [r"(\w+\s?)+$", r"(a+)+", r"(?:x*y?)*z", r"((ab)*c)+", r"(a)\1", r"(?P<n>a)(?P=n)", "a" * 501],
)
def test_dangerous_shapes_are_refused_at_once(pattern):
    started = time.perf_counter()
    with pytest.raises(InvalidArgument) as refused:
        safe_regex.check_pattern(pattern)
    assert time.perf_counter() - started < 0.1
    assert "search_regex" in refused.value.message


@pytest.mark.parametrize(
    "pattern", [r"^Thunk", r"conv\d+", r"(ab){2}", r"(a|b)+c", r"x{1,3}y", r"(?:foo|bar)*"]
)
def test_ordinary_patterns_pass(pattern):
    safe_regex.check_pattern(pattern)


def test_bad_syntax_is_a_clear_error():
    with pytest.raises(InvalidArgument, match="Bad search_regex"):
        safe_regex.check_pattern("(")


def test_matches_each_string():
    hits = safe_regex.match_strings(r"conv\d", ["conv1", "matmul", "fused_conv2", ""])
    assert hits.tolist() == [True, False, True, False]
    assert safe_regex.match_strings("x", []).tolist() == []


def test_a_slow_pattern_is_stopped_at_the_deadline():
    # Alternation inside a repeat passes the shape check but backtracks exponentially.
    strings = ["a" * 40, "b"]
    started = time.perf_counter()
    with pytest.raises(InvalidArgument, match="longer than 0.5 s"):
        safe_regex.match_strings(r"(a|a)+!", strings, deadline_s=0.5)
    assert time.perf_counter() - started < 3
    # The slots are released: the next search runs.
    assert safe_regex.match_strings("b", strings).tolist() == [False, True]


def test_results_match_python_re_on_unicode_and_newlines():
    strings = ["héllo\nwörld", "\u2603 snow", "tab\there", "x" * 10_000]
    got = safe_regex.match_strings(r"w.rld|\u2603|\t|x{9999}", strings)
    assert np.array_equal(got, [True, True, True, True])

"""User regexes: refused before matching when they could run long, fast when accepted."""

from __future__ import annotations

import math
import time

import pytest

from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.common.name_patterns import (
    MAX_MATCH_WORK,
    Pattern,
    matching,
    parse_patterns,
)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("(a+)+b", "exponential"),
        ("(a*)*b", "exponential"),
        ("(ab|a)*c", "exponential"),
        ("(x+x+)+y", "exponential"),
        (r"(a)\1", "back-references"),
        ("(?=a)a", "look-arounds"),
        ("(?<!a)b", "look-arounds"),
        ("(a)?(?(1)b|c)", "conditional"),
        ("[", "not a regex"),
    ],
)
def test_pathological_patterns_are_refused(text, reason):
    with pytest.raises(InvalidArgument, match=reason):
        Pattern(text, "show_name_regexes")


def test_common_tfprof_patterns_are_accepted():
    for text in (".*", "gradients/.*", ".*Conv2D.*", "MatMul|BiasAdd", "[A-Z][a-z]+", ".*a.*b.*"):
        Pattern(text, "show_name_regexes")


def test_names_are_matched_whole_as_tfprof_does():
    patterns = parse_patterns({"p": "conv.*,MatMul"}, "p")
    assert matching(patterns, ["conv1/w", "my_conv", "MatMul", "MatMul_1"]) == [
        True,
        False,
        True,
        False,
    ]


def test_the_work_estimate_refuses_wildcard_chains_on_long_names():
    chain = Pattern(".*.*.*x", "p")  # polynomial: about n^3/6 steps on n characters
    assert chain.work(1000) == pytest.approx(math.comb(1003, 3) + 1000)
    started = time.perf_counter()
    assert matching([chain], ["a" * 1000]) == [False]  # accepted: under the limit
    assert time.perf_counter() - started < 3
    with pytest.raises(InvalidArgument, match="matching steps"):
        matching([chain], ["a" * 1200])
    with pytest.raises(InvalidArgument, match="matching steps"):
        matching([Pattern("a?" * 30 + "a" * 30, "p")], ["a" * 30])  # 2^30 ways


def test_the_limit_is_measured_work_not_a_guess():
    # The most work the estimate lets through takes well under a few seconds here.
    length = max(
        n for n in range(100, 2000, 10) if Pattern(".*.*.*x", "p").work(n) <= MAX_MATCH_WORK
    )
    started = time.perf_counter()
    matching([Pattern(".*.*.*x", "p")], ["a" * length])
    assert time.perf_counter() - started < 3


def test_pattern_length_and_count_are_bounded():
    with pytest.raises(InvalidArgument, match="256"):
        Pattern("a" * 257, "p")
    with pytest.raises(InvalidArgument, match="16 patterns"):
        parse_patterns({"p": ",".join("a" * 17)}, "p")


def test_a_long_chain_of_wildcards_on_a_long_name_is_refused_not_an_overflow():
    # 120 repeats on 100,000 characters: an estimate far past what a float holds.
    chain = Pattern(".*" * 120 + "x", "p")
    with pytest.raises(InvalidArgument, match="more than"):
        matching([chain], ["a" * 100_000], "show_name_regexes")

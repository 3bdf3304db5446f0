"""``json_out``: JSON that browsers parse, in bytes that are valid UTF-8."""

from __future__ import annotations

import json

from tensorboard_plugin_profile.common import json_out


def test_non_finite_numbers_are_null():
    assert json_out.dumps({"a": float("nan"), "b": [float("inf"), 1.5]}) == (
        '{"a": null, "b": [null, 1.5]}'
    )


def test_lone_surrogates_become_replacement_characters_and_pairs_their_character():
    # json.loads gives a lone surrogate for "\ud800" (a name in a hostile trace) and keeps a
    # pair split when its halves arrive as separate code points.
    names = json.loads('["op\\ud800", "\\udfffx", "\\ud83d\\ude00"]') + ["a\ud83d\ude00"]
    data = json_out.utf8(json_out.dumps(names, ensure_ascii=False))
    assert json.loads(data.decode("utf-8")) == ["op\ufffd", "\ufffdx", "\U0001f600", "a\U0001f600"]


def test_text_without_surrogates_is_encoded_as_is():
    text = json_out.dumps({"name": "Grüße ✓ \U0001f600"}, ensure_ascii=False)
    assert json_out.utf8(text) == text.encode()
    assert json_out.well_formed(text) == text

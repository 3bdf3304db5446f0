"""Replays every example of docs/http_api.md against the standalone app (STYLE lesson 4)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES, REPO
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

DOC = (REPO / "docs" / "http_api.md").read_text()
HEADING = re.compile(r"^#+ ", re.M)
REQUEST = re.compile(r"### `GET ([^`]+)`")
JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.S)
CUT = "…"


def examples() -> list:
    """(request, JSON example) of each section whose request has no placeholder."""
    found = []
    for section in HEADING.split(DOC):
        request = REQUEST.match("### " + section)
        block = JSON_BLOCK.search(section)
        if request and block and "<" not in request.group(1) and CUT not in request.group(1):
            found.append((request.group(1), block.group(1)))
    return found


def matches(example, actual) -> bool:
    """Example equals actual, except that "…" stands for whatever follows or replaces it."""
    if example == CUT:
        return True
    if isinstance(example, dict):
        return isinstance(actual, dict) and all(
            k in actual and matches(v, actual[k]) for k, v in example.items()
        )
    if isinstance(example, list):
        if example and example[-1] == CUT:
            head = example[:-1]
            return (
                isinstance(actual, list)
                and len(actual) >= len(head)
                and all(matches(e, a) for e, a in zip(head, actual))
            )
        return (
            isinstance(actual, list)
            and len(example) == len(actual)
            and all(matches(e, a) for e, a in zip(example, actual))
        )
    return example == actual


def test_the_doc_has_examples():
    assert len(examples()) >= 8


@pytest.mark.parametrize("url, body", examples(), ids=[u for u, _ in examples()])
def test_example(url, body):
    client = Client(StandaloneApp(str(FIXTURES)))
    response = client.get("/data/plugin/profile/" + url)
    expected = json.loads(body)
    actual = json.loads(response.get_data())
    assert matches(expected, actual), json.dumps(actual)[:2000]

"""Format names are defined once (``common/formats.py``); everything else uses the constants."""

from __future__ import annotations

import ast

from conftest import REPO

from tensorboard_plugin_profile.common import formats

PACKAGE = REPO / "tensorboard_plugin_profile"
NAMES = {formats.XSPACE, formats.PROFILER_HOOK, formats.PYTORCH}
# The same words meaning something else: the decoder package's folder, not a format.
NOT_FORMAT_NAMES = {("store/space_store.py", "xspace")}


def _literal_names(path, text):
    rel = str(path.relative_to(PACKAGE))
    return [
        f"{rel}:{node.lineno} {node.value!r}"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Constant)
        and node.value in NAMES
        and (rel, node.value) not in NOT_FORMAT_NAMES
    ]


def test_format_names_are_string_literals_only_in_common_formats():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "protobuf" not in path.parts and path != PACKAGE / "common" / "formats.py":
            found += _literal_names(path, path.read_text(encoding="utf-8"))
    assert found == []


def test_the_check_sees_a_literal():
    probe = PACKAGE / "tools" / "probe.py"
    assert _literal_names(probe, 'x = getattr(space, "source_format", "xspace")\n') == [
        "tools/probe.py:1 'xspace'"
    ]


def test_format_of_a_space_built_in_code_is_xspace():
    class Built:
        pass

    assert formats.format_of(Built()) == formats.XSPACE
    read = Built()
    read.source_format = formats.PYTORCH  # type: ignore[attr-defined]
    assert formats.format_of(read) == formats.PYTORCH and formats.is_chrome_trace(read)
    assert not formats.is_chrome_trace(Built())

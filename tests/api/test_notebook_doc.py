"""docs/notebook.md runs: its Python blocks, in order, from the repository's root."""

from __future__ import annotations

import os
import re

from conftest import REPO

PAGE = REPO / "docs" / "notebook.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_every_python_block_of_the_page_runs(monkeypatch, capsys):
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    monkeypatch.chdir(REPO)
    scope: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{PAGE.name} block {i + 1}", "exec"), scope)
    out = capsys.readouterr().out
    assert "run='session_1'" in out and "99.9" in out
    assert os.getcwd() == str(REPO)

"""mypy over the package, as CI runs it (config in pyproject.toml ``[tool.mypy]``)."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install -e '.[test]')",
)
def test_package_typechecks():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "tensorboard_plugin_profile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_every_registered_tool_module_satisfies_the_tool_protocol(tmp_path):
    from tensorboard_plugin_profile.tools import TOOLS

    lines = ["from tensorboard_plugin_profile.tools import ToolModule"]
    for i, tool in enumerate(TOOLS.values()):
        lines.append(f"from tensorboard_plugin_profile.tools import {tool.module} as tool_{i}")
        lines.append(f"checked_{i}: ToolModule = tool_{i}")
    check = tmp_path / "check_tools.py"
    check.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", str(check)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"a tool module does not fit ToolModule:\n{result.stdout}"

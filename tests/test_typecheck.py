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

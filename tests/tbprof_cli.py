"""The ``tbprof`` command line as a user runs it, for tests: a fresh ``python -m`` process.

Usage::

    result = tbprof_convert(host_files("jax_cpu_train")[0], "scope_view", "--max_depth", "1")
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)      # bytes: stdout and stderr are captured as is
"""

from __future__ import annotations

import subprocess
import sys

CLI_TIMEOUT_S = 120


def tbprof(*args: str) -> subprocess.CompletedProcess:
    """``tbprof ARGS`` in a child process, its output captured (bytes)."""
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        capture_output=True,
        timeout=CLI_TIMEOUT_S,
    )


def tbprof_convert(path, tool: str, *flags: str) -> subprocess.CompletedProcess:
    """``tbprof convert PATH --tool TOOL FLAGS``: one tool's output for one profile file."""
    return tbprof("convert", str(path), "--tool", tool, *flags)

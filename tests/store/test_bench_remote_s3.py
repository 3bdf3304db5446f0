"""The S3 benchmark, small: bench/remote_s3.py --breakdown run as a user runs it, against
moto's real S3 server on loopback, on a fixture instead of 200 MB (docs/remote_logdirs.md).

The breakdown wraps functions of the store and the decoder by name, so a function that moves
between modules breaks it (as it did once, with an AttributeError); this catches that."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO, host_files
from remote_servers import moto_server_command

pytest.importorskip(
    "s3fs", reason="s3fs is not installed: pip install 'tensorboard-plugin-profile[cloud]'"
)
pytest.importorskip("psutil", reason="the breakdown counts CPU seconds with psutil")
pytestmark = pytest.mark.skipif(
    moto_server_command() is None,
    reason="moto_server not found (.ci/run makes .venv-moto with moto[server])",
)


def test_the_breakdown_runs_and_says_where_the_s3_time_went():
    profile = str(host_files("jax_cpu_train")[0])
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "remote_s3.py"), "--breakdown", profile],
        capture_output=True, text=True, timeout=240, env=env, cwd=str(REPO),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for line in (
        "S3 cold overview:",
        "CPU of this process: local",
        "S3: download + cache write",
        "S3: decoder walk (compiled)",
        "S3: first bytes",
        "GETs of the object after the restart: 0",
    ):
        assert line in out, out

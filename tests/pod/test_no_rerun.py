"""A user's script is never run again by our worker processes (issue 28, item 5).

Real scripts in real interpreters: a plain script without an ``if __name__ == "__main__":``
guard, the same script read from stdin, and a guarded script that asks for workers. Before,
the plain script printed its output three times and then "host decoding pool failed"; from
stdin, two ``FileNotFoundError`` tracebacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from conftest import FIXTURES, REPO

from tensorboard_plugin_profile.store import host_pool

SCRIPT = f"""
import multiprocessing
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig

print("SCRIPT RAN", flush=True)
config = CacheConfig({{workers}})
service = ProfileService({str(FIXTURES / "jax_two_hosts")!r}, config=config)
run = service.runs()[0]
answer = service.tool_data(run, "overview_page", host="ALL_HOSTS").json()
print("steps", len(answer[1]["rows"]), "workers", len(multiprocessing.active_children()))
service.close()
"""


def _run(args: list, script: str, stdin: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("TBPROF_WORKERS", None)
    return subprocess.run(
        [sys.executable, *args],
        input=script if stdin else None,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _check_in_process(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("SCRIPT RAN") == 1, result.stdout
    assert "Traceback" not in result.stderr and "pool failed" not in result.stderr
    steps = [line for line in result.stdout.splitlines() if line.startswith("steps")]
    assert steps and steps[0].split()[1] != "0" and steps[0].endswith("workers 0")


def test_a_plain_script_without_a_guard_runs_once_and_in_process(tmp_path):
    script = tmp_path / "notebook_cell.py"
    script.write_text(SCRIPT.replace("{workers}", ""))
    _check_in_process(_run([str(script)], ""))


def test_a_script_from_stdin_runs_once_and_in_process():
    _check_in_process(_run(["-"], SCRIPT.replace("{workers}", ""), stdin=True))


def test_workers_asked_for_by_a_guarded_script_are_used(tmp_path):
    guarded = "def main():\n" + "".join(
        "    " + line + "\n" for line in SCRIPT.replace("{workers}", "workers=2").splitlines()
    )
    guarded += 'if __name__ == "__main__":\n    main()\n'
    script = tmp_path / "guarded.py"
    script.write_text(guarded)
    result = _run([str(script)], "")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("SCRIPT RAN") == 1
    assert result.stdout.strip().endswith("workers 2"), result.stdout


@pytest.mark.parametrize(
    "spec, path, safe",
    [
        ("tensorboard_plugin_profile.__main__", None, True),  # python -m tensorboard_plugin_profile
        ("tensorboard.main", None, True),  # python -m tensorboard.main
        (None, "/venv/bin/tbprof", True),  # the console scripts guard main()
        (None, "/venv/bin/tensorboard", True),
        (None, None, True),  # a notebook, python -c, the prompt: nothing to re-run
        ("train", None, False),  # python -m train: a user's module
        (None, "/home/me/train.py", False),  # a user's script
        (None, "<stdin>", False),
    ],
)
def test_the_rule_for_starting_workers(monkeypatch, spec, path, safe):
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name=spec) if spec else None  # type: ignore[assignment]
    if path:
        main.__file__ = path
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert host_pool.spawn_is_safe() is safe
    assert (host_pool.pool_for(None) is not None) is safe
    assert host_pool.pool_for(2) is not None  # asked for: always

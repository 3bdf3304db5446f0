"""The tbprof command: convert a single file or a session folder, as a user would."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from conftest import host_files

from tensorboard_plugin_profile.store.disk_cache import DiskCache
from tensorboard_plugin_profile.web.cli import build_parser, main

JAX_FILE = host_files("jax_cpu_train")[0]
TF_FILE = host_files("tf_memory")[0]  # TF stats has rows there (a JAX profile has none)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        capture_output=True,
        timeout=120,
    )


def test_convert_a_single_file_to_stdout():
    result = run_cli("convert", str(JAX_FILE), "--tool", "trace_viewer")
    assert result.returncode == 0, result.stderr
    trace = json.loads(result.stdout)
    assert trace["traceEvents"][0]["name"] == "process_name"


def test_convert_a_session_folder_to_csv_file(tmp_path):
    out = tmp_path / "ops.csv"
    code = main(
        [
            "convert",
            str(TF_FILE.parent),
            "--tool",
            "framework_op_stats",
            "--format",
            "csv",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0][:3] == ["Rank", "Host/device", "Operation Type"]
    assert len(rows) > 1


def test_errors_are_one_line_without_traceback(tmp_path):
    result = run_cli("convert", str(tmp_path), "--tool", "trace_viewer")
    assert result.returncode == 1
    assert b"No profile (.xplane.pb or Chrome trace) found" in result.stderr
    assert b"Traceback" not in result.stderr
    bad = tmp_path / "bad.xplane.pb"
    bad.write_bytes(b"\x0a\xff\xff")
    result = run_cli("convert", str(bad), "--tool", "trace_viewer")
    assert result.returncode == 1 and b"bad.xplane.pb" in result.stderr
    result = run_cli("convert", str(JAX_FILE), "--tool", "nope")
    assert result.returncode == 1 and b"Unknown tool" in result.stderr


def test_serve_defaults_to_loopback_and_capture_commands_exist():
    args = build_parser().parse_args(["serve", "--logdir", "x"])
    assert (args.host, args.port) == ("127.0.0.1", 8791)
    args = build_parser().parse_args(
        ["capture", "grpc://localhost:9999", "--logdir", "x", "--duration-ms", "2000"]
    )
    assert args.command == "capture"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["frobnicate"])


def test_cache_clear_on_the_folder_above_the_cache_deletes_nothing_and_fails(tmp_path):
    home = tmp_path / "cache_home"  # what --cache_dir ~/.cache points at
    weights = home / "hub" / "model" / "pytorch_model.bin"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"weights")
    ours = DiskCache(str(home / "tensorboard-plugin-profile"))
    assert ours.store_bytes("result", ["k"], b"ours")
    entry = ours.path_of("result", ["k"])
    for action in ("clear", "info"):
        result = run_cli("cache", action, "--cache_dir", str(home))
        assert result.returncode == 1, result.stdout
        assert b"is not a tensorboard-plugin-profile cache" in result.stderr
        assert b"Traceback" not in result.stderr
    assert weights.read_bytes() == b"weights" and os.path.exists(entry)
    result = run_cli("cache", "info", "--cache_dir", ours.root)
    assert result.returncode == 0 and b": 1 entries" in result.stdout
    result = run_cli("cache", "clear", "--cache_dir", ours.root)
    assert result.returncode == 0 and result.stdout.startswith(b"removed 1 cache entries")
    assert weights.read_bytes() == b"weights" and not os.path.exists(entry)

"""``format=pprof`` of the scope and code views: a profile.proto a pprof reader accepts.

The profile is decoded with the protobuf runtime against pprof's messages written from
the public specification (``profile_proto.py``) and checked for what ``go tool pprof`` and
speedscope's importer rely on: ids that resolve, one value per sample type, string
indices in range, string 0 empty, a stack per sample leaf first. Where a Go toolchain is
installed (Debian's ``golang-go``), ``go tool pprof`` itself reads the files too.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess

import pytest
from conftest import FIXTURES, host_files
from tbprof_cli import tbprof_convert
from werkzeug.test import Client

from tensorboard_plugin_profile.analysis.ops.attribution import op_records
from tensorboard_plugin_profile.tools import code_view, scope_view
from tensorboard_plugin_profile.tools.pprof import CONTENT_TYPE
from tensorboard_plugin_profile.web.server import StandaloneApp
from tools.compare_tables import fixture_hosts

from .profile_proto import Profile


def decode(data: bytes):
    assert data[:2] == b"\x1f\x8b", "pprof files are gzip-compressed"
    profile = Profile()
    profile.ParseFromString(gzip.decompress(data))
    return profile


def check_structure(profile) -> None:
    strings = profile.string_table
    assert strings[0] == ""
    in_range = range(len(strings))
    assert [strings[t.type] for t in profile.sample_type] == ["time", "occurrences"]
    assert strings[profile.default_sample_type] == "time"
    assert [m.has_functions for m in profile.mapping] == [True]
    functions = {f.id: f for f in profile.function}
    locations = {loc.id: loc for loc in profile.location}
    assert 0 not in functions and 0 not in locations
    for f in profile.function:
        assert f.name in in_range and f.filename in in_range and strings[f.name]
    for loc in profile.location:
        assert loc.line and all(line.function_id in functions for line in loc.line)
        assert loc.mapping_id == profile.mapping[0].id
    for sample in profile.sample:
        assert len(sample.value) == len(profile.sample_type)
        assert sample.location_id and all(i in locations for i in sample.location_id)


def stacks(profile) -> dict:
    """Root-first function names of each sample -> its time in ns."""
    strings = profile.string_table
    name = {f.id: strings[f.name] for f in profile.function}
    where = {loc.id: name[loc.line[0].function_id] for loc in profile.location}
    out: dict = {}
    for sample in profile.sample:
        key = tuple(where[i] for i in reversed(sample.location_id))
        out[key] = out.get(key, 0) + sample.value[0]
    return out


@pytest.mark.parametrize("name", ["jax_cpu_train", "tf_keras2_fit", "tf_memory"])
def test_scope_view_pprof_holds_every_op_time_along_its_scopes(name):
    hosts = list(fixture_hosts(name))
    output = scope_view.convert(hosts, {"format": "pprof"})
    assert output.content_type == CONTENT_TYPE
    profile = decode(b"".join(output.chunks()))
    check_structure(profile)
    records = op_records(hosts)
    assert len(profile.sample) == len(records)
    assert sum(s.value[0] for s in profile.sample) == sum(records["self_time_ps"] // 1000)
    assert sum(s.value[1] for s in profile.sample) == records["occurrences"].sum()
    ours = stacks(profile)
    for scope in records["scope"]:
        assert tuple(scope) in ours
    assert sum(ours.values()) == sum(records["self_time_ps"] // 1000)


def test_code_view_pprof_keeps_python_files_and_lines():
    hosts = list(fixture_hosts("jax_cpu_train"))
    profile = decode(b"".join(code_view.convert(hosts, {"format": "pprof"}).chunks()))
    check_structure(profile)
    strings = profile.string_table
    files = {strings[f.filename] for f in profile.function if f.filename}
    assert any(f.endswith("gen_jax_cpu_train.py") for f in files), files
    lines = [line.line for loc in profile.location for line in loc.line]
    assert any(n > 0 for n in lines)
    # The frame "$.../gen_jax_cpu_train.py:57 train_step" is the function train_step.
    names = {strings[f.name] for f in profile.function}
    assert "train_step" in names


def test_account_type_regexes_apply_to_the_pprof_too():
    hosts = list(fixture_hosts("tf_keras2_fit"))
    records = op_records(hosts)
    wanted = records["type"].astype(str).str.fullmatch("MatMul")
    output = scope_view.convert(hosts, {"format": "pprof", "account_type_regexes": "MatMul"})
    profile = decode(b"".join(output.chunks()))
    assert len(profile.sample) == int(wanted.sum()) > 0


def test_pprof_over_http_is_a_download():
    client = Client(StandaloneApp(str(FIXTURES)))
    response = client.get(
        "/data/plugin/profile/data",
        query_string={"run": "jax_cpu_train/session_1", "tag": "code_view", "format": "pprof"},
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith(CONTENT_TYPE)
    check_structure(decode(response.get_data()))


def test_tbprof_convert_format_pprof_writes_the_file(tmp_path):
    out = tmp_path / "scope.pb.gz"
    options = ("--format", "pprof", "--max_depth", "3", "-o", str(out))
    result = tbprof_convert(host_files("jax_cpu_train")[0], "scope_view", *options)
    assert result.returncode == 0, result.stderr
    check_structure(decode(out.read_bytes()))


def go_pprof(path, *args, home) -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain here (apt-get install golang-go runs go tool pprof)")
    env = {**os.environ, "HOME": str(home), "GOCACHE": str(home / "gocache")}
    result = subprocess.run(
        [go, "tool", "pprof", *args, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "binary" not in result.stderr, result.stderr  # the mapping says: no binary to find
    return result.stdout


@pytest.mark.parametrize(
    "tool, name", [("code_view", "jax_cpu_train"), ("scope_view", "tf_keras2_fit")]
)
def test_go_tool_pprof_reads_the_file(tmp_path, tool, name):
    hosts = list(fixture_hosts(name))
    module = code_view if tool == "code_view" else scope_view
    path = tmp_path / f"{tool}.pb.gz"
    path.write_bytes(b"".join(module.convert(hosts, {"format": "pprof"}).chunks()))
    top = go_pprof(path, "-top", "-unit=us", home=tmp_path)
    total_us = float(re.search(r"of ([\d.]+)us total", top).group(1))
    expected_us = sum(op_records(hosts)["self_time_ps"] // 1000) / 1e3
    assert total_us == pytest.approx(expected_us, abs=0.01), top[:400]
    traces = go_pprof(path, "-traces", home=tmp_path)
    assert ("train_step" if tool == "code_view" else "Conv2DBackpropFilter") in traces

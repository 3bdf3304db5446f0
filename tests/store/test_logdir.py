"""Run, session and host discovery, and paths that try to leave the logdir."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import FIXTURES, host_files

from tensorboard_plugin_profile.common.errors import InvalidArgument, NotFound
from tensorboard_plugin_profile.store import logdir as logdir_module
from tensorboard_plugin_profile.store.logdir import LogDir


def _session(root, run_dir, session, hosts=("vm",), source=None):
    folder = root / run_dir / "plugins" / "profile" / session
    folder.mkdir(parents=True)
    source = source or host_files("jax_cpu_train")[0]
    for host in hosts:
        shutil.copyfile(source, folder / f"{host}.xplane.pb")
    return folder


@pytest.fixture
def logdir(tmp_path):
    _session(tmp_path, ".", "2026_01_01_00_00_00")
    _session(tmp_path, "train", "2026_01_02_00_00_00", hosts=("host.example.com", "h2"))
    _session(tmp_path, "a/b/c", "sess")
    empty = tmp_path / "emptysess" / "plugins" / "profile" / "sess"
    empty.mkdir(parents=True)
    (empty / "stray.txt").write_text("x")
    (tmp_path / "train" / "plugins" / "profile" / "stray.txt").write_text("x")
    return tmp_path


def test_runs_are_named_like_tensorboard_runs_newest_first(logdir):
    assert LogDir(str(logdir)).runs() == [
        "train/2026_01_02_00_00_00",
        "emptysess/sess",
        "a/b/c/sess",
        "2026_01_01_00_00_00",
    ]


def test_hosts_keep_dots_and_sessions_without_files_are_empty(logdir):
    ld = LogDir(str(logdir))
    assert ld.session("train/2026_01_02_00_00_00").hosts() == ["h2", "host.example.com"]
    assert ld.session("emptysess/sess").hosts() == []


@pytest.mark.parametrize(
    "run",
    ["../etc", "..", "/etc/passwd", "train/../../x", "%2e%2e/x", "train\\..\\..", "train/"],
)
def test_traversal_run_names_are_not_found(logdir, run):
    with pytest.raises(NotFound):
        LogDir(str(logdir)).session(run)


def test_empty_run_name_is_invalid(logdir):
    with pytest.raises(InvalidArgument):
        LogDir(str(logdir)).session("")


def test_unknown_host_is_not_found(logdir):
    session = LogDir(str(logdir)).session("a/b/c/sess")
    for host in ("nope", "../vm", "vm.xplane.pb"):
        with pytest.raises(NotFound):
            session.host_file(host)


def test_symlinks_leading_out_of_the_logdir_are_skipped(tmp_path):
    outside = tmp_path / "outside"
    secret_session = _session(outside, ".", "secret")
    inside = tmp_path / "logs"
    good = _session(inside, ".", "good")
    os.symlink(secret_session, inside / "plugins" / "profile" / "linked")
    os.symlink(secret_session / "vm.xplane.pb", good / "evil.xplane.pb")
    ld = LogDir(str(inside))
    assert ld.runs() == ["good"]
    assert ld.session("good").hosts() == ["vm"]


def test_new_sessions_appear_without_restart(tmp_path, monkeypatch):
    monkeypatch.setattr(logdir_module, "UNKNOWN_RUN_REWALK_S", 0.0)  # no wait between walks
    ld = LogDir(str(tmp_path))
    assert ld.runs() == []
    _session(tmp_path, ".", "later")
    assert ld.session("later").hosts() == ["vm"]  # unknown run forces a refresh


def test_a_single_session_folder_or_file_opens_as_one_run(logdir):
    folder = logdir / "train" / "plugins" / "profile" / "2026_01_02_00_00_00"
    assert LogDir(str(folder)).runs() == ["2026_01_02_00_00_00"]
    by_file = LogDir(str(folder / "h2.xplane.pb"))
    assert by_file.runs() == ["2026_01_02_00_00_00"]
    assert by_file.session("2026_01_02_00_00_00").hosts() == ["h2"]


def test_missing_or_unset_logdir_has_no_runs(tmp_path):
    assert LogDir("").runs() == []
    assert LogDir(str(tmp_path / "missing")).runs() == []
    assert LogDir(str(tmp_path / "missing")).diagnose().exists is False


def test_diagnosis_explains_misplaced_files(tmp_path):
    (tmp_path / "profiles").mkdir()
    shutil.copyfile(host_files("jax_cpu_train")[0], tmp_path / "profiles" / "vm.xplane.pb")
    (tmp_path / "x.trace.json.gz").write_bytes(b"")
    (tmp_path / "events.out.tfevents.1").write_bytes(b"")
    diag = LogDir(str(tmp_path)).diagnose()
    assert diag.sessions == 0
    assert any("vm.xplane.pb" in s and "plugins/profile" in s for s in diag.skipped)
    assert any("x.trace.json.gz" in s for s in diag.skipped)
    assert diag.other_files == ["events.out.tfevents.1"]


def test_cached_activity_answer_never_walks(tmp_path):
    ld = LogDir(str(tmp_path))
    assert ld.has_runs_cached() is None
    _session(tmp_path, ".", "s")
    ld.refresh()
    assert ld.has_runs_cached() is True


def test_unknown_run_names_walk_the_tree_at_most_once_a_second(tmp_path, monkeypatch):
    _session(tmp_path, ".", "s")
    ld = LogDir(str(tmp_path))
    assert ld.runs() == ["s"]
    walks = []
    real = ld._discover
    monkeypatch.setattr(ld, "_discover", lambda: walks.append(1) or real())
    for i in range(200):
        with pytest.raises(NotFound):
            ld.session(f"made_up_{i}")
    assert len(walks) <= 1
    _session(tmp_path, ".", "new")
    monkeypatch.setattr(logdir_module, "UNKNOWN_RUN_REWALK_S", 0.0)
    assert ld.session("new").hosts() == ["vm"]  # a new run is still found by its name


def test_probe_answers_before_discovery_has_run(logdir, tmp_path):
    ld = LogDir(str(logdir))
    assert ld.has_runs_cached() is None
    assert ld.probe_has_runs() is True
    assert ld.has_runs_cached() is None  # the probe does not stand in for discovery
    (tmp_path / "empty" / "plugins" / "profile").mkdir(parents=True)
    assert LogDir(str(tmp_path / "empty")).probe_has_runs() is False
    assert LogDir(str(tmp_path / "missing")).probe_has_runs() is False


def test_probe_gives_up_when_its_budget_runs_out(tmp_path):
    for i in range(50):
        (tmp_path / f"d{i}").mkdir()
    assert LogDir(str(tmp_path)).probe_has_runs(budget_s=-1.0) is None


def test_a_host_file_lists_and_opens_the_event_files_beside_it(tmp_path):
    # One path for the ProfilerHook graph on disk and in a bucket (remote: test_remote_logdir).
    fixture = FIXTURES / "profiler_hook" / "train"
    run = tmp_path / "logs" / "train"
    shutil.copytree(fixture, run)
    (run / "events.out.tfevents.1000.vm").write_bytes(b"older")
    (run / "notes.txt").write_text("not an event file")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"secret")
    os.symlink(outside, run / "events.out.tfevents.9999.evil")
    ld = LogDir(str(tmp_path / "logs"))
    host_file = ld.session(ld.runs()[0]).host_files[0]
    names = host_file.event_files_beside()
    assert names == [
        "events.out.tfevents.1000.vm",
        "events.out.tfevents.1795462996.vm",
        "events.out.tfevents.9999.evil",
    ]
    with host_file.open_beside(names[1]) as f:
        assert f.read() == (fixture / names[1]).read_bytes()
    with pytest.raises(NotFound):  # a link out of the logdir is never read
        host_file.open_beside(names[2])

"""The input-format registry: each entry's matcher on the real fixtures, names, and readers."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, REPO

from tensorboard_plugin_profile.common.formats import (
    NAMED_FILES,
    PROFILER_HOOK,
    PYTORCH,
    SESSION_FOLDERS,
    XSPACE,
    FileName,
)
from tensorboard_plugin_profile.store import formats
from tensorboard_plugin_profile.store.profile_reader import read_profile

# Every profile file among the fixtures, by the format it is.
FIXTURE_FILES = {
    XSPACE: sorted(FIXTURES.glob("*/plugins/profile/*/*.xplane.pb")),
    PROFILER_HOOK: sorted(FIXTURES.glob("profiler_hook/train/timeline-*.json")),
    PYTORCH: sorted(FIXTURES.glob("pytorch_*/run/*.pt.trace.json.gz")),
}
PROFILES = {path for paths in FIXTURE_FILES.values() for path in paths}
# Everything else under tests/data: reference answers (many *.json), READMEs, HLO text.
OTHER_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p not in PROFILES)


def test_the_registry_holds_each_format_once_in_one_layout():
    assert [entry.name for entry in formats.FORMATS] == [XSPACE, PROFILER_HOOK, PYTORCH]
    assert set(formats.BY_NAME) == set(FIXTURE_FILES)
    assert {entry.layout for entry in formats.FORMATS} == {SESSION_FOLDERS, NAMED_FILES}
    assert all(len(paths) >= 3 for paths in FIXTURE_FILES.values())


@pytest.mark.parametrize("entry", formats.FORMATS, ids=lambda entry: entry.name)
def test_each_matcher_takes_its_fixtures_and_no_other_file(entry):
    for path in FIXTURE_FILES[entry.name]:
        found = entry.file_name(path.name)
        assert found is not None and found.format == entry.name and found.host, path.name
    others = [p for name, paths in FIXTURE_FILES.items() if name != entry.name for p in paths]
    assert len(OTHER_FILES) > 100
    taken = [p.name for p in others + OTHER_FILES if entry.file_name(p.name) is not None]
    assert taken == []


@pytest.mark.parametrize(
    "name, expected",
    [
        ("vm.xplane.pb", FileName(XSPACE, "", "vm")),
        ("34.83.195.179_6003.xplane.pb", FileName(XSPACE, "", "34.83.195.179_6003")),
        (".xplane.pb", FileName(XSPACE, "", "")),  # marks a session folder, lists no host
        ("vm.xplane.pb.gz", None),  # read when named, never discovered
        ("timeline-12.json.gz", FileName(PROFILER_HOOK, "timeline-12", "timeline-12")),
        ("timeline-x.json", None),
        ("rank0.1.pt.trace.json.gz", FileName(PYTORCH, "1", "rank0")),
        ("host.example.com_77.3.pt.trace.json", FileName(PYTORCH, "3", "host.example.com_77")),
        ("7.pt.trace.json", FileName(PYTORCH, "7", "worker")),
        ("mine.pt.trace.json", FileName(PYTORCH, "trace", "mine")),
        ("x.trace.json.gz", None),
        ("trace.json", None),
    ],
)
def test_what_a_file_name_says(name, expected):
    assert formats.match(name) == expected


def test_a_file_given_on_its_own():
    loose = formats.single_file_name("my trace.json")
    assert loose == FileName(PROFILER_HOOK, "my trace", "my trace")
    assert formats.layout_of(loose) == NAMED_FILES
    assert formats.single_file_name("rank1.1.pt.trace.json.gz") == FileName(PYTORCH, "1", "rank1")
    assert formats.layout_of(formats.single_file_name("vm.xplane.pb")) == SESSION_FOLDERS
    assert formats.single_file_name("notes.txt") is None
    assert formats.single_file_name(".json") is None


def test_sessions_group_named_files_of_every_named_files_format():
    names = ["b.1.pt.trace.json", "a.1.pt.trace.json", "timeline-3.json", "vm.xplane.pb", "x.txt"]
    sessions = formats.sessions_in(names)
    assert {s: [(f.host, n) for f, n in files] for s, files in sessions.items()} == {
        "1": [("a", "a.1.pt.trace.json"), ("b", "b.1.pt.trace.json")],
        "timeline-3": [("timeline-3", "timeline-3.json")],
    }


def test_pytorch_spans_pair_up_by_order_as_torch_tb_profiler_pairs_them():
    """A real DDP job's ranks stamp their spans apart: the k-th span of each worker is one
    session, named after its smallest span (before: one session per rank)."""
    names = sorted(p.name for p in (FIXTURES / "pytorch_ddp_ns" / "run").iterdir())
    sessions = formats.sessions_in(names)
    assert {s: [f.host for f, _ in files] for s, files in sessions.items()} == {
        "1795771884814333529": ["rank0", "rank1"]
    }
    sessions = formats.sessions_in(
        ["w0.300.pt.trace.json", "w1.310.pt.trace.json", "w0.100.pt.trace.json",
         "w1.90.pt.trace.json", "w0.2.pt.trace.json", "solo.pt.trace.json"]
    )  # fmt: skip
    assert {s: sorted(n for _, n in files) for s, files in sessions.items()} == {
        "2": ["w0.2.pt.trace.json", "w1.90.pt.trace.json"],  # by number: 90 before 310
        "100": ["w0.100.pt.trace.json", "w1.310.pt.trace.json"],
        "300": ["w0.300.pt.trace.json"],  # w1 has no third span
        "trace": ["solo.pt.trace.json"],
    }


@pytest.mark.parametrize("name", sorted(FIXTURE_FILES))
def test_the_reader_an_entry_names_reads_its_smallest_fixture_as_that_format(name):
    path = min(FIXTURE_FILES[name], key=lambda p: p.stat().st_size)
    entry = formats.reader_for(path.name)
    assert entry.name == name
    assert entry.read_path(str(path)).source_format == name
    assert read_profile(str(path)).source_format == name


def test_files_no_entry_claims_go_to_the_chrome_trace_reader():
    assert formats.reader_for("vm.xplane.pb.gz").name == XSPACE
    assert formats.reader_for("my trace.json") is formats.OTHER_FILES
    assert formats.reader_for("notes.txt").read_path is formats.OTHER_FILES.read_path


def test_the_architecture_doc_lists_every_format():
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for entry in formats.FORMATS:
        assert f"`{entry.name}` | `{entry.file_pattern}` |" in doc, entry.name

"""The disk cache: decoded profiles and tool results survive a restart, and nothing bad is shown."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import threading
import time
import zlib

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES, all_host_files, host_files

from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.common.memsize import usable_memory_bytes
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import cache_dir, frames_codec
from tensorboard_plugin_profile.store.cache_config import CacheConfig, default_memory_bytes
from tensorboard_plugin_profile.store.cache_entry import FORMAT_VERSION, MAGIC
from tensorboard_plugin_profile.store.disk_cache import DiskCache
from tensorboard_plugin_profile.tools import ALL_HOSTS, overview_page, trace_viewer_at
from tensorboard_plugin_profile.xspace import read_xspace


def _service(logdir, cache_dir, **kwargs) -> ProfileService:
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=str(cache_dir), **kwargs))


def _body(result) -> bytes:
    return b"".join(result.chunks())


def assert_same_space(a, b) -> None:
    for field in dataclasses.fields(a):
        if field.name != "planes":
            assert getattr(a, field.name) == getattr(b, field.name), field.name
    assert len(a.planes) == len(b.planes)
    for p, q in zip(a.planes, b.planes):
        for field in dataclasses.fields(p):
            x, y = getattr(p, field.name), getattr(q, field.name)
            if isinstance(x, pd.DataFrame):
                pd.testing.assert_frame_equal(x, y, check_exact=True)
            else:
                assert x == y, field.name


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: f"{p.parts[-5]}/{p.name}")
def test_every_fixture_round_trips_through_the_disk_cache(path, tmp_path):
    disk = DiskCache(str(tmp_path))
    fresh = read_xspace(str(path))
    assert disk.store_value("space", ["k", str(path)], fresh)
    loaded = disk.load_value("space", ["k", str(path)])
    assert_same_space(fresh, loaded)
    # And the tools read both the same way.
    a, b = [("host", fresh)], [("host", loaded)]
    assert _body(_to_output(overview_page.convert(a, {}))) == _body(
        _to_output(overview_page.convert(b, {}))
    )
    window = {"format": "columnar", "resolution": "500"}
    assert trace_viewer_at.convert(a, window) == trace_viewer_at.convert(b, window)


def _to_output(output):
    from tensorboard_plugin_profile.service import _to_result

    return _to_result(output)


def test_a_restarted_service_answers_every_tool_from_disk_without_decoding(tmp_path):
    logdir = FIXTURES / "tf_keras2_fit"
    first = _service(logdir, tmp_path)
    run = first.runs()[0]
    tools = first.run_tools(run)
    answers = {tool: _body(first.tool_data(run, tool)) for tool in tools}
    first.close()
    assert first.spaces.decodes == 1

    second = _service(logdir, tmp_path)
    assert second.run_tools(run) == tools
    for tool in tools:
        assert _body(second.tool_data(run, tool)) == answers[tool], tool
    assert second.spaces.decodes == 0
    # A tool not answered before needs the Space: loaded from disk, still no decode.
    window = {"format": "columnar", "start_time_ms": "0", "end_time_ms": "1e9"}
    assert _body(second.tool_data(run, "trace_viewer@", params=window))
    assert second.spaces.decodes == 0


def test_a_not_applicable_answer_is_cached_on_disk_too(tmp_path):
    logdir = FIXTURES / "jax_cpu_train"
    first = _service(logdir, tmp_path)
    run = first.runs()[0]
    with pytest.raises(Exception) as before:
        first.tool_data(run, "memory_profile")
    second = _service(logdir, tmp_path)
    with pytest.raises(type(before.value)) as after:
        second.tool_data(run, "memory_profile")
    assert after.value.message == before.value.message
    assert second.spaces.decodes == 0


def test_csv_export_is_the_same_from_disk(tmp_path):
    logdir = FIXTURES / "tf_keras2_fit"
    first = _service(logdir, tmp_path)
    run = first.runs()[0]
    before = first.tool_csv(run, "framework_op_stats")
    second = _service(logdir, tmp_path)
    assert second.tool_csv(run, "framework_op_stats") == before
    assert second.spaces.decodes == 0


def _only_entry(tmp_path, kind: str) -> str:
    folder = tmp_path / f"v{FORMAT_VERSION}"
    names = [n for n in os.listdir(folder) if n.startswith(kind)]
    assert len(names) == 1
    return str(folder / names[0])


@pytest.mark.parametrize(
    "damage",
    ["flip a payload byte", "truncate", "append", "garbage", "empty", "other format"],
)
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path, damage):
    logdir = FIXTURES / "jax_cpu_train"
    first = _service(logdir, tmp_path)
    run = first.runs()[0]
    good = _body(first.tool_data(run, "overview_page"))
    first.close()
    for kind in ("result", "space"):
        path = _only_entry(tmp_path, kind)
        data = bytearray(open(path, "rb").read())
        if damage == "flip a payload byte":
            data[-10] ^= 0xFF
        elif damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "append":
            data += b"\0" * 64
        elif damage == "garbage":
            data = bytearray(os.urandom(len(data)))
        elif damage == "empty":
            data = bytearray()
        else:
            data = data.replace(b'"format":%d' % FORMAT_VERSION, b'"format":9', 1)
        open(path, "wb").write(bytes(data))

    second = _service(logdir, tmp_path)
    assert _body(second.tool_data(run, "overview_page")) == good
    assert second.spaces.decodes == 1  # the damaged Space was not used either
    second.close()
    third = _service(logdir, tmp_path)  # and the entries were rewritten
    assert _body(third.tool_data(run, "overview_page")) == good
    assert third.spaces.decodes == 0


def test_a_changed_profile_is_never_answered_from_its_old_entry(tmp_path):
    session = tmp_path / "logs" / "plugins" / "profile" / "s1"
    session.mkdir(parents=True)
    source = host_files("jax_cpu_train")[0]
    target = session / "vm.xplane.pb"
    target.write_bytes(source.read_bytes())
    cache_dir = tmp_path / "cache"
    first = _service(tmp_path / "logs", cache_dir)
    before = _body(first.tool_data("s1", "overview_page"))
    first.close()
    # Another profile under the same path (size and mtime change).
    target.write_bytes(host_files("tf_keras2_fit")[0].read_bytes())
    second = _service(tmp_path / "logs", cache_dir)
    after = _body(second.tool_data("s1", "overview_page"))
    assert after != before
    assert second.spaces.decodes == 1


def test_an_entry_of_another_key_with_the_same_file_name_is_a_miss(tmp_path):
    disk = DiskCache(str(tmp_path))
    disk.store_bytes("result", ["a"], b"answer for a")
    os.replace(disk.path_of("result", ["a"]), disk.path_of("result", ["b"]))
    assert disk.load_bytes("result", ["b"]) is None


def test_nothing_on_disk_is_unpickled_or_imported_from_outside_the_package(tmp_path):
    disk = DiskCache(str(tmp_path))
    disk.store_value("space", ["k"], {"x": 1})
    path = disk.path_of("space", ["k"])
    data = open(path, "rb").read()
    evil_tree = {"$dc": "os:system", "f": [["command", "echo pwned"]]}
    data = data.replace(b'"tree":{"$d":[["x",1]]}', b'"tree":' + json.dumps(evil_tree).encode())
    open(path, "wb").write(data)
    assert disk.load_value("space", ["k"]) is None  # the checksum fails (or the class is refused)
    with pytest.raises(frames_codec.Stale):
        frames_codec.decode(evil_tree, [])
    with pytest.raises(frames_codec.Unsupported):
        frames_codec.encode(pickle)  # a module is not data


def test_two_writers_of_one_entry_leave_a_whole_entry(tmp_path):
    space = read_xspace(str(host_files("jax_cpu_train")[0]))
    disks = [DiskCache(str(tmp_path)) for _ in range(4)]
    threads = [threading.Thread(target=d.store_value, args=("space", ["k"], space)) for d in disks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_same_space(space, disks[0].load_value("space", ["k"]))
    assert not [n for n in os.listdir(tmp_path / f"v{FORMAT_VERSION}") if n.startswith(".tmp-")]


def test_the_disk_cache_keeps_under_its_cap_by_dropping_the_least_recently_used(tmp_path):
    disk = DiskCache(str(tmp_path), max_bytes=3 * 20_000)
    for i in range(3):
        disk.store_bytes("result", [i], bytes(15_000))
        os.utime(disk.path_of("result", [i]), (1000 + i, 1000 + i))
    assert disk.load_bytes("result", [0]) is not None  # a hit makes 0 the most recent
    disk.store_bytes("result", [3], bytes(15_000))
    entries, size = disk.usage()
    assert size <= disk.max_bytes and entries == 3
    assert disk.load_bytes("result", [1]) is None
    assert disk.load_bytes("result", [0]) is not None and disk.load_bytes("result", [3])


def test_clear_removes_every_entry(tmp_path):
    disk = DiskCache(str(tmp_path))
    disk.store_bytes("result", ["a"], b"x")
    disk.store_bytes("result", ["b"], b"y")
    assert disk.clear() == 2 and disk.usage() == (0, 0)


def _tree(root) -> dict:
    """Every file below ``root`` (relative path -> bytes)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _user_cache_home(tmp_path):
    """A ~/.cache-like folder: other programs' files, one named like our entries, our cache."""
    home = tmp_path / "cache_home"
    (home / "hub" / "model").mkdir(parents=True)
    (home / "hub" / "model" / "pytorch_model.bin").write_bytes(b"weights")
    (home / "pip" / "v1").mkdir(parents=True)
    (home / "pip" / "v1" / f"result-{'a' * 40}.bin").write_bytes(b"not ours")
    (home / "notes.bin").write_bytes(b"notes")
    ours = DiskCache(str(home / "tensorboard-plugin-profile"))
    assert ours.store_bytes("result", ["k"], b"ours")
    return home, ours


def test_a_new_cache_marks_its_root_with_the_program_and_format(tmp_path):
    disk = DiskCache(str(tmp_path / "new"))
    assert not (tmp_path / "new").exists()  # nothing is created before the first write
    assert disk.store_bytes("result", ["k"], b"x")
    marker = json.loads((tmp_path / "new" / cache_dir.MARKER_NAME).read_text())
    assert (
        marker["program"] == "tensorboard-plugin-profile"
        and marker["entry_format"] == FORMAT_VERSION
    )
    assert cache_dir.state(str(tmp_path / "new")) == cache_dir.OURS


def test_clear_refuses_a_folder_the_cache_did_not_make_and_deletes_nothing(tmp_path):
    home, ours = _user_cache_home(tmp_path)
    before = _tree(home)
    parent = DiskCache(str(home))
    with pytest.raises(InvalidArgument, match="not a tensorboard-plugin-profile cache"):
        parent.clear()
    with pytest.raises(InvalidArgument, match="nothing was counted"):
        parent.usage()
    assert _tree(home) == before
    # Nor is anything written there: no marker, no entry folder.
    assert not parent.store_bytes("result", ["k"], b"x")
    assert _tree(home) == before and not (home / "v1").exists()
    # Its own folder is cleared, and only it.
    assert ours.clear() == 1
    assert set(before) - set(_tree(home)) == {f"tensorboard-plugin-profile/{_rel(ours)}"}


def _rel(disk: DiskCache) -> str:
    return os.path.relpath(disk.path_of("result", ["k"]), disk.root)


def test_clear_deletes_only_files_named_as_the_cache_names_them(tmp_path):
    disk = DiskCache(str(tmp_path / "c"))
    disk.store_bytes("result", ["k"], b"x")
    current, older = f"v{FORMAT_VERSION}", f"v{FORMAT_VERSION - 1}"
    strays = [
        f"{current}/model.bin",  # a user's file in our entry folder
        f"{current}/sub/result-{'b' * 40}.bin",  # an entry name, but not directly in v<N>/
        f"result-{'c' * 40}.bin",  # an entry name, but not in a v<N>/ folder
        f"other/result-{'d' * 40}.bin",
    ]
    for name in strays:
        (tmp_path / "c" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "c" / name).write_bytes(b"keep")
    (tmp_path / "c" / older).mkdir()  # an entry of another format version goes too
    (tmp_path / "c" / older / f"space-{'e' * 40}.bin").write_bytes(b"old")
    assert disk.clear() == 2
    assert sorted(_tree(tmp_path / "c")) == sorted([cache_dir.MARKER_NAME, *strays])


def test_a_server_pointed_at_a_folder_that_is_not_a_cache_leaves_it_alone(tmp_path):
    home, _ = _user_cache_home(tmp_path)
    before = _tree(home)
    service = _service(FIXTURES / "jax_cpu_train", home)
    assert service.disk is None  # the disk cache stays off, with a warning
    # ... for every user of it: decoded spaces and the pod map's per-host summaries alike.
    assert service.spaces.disk is None and service.host_map.disk is None
    assert _body(service.tool_data(service.runs()[0], "overview_page"))
    service.close()
    assert _tree(home) == before
    # A multi-host session, merged from per-host summaries in worker processes: still nothing.
    service = _service(FIXTURES / "jax_two_hosts", home, workers=2)
    assert service.disk is None and service.host_map.disk is None
    run = service.runs()[0]
    assert _body(service.tool_data(run, "overview_page", host=ALL_HOSTS))
    assert service.host_map.computed == 2  # through the pod map, one summary per host
    service.close()
    assert _tree(home) == before


def test_an_unmarked_cache_of_an_older_version_is_adopted(tmp_path):
    disk = DiskCache(str(tmp_path / "old"))
    disk.store_bytes("result", ["a"], b"x")
    (tmp_path / "old" / cache_dir.MARKER_NAME).unlink()  # as versions before the marker left it
    assert cache_dir.state(str(tmp_path / "old")) == cache_dir.ADOPTABLE
    reopened = DiskCache(str(tmp_path / "old"))
    assert reopened.usable() and reopened.usage()[0] == 1
    assert reopened.load_bytes("result", ["a"]) == ({}, b"x")
    assert reopened.store_bytes("result", ["b"], b"y")  # the first write marks it
    assert cache_dir.state(str(tmp_path / "old")) == cache_dir.OURS
    (tmp_path / "old" / cache_dir.MARKER_NAME).unlink()
    assert DiskCache(str(tmp_path / "old")).clear() == 2  # clear works without the marker too
    (tmp_path / "old" / f"v{FORMAT_VERSION}" / "x.txt").write_text("a stranger")  # not ours now
    assert cache_dir.state(str(tmp_path / "old")) == cache_dir.FOREIGN


def test_no_cache_means_no_directory(tmp_path):
    service = ProfileService(
        str(FIXTURES / "jax_cpu_train"), config=CacheConfig.from_flags(_Flags(no_cache=True))
    )
    assert service.disk is None
    run = service.runs()[0]
    assert _body(service.tool_data(run, "overview_page"))


@dataclasses.dataclass
class _Flags:
    cache_dir: object = None
    no_cache: object = None
    cache_bytes: object = None
    disk_cache_bytes: object = None


def test_flags_override_the_environment_which_overrides_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("TBPROF_NO_CACHE", raising=False)
    monkeypatch.setenv("TBPROF_CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("TBPROF_CACHE_BYTES", "512M")
    config = CacheConfig.from_flags(_Flags())
    assert config.disk_dir == str(tmp_path / "env") and config.memory_bytes == 512 << 20
    config = CacheConfig.from_flags(_Flags(cache_dir=str(tmp_path / "flag"), cache_bytes="2G"))
    assert config.disk_dir == str(tmp_path / "flag") and config.memory_bytes == 2 << 30
    monkeypatch.delenv("TBPROF_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    expected = str(tmp_path / "xdg" / "tensorboard-plugin-profile")
    assert CacheConfig.from_flags(None).disk_dir == expected
    monkeypatch.setenv("TBPROF_NO_CACHE", "1")
    assert CacheConfig.from_flags(None).disk_dir is None


def test_the_default_memory_budget_follows_the_machine_and_flags_still_override_it(
    monkeypatch, tmp_path
):
    gib = 1 << 30
    assert default_memory_bytes(24 * gib) == 12 * gib  # half of this machine's RAM
    assert default_memory_bytes(6 * gib) == 4 * gib  # the floor, a quarter left free
    assert default_memory_bytes(4 * gib) == 3 * gib  # no floor that would take it all
    assert default_memory_bytes(None) == 4 * gib  # unknown: as before
    # A container's limit below the RAM counts; "max" (v2) or v1's huge number do not.
    limit = tmp_path / "memory.max"
    limit.write_text("6442450944\n")
    assert usable_memory_bytes((str(limit),)) == 6 * gib
    limit.write_text("max\n")
    physical = usable_memory_bytes((str(tmp_path / "absent"),))
    assert physical and usable_memory_bytes((str(limit),)) == physical
    monkeypatch.delenv("TBPROF_CACHE_BYTES", raising=False)
    expected = default_memory_bytes(usable_memory_bytes())  # this machine's (or container's)
    assert CacheConfig.from_flags(_Flags()).memory_bytes == expected >= 4 * gib
    monkeypatch.setenv("TBPROF_CACHE_BYTES", "512M")
    assert CacheConfig.from_flags(_Flags()).memory_bytes == 512 << 20
    assert CacheConfig.from_flags(_Flags(cache_bytes="2G")).memory_bytes == 2 * gib


def test_entries_start_with_the_magic_and_a_readable_header(tmp_path):
    disk = DiskCache(str(tmp_path))
    disk.store_bytes("result", ["k"], b"hello", {"content_type": "application/json"})
    data = open(disk.path_of("result", ["k"]), "rb").read()
    assert data.startswith(MAGIC)
    length = int.from_bytes(data[8:16], "little")
    checksum = int.from_bytes(data[16:24], "little")
    assert checksum == zlib.crc32(data[8:16] + data[24:])  # everything but magic and itself
    header = json.loads(data[24 : 24 + length])
    assert header["key"] == '["k"]' and header["meta"]["content_type"] == "application/json"


def test_sparse_constant_and_mostly_missing_columns_are_stored_without_touching_their_pages(
    tmp_path,
):
    from tensorboard_plugin_profile.common.memsize import deep_size, sparse_rows, sparse_values

    n = 2_000_000
    rows = np.arange(7, n, 40_000)
    floats = np.where(rows % 3 == 0, -0.0, np.where(rows % 3 == 1, np.nan, 1.5))
    sparse_int = sparse_values(n, np.int64, rows, rows * 3)
    sparse_float = sparse_values(n, np.float64, rows, floats)
    present = np.zeros(n, dtype=bool)
    present[rows] = True
    nullable = pd.arrays.IntegerArray(sparse_values(n, np.int64, rows, rows + 1), ~present)
    frame = pd.DataFrame(
        {
            "ints": sparse_int,
            "floats": sparse_float,
            "constant": np.broadcast_to(np.int64(-1), (n,)),
            "nullable": nullable,
        },
        copy=False,
    )
    np.testing.assert_array_equal(sparse_rows(sparse_int), rows)  # -0.0 and NaN are values
    np.testing.assert_array_equal(sparse_rows(sparse_float), rows)
    charged = deep_size(frame)
    disk = DiskCache(str(tmp_path))
    assert disk.store_value("space", ["sparse"], frame)
    assert deep_size(frame) == charged  # storing read only the written pages
    loaded = disk.load_value("space", ["sparse"])
    assert deep_size(loaded) <= charged  # loaded sparse again, the constant once
    pd.testing.assert_frame_equal(frame, loaded, check_exact=True)  # (reads every page)
    assert np.array_equal(loaded["floats"].to_numpy().view(np.uint64), sparse_float.view(np.uint64))
    entry = next(p for p in tmp_path.rglob("*.bin"))
    assert entry.stat().st_size < 2_000_000  # 4 columns of 16 MB, stored by their ~50 rows


def test_background_stores_wait_while_a_request_computes_and_flush_writes_them_now(tmp_path):
    disk = DiskCache(str(tmp_path))
    frame = pd.DataFrame({"a": np.arange(10)})
    with disk.busy():
        disk.store_value_later("space", ["later"], frame)
        time.sleep(0.3)
        assert disk.load_value("space", ["later"]) is None  # held back while computing
    started = time.monotonic()
    disk.store_value_later("space", ["second"], frame)
    disk._writer.submit(lambda: None).result()  # both stores done, without hurrying them
    assert time.monotonic() - started >= 0.4  # after a quiet moment
    pd.testing.assert_frame_equal(disk.load_value("space", ["later"]), frame)
    with disk.busy():
        disk.store_value_later("space", ["flushed"], frame)
        disk.flush()  # e.g. the CLI exiting: no waiting
        pd.testing.assert_frame_equal(disk.load_value("space", ["flushed"]), frame)


def test_a_store_held_back_by_a_request_is_written_when_the_process_exits(tmp_path):
    import subprocess
    import sys

    script = (
        "import pandas as pd, sys\n"
        "from tensorboard_plugin_profile.store.disk_cache import DiskCache\n"
        "disk = DiskCache(sys.argv[1])\n"
        "held = disk.busy()\n"
        "held.__enter__()  # a request that never ends (the server was interrupted)\n"
        "disk.store_value_later('space', ['exit'], pd.DataFrame({'a': [1, 2]}))\n"
    )
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=60)
    assert time.monotonic() - started < 8  # not the 10 s a busy server may hold a store back
    stored = DiskCache(str(tmp_path)).load_value("space", ["exit"])
    assert stored is not None and stored["a"].tolist() == [1, 2]

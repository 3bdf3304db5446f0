"""The disk cache never serves what it did not write: damaged headers, swapped references,
a profile replaced under the same size and mtime, entries truncated under a reader, FIFOs
and links at entry paths, and headers too deep to parse (docs/security.md)."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import threading
import zlib

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES, REPO, host_files

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import safe_open
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.store.cache_entry import FORMAT_VERSION, MAGIC
from tensorboard_plugin_profile.store.disk_cache import DiskCache

PREFIX = len(MAGIC) + 16  # magic, header length, checksum


def _service(logdir, cache_dir) -> ProfileService:
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=str(cache_dir)))


def _body(result) -> bytes:
    return b"".join(result.chunks())


def _entries(cache_dir, kind: str) -> list:
    folder = cache_dir / f"v{FORMAT_VERSION}"
    return sorted(str(folder / n) for n in os.listdir(folder) if n.startswith(kind + "-"))


def _split(data: bytes) -> tuple:
    """(header text, payload) of an entry's bytes."""
    (length,) = struct.unpack("<Q", data[len(MAGIC) : len(MAGIC) + 8])
    base = -(-(PREFIX + length) // 64) * 64
    return data[PREFIX : PREFIX + length], data[base:]


def _seal(head: bytes, payload: bytes) -> bytes:
    """An entry with a valid checksum, as someone who knows the format would forge it
    (docs/cache.md, "Format"): it must still never make a request fail."""
    length = struct.pack("<Q", len(head))
    pad = bytes(-(PREFIX + len(head)) % 64)
    crc = zlib.crc32(length + head + pad + payload)
    return MAGIC + length + struct.pack("<Q", crc) + head + pad + payload


def _flipped_headers(data: bytes):
    """Every byte of the prefix and header, one at a time, with one bit and then all bits
    flipped (the payload has always been checked)."""
    head, _ = _split(data)
    for position in range(PREFIX + len(head)):
        for mask in (0x01, 0xFF):
            damaged = bytearray(data)
            damaged[position] ^= mask
            yield position, bytes(damaged)


# --- 8: the checksum covers the whole entry ---------------------------------------------
def test_flipping_any_header_byte_of_a_result_never_changes_the_answer(tmp_path):
    disk = DiskCache(str(tmp_path))
    body = json.dumps({"rows": list(range(2000))}).encode()
    key = ["tool", "overview_page", ["vm.xplane.pb", len(body)]]
    assert disk.store_bytes("result", key, body, {"content_type": "application/json"})
    path = disk.path_of("result", key)
    good = open(path, "rb").read()
    for position, damaged in _flipped_headers(good):
        with open(path, "wb") as f:
            f.write(damaged)
        assert disk.load_bytes("result", key) is None, position  # every flip is seen
    with open(path, "wb") as f:
        f.write(good)
    assert disk.load_bytes("result", key) == ({"content_type": "application/json"}, body)


def test_flipping_any_header_byte_of_a_stored_value_never_changes_it(tmp_path):
    disk = DiskCache(str(tmp_path))
    frame = pd.DataFrame(
        {
            "begin_ps": np.arange(0, 700, 7, dtype=np.int64),
            "duration_ps": np.arange(100, dtype=np.int64) % 9,
            "name": pd.Categorical(["matmul", "fusion", "copy", "all-reduce"] * 25),
            "note": ["a", None] * 50,
        }
    )
    value = {"events": frame, "num_events": 100, "span": (0.5, 700.25)}
    assert disk.store_value("space", ["k"], value)
    path = disk.path_of("space", ["k"])
    good = open(path, "rb").read()
    for position, damaged in _flipped_headers(good):
        with open(path, "wb") as f:
            f.write(damaged)
        assert disk.load_value("space", ["k"]) is None, position
    with open(path, "wb") as f:
        f.write(good)
    loaded = disk.load_value("space", ["k"])
    pd.testing.assert_frame_equal(loaded["events"], frame, check_exact=True)
    assert (loaded["num_events"], loaded["span"]) == (100, (0.5, 700.25))


def _first_refs(text: str, name: str, ref: str) -> list:
    """(position, digits) of the first array reference after each ``name`` in ``text``."""
    found = []
    for start in [m.start() for m in re.finditer(re.escape(name), text)]:
        match = re.compile(ref).search(text, start)
        if match:
            found.append((match.start(1), match.group(1)))
    return found


def _swap_event_columns(path: str) -> None:
    """Swaps the first array references of ``begin_ps`` and ``duration_ps`` (their values,
    or their compact form's narrow values, ``column_codec``) of the largest event table in a
    Space entry, keeping the header's length (and the payload's checksum)."""
    data = open(path, "rb").read()
    head, _ = _split(data)
    text = head.decode()
    header = json.loads(text)
    ref = r'\{"\$a":(\d+)\}'
    pairs = [
        (b, d, b_at, d_at)
        for b_at, b in _first_refs(text, '["begin_ps",', ref)
        for d_at, d in _first_refs(text[b_at:], '["duration_ps",', ref)[:1]
    ]
    begin, duration, at, offset = max(pairs, key=lambda r: header["arrays"][int(r[0])][2][0])
    assert len(begin) == len(duration) and header["arrays"][int(begin)][2][0] > 100
    chars = list(text)
    chars[at : at + len(begin)] = duration
    chars[at + offset : at + offset + len(duration)] = begin
    swapped = "".join(chars).encode()
    assert len(swapped) == len(head) and swapped != head
    start = data.index(head)
    with open(path, "wb") as f:
        f.write(data[:start] + swapped + data[start + len(head) :])


def test_swapped_references_in_a_space_entry_change_no_answer(tmp_path):
    logdir = FIXTURES / "jax_cpu_train"
    cache = tmp_path / "cache"
    first = _service(logdir, cache)
    run = first.runs()[0]
    window = {"format": "columnar", "resolution": "800"}
    tools = {"overview_page": {}, "hlo_stats": {}, "op_profile": {}, "trace_viewer@": window}
    good = {tool: _body(first.tool_data(run, tool, params=p)) for tool, p in tools.items()}
    first.close()
    for path in _entries(cache, "result"):
        os.remove(path)  # every answer is computed again, from the Space entry
    (space,) = _entries(cache, "space")
    _swap_event_columns(space)

    second = _service(logdir, cache)
    after = {tool: _body(second.tool_data(run, tool, params=p)) for tool, p in tools.items()}
    assert after == good
    assert second.spaces.decodes == 1  # the entry was not used, the profile was decoded
    second.close()
    third = _service(logdir, cache)  # and the entry was written again, whole
    assert _body(third.tool_data(run, "hlo_stats")) == good["hlo_stats"]
    assert third.spaces.decodes == 0


# --- 8: a profile replaced under the same size and mtime ---------------------------------
def _same_size_other_content(data: bytes) -> bytes:
    changed = data.replace(b"train_step", b"train_stop")
    assert len(changed) == len(data) and changed != data
    return changed


@pytest.mark.parametrize("how", ["rewritten in place", "renamed over"])
def test_a_profile_replaced_under_the_same_size_and_mtime_is_not_served_its_old_entries(
    tmp_path, how
):
    session = tmp_path / "logs" / "plugins" / "profile" / "s1"
    session.mkdir(parents=True)
    target = session / "vm.xplane.pb"
    original = host_files("jax_cpu_train")[0].read_bytes()
    target.write_bytes(original)
    cache = tmp_path / "cache"
    tools = ("overview_page", "hlo_stats", "op_profile")
    first = _service(tmp_path / "logs", cache)
    before = {tool: _body(first.tool_data("s1", tool)) for tool in tools}
    first.close()

    st = os.stat(target)
    replacement = _same_size_other_content(original)
    if how == "rewritten in place":
        with open(target, "r+b") as f:
            f.write(replacement)
    else:
        (session / "new.tmp").write_bytes(replacement)
        os.replace(session / "new.tmp", target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = os.stat(target)
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)

    safe_open.forget_fingerprints()  # a restarted server remembers nothing
    second = _service(tmp_path / "logs", cache)
    after = {tool: _body(second.tool_data("s1", tool)) for tool in tools}
    assert second.spaces.decodes == 1
    fresh = ProfileService(str(tmp_path / "logs"), config=CacheConfig(disk_dir=None))
    assert after == {tool: _body(fresh.tool_data("s1", tool)) for tool in tools}
    assert after["hlo_stats"] != before["hlo_stats"]


def test_the_key_holds_a_fingerprint_of_the_first_and_last_64_kib(tmp_path):
    path = tmp_path / "vm.xplane.pb"
    head, middle, tail = os.urandom(1 << 16), os.urandom(1 << 18), os.urandom(1 << 16)
    prints = []
    for data in (
        head + middle + tail,
        head + bytes(len(middle)) + tail,
        b"x" + head[1:] + middle + tail,
    ):
        path.write_bytes(data)
        with open(path, "rb") as f:
            prints.append(safe_open.content_fingerprint(f, len(data)))
    same, other = prints[0] == prints[1], prints[0] != prints[2]
    assert same and other  # the middle is not read (cheap); the ends are
    last = head + middle + tail[:-1] + b"x"
    path.write_bytes(last)
    with open(path, "rb") as f:
        assert safe_open.content_fingerprint(f, len(last)) != prints[0]


def test_an_entry_larger_than_the_cap_is_neither_written_nor_read(tmp_path):
    small = DiskCache(str(tmp_path), max_bytes=64 << 10)
    assert not small.store_bytes("result", ["big"], bytes(100 << 10))
    assert not os.path.exists(small.path_of("result", ["big"]))
    large = DiskCache(str(tmp_path), max_bytes=1 << 20)
    assert large.store_bytes("result", ["k"], bytes(100 << 10))
    assert small.load_bytes("result", ["k"]) is None  # over this reader's cap
    assert large.load_bytes("result", ["k"]) == ({}, bytes(100 << 10))
    os.truncate(large.path_of("result", ["k"]), 1 << 40)  # a sparse 1 TiB file: not read
    assert large.load_bytes("result", ["k"]) is None


# --- 9: entries are read, not mapped; only regular files are opened ----------------------
_READER = """
import sys
import numpy as np
from tensorboard_plugin_profile.store.disk_cache import DiskCache
disk = DiskCache(sys.argv[1])
value = disk.load_value("space", ["big"])
print("loaded", flush=True)
sys.stdin.readline()  # the parent truncates the entry meanwhile
print(int(value["a"].sum()), int(value["b"].sum()), flush=True)
"""


def test_an_entry_truncated_under_a_reader_does_not_kill_it(tmp_path):
    disk = DiskCache(str(tmp_path))
    a = np.arange(3 << 20, dtype=np.int64)  # 24 MiB: large enough that it used to be mapped
    b = np.ones(1 << 20, dtype=np.float64)
    assert disk.store_value("space", ["big"], {"a": a, "b": b})
    env = dict(os.environ, PYTHONPATH=str(REPO))
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert reader.stdout.readline().strip() == "loaded"
        os.truncate(disk.path_of("space", ["big"]), 0)  # another process empties it
        out, _ = reader.communicate("go\n", timeout=60)
    finally:
        reader.kill()
        reader.wait()
    assert reader.returncode == 0, f"the reader died with status {reader.returncode}"
    assert out.split() == [str(int(a.sum())), str(int(b.sum()))]


def _load_with_timeout(load, timeout_s: float = 10.0):
    """``load()`` in a thread; fails (and unblocks nothing) if it hangs."""
    done: dict = {}
    thread = threading.Thread(target=lambda: done.setdefault("value", load()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), "reading the cache entry hung"
    return done["value"]


def _unblock(fifo: str) -> None:
    """Opens a FIFO for writing (non-blocking), so a reader stuck on it can go on."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("what", ["fifo", "link to a fifo", "link to an entry", "folder"])
def test_only_a_regular_file_at_an_entry_path_is_read(tmp_path, what):
    disk = DiskCache(str(tmp_path / "cache"))
    assert disk.store_bytes("result", ["other"], b"someone else's answer")
    path = disk.path_of("result", ["k"])
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    if what == "fifo":
        os.remove(fifo)
        os.mkfifo(path)
        fifo = path
    elif what == "link to a fifo":
        os.symlink(fifo, path)
    elif what == "link to an entry":
        os.symlink(disk.path_of("result", ["other"]), path)
    else:
        os.mkdir(path)
    try:
        assert _load_with_timeout(lambda: disk.load_bytes("result", ["k"])) is None
    finally:
        _unblock(fifo)


def test_a_fifo_at_a_space_entry_path_does_not_hang_the_profile(tmp_path):
    logdir = FIXTURES / "jax_cpu_train"
    cache = tmp_path / "cache"
    first = _service(logdir, cache)
    run = first.runs()[0]
    good = _body(first.tool_data(run, "overview_page"))
    first.close()
    for path in _entries(cache, "result"):
        os.remove(path)
    (space,) = _entries(cache, "space")
    os.remove(space)
    os.mkfifo(space)
    try:
        second = _service(logdir, cache)
        answer = _load_with_timeout(lambda: _body(second.tool_data(run, "overview_page")))
        assert answer == good and second.spaces.decodes == 1
    finally:
        _unblock(space)


# --- 11: a header that does not parse is a bad entry, never a 500 -------------------------
def _forged_result(head: str, payload: bytes = b"{}") -> bytes:
    return _seal(head.encode(), payload)


@pytest.mark.parametrize("where", ["header", "meta", "tree"])
def test_a_deeply_nested_entry_is_recomputed_not_a_500(tmp_path, where):
    logdir = FIXTURES / "jax_cpu_train"
    cache = tmp_path / "cache"
    first = _service(logdir, cache)
    run = first.runs()[0]
    good = {tool: _body(first.tool_data(run, tool)) for tool in ("overview_page", "hlo_stats")}
    first.close()
    for path in _entries(cache, "result") + _entries(cache, "space"):
        head, payload = _split(open(path, "rb").read())
        header = json.loads(head)
        if where == "header":
            text = "[" * 100_000 + "]" * 100_000
        elif where == "meta":
            header["meta"] = "@@"
            text = json.dumps(header).replace('"@@"', "[" * 50_000 + "]" * 50_000)
        else:  # deep enough for the codec's recursion, not for json's
            header["tree"] = "@@"
            text = json.dumps(header).replace('"@@"', '{"$t":[' * 400 + "1" + "]}" * 400)
        with open(path, "wb") as f:
            f.write(_seal(text.encode(), payload))

    second = _service(logdir, cache)
    for tool, body in good.items():
        assert _body(second.tool_data(run, tool)) == body
    assert second.spaces.decodes == 1


@pytest.mark.parametrize(
    "header",
    [
        '{"format":%d,"key":"[\\"k\\"]","meta":[],"tree":{"$a":0},"arrays":[[0,"|u1",[2]]],'
        '"payload_bytes":2}',
        '{"format":%d,"key":"[\\"k\\"]","meta":{},"tree":{"$a":0},"arrays":[],"payload_bytes":2}',
        '{"format":%d,"key":"[\\"k\\"]","meta":{},"tree":{"$a":0},"arrays":[[0,"|O",[2]]],'
        '"payload_bytes":2}',
        '{"format":%d,"key":"[\\"k\\"]","meta":{},"tree":{"$a":0},"arrays":[[0,"<i8",[9]]],'
        '"payload_bytes":2}',
        '{"format":%d,"key":"[\\"k\\"]","meta":{},"tree":{"$a":0},"arrays":[[0,"|u1",[-1]]],'
        '"payload_bytes":2}',
        '{"format":%d,"key":"[\\"k\\"]","meta":{},"tree":{"$a":0},"arrays":"x","payload_bytes":2}',
        '["format",%d]',
    ],
    ids=[
        "meta a list",
        "no arrays",
        "object dtype",
        "array past the end",
        "negative shape",
        "arrays a string",
        "not an object",
    ],
)
def test_a_header_of_the_wrong_shape_is_a_miss(tmp_path, header):
    disk = DiskCache(str(tmp_path))
    disk.store_bytes("result", ["k"], b"ok")
    path = disk.path_of("result", ["k"])
    with open(path, "wb") as f:
        f.write(_forged_result(header % FORMAT_VERSION, b"{}"))
    assert disk.load_bytes("result", ["k"]) is None


# --- 10: trace windows stay in memory ---------------------------------------------------
def test_trace_windows_searches_and_details_write_no_disk_entry(tmp_path):
    cache = tmp_path / "cache"
    service = _service(FIXTURES / "jax_cpu_train", cache)
    run = service.runs()[0]
    _body(service.tool_data(run, "overview_page"))
    before = _entries(cache, "result")
    assert len(before) == 1  # the overview's
    queries = [{"start_time_ms": str(i / 10), "end_time_ms": "90"} for i in range(40)]
    queries += [{"search": "fusion"}, {"search": "dot", "max_results": "5"}, {"details": "3"}]
    answers = [_body(service.tool_data(run, "trace_viewer@", params=q)) for q in queries]
    assert _entries(cache, "result") == before
    # Asked again, the answers come from memory: the same bytes.
    assert [_body(service.tool_data(run, "trace_viewer@", params=q)) for q in queries] == answers

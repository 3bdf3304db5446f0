"""Compact columns in disk cache entries: exact round trips, sizes, old formats, forgeries."""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import zlib

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store import cache_entry, column_codec, frames_codec
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.store.disk_cache import DiskCache

RNG = np.random.default_rng(30)
N = 5_000


def _columns() -> dict:
    """Columns shaped like a Space's, and the edge cases of each encoding."""
    line = np.repeat(np.arange(5, dtype=np.int32), N // 5)
    gaps = RNG.integers(0, 2_000, N) * 1000
    gaps[RNG.integers(0, N, 40)] = 10**13  # a few gaps of seconds: exceptions
    begin = (np.cumsum(gaps) + 13_224_000).astype(np.int64)
    begin[N // 2 :] -= 7 * 10**12  # a second line, starting earlier
    duration = RNG.integers(0, 30_000, N) * 1000
    duration[::97] = 5 * 10**12
    big = np.iinfo(np.int64)
    return {
        "begin_ps": begin,
        "duration_ps": duration.astype(np.int64),
        "line": line,
        "metadata_id": RNG.integers(1, 385, N).astype(np.int32),
        "codes": RNG.integers(-1, 300, N).astype(np.int16),
        "present": RNG.random(N) < 0.9,
        "all_true": np.ones(N, dtype=bool),
        "event": np.sort(RNG.integers(0, 10 * N, N)).astype(np.int32),
        "random_int64": RNG.integers(big.min, big.max, N, dtype=np.int64, endpoint=True),
        "extremes": np.resize(np.array([big.min, big.max, 0, -1], dtype=np.int64), N),
        "uint64_across_2_63": np.uint64(2**63) + RNG.integers(-500, 500, N).astype(np.uint64),
        "uint64_random": RNG.integers(0, 2**64 - 1, N, dtype=np.uint64, endpoint=True),
        "uint32_high": (np.uint32(2**32 - 1) - RNG.integers(0, 100, N)).astype(np.uint32),
        "uint16": RNG.integers(0, 2**16, N).astype(np.uint16),
        "int8": RNG.integers(-128, 128, N).astype(np.int8),
        "constant": np.full(N, -7, dtype=np.int64),
        "descending": np.arange(N, 0, -1, dtype=np.int64) * -3,
        "floats": RNG.random(N),
        "short": np.arange(5, dtype=np.int64) * 10**15,
    }


def _round_trip(array: np.ndarray, cold: bool = False) -> tuple:
    arrays: list = []

    def put(leaf: np.ndarray) -> dict:
        packed = column_codec.compress(leaf) if cold else None
        if packed is not None:
            arrays.append(packed)
            return {"$z": [leaf.dtype.str, len(leaf), {"$a": len(arrays) - 1}]}
        arrays.append(np.ascontiguousarray(leaf))
        return {"$a": len(arrays) - 1}

    node = column_codec.pack(array, put)
    tree = json.loads(json.dumps(node))  # through JSON, as in an entry
    stored = sum(a.nbytes for a in arrays)
    back = frames_codec.decode(tree, [a.copy() for a in arrays])
    return back, node, stored


@pytest.mark.parametrize("block_rows", [column_codec.BLOCK_ROWS, 7, 1])
@pytest.mark.parametrize("name", sorted(_columns()))
def test_every_column_comes_back_with_its_dtype_and_values(name, block_rows, monkeypatch):
    monkeypatch.setattr(column_codec, "BLOCK_ROWS", block_rows)  # blocks of any size
    array = _columns()[name]
    for cold in (False, True):
        back, _, _ = _round_trip(array, cold)
        assert back.dtype == array.dtype and back.shape == array.shape, name
        assert np.array_equal(back.view(np.uint8), array.view(np.uint8)), name  # bit for bit
        assert back.flags.writeable and back.flags.c_contiguous


def test_each_column_takes_the_encoding_its_values_allow():
    columns = _columns()
    tags = {name: next(iter(_round_trip(a)[1])) for name, a in columns.items()}
    _, begin, stored = _round_trip(columns["begin_ps"])
    # Begin times: nanosecond differences in 2 bytes, the long gaps and the line change as
    # exceptions.
    assert begin["$int"][1:4] == ["delta", int(columns["begin_ps"][0]), 1000]
    assert stored < 2.3 * N  # against 8 bytes a row
    _, duration, stored = _round_trip(columns["duration_ps"])
    assert duration["$int"][1] == "plain" and duration["$int"][3] == 1000
    assert stored < 2.5 * N
    assert tags["line"] == "$runs" and _round_trip(columns["line"])[2] < 100
    assert tags["present"] == "$bits" and _round_trip(columns["present"])[2] == N // 8
    assert tags["all_true"] == "$runs"
    assert tags["metadata_id"] == "$int" and _round_trip(columns["metadata_id"])[2] == 2 * N
    assert tags["event"] == "$int" and _round_trip(columns["event"])[1]["$int"][1] == "delta"
    # Nothing to gain: stored as they are.
    for name in ("random_int64", "uint64_random", "int8", "floats", "short", "codes"):
        assert tags[name] == "$a", name


def test_cold_fields_are_compressed_and_hot_ones_are_not():
    @dataclasses.dataclass
    class Two:
        hot: pd.DataFrame
        cold: pd.DataFrame = dataclasses.field(metadata={"cold": True})

    Two.__module__ = frames_codec.__name__  # a dataclass of the package
    Two.__qualname__ = "Two"
    values = np.tile(np.arange(100, dtype=np.float64), 100)
    frame = pd.DataFrame({"v": values})
    tree, arrays = frames_codec.encode(Two(frame, frame.copy()))
    hot, cold = (json.dumps(body) for _, body in tree["f"])
    assert "$z" in cold and "$z" not in hot
    assert sum(a.nbytes for a in arrays) < values.nbytes * 1.2  # the hot copy, and a little


def test_a_space_entry_is_smaller_than_its_profile_and_loads_the_same_space(tmp_path):
    """A real profile (1 MB): the entry used to be 3.3x the file."""
    session = FIXTURES / "jax_remote_capture"
    service = ProfileService(str(session), config=CacheConfig(disk_dir=str(tmp_path), workers=1))
    run = service.runs()[0]
    before = {t: b"".join(service.tool_data(run, t).chunks()) for t in ("overview_page",)}
    window = {"format": "columnar", "resolution": "500"}
    before["window"] = b"".join(service.tool_data(run, "trace_viewer@", params=window).chunks())
    service.close()
    (profile,) = session.glob("plugins/profile/*/*.xplane.pb")
    (entry,) = (tmp_path / f"v{cache_entry.FORMAT_VERSION}").glob("space-*.bin")
    assert entry.stat().st_size < profile.stat().st_size  # 3.39 MB before, 0.65 MB now
    for path in (tmp_path / f"v{cache_entry.FORMAT_VERSION}").glob("result-*.bin"):
        path.unlink()  # answers must come from the stored Space
    again = ProfileService(str(session), config=CacheConfig(disk_dir=str(tmp_path), workers=1))
    assert b"".join(again.tool_data(run, "overview_page").chunks()) == before["overview_page"]
    answer = again.tool_data(run, "trace_viewer@", params=window)
    assert b"".join(answer.chunks()) == before["window"]
    assert again.spaces.decodes == 0


def _format_2_entry(header: dict, arrays: list) -> bytes:
    """An entry as format 2 wrote it: magic TBPROFC2, the same layout, raw arrays."""
    layout, payload_bytes = cache_entry.layout_of(arrays)
    header = dict(header, format=2, arrays=layout, payload_bytes=payload_bytes)
    head = json.dumps(header, separators=(",", ":")).encode()
    start = len(cache_entry.MAGIC) + 16
    padding = bytes(cache_entry.aligned(start + len(head)) - start - len(head))
    payload = bytearray(payload_bytes)
    for array, (offset, _, _) in zip(arrays, layout):
        payload[offset : offset + array.nbytes] = memoryview(array).cast("B")
    length = struct.pack("<Q", len(head))
    crc = zlib.crc32(bytes(payload), zlib.crc32(padding, zlib.crc32(head, zlib.crc32(length))))
    return b"TBPROFC2" + length + struct.pack("<Q", crc) + head + padding + bytes(payload)


def test_an_entry_of_the_previous_format_is_ignored_and_rebuilt(tmp_path, monkeypatch):
    """Format 2 stored raw arrays; one found where a format-3 entry belongs (or in v2/) is
    never read as one: the profile is decoded again and the entry rewritten."""
    logdir = FIXTURES / "jax_cpu_train"
    config = CacheConfig(disk_dir=str(tmp_path), workers=1)
    first = ProfileService(str(logdir), config=config)
    run = first.runs()[0]
    window = {"format": "columnar", "resolution": "321"}
    good = b"".join(first.tool_data(run, "trace_viewer@", params=window).chunks())
    first.close()
    (path,) = (tmp_path / f"v{cache_entry.FORMAT_VERSION}").glob("space-*.bin")
    header, arrays = cache_entry.read(str(path), 1 << 30)
    space = frames_codec.decode(header["tree"], arrays)
    with monkeypatch.context() as m:  # the codec of format 2: every array as it is
        m.setattr(column_codec, "pack", lambda array, put: put(array))
        m.setattr(column_codec, "compress", lambda array: None)
        tree, raw = frames_codec.encode(space)
    old = _format_2_entry(dict(header, tree=tree), raw)
    assert old.startswith(b"TBPROFC2") and len(old) > path.stat().st_size
    old_folder = tmp_path / "v2"
    old_folder.mkdir()
    (old_folder / path.name).write_bytes(old)
    path.write_bytes(old)

    second = ProfileService(str(logdir), config=config)
    assert b"".join(second.tool_data(run, "trace_viewer@", params=window).chunks()) == good
    assert second.spaces.decodes == 1  # not read: decoded again
    second.close()
    assert path.read_bytes().startswith(cache_entry.MAGIC)  # rewritten in format 3
    assert (old_folder / path.name).read_bytes() == old  # the old folder is left as it was
    third = ProfileService(str(logdir), config=config)
    assert b"".join(third.tool_data(run, "trace_viewer@", params=window).chunks()) == good
    assert third.spaces.decodes == 0


def _forged(node: dict) -> tuple:
    """(tag, body) of a packed node whose parts do not fit together."""
    return next(iter(node.items()))


@pytest.mark.parametrize(
    "name, change",
    [
        ("present", lambda b: b.__setitem__(0, b[0] + 64)),  # bits: another length
        ("line", lambda b: b.__setitem__(0, b[0] + 1)),  # runs: lengths do not add up
        ("line", lambda b: b.__setitem__(0, 10**15)),  # runs: past the budget
        ("begin_ps", lambda b: b.__setitem__(1, "xor")),  # an unknown mode
        ("begin_ps", lambda b: b.__setitem__(0, "|O")),  # objects are never built
        ("begin_ps", lambda b: b.__setitem__(3, 0)),  # a step of 0
        ("begin_ps", lambda b: b.__setitem__(2, 2**64)),  # an origin past int64
    ],
)
def test_packed_nodes_that_do_not_fit_are_refused(name, change):
    array = _columns()[name]
    arrays: list = []

    def put(leaf: np.ndarray) -> dict:
        arrays.append(leaf)
        return {"$a": len(arrays) - 1}

    node = json.loads(json.dumps(column_codec.pack(array, put)))
    tag, body = _forged(node)
    change(body)
    with pytest.raises((ValueError, TypeError, IndexError)):
        frames_codec.decode(node, list(arrays), max_bytes=1 << 30)


@pytest.mark.parametrize("n_change", [-1, 1, 10**12])
def test_compressed_data_of_another_length_is_refused_before_it_is_inflated(n_change):
    array = np.zeros(100_000, dtype=np.int64)  # 800 kB that compress to ~1 kB
    packed = column_codec.compress(array)
    assert packed is not None and packed.nbytes < 5_000
    tree = {"$z": ["<i8", len(array) + n_change, {"$a": 0}]}
    with pytest.raises(ValueError):
        frames_codec.decode(tree, [packed], max_bytes=1 << 30)
    back = frames_codec.decode({"$z": ["<i8", len(array), {"$a": 0}]}, [packed], 1 << 30)
    assert np.array_equal(back, array)


def test_an_array_referred_to_twice_is_a_miss_not_a_shared_buffer(tmp_path):
    disk = DiskCache(str(tmp_path))
    frame = pd.DataFrame({"a": np.arange(100), "b": np.arange(100) * 2})
    assert disk.store_value("space", ["k"], frame)
    path = disk.path_of("space", ["k"])
    header, arrays = cache_entry.read(path, 1 << 30)
    assert json.dumps(header["tree"]).count('"$a"') >= 2
    text = json.dumps(header["tree"]).replace('{"$a": 1}', '{"$a": 0}')
    with pytest.raises(frames_codec.Stale):
        frames_codec.decode(json.loads(text), arrays)
    assert os.path.exists(path)

"""The decoder's memory: the file's pages handed back during the walk, and narrow tables.

``read_xspace`` reads the file into anonymous memory (``FileBytes``) that the compiled
reader hands back to the OS chunk by chunk as its walk passes it; everything read after the
walk (interned strings, wide metadata ids) must come out exactly as without that.
The tables share one read-only mask between stats on the same events, keep only the
double rows of ``float_value`` resident, and number stat rows' events in int32.
"""

from __future__ import annotations

import gzip
import mmap
import sys

import numpy as np
import pytest
from fuzz_corpus import anonymous_copy, raw_digest

from tensorboard_plugin_profile.common.errors import CorruptProfile
from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, read_xspace
from tensorboard_plugin_profile.xspace.decode import compiled_raw
from tensorboard_plugin_profile.xspace.filebytes import FileBytes

READER = load("tensorboard_plugin_profile.xspace.decode")  # the compiled reader, or None
compiled = pytest.mark.skipif(READER is None, reason="compiled reader not built")


def _long_profile() -> bytes:
    """Two lines longer than a chunk (32,768 events), with string stats on every seventh
    event (a few shared values, and one of its own every 7,000 events) and one metadata id
    beyond int32 near the end."""
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    for mid in range(1, 40):
        plane.event_metadata[mid].name = f"op{mid}"
    plane.stat_metadata[5].name = "tag"
    plane.stat_metadata[6].name = "step_num"
    for line_id, count in enumerate((40000, 33000)):
        line = plane.lines.add(id=line_id, timestamp_ns=1000 + line_id)
        for i in range(count):
            mid = 1 << 40 if (line_id, i) == (1, 32000) else 1 + i % 39
            event = line.events.add(metadata_id=mid, offset_ps=i * 10, duration_ps=5)
            if i % 7 == 0:
                value = f"unique{line_id}:{i}" if i % 7000 == 0 else f"shared{i % 13}"
                event.stats.add(metadata_id=5, str_value=value)
            if i % 500 == 0:
                event.stats.add(metadata_id=6, int64_value=i)
    return space.SerializeToString()


def _zero_page_share(view: memoryview) -> float:
    data = np.frombuffer(view, dtype=np.uint8)
    pages = data[: len(data) // mmap.PAGESIZE * mmap.PAGESIZE].reshape(-1, mmap.PAGESIZE)
    return float((~pages.any(axis=1)).mean())


@compiled
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_walked_pages_go_back_and_everything_read_later_survives(threads):
    data = _long_profile()
    expected = raw_digest(compiled_raw(READER, data, threads=threads))
    copy = anonymous_copy(data)
    raw = compiled_raw(READER, copy, threads=threads, discard=True)
    assert raw_digest(raw) == expected  # strings interned before their pages went
    plane = raw["planes"][0]
    assert {"shared3", "unique1:28000"} <= set(plane["stats"][6])
    ids = np.frombuffer(plane["events"][1], dtype=np.int64)  # one id needs 64 bits
    assert ids[40000 + 32000] == 1 << 40 and ids[40000 + 31999] == 1 + 31999 % 39
    if sys.platform.startswith("linux"):
        assert _zero_page_share(copy) > 0.9  # the walked pages were handed back


@compiled
def test_an_immutable_buffer_is_never_discarded():
    data = _long_profile()
    with pytest.raises(TypeError, match="writable"):
        compiled_raw(READER, data, discard=True)
    assert raw_digest(compiled_raw(READER, data)) == raw_digest(
        compiled_raw(READER, anonymous_copy(data), discard=True)
    )


@compiled
def test_read_xspace_gives_the_tables_of_the_bytes(tmp_path):
    data = _long_profile()
    path = tmp_path / "long.xplane.pb"
    path.write_bytes(data)
    from_file = read_xspace(str(path)).planes[0]
    for pure in (False, True):
        from_bytes = decode_xspace(data, "long", pure_python=pure).planes[0]
        for table in ("events", "stats"):
            a, b = getattr(from_file, table), getattr(from_bytes, table)
            assert a.equals(b), table
    assert from_file.events["metadata_id"].dtype == np.int64
    assert from_file.events["metadata_id"].tolist()[40000 + 32000] == 1 << 40


def test_a_gzip_file_gives_the_tables_of_its_bytes(tmp_path):
    """Inflated into a bytearray of its own, whose pages the compiled walk hands back."""
    data = _long_profile()
    path = tmp_path / "long.xplane.pb.gz"
    path.write_bytes(gzip.compress(data))
    packed = read_xspace(str(path)).planes[0]
    plain = decode_xspace(data, "long").planes[0]
    for table in ("events", "stats"):
        assert getattr(packed, table).equals(getattr(plain, table)), table


def test_file_bytes_are_taken_once(tmp_path):
    path = tmp_path / "small.xplane.pb"
    path.write_bytes(xplane_pb2.XSpace(hostnames=["h"]).SerializeToString())
    with open(path, "rb") as f:
        data = FileBytes(f)
    assert len(data) == path.stat().st_size and data.discardable
    assert decode_xspace(data, "small").hostnames == ["h"]
    assert len(data) == 0  # the decoder took them
    with pytest.raises(ValueError, match="already taken"):
        decode_xspace(data, "small")
    (tmp_path / "empty.xplane.pb").write_bytes(b"")
    with pytest.raises(CorruptProfile, match="is empty"):
        read_xspace(str(tmp_path / "empty.xplane.pb"))


def _paired_stats_profile() -> bytes:
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.event_metadata[1].name = "op"
    # Well-known stats that are event columns (schema.COLUMN_STATS), like _pt/_p used to be.
    names = {1: "element_id", 2: "parent_id", 3: "iter_num", 4: "id", 5: "x", 6: "device_id"}
    for sid, name in names.items():
        plane.stat_metadata[sid].name = name
    line = plane.lines.add(id=1)
    for i in range(3000):
        event = line.events.add(metadata_id=1, offset_ps=i, duration_ps=1)
        if i % 10 == 0:  # element_id and parent_id on the same events
            event.stats.add(metadata_id=1, int64_value=i)
            event.stats.add(metadata_id=2, uint64_value=i + 1)
        if i % 15 == 0:  # iter_num alone on others, id on yet others
            event.stats.add(metadata_id=3, int64_value=-i)
        if i % 15 == 1:
            event.stats.add(metadata_id=4, int64_value=i)
        if i % 100 == 7:  # one value wherever present
            event.stats.add(metadata_id=6, int64_value=1)
        if i % 600 == 3:
            event.stats.add(metadata_id=5, double_value=-0.0 if i == 3 else i / 7)
    return space.SerializeToString()


@pytest.mark.parametrize("pure", [True, False])
def test_stats_on_the_same_events_share_one_read_only_mask(pure):
    if not pure and READER is None:
        pytest.skip("compiled reader not built")
    plane = decode_xspace(_paired_stats_profile(), "pairs", pure_python=pure).planes[0]
    events = plane.events
    names = ("element_id", "parent_id", "iter_num", "id")
    masks = {name: events[name].array._mask for name in names}
    assert masks["element_id"] is masks["parent_id"]
    assert masks["iter_num"] is not masks["element_id"] and masks["id"] is not masks["iter_num"]
    assert not any(m.flags.writeable for m in masks.values())
    with pytest.raises(ValueError, match="read-only"):
        masks["element_id"][0] = True
    rows = np.arange(3000)
    assert np.array_equal(~masks["element_id"], rows % 10 == 0)
    assert np.array_equal(~masks["iter_num"], rows % 15 == 0)
    assert events["parent_id"].dropna().tolist() == [i + 1 for i in range(0, 3000, 10)]
    assert events["id"].dropna().tolist() == list(range(1, 3000, 15))


@pytest.mark.parametrize("pure", [True, False])
def test_stats_rows_are_int32_and_floats_keep_their_bits(pure):
    if not pure and READER is None:
        pytest.skip("compiled reader not built")
    stats = decode_xspace(_paired_stats_profile(), "pairs", pure_python=pure).planes[0].stats
    assert stats["event"].dtype == np.int32
    floats = stats["float_value"].to_numpy()
    doubles = np.flatnonzero(stats["stat"].astype(str).to_numpy() == "x")
    assert np.flatnonzero(floats.view(np.int64)).tolist() == doubles.tolist()  # -0.0 too
    assert np.signbit(floats[doubles[0]]) and floats[doubles[0]] == 0  # -0.0 kept
    assert floats[doubles[1:]].tolist() == [i / 7 for i in range(603, 3000, 600)]


@pytest.mark.parametrize("pure", [True, False])
def test_single_valued_columns_are_broadcast_views(pure):
    if not pure and READER is None:
        pytest.skip("compiled reader not built")
    data = _paired_stats_profile()
    events = decode_xspace(data, "pairs", pure_python=pure).planes[0].events
    root = events["device_id"].array
    assert root._data.strides == (0,) and not root._data.flags.writeable
    assert root.to_numpy(dtype=object, na_value=None).tolist() == [
        1 if i % 100 == 7 else None for i in range(3000)
    ]
    assert events["parent_id"].array._data.strides == (8,)  # many values: sparse pages
    assert events["display_name"].array.codes.strides == (0,)  # every display name is ""
    assert (events["display_name"] == "").all()
    space = xplane_pb2.XSpace.FromString(data)
    space.planes[0].event_metadata[2].display_name = "shown"
    space.planes[0].lines[0].events[5].metadata_id = 2
    events = decode_xspace(space.SerializeToString(), "two", pure_python=pure).planes[0].events
    assert events["display_name"].tolist()[4:7] == ["", "shown", ""]


@compiled
def test_columns_come_from_the_allocator_given():
    """With ``alloc`` every event and stats column is a buffer it made (numpy bytes, which
    the block pool serves), holding what the bytearrays hold without it."""
    data = _long_profile()
    made: list = []

    def alloc(nbytes: int) -> np.ndarray:
        made.append(np.empty(nbytes, dtype=np.uint8))
        return made[-1]

    raw = compiled_raw(READER, data, alloc=alloc)
    assert raw_digest(raw) == raw_digest(compiled_raw(READER, data))
    ours = {id(a) for a in made}
    for plane in raw["planes"]:
        stats = plane["stats"]  # no float column: no double in this profile
        columns = [*plane["events"][:4], *plane["names"][:2], *stats[:4], stats[5]]
        assert all(id(column) in ours for column in columns)


@compiled
def test_decoded_columns_are_numpy_memory_the_pool_can_take_back():
    """``decode_xspace`` gives the compiled reader numpy memory: the event columns own it
    (freed through the handler that made it, the block pool inside ``reusing()``), not a
    bytearray under them."""
    space = decode_xspace(_long_profile(), "long.xplane.pb")
    for name in ("line", "begin_ps", "duration_ps", "metadata_id"):
        column = space.planes[0].events[name].to_numpy()
        while isinstance(column.base, np.ndarray):
            column = column.base
        assert column.base is None and column.flags.owndata, name


@compiled
def test_no_float_column_without_a_double():
    """Stats without a double value (every real profile) give no float column: nothing
    written per row; a double anywhere gives the whole column, zeros around it."""
    raw = compiled_raw(READER, _long_profile())
    assert raw["planes"][0]["stats"][4] is None
    space = xplane_pb2.XSpace()
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.stat_metadata[5].name = "x"
    line = plane.lines.add(id=0)
    for i in range(5):
        event = line.events.add(metadata_id=1, offset_ps=i)
        event.stats.add(metadata_id=5, int64_value=i)
        if i == 3:
            event.stats.add(metadata_id=5, double_value=-0.0)
    floats = compiled_raw(READER, space.SerializeToString())["planes"][0]["stats"][4]
    assert np.frombuffer(floats, np.float64).view(np.int64).tolist() == [0, 0, 0, 0, -(1 << 63), 0]
    stats = decode_xspace(space.SerializeToString(), "f.xplane.pb").planes[0].stats
    assert np.signbit(stats["float_value"].to_numpy()).tolist() == [0, 0, 0, 0, 1, 0]

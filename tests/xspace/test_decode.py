"""The columnar decoder on every real fixture, and on bad input."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import all_host_files
from pandas.testing import assert_frame_equal

from tensorboard_plugin_profile.common.errors import CorruptProfile, NotFound
from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.protobuf import profiler_service_pb2, xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, read_xspace
from tensorboard_plugin_profile.xspace.model import KIND_UINT64

READER = load("tensorboard_plugin_profile.xspace.decode")  # the compiled reader, or None


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_decoder_keeps_every_event_and_time(path):
    proto = xplane_pb2.XSpace.FromString(path.read_bytes())
    space = read_xspace(str(path))
    assert [p.name for p in space.planes] == [p.name for p in proto.planes]
    for plane, plane_proto in zip(space.planes, proto.planes):
        expected = [
            (line.timestamp_ns * 1000 + ev.offset_ps, ev.duration_ps, ev.metadata_id)
            for line in plane_proto.lines
            for ev in line.events
        ]
        events = plane.events
        got = list(
            zip(events.begin_ps.tolist(), events.duration_ps.tolist(), events.metadata_id.tolist())
        )
        assert got == expected
        names = [plane_proto.event_metadata[m].name for _, _, m in expected]
        assert events["name"].astype(str).tolist() == names
        n_stats = sum(
            1
            for line in plane_proto.lines
            for ev in line.events
            for st in ev.stats
            if st.WhichOneof("value")
        )
        assert len(plane.stats) == n_stats


def test_uint64_and_ref_stats_are_exact():
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.event_metadata[1].name = "launch"
    for sid, name in ((1, "correlation_id"), (2, "flow"), (3, "tf_op"), (4, "dense/MatMul:MatMul")):
        plane.stat_metadata[sid].id = sid
        plane.stat_metadata[sid].name = name
    line = plane.lines.add(id=7, name="python", timestamp_ns=5)
    ev = line.events.add(metadata_id=1, offset_ps=10, duration_ps=20)
    ev.stats.add(metadata_id=1, uint64_value=(1 << 64) - 3)
    ev.stats.add(metadata_id=2, uint64_value=(1 << 63) + 5)
    ev.stats.add(metadata_id=3, ref_value=4)
    decoded = decode_xspace(space.SerializeToString()).plane("/host:CPU")
    assert decoded.events.begin_ps.tolist() == [5010]
    assert int(decoded.events.correlation_id.iloc[0]) == (1 << 64) - 3
    assert decoded.event_stat("flow").tolist() == [(1 << 63) + 5]
    assert decoded.events.tf_op.tolist() == ["dense/MatMul:MatMul"]
    assert (decoded.stats.kind.to_numpy() == KIND_UINT64).sum() == 2
    assert decoded.lines.tid.tolist() == [7]


def test_absolute_epoch_times_are_rebased_without_overflow():
    space = xplane_pb2.XSpace()
    plane = space.planes.add(name="/host:CPU")
    plane.event_metadata[1].name = "e"
    epoch_ns = 1_763_000_000_000_000_000
    for i in range(2):
        line = plane.lines.add(id=i, timestamp_ns=epoch_ns + i * 1000)
        line.events.add(metadata_id=1, offset_ps=5, duration_ps=1)
    decoded = decode_xspace(space.SerializeToString())
    assert decoded.time_base_ns == epoch_ns
    assert decoded.planes[0].events.begin_ps.tolist() == [5, 1_000_005]
    assert decoded.planes[0].events.begin_ps.dtype == np.int64


def test_gzip_compressed_file_is_read(tmp_path):
    path = all_host_files()[0]
    packed = tmp_path / "h.xplane.pb"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert read_xspace(str(packed)).num_events == read_xspace(str(path)).num_events


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "is empty"),
        (b"\x1f\x8b\x08\x00garbage", "damaged gzip"),
        (b'{"traceEvents": []}', "not an XSpace"),
        (profiler_service_pb2.ProfileRequest(duration_ms=5).SerializeToString(), "not an XSpace"),
    ],
)
def test_bad_bytes_raise_a_typed_error_naming_the_file(data, words):
    with pytest.raises(CorruptProfile) as info:
        decode_xspace(data, "broken.xplane.pb")
    assert "broken.xplane.pb" in info.value.message
    assert words in info.value.message


def test_truncated_real_file_raises_corrupt_profile(tmp_path):
    data = max(all_host_files(), key=lambda p: p.stat().st_size).read_bytes()
    for cut in (len(data) // 3, len(data) - 7):
        path = tmp_path / "cut.xplane.pb"
        path.write_bytes(data[:cut])
        with pytest.raises(CorruptProfile, match="cut.xplane.pb"):
            read_xspace(str(path))


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(NotFound, match="nope.xplane.pb"):
        read_xspace(str(tmp_path / "nope.xplane.pb"))


@pytest.mark.skipif(READER is None, reason="compiled reader not built")
@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_compiled_and_pure_python_readers_agree(path):
    data = path.read_bytes()
    slow = decode_xspace(data, "f", pure_python=True)
    # From bytes, and from the file (its pages handed back while the walk passes them).
    for fast in (decode_xspace(data, "f", pure_python=False), read_xspace(str(path))):
        _assert_same_space(fast, slow)


def _assert_same_space(fast, slow) -> None:
    assert (fast.hostnames, fast.errors, fast.warnings) == (
        slow.hostnames,
        slow.errors,
        slow.warnings,
    )
    for a, b in zip(fast.planes, slow.planes):
        assert (a.id, a.name, a.stat_names, a.plane_stats) == (
            b.id,
            b.name,
            b.stat_names,
            b.plane_stats,
        )
        for table in ("lines", "events", "stats", "event_metadata", "metadata_stats"):
            assert_frame_equal(getattr(a, table), getattr(b, table), check_categorical=False)


@pytest.mark.skipif(READER is None, reason="compiled reader not built")
def test_compiled_reader_rejects_what_protobuf_rejects(tmp_path):
    data = max(all_host_files(), key=lambda p: p.stat().st_size).read_bytes()
    for cut in (len(data) // 3, len(data) - 7, 5):
        for pure in (True, False):
            with pytest.raises(CorruptProfile):
                decode_xspace(data[:cut], "cut.xplane.pb", pure_python=pure)

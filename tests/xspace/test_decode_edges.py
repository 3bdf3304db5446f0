"""Valid-but-odd and hostile XSpaces: the decoder agrees with protobuf or refuses clearly."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import google.protobuf
import numpy as np
import pytest
from conftest import all_host_files
from fuzz_corpus import field, varint
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import Client
from xspace_builder import HostPlane

from tensorboard_plugin_profile.common.errors import CorruptProfile, ProfileTooLarge
from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.tools import trace_viewer_at
from tensorboard_plugin_profile.web.server import StandaloneApp
from tensorboard_plugin_profile.xspace import decode_xspace
from tensorboard_plugin_profile.xspace.limits import Limits

READER = load("tensorboard_plugin_profile.xspace.decode")  # the compiled reader, or None
READERS = [True] + ([False] if READER is not None else [])


def _space_with_stats(stat_names: dict, stats: list) -> bytes:
    """One host event carrying (metadata_id, str value) stats."""
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    plane.event_metadata[1].name = "step"
    for sid, name in stat_names.items():
        plane.stat_metadata[sid].id = sid
        plane.stat_metadata[sid].name = name
    ev = plane.lines.add(id=1, name="main").events.add(metadata_id=1, duration_ps=5)
    for sid, value in stats:
        ev.stats.add(metadata_id=sid, str_value=value)
    return space.SerializeToString()


@pytest.mark.parametrize("pure", READERS)
def test_two_stat_ids_with_one_name_decode(pure):
    data = _space_with_stats({1: "tf_op", 2: "tf_op", 3: "other"}, [(1, "a:A"), (2, "b:B")])
    plane = decode_xspace(data, "dup", pure_python=pure).plane("/host:CPU")
    assert plane.stats["stat"].astype(str).tolist() == ["tf_op", "tf_op"]
    assert plane.events["tf_op"].tolist() == ["b:B"]  # the last value wins
    assert plane.event_stat("tf_op").tolist() == ["b:B"]


@pytest.mark.parametrize("pure", READERS)
def test_undeclared_stat_ids_decode_with_an_empty_name(pure):
    data = _space_with_stats({}, [(7, "x"), (9, "y")])
    plane = decode_xspace(data, "undeclared", pure_python=pure).plane("/host:CPU")
    assert plane.stats["stat"].astype(str).tolist() == ["", ""]
    assert plane.stats["str_value"].tolist() == ["x", "y"]


def _space_with_metadata_ids(declared: list, used: list) -> xplane_pb2.XSpace:
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    for mid in declared:
        plane.event_metadata[mid].name = f"op{mid}"
    line = plane.lines.add(id=1, name="main", timestamp_ns=1)
    for i, mid in enumerate(used):
        line.events.add(metadata_id=mid, offset_ps=1000 * i, duration_ps=10)
    return space


def test_trace_labels_of_undeclared_metadata_ids_are_empty():
    # 5 lies between declared ids, 99 above all of them: neither takes a neighbour's name.
    space = decode_xspace(
        _space_with_metadata_ids([2, 10], [2, 5, 10, 99]).SerializeToString(), "ids"
    )
    text = json.dumps(json.loads(trace_viewer_at.convert([("h", space)], {"format": "columnar"})))
    assert "op2" in text and "op10" in text and "op5" not in text
    names = space.plane("/host:CPU").events["name"].astype(str).tolist()
    assert names == ["op2", "", "op10", ""]


@pytest.mark.parametrize("pure", READERS)
@pytest.mark.parametrize(
    "declared, used, dtype",
    [
        ([2, 10], [2, 10, 2**31 - 1, -(2**31)], np.int32),  # ids fit: 4 bytes an event
        ([2, 2**40], [2, 2**40], np.int64),  # a declared id beyond int32
        ([2, 10], [2, -(2**31) - 1, 10], np.int64),  # an undeclared one
    ],
)
def test_metadata_ids_are_int32_where_they_fit(pure, declared, used, dtype):
    data = _space_with_metadata_ids(declared, used).SerializeToString()
    events = decode_xspace(data, "ids", pure_python=pure).plane("/host:CPU").events
    assert events["metadata_id"].dtype == dtype
    assert events["metadata_id"].tolist() == used
    assert events["name"].astype(str).tolist() == [f"op{m}" if m in declared else "" for m in used]


@pytest.mark.parametrize("pure", READERS)
def test_a_repeated_map_key_keeps_the_last_entry(pure):
    plane = xplane_pb2.XPlane(id=1, name="/host:CPU")
    first = xplane_pb2.XPlane(event_metadata={3: xplane_pb2.XEventMetadata(name="first")})
    last = xplane_pb2.XPlane(event_metadata={3: xplane_pb2.XEventMetadata(name="last")})
    plane.lines.add(id=1).events.add(metadata_id=3)
    # Concatenated messages merge: the map gets key 3 twice on the wire.
    body = plane.SerializeToString() + first.SerializeToString() + last.SerializeToString()
    wire = field(1, body) + field(4, b"h")
    assert xplane_pb2.XSpace.FromString(wire).planes[0].event_metadata[3].name == "last"
    decoded = decode_xspace(wire, "dup", pure_python=pure).plane("/host:CPU")
    assert decoded.event_metadata["name"].tolist() == ["last"]
    assert decoded.events["name"].astype(str).tolist() == ["last"]


def _both_or_neither(data: bytes) -> None:
    """Each reader decodes exactly when protobuf parses."""
    try:
        xplane_pb2.XSpace.FromString(data)
        parses = True
    except Exception:
        parses = False
    for pure in READERS:
        if parses:
            decode_xspace(data, "x", pure_python=pure)
        else:
            with pytest.raises(CorruptProfile):
                decode_xspace(data, "x", pure_python=pure)


def test_huge_field_numbers_do_not_wrap_onto_real_fields():
    plane = xplane_pb2.XPlane(id=1, name="/host:CPU").SerializeToString()
    host = field(4, b"h")
    # (2^29 + 1) << 3 | 2 would wrap onto field 1 (planes) in 32 bits.
    wrapped = varint(((1 << 29) + 1) << 3 | 2) + varint(len(plane)) + plane
    _both_or_neither(host + wrapped)
    # An unknown field with a big (valid) number is skipped by both.
    big = varint(((1 << 29) - 1) << 3 | 2) + varint(len(plane)) + plane
    _both_or_neither(host + big)
    for pure in READERS:
        assert decode_xspace(host + big, "x", pure_python=pure).planes == []


def test_groups_and_bad_wire_types_follow_protobuf():
    host = field(4, b"h")
    group = varint(9 << 3 | 3) + varint(1 << 3 | 0) + b"\x05" + varint(9 << 3 | 4)
    _both_or_neither(host + group)  # an unknown group is skipped
    _both_or_neither(host + varint(9 << 3 | 3))  # unterminated
    _both_or_neither(host + varint(9 << 3 | 4))  # an end without a start
    _both_or_neither(host + varint(9 << 3 | 6))  # no such wire type
    _both_or_neither(host + field(2, b"\xff\xfe"))  # errors must be UTF-8


def test_truncated_files_are_refused_by_both_readers():
    data = max(all_host_files(), key=lambda p: p.stat().st_size).read_bytes()
    for cut in (1, 2, 3, 10, 100, len(data) // 2, len(data) - 1):
        _both_or_neither(data[:cut])


def test_gzip_bomb_stops_at_the_cap():
    bomb = gzip.compress(b"\x00" * (64 << 20), compresslevel=9)
    limits = Limits(max_decompressed_bytes=16 << 20)
    with pytest.raises(ProfileTooLarge) as info:
        decode_xspace(bomb, "bomb.xplane.pb", limits=limits)
    assert "TBPROF_MAX_DECOMPRESSED_BYTES" in info.value.message
    assert "bomb.xplane.pb" in info.value.message
    assert info.value.http_status == 413


def test_empty_events_amplification_is_refused():
    empty_event = field(4, b"")
    line = field(3, empty_event * 200_000)
    data = field(1, line) + field(4, b"h")
    for pure in READERS:
        with pytest.raises(ProfileTooLarge, match="TBPROF_MAX_DECODED_BYTES"):
            decode_xspace(data, "amp.xplane.pb", pure, Limits(max_decoded_bytes=1 << 20))
    with pytest.raises(ProfileTooLarge, match="TBPROF_MAX_EVENTS"):
        decode_xspace(data, "amp.xplane.pb", limits=Limits(max_events=1000))
    for pure in READERS:
        with pytest.raises(ProfileTooLarge, match="200,000 events"):
            decode_xspace(data, "amp", pure_python=pure, limits=Limits(max_events=199_999))
        assert decode_xspace(data, "amp", pure_python=pure).num_events == 200_000


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("TBPROF_MAX_EVENTS", "5")
    monkeypatch.setenv("TBPROF_MAX_DECOMPRESSED_BYTES", "1_000")
    limits = Limits.from_env()
    assert (limits.max_events, limits.max_decompressed_bytes) == (5, 1000)
    monkeypatch.setenv("TBPROF_MAX_EVENTS", "lots")
    assert Limits.from_env().max_events == Limits().max_events


def test_real_gzip_profiles_pass_the_default_limits():
    for path in all_host_files():
        data = path.read_bytes()
        assert decode_xspace(gzip.compress(data), "g").num_events == decode_xspace(data).num_events


@pytest.mark.parametrize("pure", READERS)
def test_no_python_object_per_event_or_stat(pure):
    path = max(all_host_files(), key=lambda p: p.stat().st_size)
    plane = max(decode_xspace(path.read_bytes(), "x", pure_python=pure), key=len_events)
    objects = [c for c in plane.events.columns if plane.events[c].dtype == object]
    assert objects == []
    assert plane.stats["str_value"].dtype == "category"
    codes = plane.stats["str_value"].cat.codes.to_numpy()
    assert codes.dtype.itemsize <= 4
    assert len(plane.stats["str_value"].cat.categories) <= max(len(np.unique(codes)) + 64, 1)


def len_events(plane) -> int:
    return plane.num_events


_PROTOBUF = tuple(int(x) for x in google.protobuf.__version__.split(".")[:2])


@pytest.mark.skipif(
    _PROTOBUF < (4, 22), reason="protobuf 4.21 itself crashes on a map entry with an unknown field"
)
def test_a_map_entry_with_an_unknown_field_is_dropped_but_checked():
    good = xplane_pb2.XEventMetadata(name="kept").SerializeToString()
    bad_stat = field(5, varint(1 << 3) + b"\x01" + field(5, b"\xc3\x28"))  # not UTF-8
    unknown = varint(3 << 3) + b"\x01"
    for value, parses in ((good, True), (good + bad_stat, False)):
        entry = varint(1 << 3) + b"\x07" + field(2, value) + unknown
        data = field(1, field(4, entry)) + field(4, b"h")
        _both_or_neither(data)
        if parses:
            for pure in READERS:
                assert decode_xspace(data, "x", pure_python=pure).planes[0].event_metadata.empty


def _bomb_session(tmp_path):
    session = tmp_path / "plugins" / "profile" / "s"
    session.mkdir(parents=True)
    path = session / "bomb.xplane.pb"
    path.write_bytes(gzip.compress(b"\x00" * (32 << 20), compresslevel=9))
    return path


def test_a_profile_past_a_limit_is_a_413_json_error(tmp_path, monkeypatch):
    _bomb_session(tmp_path)
    monkeypatch.setenv("TBPROF_MAX_DECOMPRESSED_BYTES", "1000000")
    response = Client(StandaloneApp(str(tmp_path))).get("/data/plugin/profile/run_tools?run=s")
    assert response.status_code == 413
    error = json.loads(response.get_data())["error"]
    assert error["code"] == "PROFILE_TOO_LARGE"
    assert "bomb.xplane.pb" in error["message"]
    assert "TBPROF_MAX_DECOMPRESSED_BYTES" in error["message"]


def test_the_cli_names_the_limit_in_one_line(tmp_path):
    path = _bomb_session(tmp_path)
    env = dict(os.environ, TBPROF_MAX_DECOMPRESSED_BYTES="1000000")
    result = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", "convert", str(path)]
        + ["--tool", "overview_page"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1
    assert b"TBPROF_MAX_DECOMPRESSED_BYTES" in result.stderr
    assert b"Traceback" not in result.stderr


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(-5, 1 << 40), max_size=2), min_size=1, max_size=12),
    st.data(),
)
def test_a_stat_read_at_some_events_equals_the_whole_column_there(values_per_event, data):
    """``event_stat(name, at=rows)``: the same values as the whole column at those rows
    (an event carrying the stat twice keeps its last value), increasing or not."""
    plane = HostPlane()
    line = plane.line(1, "main")
    for i, values in enumerate(values_per_event):
        event = plane.event(line, f"e{i}", i, 1)
        for value in values:
            stat = event.stats.add()
            stat.metadata_id = plane.stat_id("flops")
            stat.int64_value = value
    decoded = plane.decode().plane("/host:CPU")
    n = len(values_per_event)
    rows = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=n)), dtype=np.int64)
    if data.draw(st.booleans()):
        rows = np.unique(rows)
    whole = decoded.event_stat("flops").iloc[rows].tolist()
    assert decoded.event_stat("flops", at=rows).tolist() == whole
    assert decoded.event_stat("absent", at=rows).tolist() == [None] * len(rows)

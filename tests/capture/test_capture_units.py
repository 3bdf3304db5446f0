"""Addresses, options, the wire scanner and the session writer, without any server."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorboard_plugin_profile.capture import ProfilerOptions
from tensorboard_plugin_profile.capture import addresses as addr_lib
from tensorboard_plugin_profile.capture import options as opt_lib
from tensorboard_plugin_profile.capture import writer as writer_lib
from tensorboard_plugin_profile.capture.wire import scan_profile_response
from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.protobuf import profiler_service_pb2

from .capture_fakes import files_under, small_xspace


@pytest.mark.parametrize(
    "text, targets",
    [
        ("localhost:9999", ["localhost:9999"]),
        ("grpc://localhost:9999", ["localhost:9999"]),
        ("grpc://127.0.0.1:1, grpc://localhost:2", ["127.0.0.1:1", "localhost:2"]),
        ("GRPC://[::1]:9999", ["[::1]:9999"]),
        ("127.0.0.1:1,,127.0.0.1:1,", ["127.0.0.1:1"]),
    ],
)
def test_addresses_accepted(text, targets):
    assert [a.target for a in addr_lib.parse_service_addresses(text)] == targets


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "No service address"),
        (" , ", "No service address"),
        ("localhost", "expected host:port"),
        (":9999", "expected host:port"),
        ("localhost:", "port must be a number"),
        ("localhost:http", "port must be a number"),
        ("localhost:0", "between 1 and 65535"),
        ("localhost:65536", "between 1 and 65535"),
        ("localhost:-1", "port must be a number"),
        ("::1:9999", "brackets"),
        ("[::1]", "expected host:port"),
        ("[localhost]:1", "not an IPv6 address"),
        ("[::1:9999", "missing ']'"),
        ("local/host:1", "not allowed"),
        ("localhost:1,localhost", "expected host:port"),
    ],
)
def test_addresses_rejected_with_reason(text, fragment):
    with pytest.raises(InvalidArgument) as info:
        addr_lib.parse_service_addresses(text)
    assert fragment in info.value.message
    assert info.value.code == "INVALID_ARGUMENT"


def test_file_stem_and_loopback():
    v4, v6, name = addr_lib.parse_service_addresses("127.0.0.1:1,[::1]:2,localhost:3")
    assert (v4.file_stem, v6.file_stem, name.file_stem) == ("127.0.0.1_1", "[__1]_2", "localhost_3")
    assert v4.is_loopback and v6.is_loopback and name.is_loopback
    assert not addr_lib.parse_service_address("example.com:1").is_loopback


def test_options_coerce_accepts_any_object_with_the_attributes():
    class TfStyle:  # like TF's ProfilerOptions namedtuple
        host_tracer_level = 3
        python_tracer_level = 1
        device_tracer_level = 0
        delay_ms = None

    assert ProfilerOptions.coerce(TfStyle()) == ProfilerOptions(3, 1, 0, None)
    assert ProfilerOptions.coerce(None) == ProfilerOptions()
    with pytest.raises(InvalidArgument):
        ProfilerOptions(host_tracer_level="x")
    with pytest.raises(InvalidArgument):
        ProfilerOptions(delay_ms=-1)


def test_deadline_includes_the_delay_and_multi_host_delay_has_a_floor():
    assert opt_lib.attempt_deadline_s(1000, 0) == 65.0
    assert opt_lib.attempt_deadline_s(45_000, 0) == 95.0
    assert opt_lib.attempt_deadline_s(1000, 120_000) == 185.0
    assert opt_lib.effective_delay_ms(ProfilerOptions(delay_ms=0), 1) == 0
    assert opt_lib.effective_delay_ms(ProfilerOptions(delay_ms=0), 2) == 1000
    assert opt_lib.effective_delay_ms(ProfilerOptions(delay_ms=5000), 2) == 5000


@given(
    empty=st.booleans(),
    with_xspace=st.booleans(),
    names=st.lists(st.text(max_size=20), max_size=4),
    tools=st.lists(st.tuples(st.text(max_size=10), st.binary(max_size=50)), max_size=3),
)
def test_wire_scan_matches_protobuf(empty, with_xspace, names, tools):
    response = profiler_service_pb2.ProfileResponse(empty_trace=empty)
    for name, data in tools:
        response.tool_data.add(name=name, data=data)
    if with_xspace:
        response.xspace.hostnames.extend(names)
        response.xspace.planes.add(name="/host:CPU")
    scanned = scan_profile_response(response.SerializeToString())
    assert scanned.empty_trace == empty
    assert scanned.tool_data == tuple(tools)
    if with_xspace:
        assert scanned.xspace == response.xspace.SerializeToString()
    else:
        assert scanned.xspace is None


@pytest.mark.parametrize(
    "raw", [b"\x42", b"\x42\x05ab", b"\x38", b"\x3b", b"\x41\x00", b"\xff" * 11]
)
def test_wire_scan_rejects_malformed_bytes(raw):
    with pytest.raises(ValueError):
        scan_profile_response(raw)


def test_session_ids_never_reuse_a_directory(tmp_path):
    root = str(tmp_path)
    first = writer_lib.allocate_session_id(root, now=0)
    second = writer_lib.allocate_session_id(root, now=0)  # reserved, not yet on disk
    os.mkdir(os.path.join(root, first))
    writer_lib.release_session_id(first)
    third = writer_lib.allocate_session_id(root, now=0)
    assert (second, third) == (f"{first}_1", f"{first}_2")
    assert len(first) == 19
    for session_id in (first, second, third):
        writer_lib.release_session_id(session_id)


def test_concurrent_allocations_are_distinct(tmp_path):
    ids: list[str] = []
    threads = [
        threading.Thread(target=lambda: ids.append(writer_lib.allocate_session_id(str(tmp_path))))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 8
    for session_id in ids:
        writer_lib.release_session_id(session_id)


def test_writer_commits_atomically_and_discard_leaves_nothing(tmp_path):
    writer = writer_lib.SessionWriter(str(tmp_path), "s1")
    writer.write("h_1.xplane.pb", small_xspace().SerializeToString())
    (temp_dir,) = [n for n in os.listdir(tmp_path / "plugins/profile")]
    assert temp_dir.startswith(".capture-s1-")  # hidden until complete
    assert writer.commit() == str(tmp_path / "plugins/profile/s1")
    assert files_under(str(tmp_path / "plugins/profile")) == ["s1", "s1/h_1.xplane.pb"]
    (tmp_path / "reference").mkdir()  # the session gets the mode of any new directory, not 0700
    assert (
        os.stat(tmp_path / "plugins/profile/s1").st_mode == os.stat(tmp_path / "reference").st_mode
    )
    (tmp_path / "reference").rmdir()

    failed = writer_lib.SessionWriter(str(tmp_path), "s2")
    failed.write("h_1.xplane.pb", b"x")
    failed.discard()
    assert files_under(str(tmp_path / "plugins/profile")) == ["s1", "s1/h_1.xplane.pb"]


def test_writer_merges_into_a_directory_a_server_wrote(tmp_path):
    server_dir = tmp_path / "plugins/profile/s1"
    server_dir.mkdir(parents=True)
    (server_dir / "other_2.xplane.pb").write_bytes(b"server")
    writer = writer_lib.SessionWriter(str(tmp_path), "s1")
    writer.write("h_1.xplane.pb", b"client")
    writer.commit(merge_existing=True)
    assert files_under(str(tmp_path / "plugins/profile")) == [
        "s1",
        "s1/h_1.xplane.pb",
        "s1/other_2.xplane.pb",
    ]


def test_writer_rejects_paths_as_file_names(tmp_path):
    writer = writer_lib.SessionWriter(str(tmp_path), "s1")
    for name in ("../x", ".hidden", "a/b"):
        with pytest.raises(ValueError):
            writer.write(name, b"")
    assert files_under(str(tmp_path)) == []


def test_writer_moves_a_file_in_and_commits_it(tmp_path):
    source = tmp_path / "scratch" / "vm.xplane.pb"
    source.parent.mkdir()
    source.write_bytes(b"xspace")
    writer = writer_lib.SessionWriter(str(tmp_path / "logs"), "s1")
    writer.move_in("vm.xplane.pb", str(source))
    assert not source.exists()
    writer.commit()
    assert (tmp_path / "logs/plugins/profile/s1/vm.xplane.pb").read_bytes() == b"xspace"
    with pytest.raises(ValueError):
        writer_lib.SessionWriter(str(tmp_path / "logs"), "s2").move_in("../x", str(source))


def test_writer_moves_aside_when_another_process_took_the_id(tmp_path):
    foreign = tmp_path / "plugins/profile/s1"
    foreign.mkdir(parents=True)
    (foreign / "theirs.xplane.pb").write_bytes(b"theirs")
    writer = writer_lib.SessionWriter(str(tmp_path), "s1")
    writer.write("mine.xplane.pb", b"mine")
    assert writer.commit() == str(tmp_path / "plugins/profile/s1_1")
    assert writer.session_id == "s1_1"
    assert files_under(str(tmp_path / "plugins/profile")) == [
        "s1",
        "s1/theirs.xplane.pb",
        "s1_1",
        "s1_1/mine.xplane.pb",
    ]


def test_options_as_dict_namedtuple_or_keywords():
    import collections

    # TensorFlow's multi-GPU example fills a dict: options['delay_ms'] = 1000.
    options = {"host_tracer_level": 3, "python_tracer_level": 1}
    options["delay_ms"] = 1000
    assert ProfilerOptions.coerce(options) == ProfilerOptions(3, 1, 1, 1000)
    tf_style = collections.namedtuple(
        "ProfilerOptions",
        ["host_tracer_level", "python_tracer_level", "device_tracer_level", "delay_ms"],
    )
    assert ProfilerOptions.coerce(tf_style(1, 0, 0, 500)) == ProfilerOptions(1, 0, 0, 500)
    assert ProfilerOptions.coerce(options, delay_ms=0).delay_ms == 0
    assert ProfilerOptions.coerce(None, device_tracer_level=2) == ProfilerOptions(
        device_tracer_level=2
    )


@pytest.mark.parametrize(
    "options, fragment",
    [
        ({"delay": 1000}, "Unknown profiler option(s) delay"),
        ({"host_tracer_level": 7}, "host_tracer_level must be between 0 and 3, got 7"),
        ({"device_tracer_level": 5}, "device_tracer_level must be between 0 and 2, got 5"),
        ({"python_tracer_level": 2}, "python_tracer_level must be between 0 and 1, got 2"),
        ({"host_tracer_level": "x"}, "host_tracer_level must be an integer"),
        (42, "options must be a ProfilerOptions, a dict or a namedtuple"),
    ],
)
def test_options_unknown_keys_and_levels_out_of_range_are_rejected(options, fragment):
    with pytest.raises(InvalidArgument) as info:
        ProfilerOptions.coerce(options)
    assert fragment in info.value.message


def test_trace_rejects_bad_options_before_contacting_anyone(tmp_path):
    from tensorboard_plugin_profile.capture import trace

    for kwargs in ({"options": {"host_tracer_level": 7}}, {"delay": 5}, {"python_tracer_level": 2}):
        with pytest.raises(InvalidArgument):
            trace("localhost:1", str(tmp_path), 100, **kwargs)
    assert not os.listdir(tmp_path)

"""The compiled walk of a file that is still arriving (a download: ``FileBytes.arriving``).

The walk follows the bytes as the writer publishes them (``Arrival``) and must give the raw
form of the whole file exactly: names and line bases are filled in after the walk, wide
metadata ids, time bases and occurrences included. A writer that gives up ends the walk
with the writer's own error, at once; the tables come out only once every byte is there.
"""

from __future__ import annotations

import glob
import gzip
import os
import threading
import time

import pytest
from fuzz_corpus import raw_digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.common.errors import CorruptProfile, Unavailable
from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.xspace import decode_xspace
from tensorboard_plugin_profile.xspace.decode import compiled_raw
from tensorboard_plugin_profile.xspace.filebytes import Arrival, FileBytes
from xspace.test_decode_layout import _planes
from xspace.test_decode_memory import _long_profile, _zero_page_share

READER = load("tensorboard_plugin_profile.xspace.decode")
pytestmark = pytest.mark.skipif(
    READER is None or not hasattr(READER, "arrive"), reason="compiled streaming walk not built"
)
DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
FIXTURES = sorted(glob.glob(os.path.join(DATA, "*", "plugins", "profile", "*", "*.xplane.pb")))


def _feed(arrival: Arrival, data: bytes, piece: int, stop_at: int = -1, error=None):
    """A writer thread: ``data`` into the arrival's memory in pieces; it gives up at
    ``stop_at`` with ``error``."""

    def write() -> None:
        for at in range(0, len(data), piece):
            if 0 <= stop_at <= at:
                arrival.end(error)
                return
            end = min(at + piece, len(data))
            arrival.memory[at:end] = data[at:end]
            arrival.arrived(min(end, len(data) - 1))
            if at // piece % 64 == 0:
                time.sleep(0.0005)  # let the walk catch up and wait now and then
        arrival.end()

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def _streamed_raw(data: bytes, piece: int, threads: int = 0) -> dict:
    arrival = Arrival(len(data))
    writer = _feed(arrival, data, piece)
    try:
        return compiled_raw(READER, arrival.memory, -1, threads, True, arrival.progress)
    finally:
        writer.join()


@pytest.mark.parametrize("piece", [7, 4093, 1 << 20])
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_a_file_walked_as_it_arrives_gives_the_raw_form_of_the_whole_file(piece, threads):
    data = _long_profile()  # lines longer than a chunk, string stats, an id past int32
    expected = raw_digest(compiled_raw(READER, data, threads=threads))
    assert raw_digest(_streamed_raw(data, piece, threads)) == expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_every_fixture_walked_as_it_arrives_gives_the_same_raw_form(path):
    with open(path, "rb") as f:
        data = f.read()
    assert raw_digest(_streamed_raw(data, 65536)) == raw_digest(compiled_raw(READER, data))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=_planes(), piece=st.integers(1, 300))
def test_generated_spaces_walked_as_they_arrive_give_the_same_raw_form(data, piece):
    """Names shared or unknown, wide codes, epoch timestamps (a time base over all planes),
    wrapping offsets, occurrences: all filled in after the walk, as the whole walk writes
    them."""
    if not data:
        return
    assert raw_digest(_streamed_raw(data, piece)) == raw_digest(compiled_raw(READER, data))


def test_the_walked_pages_go_back_while_the_file_arrives():
    data = _long_profile()
    arrival = Arrival(len(data))
    writer = _feed(arrival, data, 4096)
    compiled_raw(READER, arrival.memory, -1, 2, True, arrival.progress)
    writer.join()
    assert _zero_page_share(arrival.memory) > 0.9


def test_a_download_that_stops_ends_the_walk_with_its_own_error():
    """Half the file came, then the download failed: its typed error, not "corrupt", at
    once, and no tables."""
    data = _long_profile()
    arrival = Arrival(len(data))
    error = Unavailable("s3://b/vm.xplane.pb cannot be reached now (timeout); try again.")
    writer = _feed(arrival, data, 4096, stop_at=len(data) // 2, error=error)
    started = time.monotonic()
    with pytest.raises(Unavailable, match="cannot be reached now"):
        decode_xspace(FileBytes.arriving(arrival), "vm.xplane.pb")
    writer.join()
    assert time.monotonic() - started < 10
    assert 0 < arrival.progress[0] < len(data)  # the walk had part of it


def test_the_compiled_walk_stops_when_no_more_will_come():
    arrival = Arrival(1000)
    threading.Timer(0.1, arrival.end, args=(Unavailable("gone"),)).start()
    with pytest.raises(ConnectionAbortedError):
        compiled_raw(READER, arrival.memory, -1, 2, True, arrival.progress)


def test_corrupt_bytes_that_arrive_are_corrupt_once_all_came():
    data = _long_profile()[:-100]  # cut inside the plane
    with pytest.raises(CorruptProfile, match="truncated"):
        decode_xspace(data, "vm.xplane.pb")
    arrival = Arrival(len(data))
    writer = _feed(arrival, data, 65536)
    with pytest.raises(CorruptProfile, match="truncated"):
        decode_xspace(FileBytes.arriving(arrival), "vm.xplane.pb")
    writer.join()


def test_tables_of_an_arriving_file_equal_the_whole_files():
    data = _long_profile()
    expected = decode_xspace(data, "vm.xplane.pb")
    for payload in (data, gzip.compress(data)):  # a gzip file is inflated once it all came
        arrival = Arrival(len(payload))
        writer = _feed(arrival, payload, 8192)
        space = decode_xspace(FileBytes.arriving(arrival), "vm.xplane.pb")
        writer.join()
        for got, want in zip(space.planes, expected.planes):
            assert got.events.equals(want.events) and got.stats.equals(want.stats)


def test_a_line_name_between_its_events_survives_the_pages_going_back():
    """protobuf merges repeated fields and keeps the last name wherever it is: a line's name
    may sit between its events. Its bytes are read at the line's end, after the chunks
    before it were parsed and their pages handed back: no chunk spans it."""
    from tensorboard_plugin_profile.protobuf import xplane_pb2

    def line(**fields) -> bytes:
        return xplane_pb2.XLine(**fields).SerializeToString()

    events = [xplane_pb2.XEvent(metadata_id=1, offset_ps=i, duration_ps=1) for i in range(3000)]
    body = line(id=1, events=events) + line(name="the line's name") + line(events=events)
    plane = xplane_pb2.XPlane(id=1, name="/host:CPU").SerializeToString()
    plane += b"\x1a" + _varint(len(body)) + body  # field 3: the line
    metadata = {1: xplane_pb2.XEventMetadata(id=1, name="op")}
    plane += xplane_pb2.XPlane(event_metadata=metadata).SerializeToString()
    data = b"\x0a" + _varint(len(plane)) + plane  # XSpace field 1: the plane
    expected = compiled_raw(READER, data)
    assert expected["planes"][0]["lines"][0][2] == "the line's name"
    for piece in (512, 4096):
        assert raw_digest(_streamed_raw(data, piece, threads=2)) == raw_digest(expected)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def test_past_the_event_limit_nothing_more_is_parsed_and_the_count_is_exact():
    """Pass 1 counts on to the end, so the message gives the file's count; the workers stop
    parsing once the limit is passed (that they do is not observed here, only that the
    refusal is the same as for a whole file)."""
    from tensorboard_plugin_profile.common.errors import ProfileTooLarge
    from tensorboard_plugin_profile.xspace.limits import Limits

    data = _long_profile()  # 73,000 events
    arrival = Arrival(len(data))
    writer = _feed(arrival, data, 65536)
    with pytest.raises(ProfileTooLarge, match="holds 73,000 events, more than the limit of 1,000"):
        decode_xspace(FileBytes.arriving(arrival), "vm.xplane.pb", limits=Limits(max_events=1000))
    writer.join()


# Event records of about 10, 18 and 28 bytes (a chunk's own columns take 20 bytes an event:
# they fit in its bytes of the file not at all, begin and duration only, or all of them).
RECORD_VALUES = {
    "small": (1, 1000, 7),
    "medium": (1, 1 << 60, 1 << 14),
    "large": ((1 << 30) + 1, 1 << 60, 1 << 57),
}


def _sized_events_profile(size: str, events: int = 300_000) -> bytes:
    """One line of ``events`` events whose records are ``size`` (``RECORD_VALUES``)."""
    from tensorboard_plugin_profile.protobuf import xplane_pb2

    mid, offset, duration = RECORD_VALUES[size]
    records = []
    for i in range(64):
        body = xplane_pb2.XEvent(
            metadata_id=mid + i % 5, offset_ps=offset + i * 1000, duration_ps=duration + i
        ).SerializeToString()
        records.append(b"\x22" + _varint(len(body)) + body)
    line = xplane_pb2.XLine(id=1, timestamp_ns=5).SerializeToString()
    line += b"".join(records) * (events // 64) + b"".join(records[: events % 64])
    plane = xplane_pb2.XPlane(id=1, name="/host:CPU").SerializeToString()
    plane += b"\x1a" + _varint(len(line)) + line
    ids = range(mid, mid + 5)
    metadata = {m: xplane_pb2.XEventMetadata(id=m, name=f"op{m}") for m in ids}
    plane += xplane_pb2.XPlane(event_metadata=metadata).SerializeToString()
    return b"\x0a" + _varint(len(plane)) + plane


@pytest.mark.parametrize("size", sorted(RECORD_VALUES))
def test_chunk_columns_kept_in_the_files_own_bytes_give_the_same_raw_form(size):
    data = _sized_events_profile(size, events=80_000)
    expected = raw_digest(compiled_raw(READER, data))
    assert raw_digest(_streamed_raw(data, 65536, threads=2)) == expected


def _minor_faults() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_a_streamed_walk_keeps_the_chunk_columns_in_the_walked_bytes_not_fresh_memory():
    """Each chunk's own columns (20 bytes an event until they move into place) go over the
    chunk's bytes of the file once it is parsed: those pages are in memory already, where
    fresh memory costs a page fault per 4 KiB. So the streamed walk touches about as many new
    pages as the walk of the whole file (about 2,900 more here before: its columns)."""
    events = 600_000
    data = _sized_events_profile("large", events)  # 28 bytes an event: all the columns fit
    column_pages = events * 20 // 4096
    for _ in range(2):  # the second walk: nothing of the first's start-up counts
        whole = FileBytes.of_memory(_filled(data)).take()
        before = _minor_faults()
        compiled_raw(READER, whole, -1, 2, True)
        whole_faults = _minor_faults() - before
    arrival = Arrival(len(data))
    arrival.memory[:] = data  # in place before the walk: only the walk's own faults count
    publisher = threading.Thread(target=_publish_in_pieces, args=(arrival, len(data), 1 << 20))
    before = _minor_faults()
    publisher.start()
    compiled_raw(READER, arrival.memory, -1, 2, True, arrival.progress)
    publisher.join()
    streamed_faults = _minor_faults() - before
    assert streamed_faults - whole_faults < column_pages // 3, (streamed_faults, whole_faults)


def _filled(data: bytes) -> memoryview:
    from tensorboard_plugin_profile.xspace.filebytes import private_memory

    memory = private_memory(len(data))
    memory[:] = data
    return memory


def _publish_in_pieces(arrival: Arrival, size: int, piece: int) -> None:
    for end in range(piece, size, piece):
        arrival.arrived(end)
        time.sleep(0.0002)
    arrival.end()


def test_the_walk_sleeps_until_bytes_arrive_rather_than_polling():
    """While no byte comes, the walk sleeps until ``arrive`` wakes it (a futex; at most
    10 ms at a time): polling every 0.2 ms woke it about 1,200 times in these 0.3 s, each
    wake a slice of the cores the download shares."""
    resource = pytest.importorskip("resource")
    if not hasattr(resource, "RUSAGE_THREAD"):
        pytest.skip("no per-thread usage here")
    data = _long_profile()
    arrival = Arrival(len(data))
    arrival.memory[:] = data
    threading.Timer(0.3, arrival.end).start()  # nothing published for 0.3 s, then all
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    raw = compiled_raw(READER, arrival.memory, -1, 2, True, arrival.progress)
    switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw - before
    assert len(raw["planes"]) == 1
    assert switches < 300, switches


def test_occurrences_of_one_chunk_never_reach_the_next():
    """A worker parses every chunk's occurrences into one buffer of its own, kept apart and
    zeroed again only for a chunk that has any: here the first chunk has them on even rows,
    the second on odd rows, the third none, all walked by one worker."""
    from tensorboard_plugin_profile.protobuf import xplane_pb2

    def record(i: int) -> bytes:
        chunk, row = divmod(i, 32768)
        event = xplane_pb2.XEvent(metadata_id=1, duration_ps=3)
        if chunk < 2 and row % 2 == chunk:
            event.num_occurrences = 2 + chunk
        else:
            event.offset_ps = i
        body = event.SerializeToString()
        return b"\x22" + _varint(len(body)) + body

    line = xplane_pb2.XLine(id=1, timestamp_ns=5).SerializeToString()
    line += b"".join(record(i) for i in range(2 * 32768 + 500))
    plane = xplane_pb2.XPlane(id=1, name="/host:CPU").SerializeToString()
    plane += b"\x1a" + _varint(len(line)) + line
    metadata = {1: xplane_pb2.XEventMetadata(id=1, name="op")}
    plane += xplane_pb2.XPlane(event_metadata=metadata).SerializeToString()
    data = b"\x0a" + _varint(len(plane)) + plane
    expected = compiled_raw(READER, data)
    occurrences = expected["planes"][0]["events"][4]
    assert occurrences is not None and any(occurrences)
    assert raw_digest(_streamed_raw(data, 65536, threads=1)) == raw_digest(expected)

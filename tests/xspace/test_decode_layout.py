"""The compiled reader's final event layout equals the pure-Python reader's, finished.

The compiled reader writes begin times, name codes and occurrences while it walks the
events (``xspace/_layout.h``); ``rawform.finish`` derives the same from the wire layout.
Generated XSpaces cover what the layout depends on: names shared by several metadata ids
or empty, ids no metadata declares, more than 127 distinct names (wider codes), absolute
epoch timestamps (a time base), negative and huge offsets (wrapping arithmetic),
occurrences in the offset's oneof, and string stats (interned per chunk, also when the walked
pages are handed back) and integer stats of one value or two (broadcast or sparse columns).
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_corpus import anonymous_copy, raw_digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, rawform, wire
from tensorboard_plugin_profile.xspace.decode import _sorted_factorize, compiled_raw

READER = load("tensorboard_plugin_profile.xspace.decode")  # the compiled reader, or None
pytestmark = pytest.mark.skipif(READER is None, reason="compiled reader not built")

_INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
_NAMES = st.sampled_from(["", "a", "b", "jit_f", "é"]) | st.text(max_size=3)


@st.composite
def _planes(draw) -> bytes:
    space = xplane_pb2.XSpace(hostnames=["h"])
    for plane_id in range(draw(st.integers(0, 3))):
        plane = space.planes.add(id=plane_id, name=draw(_NAMES))
        for sid, stat in enumerate(("tag", "tf_op", "hlo_op", "_r"), start=1):
            plane.stat_metadata[sid].name = stat
        declared = draw(st.lists(_INT64 | st.integers(0, 300), max_size=150, unique=True))
        if draw(st.booleans()):  # many distinct names: 16-bit codes
            declared += [1000 + i for i in range(draw(st.integers(120, 140)))]
        for mid in declared:
            plane.event_metadata[mid].name = draw(_NAMES) if mid < 1000 else f"n{mid}"
            plane.event_metadata[mid].display_name = draw(_NAMES)
        used = st.sampled_from(declared) | _INT64 if declared else _INT64
        for line_id in range(draw(st.integers(0, 3))):
            stamp = draw(st.integers(0, 1 << 40) | st.integers(1 << 50, 1 << 61) | _INT64)
            line = plane.lines.add(id=line_id, timestamp_ns=stamp)
            for _ in range(draw(st.integers(0, 12))):
                event = line.events.add(metadata_id=draw(used), duration_ps=draw(_INT64))
                if draw(st.booleans()):
                    event.offset_ps = draw(_INT64)
                else:
                    event.num_occurrences = draw(st.integers(0, 3))
                for _ in range(draw(st.integers(0, 2))):  # strings interned per chunk
                    event.stats.add(metadata_id=draw(st.integers(1, 3)), str_value=draw(_NAMES))
                if draw(st.booleans()):  # one value or many: broadcast or sparse columns
                    event.stats.add(metadata_id=4, int64_value=draw(st.integers(0, 1)))
    return space.SerializeToString()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_planes())
def test_final_layouts_agree(data):
    compiled = raw_digest(compiled_raw(READER, data))  # ids beyond int32 drawn too
    assert compiled == raw_digest(rawform.finish(wire.read(data)))
    # The same from a private copy whose pages go back to the OS behind the walk.
    assert raw_digest(compiled_raw(READER, anonymous_copy(data), discard=True)) == compiled
    if xplane_pb2.XSpace.FromString(data).planes:
        fast = decode_xspace(data, "f", pure_python=False)
        slow = decode_xspace(data, "f", pure_python=True)
        assert fast.time_base_ns == slow.time_base_ns
        for a, b in zip(fast.planes, slow.planes):
            assert_frame_equal(a.events, b.events)  # categories in the same order too
            assert_frame_equal(a.stats, b.stats)


def test_layout_across_chunks_and_threads(monkeypatch):
    """Lines longer than a chunk (32768 events), walked by one thread and by several."""
    space = xplane_pb2.XSpace(hostnames=["h"])
    plane = space.planes.add(id=1, name="/host:CPU")
    for mid in range(1, 200):
        plane.event_metadata[mid].name = f"op{mid % 150}"
    rng = np.random.default_rng(3)
    for line_id, count in enumerate((40000, 33000)):
        line = plane.lines.add(id=line_id, timestamp_ns=1_700_000_000_000_000_000 + line_id)
        for i, mid in enumerate(rng.integers(0, 205, count).tolist()):
            event = line.events.add(metadata_id=mid, offset_ps=i * 10, duration_ps=5)
            if i == 39999:
                event.num_occurrences = 2
    data = space.SerializeToString()
    slow = decode_xspace(data, "f", pure_python=True).planes[0].events
    for threads in ("1", "2", "5"):
        monkeypatch.setenv("TBPROF_DECODE_THREADS", threads)
        fast = decode_xspace(data, "f", pure_python=False)
        assert fast.time_base_ns == 1_700_000_000_000_000_000
        assert_frame_equal(fast.planes[0].events, slow)
    assert slow["occurrences"].tolist().count(2) == 1
    assert slow["name"].cat.codes.dtype == np.int16  # 150 names and ""
    undeclared = slow["metadata_id"].isin([0, 200, 201, 202, 203, 204])
    assert ((slow["name"] == "") == undeclared).all()


@given(st.lists(_INT64 | st.integers(-3, 3), max_size=60))
def test_sorted_factorize_is_np_unique(values):
    array = np.asarray(values, dtype=np.int64)
    uniques, inverse = _sorted_factorize(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert uniques.tolist() == expected.tolist()
    assert inverse.tolist() == expected_inverse.ravel().tolist()


def _host_plane():
    space = xplane_pb2.XSpace(hostnames=["h"])
    return space, space.planes.add(id=1, name="/host:CPU")


def _both_readers(space) -> list:
    data = space.SerializeToString()
    return [decode_xspace(data, "nul", pure_python=pure).planes[0] for pure in (True, False)]


def test_a_nul_name_is_not_the_empty_name():
    """pandas 2 factorises "\\x00" and "" as one string: the names must stay apart."""
    space, plane = _host_plane()
    plane.event_metadata[1].name = "\x00"
    plane.event_metadata[2].name = ""
    line = plane.lines.add(id=1)
    for mid in (1, 2, 3, 1):
        line.events.add(metadata_id=mid, offset_ps=1)
    for decoded in _both_readers(space):
        assert decoded.events["name"].tolist() == ["\x00", "", "", "\x00"]


def test_a_nul_string_stat_value_is_not_the_empty_value():
    """The same for string stat values, in the pure-Python reader as in the compiled one."""
    space, plane = _host_plane()
    plane.event_metadata[1].name = "op"
    plane.stat_metadata[7].name = "tag"
    line = plane.lines.add(id=1)
    for value in ("\x00", "", "\x00", "x"):
        event = line.events.add(metadata_id=1, offset_ps=1)
        event.stats.add(metadata_id=7, str_value=value)
    for decoded in _both_readers(space):
        assert decoded.stats["str_value"].tolist() == ["\x00", "", "\x00", "x"]

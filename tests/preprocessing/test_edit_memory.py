"""Working memory of preprocessing's steps that set its peak on large profiles.

Traced bytes (numpy reports its buffers to ``tracemalloc``) per event, per stats row or per
context end, on a synthetic host plane: many plain events, few regions. Deterministic, no
timing. Each bound sits between the code before (a per-event copy) and now.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from xspace_builder import HostPlane

from tensorboard_plugin_profile.preprocessing import group_column, group_roots, mutators
from tensorboard_plugin_profile.preprocessing.plane_edit import PlaneEdit
from tensorboard_plugin_profile.xspace import schema
from tensorboard_plugin_profile.xspace.model import KIND_STR

EVENTS = 40_000


def _traced_peak(fn) -> int:
    """Bytes allocated above the start at the peak of ``fn()`` (its result freed after)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def plain_host():
    """A host of mostly plain events, each with one ordinary int stat (a stats row), a
    few thread pool regions, and no producer or consumer otherwise."""
    plane = HostPlane()
    worker = plane.line(1, "worker")
    for k in range(EVENTS):
        if k % 4000 == 0:
            plane.event(worker, schema.THREADPOOL_START_REGION, k + 1, 0, _ct=15, _c=k + 1)
        elif k % 4000 == 2000:
            plane.event(worker, schema.THREADPOOL_STOP_REGION, k + 1, 0)
        else:
            plane.event(worker, "work", k + 1, 0.5, x=k)
    return plane.decode().planes[0]


def test_threadpool_regions_read_no_typed_column_per_event(plain_host):
    # Before: a nullable consumer-id column made for the read (8 B + a mask per event) and
    # a boolean Series per name comparison: about 12 B per event. Now 3 B (7 B with the
    # pure-Python twin of the stats table's row search, which flags every table row).
    edit = PlaneEdit(plain_host)
    peak = _traced_peak(lambda: mutators.add_threadpool_regions(edit))
    assert peak < 8 * EVENTS
    added = edit._new_events[0]
    assert len(added[0]) == EVENTS // 4000  # the regions were still made


def test_implicit_groups_search_the_int32_owner_column_without_a_copy(plain_host):
    # Before: searching the stats table's int32 ``event`` column with int64 keys copied the
    # whole column to int64 (8 B per stats row, then the largest transient of the edit
    # that sets groups).
    edit = PlaneEdit(plain_host)
    edit.set_groups(np.zeros(len(plain_host.events), dtype=np.int32))
    edit.set_stat([0, 5], schema.STEP_NAME, ["a", "b"], KIND_STR)
    rows = len(plain_host.stats)
    assert plain_host.stats["event"].dtype == np.int32 and rows >= EVENTS

    def implicit():
        return group_column.implicit_groups(
            plain_host, edit._groups, edit._stat_rows, edit._replaced, None
        )

    peak = _traced_peak(implicit)
    assert peak < 4 * rows
    found = implicit()
    assert found.events.tolist() == [0, 5] and found.ranks.tolist() == [2, 1]


def test_context_keys_are_coded_without_the_sides_copies():
    # Before: each side's rows and key columns stayed alive while the keys were coded and
    # the links made (about 145 B per context end here); now about 95 B.
    plane = HostPlane()
    line = plane.line(1, "python")
    pairs = 10_000
    for k in range(pairs):
        plane.event(line, "produce", 2 * k, 0.5, _pt=3, _p=k)
        plane.event(line, "consume", 2 * k + 1, 0.5, _ct=3, _c=k)
    nodes = group_roots.Nodes.of(plane.decode())
    peak = _traced_peak(lambda: group_roots._contexts(nodes))
    assert peak < 120 * 2 * pairs
    parents, children = group_roots._contexts(nodes)
    assert (children - parents == 1).all() and len(children) == pairs

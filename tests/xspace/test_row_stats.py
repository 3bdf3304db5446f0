"""Well-known stats kept only as stats rows (``schema.ROW_STATS``): no event column holds
them, and the column a reader gets (``typed_column``) or the rows it reads (``int_stat``)
say what the slow per-event route (``Plane.event_stat``) says, on every real fixture,
decoded and preprocessed, and on hand-made planes with repeated and unsigned values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import all_host_files
from xspace_builder import SpaceBuilder, Uint, set_stat_value

from tensorboard_plugin_profile.preprocessing.preprocess import preprocess_decoded
from tensorboard_plugin_profile.xspace import read_xspace, schema
from tensorboard_plugin_profile.xspace.event_stats import (
    int_stat,
    int_stat_at,
    set_rows,
    stat_events,
    typed_column,
    typed_column_at,
)

_INT_ROW_STATS = [n for n in schema.ROW_STATS if n not in schema.STR_STATS]


def _objects(column: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in column.astype(object).tolist()]


def _as_int64(value):
    """A stat value as the int64 its column holds (uint64 values are bit-cast)."""
    return None if value is None else (int(value) + 2**63) % 2**64 - 2**63


def _check_plane(plane) -> int:
    """Asserts each row stat's column and rows against ``event_stat``; how many values."""
    assert not set(schema.ROW_STATS) & set(plane.events.columns)
    seen = 0
    for name in schema.ROW_STATS:
        column = typed_column(plane, name)
        assert len(column) == plane.num_events
        slow = plane.event_stat(name).tolist()
        if name in schema.STR_STATS:
            assert _objects(column) == slow, name
        else:
            assert _objects(column) == [_as_int64(v) for v in slow], name
            rows, values = int_stat(plane, name)
            present = [i for i, v in enumerate(slow) if v is not None]
            assert rows.tolist() == present, name
            assert values.tolist() == [_as_int64(slow[i]) for i in present], name
        present = [i for i, v in enumerate(slow) if v is not None]
        assert set_rows(plane, name).tolist() == present, name
        assert set(present) <= set(stat_events(plane, name).tolist()), name
        some = np.unique(np.r_[present[::3], np.arange(0, plane.num_events, 7)]).astype(np.int64)
        at = typed_column_at(plane, name, some)
        assert _objects(at) == _objects(column.iloc[some]), name
        seen += len(present)
    return seen


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: p.parent.parent.parent.parent.name)
def test_row_stats_read_as_the_slow_route_on_every_fixture(path):
    space = read_xspace(str(path))
    decoded = sum(_check_plane(p) for p in space.planes)
    preprocessed = sum(_check_plane(p) for p in preprocess_decoded(space).planes)
    # Preprocessing adds step names (and root levels, producers and consumers) as rows.
    assert preprocessed >= decoded


def test_fixtures_carry_row_stats():
    """The check above reads real values somewhere (not only missing columns)."""
    found = set()
    for path in all_host_files():
        for plane in preprocess_decoded(read_xspace(str(path))).planes:
            found |= {n for n in schema.ROW_STATS if typed_column(plane, n).notna().any()}
    assert {"step_name", "_pt", "_p", "_ct", "_c", "hlo_op", "program_id"} <= found


def _hand_made_plane():
    space = SpaceBuilder("h")
    host = space.plane(1, "/host:CPU")
    line = host.line(1, "t")
    host.event(line, "a", 0, 1, _p=5, hlo_op="fusion.1")
    twice = host.event(line, "b", 2, 1, _p=6, program_id=7)
    again = twice.stats.add()  # a second _p on the same event: the last one counts
    again.metadata_id = host.stat_id("_p")
    set_stat_value(again, 8)
    host.event(line, "c", 4, 1, _c=Uint(2**64 - 1), step_name="train 3")
    host.event(line, "d", 6, 1)
    return space.decode().planes[0]


def test_last_value_wins_and_unsigned_values_are_bit_cast():
    plane = _hand_made_plane()
    assert _objects(typed_column(plane, "_p")) == [5, 8, None, None]
    rows, values = int_stat(plane, "_p")
    assert rows.tolist() == [0, 1] and values.tolist() == [5, 8]
    rows, values = int_stat(plane, "_c")
    assert rows.tolist() == [2] and values.tolist() == [-1]
    assert _objects(typed_column(plane, "hlo_op")) == ["fusion.1", None, None, None]
    assert _objects(typed_column(plane, "step_name")) == [None, None, "train 3", None]
    assert _objects(typed_column(plane, "program_id")) == [None, 7, None, None]
    assert int_stat_at(plane, "_p", np.array([3, 1, 0, 2])).tolist() == [0, 8, 5, 0]
    assert _objects(typed_column_at(plane, "step_name", np.array([2, 3]))) == ["train 3", None]
    assert _objects(typed_column_at(plane, "_p", np.array([1, 3]))) == [8, None]
    assert set_rows(plane, "hlo_op").tolist() == [0] and not len(set_rows(plane, "_r"))
    assert int_stat_at(plane, "_r", np.array([0, 1]), missing=-1).tolist() == [-1, -1]
    empty_rows, empty_values = int_stat(plane, "_r")
    assert not len(empty_rows) and not len(empty_values)
    assert typed_column(plane, "_r").isna().all()


def test_a_column_the_events_have_is_read_from_them():
    plane = _hand_made_plane()
    assert typed_column(plane, "group_id") is not None
    assert typed_column(plane, "correlation_id").dtype == "UInt64"
    ours = np.asarray(plane.events["line"])
    assert typed_column(plane, "line").to_numpy().tolist() == ours.tolist()


def test_stats_rows_out_of_event_order_are_read_last_value_wins():
    # Tables are sorted by event (decoded, merged), so int_stat skips its sort; a table in
    # another order must still give ascending events with each event's last value.
    plane = _hand_made_plane()
    stats = plane.stats
    order = np.r_[np.arange(len(stats))[::-1]]
    plane.stats = stats.iloc[order].reset_index(drop=True)
    rows, values = int_stat(plane, "_p")
    # Reversed, event 1's two _p rows swap: 6 is now the last one.
    assert rows.tolist() == [0, 1] and values.tolist() == [5, 6]
    assert rows.dtype == np.int64 and values.dtype == np.int64
    plane.stats = stats
    assert int_stat(plane, "_p")[1].tolist() == [5, 8]

"""The decoded form of an XSpace: per plane, an event table in columns.

A ``Plane`` holds
- ``lines``: one row per XLine (``id``, ``display_id``, ``name``,
  ``display_name``, ``timestamp_ns``, ``tid``, ``label``);
- ``events``: one row per XEvent, in file order, with ``line`` (row of
  ``lines``), ``metadata_id``, ``name`` and ``display_name`` (categoricals from
  the event metadata), ``begin_ps``, ``duration_ps``, ``occurrences`` and one
  typed column per well-known stat of ``schema.COLUMN_STATS`` (nullable; the
  sparse ones, ``schema.ROW_STATS``, are read through ``xspace.event_stats``);
- ``stats``: every event stat in long form (``event``, ``stat``, ``kind``,
  ``int_value``, ``float_value``, ``str_value``), including the well-known ones;
- ``event_metadata`` (``id``, ``name``, ``display_name``) and ``metadata_stats``
  (long form keyed by ``metadata_id``);
- ``stat_names`` (stat metadata id → name) and ``plane_stats`` (name → value);
- ``implicit_group``: None, or (planes preprocessed here) the sign that ``group_id``
  lives only in the events' column, with where it sits among an event's stats
  (``ImplicitGroups``; ``xspace.event_stats`` lists an event's stats with it in place).

Times are integer picoseconds: ``begin_ps = line.timestamp_ns * 1000 +
offset_ps`` (rebased by ``Space.time_base_ns`` only when a file holds absolute
epoch times that would overflow int64).

Usage::

    space = read_xspace("vm.xplane.pb")
    host = space.plane("/host:CPU")
    host.events.groupby("name", observed=True).duration_ps.sum()
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, Optional

import numpy as np
import pandas as pd

from ..common.formats import XSPACE
from . import schema

# Value kinds in the long stats tables.
KIND_DOUBLE = 0
KIND_UINT64 = 1
KIND_INT64 = 2
KIND_STR = 3
KIND_BYTES = 4
KIND_REF = 5

# Field metadata of tables that few tools read (the long stats tables): the disk cache
# stores them compressed (store/column_codec.py), the hot event columns as they are.
COLD = {"cold": True}


@dataclasses.dataclass
class ImplicitGroups:
    """``group_id`` kept only as the events' column, not as rows of ``Plane.stats``.

    An event's ``group_id`` counts as one of its stats, placed after all its rows of
    ``stats`` except at ``events`` (increasing rows), where ``ranks`` of its rows come
    first: the rows its events had before preprocessing grouped them, the stats that
    grouping added (``step_name``, ``is_eager``, ``flow``) coming after it.
    """

    events: np.ndarray  # int64 event rows
    ranks: np.ndarray  # int32: how many of that event's stats rows precede its group_id

    @classmethod
    def none(cls) -> ImplicitGroups:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))


@dataclasses.dataclass
class Plane:
    index: int
    id: int
    name: str
    lines: pd.DataFrame
    events: pd.DataFrame
    stats: pd.DataFrame = dataclasses.field(metadata=COLD)
    event_metadata: pd.DataFrame
    metadata_stats: pd.DataFrame = dataclasses.field(metadata=COLD)
    stat_names: dict
    plane_stats: dict
    implicit_group: Optional[ImplicitGroups] = None

    @property
    def num_events(self) -> int:
        return len(self.events)

    def event_stat(self, name: str, at: Optional[np.ndarray] = None) -> pd.Series:
        """One stat as a column aligned with ``events`` (None where absent), or with the
        increasing event rows ``at`` (an object per row asked, not per event).

        Integers come back as Python ints (uint64 values stay exact), strings
        as str; the last value wins when an event carries the stat twice.
        """
        if name == schema.GROUP_ID and self.implicit_group is not None:  # the events' column
            column = self.events[name]
            if at is not None:  # the asked rows only, before any object is made
                column = column.iloc[np.asarray(at, dtype=np.int64)]
            picked = column.astype(object)
            return picked.where(picked.notna(), None).reset_index(drop=True)
        rows = self.stats[self.stats["stat"] == name]
        out = pd.Series([None] * (len(self.events) if at is None else len(at)), dtype=object)
        if not len(rows) or not len(out):
            return out
        events = rows["event"].to_numpy()
        values = stat_values(rows)
        if at is None:
            out.iloc[events] = values
            return out
        at = np.asarray(at, dtype=np.int64)
        if (np.diff(at) <= 0).any():  # not increasing: read the whole column
            return self.event_stat(name).iloc[at].reset_index(drop=True)
        position = np.searchsorted(at, events)
        hit = at[np.minimum(position, len(at) - 1)] == events
        out.iloc[position[hit]] = np.asarray(values, dtype=object)[hit]
        return out

    def metadata_stat(self, name: str) -> dict:
        """Metadata id → value of one stat carried on event metadata."""
        rows = self.metadata_stats[self.metadata_stats["stat"] == name]
        return dict(zip(rows["metadata_id"].tolist(), stat_values(rows)))


@dataclasses.dataclass
class Space:
    source: str
    planes: list
    hostnames: list
    errors: list
    warnings: list
    time_base_ns: int = 0
    nbytes: int = 0
    # Filled by preprocessing.preprocess: step group id -> name ("train 3"), and
    # group id -> ids of the groups nested in it.
    group_names: dict = dataclasses.field(default_factory=dict)
    group_children: dict = dataclasses.field(default_factory=dict)
    preprocessed: bool = False
    # The input format it was read from (common/formats.py: XSPACE, or PROFILER_HOOK and
    # PYTORCH read by chrome_trace/); extras holds what that format carries beside the events
    # (top-level trace keys).
    source_format: str = XSPACE
    extras: dict = dataclasses.field(default_factory=dict)

    def plane(self, name: str) -> Optional[Plane]:
        """The first plane with exactly this name, or None."""
        return next((p for p in self.planes if p.name == name), None)

    def planes_with_prefix(self, prefix: str) -> list:
        return [p for p in self.planes if p.name.startswith(prefix)]

    def __iter__(self) -> Iterator[Plane]:
        return iter(self.planes)

    @property
    def num_events(self) -> int:
        return sum(p.num_events for p in self.planes)

    @property
    def hostname(self) -> str:
        return self.hostnames[0] if self.hostnames else "localhost"


def stat_values(rows: pd.DataFrame) -> list:
    """Python values of long-form stat rows, by kind (uint64 kept exact)."""
    kinds = rows["kind"].to_numpy()
    ints = rows["int_value"].to_numpy()
    out = rows["str_value"].to_numpy(dtype=object, copy=True)
    signed = kinds == KIND_INT64
    out[signed] = ints[signed].astype(object)
    unsigned = kinds == KIND_UINT64
    out[unsigned] = ints[unsigned].view(np.uint64).astype(object)
    doubles = kinds == KIND_DOUBLE
    out[doubles] = rows["float_value"].to_numpy()[doubles].astype(object)
    return out.tolist()

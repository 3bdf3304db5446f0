"""What one host contributes to a multi-host answer: small, mergeable, computed once.

A pod session has one profile per host, and each decodes into tables a few times the
file's size; holding every host's tables to answer "overview for all hosts" does not
scale past a few dozen hosts. Every multi-host tool that merges hosts instead reads a
``HostSummary`` per host: the host's OpStats (op databases, kernel reports, steps,
environment: docs/conversion.md §4), its HLO op table and device idle time, and the few
facts of its planes the tools check before merging. A summary is kilobytes to a few MB,
is made in whatever process decoded the host (``pod/``: a worker, a Dask task, or the
server itself) and travels back instead of the tables.

The tools merge summaries with the same code whether they were made here or elsewhere
(``tools/<tool>.reduce``), so an answer is the same bytes in every mode.

The advisor, the op views and the tf.data analysis also read ``HostDetails`` (advice
facts, op-record pieces, tf.data pipelines): mapped the same way, but only when one of
those tools is first asked, and merged with the summary as ``Detailed``.

Usage::

    summary = summarize(space)                     # in a worker: sent to the server
    stats = combined_op_stats([summary, other])    # in the server: merged
    records = op_records_of([Detailed(summary, details(space)), ...])
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..common.formats import format_of
from ..common.memo import memoized
from ..xspace import schema
from ..xspace.event_stats import set_rows
from ..xspace.model import Space
from . import environment
from .advice.facts import HostFacts, host_facts
from .hlo import modules, op_events
from .input_pipeline import tf_data
from .ops import attribution
from .ops.attribution import RecordPieces, record_pieces
from .ops.op_stats import OpStats, combined, host_op_stats


@dataclasses.dataclass
class HostSummary:
    source_format: str
    hostnames: list
    plane_names: list
    op_stats: OpStats
    perf_env: environment.PerfEnv  # the first GPU's peaks (zeros elsewhere)
    hlo_ops: pd.DataFrame  # one row per (program_id, hlo_op) of this host
    device_idle_ps: int  # GPU op spans not covered by ops (op_profile's "idle")
    module_names: list  # the host's compiled programs, ``module(program id)``, sorted
    # The tools run_tools lists for a session starting with this host (``tools.listed_tools``):
    # given by pod/, which may read the tool registry (it sits above analysis/).
    tool_names: list = dataclasses.field(default_factory=list)

    @property
    def has_planes(self) -> bool:
        return bool(self.plane_names)

    def has_gpu(self) -> bool:
        return any(schema.is_gpu_plane(name) for name in self.plane_names)

    @property
    def has_xla_ops(self) -> bool:
        """Whether the host's HLO op table has a row."""
        return not self.hlo_ops.empty


class SpaceSummary:
    """A host's summary read from its decoded Space on demand: what a tool merges when the
    Space is at hand, without computing the pieces that tool does not read."""

    def __init__(self, space: Space):
        self.space = space

    @property
    def source_format(self) -> str:
        return format_of(self.space)

    @property
    def hostnames(self) -> list:
        return list(self.space.hostnames)

    @property
    def plane_names(self) -> list:
        return [p.name for p in self.space.planes]

    @property
    def op_stats(self) -> OpStats:
        return host_op_stats(self.space)

    @property
    def perf_env(self) -> environment.PerfEnv:
        return environment.perf_env(self.space)

    @property
    def hlo_ops(self) -> pd.DataFrame:
        return op_events.host_op_table(self.space)

    @property
    def device_idle_ps(self) -> int:
        return memoized([self.space], "device_idle_ps", lambda: device_idle_ps(self.space))

    @property
    def module_names(self) -> list:
        return modules.module_names(self.space)

    @property
    def has_xla_ops(self) -> bool:
        """``HostSummary.has_xla_ops``, without building the HLO op table."""
        return op_events.has_xla_ops(self.space)

    has_planes = HostSummary.has_planes
    has_gpu = HostSummary.has_gpu


@dataclasses.dataclass
class HostDetails:
    """What the advisor, the op views and the tf.data analysis read of one host beyond its
    ``HostSummary``: a few facts of its planes, its op-record pieces and its tf.data
    pipelines. Larger than a summary and asked for less often, so computed on first use."""

    facts: HostFacts
    records: RecordPieces
    tf_data: Optional[tuple]  # tf_data.plane_pipelines: None without a host plane


def details(space: Space) -> HostDetails:
    """The ``HostDetails`` of one decoded (preprocessed) XSpace host."""
    return HostDetails(
        facts=host_facts(space),
        records=record_pieces(space),
        tf_data=tf_data.plane_pipelines(space),
    )


@dataclasses.dataclass
class Detailed:
    """A host's summary and its details, as the detail tools' ``reduce`` reads them."""

    summary: Any  # HostSummary or SpaceSummary
    details: HostDetails

    @property
    def hostnames(self) -> list:
        return self.summary.hostnames

    @property
    def source_format(self) -> str:
        return self.summary.source_format

    @property
    def op_stats(self) -> OpStats:
        return self.summary.op_stats

    @property
    def facts(self) -> HostFacts:
        return self.details.facts


def op_records_of(hosts: Sequence[Detailed]) -> pd.DataFrame:
    """The op records (``ops.attribution``) of detailed hosts, once per set of hosts."""
    stats = combined_op_stats(hosts)
    return attribution.records_of_pieces(stats, [h.details.records for h in hosts])


def tf_data_of(hosts: Sequence[tuple]) -> Any:
    """The tf.data statistics of (name, Detailed) hosts."""
    parts = [(tf_data.host_key(name, h.hostnames), h.details.tf_data) for name, h in hosts]
    return tf_data.stats_of_parts(parts)


def summarize(space: Space, tool_names: Sequence[str] = ()) -> HostSummary:
    """Every piece of one decoded (preprocessed) XSpace host, to send to another process."""
    view = SpaceSummary(space)
    fields = [f.name for f in dataclasses.fields(HostSummary) if f.name != "tool_names"]
    values = {name: getattr(view, name) for name in fields}
    return HostSummary(**values, tool_names=list(tool_names))


def summaries_of(hosts: Sequence[tuple]) -> list:
    """[(host name, summary)] of (host name, Space) pairs, read from the Spaces."""
    return [(name, SpaceSummary(space)) for name, space in hosts]


def module_host(summaries: Sequence[Any], name: str) -> Optional[int]:
    """Index of the first host holding the program ``name`` (``module(program id)``, or a
    bare module name, as ``hlo.modules.find_module`` looks it up), None when none does."""
    for i, summary in enumerate(summaries):
        names = summary.module_names
        if name in names or any(n.split("(", 1)[0] == name for n in names):
            return i
    return None


def modules_by_time(summaries: Sequence[Any]) -> list:
    """The hosts' programs (``module(program id)``), the most XLA op self time first (summed
    over hosts); programs that never ran follow, by name. What the XLA pages open on."""
    names = sorted({name for s in summaries for name in s.module_names})
    ops = combined_hlo_ops(summaries)
    if ops.empty:
        return names
    per_program = ops.groupby("program_id", sort=False)["self_ps"].sum()
    time_ps = {int(k): int(v) for k, v in per_program.items()}

    def program_time(name: str) -> int:
        found = re.search(r"\((\d+)\)$", name)
        return time_ps.get(int(found.group(1)), 0) if found else 0

    return sorted(names, key=lambda name: (-program_time(name), name))


def combined_op_stats(summaries: Sequence[Any]) -> OpStats:
    """The hosts' OpStats combined (docs/conversion.md §4.7), once per set of hosts."""
    return combined([s.op_stats for s in summaries])


def combined_hlo_ops(summaries: Sequence[Any]) -> pd.DataFrame:
    """Every host's HLO ops merged per (program, op), once per set of hosts."""
    return op_events.combined_op_table([s.hlo_ops for s in summaries])


def device_idle_ps(space: Space) -> int:
    """Span of each GPU plane's op events minus the time covered by ops (never < 0)."""
    idle = 0
    for plane in environment.gpu_planes(space):
        ev = plane.events
        if ev.empty:
            continue
        ops = set_rows(plane, schema.HLO_OP)
        if not len(ops):
            continue
        begin = ev["begin_ps"].to_numpy(dtype=np.int64)[ops]
        end = begin + ev["duration_ps"].to_numpy(dtype=np.int64)[ops]
        idle += max(int(end.max() - begin.min()) - int((end - begin).sum()), 0)
    return idle

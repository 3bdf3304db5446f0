"""tf.data input pipelines of each host, their executions and bottlenecks (docs/conversion.md §5.9).

tf.data writes one ``Iterator::Root::Prefetch::Map…`` event per ``GetNext`` call of each
iterator, with the iterator's ``id`` and its ``parent_id``. An execution of a pipeline
is one call of its root iterator (``Iterator::X``); the iterators it waited on are its
tf.data children in the event forest: events nested in it on its thread, plus, for
asynchronous iterators, the producer's iterator call that made the element it
consumed (``*Consume`` ↔ ``*Produce`` events sharing an ``element_id``).

Walking each execution from its root, an iterator's *self* time is its duration minus
the overlap with its children, and it is *blocking* (on the critical path) when its
parent is blocking and they overlap. The bottleneck of an execution is the blocking
iterator with the most self time.

Everything is in columns: the forest (``tf_data_forest``) comes from ``nesting.nest`` on ranked
times, the producer/consumer links from a merge on (iterator id, element id), and the
walk expands all executions together one tree level per step (at most 100 levels).

``legacy_ids=True`` reads ids the way the reference converter (2.15) did, as int64
only: ids written as uint64 (TensorFlow writes ids ≥ 2^63 that way) read as 0 and
collide. It exists to check that converter's output; see docs/differences.md.

Usage::

    stats = tf_data_stats([("vm", space)])
    for p in stats.pipelines: p.name, p.latencies_ps.max(), p.iterators.head()
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...xspace import schema
from ...xspace.model import Plane, Space
from .tf_data_forest import children, int_stat, name_kinds

SLOW_CALL_THRESHOLD_PS = 50_000_000  # 50 us (tensorflow.org/guide/data_performance_analysis)
MAX_DEPTH = 100
ASYNC_ITERATORS = frozenset(
    {
        "Prefetch",
        "ParallelInterleave",
        "ParallelMap",
        "ParseExample",
        "MapAndBatch",
        "DataService",
        "LegacyParallelInterleave",
        "ParallelBatch",
    }
)


@dataclasses.dataclass
class Pipeline:
    host: str
    root_id: int
    name: str  # "Host:<k>" or "Device:<k>"
    is_device: bool
    latencies_ps: np.ndarray  # root call durations, slowest first (= execution rank)
    # One row per (rank, iterator): start_ps, duration_ps, self_ps, num_calls,
    # is_blocking, parent (iterator id it was first reached from, -1 at the root).
    iterators: pd.DataFrame
    bottlenecks: pd.DataFrame  # per rank: iterator_id, latency_ps (0, 0 when none)


@dataclasses.dataclass
class TfDataStats:
    pipelines: list  # Pipeline, hosts sorted by name, pipelines in first-seen order
    metadata: dict  # host -> DataFrame indexed by iterator id: name, long_name, parent_id


def tf_data_stats(hosts, legacy_ids: bool = False) -> TfDataStats:
    """Pipelines of (name, Space) hosts; hosts are keyed by the profile's hostname."""
    return stats_of_parts([host_part(name, space, legacy_ids) for name, space in hosts])


def host_part(name: str, space: Space, legacy_ids: bool = False) -> tuple:
    """(host key, the host plane's pipelines or None): what one host adds to
    ``stats_of_parts``, small enough for a pod worker to send back."""
    return host_key(name, space.hostnames), plane_pipelines(space, legacy_ids)


def host_key(name: str, hostnames: list) -> str:
    """Hosts are keyed by the profile's own hostname, else by the listed name."""
    return hostnames[0] if hostnames else name


def plane_pipelines(space: Space, legacy_ids: bool = False):
    """The host plane's pipelines (``stats_of_parts`` merges them), None without tf.data
    (a host plane without iterator events adds no pipeline: its walk is skipped)."""
    plane = space.plane(schema.HOST_PLANE)
    return _space_pipelines(plane, legacy_ids) if plane is not None and has_tf_data(space) else None


def stats_of_parts(parts: list) -> TfDataStats:
    """``TfDataStats`` of the hosts' ``host_part``s, in host order."""
    by_host: dict = {}
    for host, part in parts:
        if part is not None:
            by_host.setdefault(host, []).append(part)
    pipelines, metadata = [], {}
    for host in sorted(by_host):
        parts = by_host[host]
        metadata[host] = pd.concat([p[0] for p in parts]).pipe(_first_per_index)
        device_ids = set().union(*(p[1] for p in parts))
        roots = pd.concat([p[2] for p in parts], ignore_index=True)
        visits = pd.concat(_offset_roots([p[3] for p in parts], [p[2] for p in parts]))
        pipelines += _pipelines(host, roots, visits, device_ids)
    return TfDataStats(pipelines, metadata)


def has_tf_data(space: Space) -> bool:
    plane = space.plane(schema.HOST_PLANE)
    if plane is None:
        return False
    names = plane.event_metadata["name"].astype(str)
    return bool(names.str.startswith(schema.ITERATOR_PREFIX).any())


# --- one host plane -------------------------------------------------------------------------
def _space_pipelines(plane: Plane, legacy_ids: bool) -> tuple:
    """(iterator metadata, device pipeline ids, root calls, visits) of one host plane."""
    ev = plane.events
    kinds = name_kinds(ev["name"])
    is_iterator = kinds["iterator"]
    ids, has_id = int_stat(plane, schema.STEP_ID, legacy_ids)
    parent_ids, has_parent_id = int_stat(plane, schema.PARENT_ID, legacy_ids)
    rows = np.flatnonzero(is_iterator & has_id)
    metadata = _metadata(
        ev["name"].to_numpy()[rows], kinds["second"][rows], ids[rows], parent_ids[rows],
        has_parent_id[rows],
    )  # fmt: skip
    device_ids = set(parent_ids[kinds["second"] & has_parent_id].tolist())
    root_rows = np.flatnonzero(kinds["root"] & has_id)
    begin = ev["begin_ps"].to_numpy()
    duration = ev["duration_ps"].to_numpy()
    roots = pd.DataFrame(
        {
            "pipeline": ids[root_rows],
            "begin_ps": begin[root_rows],
            "duration_ps": duration[root_rows],
        }
    )
    edges = children(plane, kinds, legacy_ids)
    visits = _walk(root_rows, edges, begin, begin + duration, ids, has_id)
    return metadata, device_ids, roots, visits


def _metadata(long_names, second, ids, parent_ids, has_parent_id) -> pd.DataFrame:
    # Iterator events first, then the device pipelines' second iterators (upstream order).
    order = np.concatenate([np.flatnonzero(~second), np.flatnonzero(second)])
    long_names = np.asarray(long_names, dtype=object)[order]
    short = pd.Series(long_names, dtype=object).str.rsplit("::", n=1).str[-1].to_numpy()
    frame = pd.DataFrame(
        {
            "name": short,
            "long_name": long_names,
            "parent_id": np.where(has_parent_id[order], parent_ids[order], 0),
            "is_async": np.isin(short, list(ASYNC_ITERATORS)),
        },
        index=pd.Index(ids[order], name="iterator_id"),
    )
    return _first_per_index(frame)


def _first_per_index(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[~frame.index.duplicated(keep="first")]


def _walk(root_rows, edges: pd.DataFrame, begin, end, ids, has_id) -> pd.DataFrame:
    """Every iterator call reached from each root call, level by level.

    Returns one row per visit: ``root`` (index into ``root_rows``), ``iterator_id``,
    ``begin_ps``, ``duration_ps``, ``self_ps``, ``blocking``, ``preorder`` (the visit's
    rank in a depth-first walk of its root, which decides an iterator's start time)
    and ``parent_id``.
    """
    parents = edges["parent"].to_numpy()
    children = edges["child"].to_numpy()
    first_edge = np.searchsorted(parents, np.arange(len(begin) + 1))
    counts = np.diff(first_edge)
    level = {
        "event": root_rows,
        "root": np.arange(len(root_rows)),
        "blocking": np.ones(len(root_rows), dtype=bool),
        "from": np.full(len(root_rows), -1),
    }
    levels = []
    for depth in range(MAX_DEPTH + 1):
        event = level["event"]
        n_children = counts[event]
        child = children[np.repeat(first_edge[event], n_children) + _ranks_within(n_children)]
        from_visit = np.repeat(np.arange(len(event)), n_children)
        overlap = np.maximum(
            0,
            np.minimum(end[event][from_visit], end[child])
            - np.maximum(begin[event][from_visit], begin[child]),
        )
        level["self"] = (end[event] - begin[event]) - np.bincount(
            from_visit, weights=overlap, minlength=len(event)
        ).astype(np.int64)
        levels.append(level)
        keep = has_id[child] if depth < MAX_DEPTH else np.zeros(len(child), dtype=bool)
        level = {
            "event": child[keep],
            "root": level["root"][from_visit[keep]],
            "blocking": level["blocking"][from_visit[keep]] & (overlap[keep] > 0),
            "from": from_visit[keep],
        }
        if not len(level["event"]):
            break
    return _visits_frame(levels, begin, end, ids)


def _ranks_within(counts: np.ndarray) -> np.ndarray:
    """0, 1, … within each run of ``counts`` (the k-th child of each parent)."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


def _visits_frame(levels: list, begin, end, ids) -> pd.DataFrame:
    # Subtree sizes bottom-up, then depth-first ranks top-down: a child's rank is its
    # parent's + 1 + the sizes of its earlier siblings.
    sizes = [np.ones(len(lv["event"]), dtype=np.int64) for lv in levels]
    for d in range(len(levels) - 1, 0, -1):
        sizes[d - 1] += np.bincount(
            levels[d]["from"], weights=sizes[d], minlength=len(sizes[d - 1])
        ).astype(np.int64)
    preorder = [np.zeros(len(levels[0]["event"]), dtype=np.int64)]
    for d in range(1, len(levels)):
        parent = levels[d]["from"]
        before = np.cumsum(sizes[d]) - sizes[d]
        group_start = np.r_[True, parent[1:] != parent[:-1]]
        first_before = np.maximum.accumulate(np.where(group_start, before, 0))
        preorder.append(preorder[d - 1][parent] + 1 + before - first_before)
    frames = []
    for d, lv in enumerate(levels):
        event = lv["event"]
        parent_event = levels[d - 1]["event"][lv["from"]] if d else None
        frames.append(
            pd.DataFrame(
                {
                    "root": lv["root"],
                    "iterator_id": ids[event],
                    "begin_ps": begin[event],
                    "duration_ps": end[event] - begin[event],
                    "self_ps": lv["self"],
                    "blocking": lv["blocking"],
                    "preorder": preorder[d],
                    "parent_id": ids[parent_event] if d else np.full(len(event), -1),
                    "has_parent": np.full(len(event), d > 0),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _offset_roots(visits: list, roots: list) -> list:
    offsets = np.cumsum([0] + [len(r) for r in roots])
    return [v.assign(root=v["root"] + off) for v, off in zip(visits, offsets)]


# --- per pipeline ---------------------------------------------------------------------------
def _pipelines(host: str, roots: pd.DataFrame, visits: pd.DataFrame, device_ids: set) -> list:
    out = []
    first_seen = roots.groupby("pipeline", sort=False)["begin_ps"].min().sort_values(kind="stable")
    counters = {False: 0, True: 0}
    for root_id in first_seen.index.tolist():  # one iteration per pipeline
        is_device = root_id in device_ids
        name = f"{'Device' if is_device else 'Host'}:{counters[is_device]}"
        counters[is_device] += 1
        calls = roots[roots["pipeline"].to_numpy() == root_id]
        # Slowest execution first: its rank in the tables.
        calls = calls.iloc[np.argsort(-calls["duration_ps"].to_numpy(), kind="stable")]
        rank = pd.Series(np.arange(len(calls)), index=calls.index)
        mine = visits[visits["root"].isin(calls.index)]
        iterators = _iterator_stats(mine.assign(rank=rank.reindex(mine["root"]).to_numpy()))
        out.append(
            Pipeline(
                host=host,
                root_id=int(root_id),
                name=name,
                is_device=is_device,
                latencies_ps=calls["duration_ps"].to_numpy(),
                iterators=iterators,
                bottlenecks=_bottlenecks(iterators, len(calls)),
            )
        )
    return out


def _iterator_stats(visits: pd.DataFrame) -> pd.DataFrame:
    visits = visits.sort_values(["rank", "preorder"], kind="stable")
    grouped = visits.groupby(["rank", "iterator_id"], sort=True)
    stats = grouped.agg(
        start_ps=("begin_ps", "first"),
        duration_ps=("duration_ps", "sum"),
        self_ps=("self_ps", "sum"),
        num_calls=("begin_ps", "size"),
        is_blocking=("blocking", "any"),
        first_visit=("preorder", "first"),
        parent=("parent_id", "first"),
        has_parent=("has_parent", "first"),
    ).reset_index()
    stats["parent"] = stats["parent"].where(stats["has_parent"], -1)
    return stats.drop(columns="has_parent")


def _bottlenecks(iterators: pd.DataFrame, n_ranks: int) -> pd.DataFrame:
    """Per rank, the blocking iterator with the most self time (first reached on ties)."""
    candidates = iterators[iterators["is_blocking"] & (iterators["self_ps"] > 0)]
    best = candidates.sort_values(
        ["rank", "self_ps", "first_visit"], ascending=[True, False, True], kind="stable"
    ).drop_duplicates("rank")
    out = pd.DataFrame({"rank": np.arange(n_ranks)})
    out = out.merge(best[["rank", "iterator_id", "self_ps"]], on="rank", how="left")
    return pd.DataFrame(
        {
            "iterator_id": out["iterator_id"].fillna(0).astype(np.int64).to_numpy(),
            "latency_ps": out["self_ps"].fillna(0).astype(np.int64).to_numpy(),
        }
    )

"""tf_data_bottleneck_analysis: tf.data pipelines, their slowest calls and bottlenecks.

Upstream removed this tool in 2025; we serve the layout of its last Python converter
(``tf_data_stats_proto_to_gviz.py``, gviz_api key order ``cols, rows, p``, integer
cells as integers) so pages written for it keep working, plus one table of our own:

0. ``graph``: host, input_pipeline, rank (execution, slowest = 0), name (iterator id;
   ``f`` = an HTML card with its times), parent (iterator's own ``parent_id``, "" when
   0), type (0 not blocking, 1 blocking, 2 bottleneck).
1. ``summary``: per pipeline min / mean / max latency (µs), # calls, # slow calls (> 50 µs).
2. ``bottleneck``: per host pipeline, slowest first: max latency, the bottleneck iterator
   (HTML), a suggestion (HTML); ``p``: ``is_input_bound``, ``summary_message``.
3. ``iterator_graph`` (ours, for drawing the tree): per (pipeline, rank, iterator) the
   iterator it was reached from in that execution (``parent_iterator_id``, "" at the
   root), name, long name, times in µs, calls, async, on the critical path, bottleneck.

Iterator names inside the HTML cells are escaped (they come from the profile).

Usage::

    tables = convert([("vm", space)], {})      # 4 tables, or NotApplicable
"""

from __future__ import annotations

import html
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..analysis.host_summary import tf_data_of
from ..analysis.input_pipeline import tf_data
from ..common.errors import NotApplicable
from .datatable import link

NO_TF_DATA = (
    "No tf.data activity captured in your profile: there are no tf.data iterator events "
    "(Iterator::…) on the host. If your job uses tf.data, capture a longer profile with "
    "the host tracer on (TensorFlow host_tracer_level 1 or higher)."
)
_PLAYBOOK = "https://www.tensorflow.org/guide/data_performance_analysis"
_GUIDE = "https://www.tensorflow.org/guide/data_performance"
_SOURCES = (
    "TFRecord SSTable RecordIO Spanner TFColumn SleepwalkRemoteDataset TextLine "
    "StitchedTimelineDataset DateKeyDataset CapacitorProto LMDB ExternalDataset PearModel "
    "FixedLengthRecordV2 FromTensor TensorSlice Generator SyntheticDatasetOp"
).split()
_REMOTE_SOURCES = (
    "GuzzlerDataGuzzlerRemoteDataset ReverbDataset DatasetSampleGame Courier ReverbEpisodeDataset"
).split()


_CACHE_ADVICE = (
    "2. Consider adding <code>cache</code> after this transformation if your data fits into "
    "memory and it is appropriate (e.g., there is no randomness in upstream transformations "
    "like <code>shuffle</code>). See " + link(f"{_GUIDE}#caching", "this") + " for more "
    "details.<br/>3. Find more resources "
)
SUGGESTIONS = {
    "source": "1. Check the locality of a host and input data. Ideally, they should be in the "
    "same cell (or very close, like the same region).<br/>2. Parallelize reading from this "
    "dataset source. See "
    + link(f"{_PLAYBOOK}#source_datasets", "here")
    + " and "
    + link(f"{_GUIDE}#parallelizing_data_extraction", "here")
    + " for more details.<br/>",
    "data_service": "1. Fetching data from tf.data service took a while. Profile the tf.data "
    "service worker to analyze the issue further.<br/>2. See "
    + link(
        "https://www.tensorflow.org/api_docs/python/tf/data/experimental/service?version=nightly",
        "this",
    )
    + " for more details on tf.data service.<br/>3. See "
    + link(_PLAYBOOK, "this")
    + " for other suggestions.",
    "remote_source": "1. The remote data source is slow. Profile its host to analyze the "
    "issue further.<br/>2. See " + link(_PLAYBOOK, "this") + " for other suggestions.",
    "parallel": "1. Parallelize this transformation by setting "
    "<code>num_parallel_calls=tf.data.experimental.AUTOTUNE</code>. See "
    + link(f"{_GUIDE}#parallelizing_data_transformation", "this")
    + " for more details.<br/>"
    + _CACHE_ADVICE
    + link(f"{_PLAYBOOK}#transformation_datasets", "here")
    + ".",
    "sequential": "1. This transformation is inherently sequential. Add outer parallelism by "
    "running multiple copies of the input pipeline over sharded inputs and combining the "
    "results. See " + link(f"{_PLAYBOOK}#transformation_datasets", "this") + " for more "
    "details.<br/>"
    + _CACHE_ADVICE
    + link(f"{_PLAYBOOK}#3_are_you_reaching_high_cpu_utilization", "here")
    + ".",
    "other": "See " + link(_PLAYBOOK, "this") + " for suggestions.",
}
_KIND_OF_ITERATOR = {
    **{name: "source" for name in _SOURCES},
    "DataService": "data_service",
    **{name: "remote_source" for name in _REMOTE_SOURCES},
    "Map": "parallel",
    "Interleave": "parallel",
    "Filter": "sequential",
    "Batch": "sequential",
    "Unbatch": "sequential",
}
SLOW_MESSAGE = (
    "Your profile has a tf.data input pipeline slower than 50 us. For each slow input "
    "pipeline, below shows a bottleneck in the input pipeline and a suggestion on how to fix it."
)
FAST_MESSAGE = (
    "Your profile does not have any tf.data input pipeline slower than 50 us. Your job could "
    "be still input bound if this profile didn't capture all workers."
)
NONE_MESSAGE = (
    "No tf.data activity captured in your profile. If your job uses tf.data, try to capture "
    "a longer profile."
)


def suggestion(iterator_name: str) -> str:
    return SUGGESTIONS[_KIND_OF_ITERATOR.get(iterator_name, "other")]


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    if not any(tf_data.has_tf_data(space) for _, space in hosts):
        raise NotApplicable(NO_TF_DATA)
    return tf_data_tables(hosts)


def reduce(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    """A pod session's tables from each host's summary and details (``host_summary``)."""
    if not any(h.facts.has_tf_data for _, h in hosts):
        raise NotApplicable(NO_TF_DATA)
    return stats_tables(tf_data_of(hosts))


def tf_data_tables(hosts: Sequence[tuple], legacy_ids: bool = False) -> list:
    """[graph, summary, bottleneck, iterator_graph] DataTables of these hosts."""
    return stats_tables(tf_data.tf_data_stats(hosts, legacy_ids=legacy_ids))


def stats_tables(stats: tf_data.TfDataStats) -> list:
    """[graph, summary, bottleneck, iterator_graph] DataTables of merged statistics."""
    return [
        _graph_table(stats),
        _summary_table(stats),
        _bottleneck_table(stats),
        _iterator_graph_table(stats),
    ]


def _table(
    columns: Sequence[tuple], rows: list, properties: Optional[Mapping[str, str]] = None
) -> dict:
    """A DataTable as gviz_api wrote it: ``cols, rows, p``; a cell is a value or (v, f)."""
    out: dict = {
        "cols": [{"id": c, "label": label, "type": kind} for c, kind, label in columns],
        "rows": [{"c": [_cell(v) for v in row]} for row in rows],
    }
    if properties:
        out["p"] = dict(properties)
    return out


def _cell(value) -> dict:
    if isinstance(value, tuple):
        return {"v": value[0], "f": value[1]}
    return {"v": value}


def _us(ps) -> np.ndarray:
    # The legacy converter truncated picoseconds to whole microseconds (int(ps / 1e6)).
    return np.trunc(np.asarray(ps, dtype=np.float64) / 1e6).astype(np.int64)


def _card(name: str, start_us: int, total_us: int, self_us: int, calls: int) -> str:
    return (
        f"<div style='padding: 1px;'><b>{html.escape(name)}</b><br/><div style='text-align: "
        f"left;'>Start Time: {start_us} us<br/>Total Duration: {total_us} us<br/>Self "
        f"Duration: {self_us} us<br/># Calls: {calls}</div></div>"
    )


def _iterator_rows(stats: tf_data.TfDataStats):
    """(pipeline, iterator frame joined with metadata and bottleneck flags) per pipeline."""
    for p in stats.pipelines:
        it = p.iterators.join(stats.metadata[p.host], on="iterator_id")
        bottleneck = p.bottlenecks["iterator_id"].to_numpy()[it["rank"].to_numpy()]
        it = it.assign(
            is_bottleneck=it["is_blocking"].to_numpy()
            & (it["iterator_id"].to_numpy() == bottleneck)
        )
        yield p, it


def _graph_table(stats: tf_data.TfDataStats) -> dict:
    columns = (
        ("host", "string", "Host"),
        ("input_pipeline", "string", "Input Pipeline"),
        ("rank", "number", "Rank"),
        ("name", "string", "Name"),
        ("parent", "string", "Parent"),
        ("type", "number", "Type"),
    )
    rows = []
    for p, it in _iterator_rows(stats):
        kind = np.where(it["is_bottleneck"], 2, np.where(it["is_blocking"], 1, 0))
        cards = [
            (str(i), _card(*args))
            for i, *args in zip(
                it["iterator_id"].tolist(),
                it["name"].fillna("").tolist(),
                _us(it["start_ps"]).tolist(),
                _us(it["duration_ps"]).tolist(),
                _us(it["self_ps"]).tolist(),
                it["num_calls"].tolist(),
            )
        ]
        parents = [str(v) if v else "" for v in it["parent_id"].fillna(0).astype(np.int64).tolist()]
        rows += [
            [p.host, p.name, rank, card, parent, k]
            for rank, card, parent, k in zip(it["rank"].tolist(), cards, parents, kind.tolist())
        ]
    return _table(columns, rows)


def _summary_table(stats: tf_data.TfDataStats) -> dict:
    columns = (
        ("host", "string", "Host"),
        ("input_pipeline", "string", "Input Pipeline"),
        ("min", "number", "Min (us)"),
        ("mean", "number", "Avg (us)"),
        ("max", "number", "Max (us)"),
        ("num_calls", "number", "# calls"),
        ("num_slow_calls", "number", "# slow calls"),
    )
    rows = []
    for p in stats.pipelines:
        lat = p.latencies_ps
        mean_ps = int(lat.sum()) // len(lat)  # integer picoseconds, as upstream
        slow = int((lat > tf_data.SLOW_CALL_THRESHOLD_PS).sum())
        low, mean, high = _us([lat.min(), mean_ps, lat.max()]).tolist()
        rows.append([p.host, p.name, low, mean, high, len(lat), slow])
    return _table(columns, rows)


def _bottleneck_table(stats: tf_data.TfDataStats) -> dict:
    columns = (
        ("host", "string", "Host"),
        ("input_pipeline", "string", "Input Pipeline"),
        ("max_latency", "number", "Max Latency (us)"),
        ("bottleneck", "string", "Bottleneck"),
        ("suggestion", "string", "Suggestion"),
    )
    host_pipelines = [p for p in stats.pipelines if not p.is_device]
    host_pipelines.sort(key=lambda p: -int(p.latencies_ps.max()))  # one item per pipeline
    rows = []
    for p in host_pipelines:
        iterator_id = int(p.bottlenecks["iterator_id"].iat[0])
        meta = stats.metadata[p.host]
        name = meta["name"].get(iterator_id, "")
        long_name = meta["long_name"].get(iterator_id, "")
        latency = int(_us(p.bottlenecks["latency_ps"].iat[0]))
        cell = (
            f"<u>Iterator Type</u>: <b>{html.escape(name)}</b><br/><u>Long Name</u>: "
            f"{html.escape(long_name)}<br/><u>Latency</u>: {latency:,} us"
        )
        rows.append([p.host, p.name, int(_us(p.latencies_ps.max())), cell, suggestion(name)])
    max_latency = max((int(p.latencies_ps.max()) for p in host_pipelines), default=0)
    if max_latency > tf_data.SLOW_CALL_THRESHOLD_PS:
        bound, message = "true", SLOW_MESSAGE
    else:
        bound, message = "false", FAST_MESSAGE if max_latency > 0 else NONE_MESSAGE
    return _table(columns, rows, {"is_input_bound": bound, "summary_message": message})


def _iterator_graph_table(stats: tf_data.TfDataStats) -> dict:
    columns = (
        ("host", "string", "Host"),
        ("input_pipeline", "string", "Input Pipeline"),
        ("rank", "number", "Rank"),
        ("iterator_id", "string", "Iterator"),
        ("parent_iterator_id", "string", "Reached from"),
        ("name", "string", "Name"),
        ("long_name", "string", "Long name"),
        ("start_us", "number", "Start (us)"),
        ("total_us", "number", "Total duration (us)"),
        ("self_us", "number", "Self duration (us)"),
        ("num_calls", "number", "# calls"),
        ("is_async", "boolean", "Async"),
        ("on_critical_path", "boolean", "Blocking"),
        ("is_bottleneck", "boolean", "Bottleneck"),
    )
    rows: list = []
    for p, it in _iterator_rows(stats):
        parent = it["parent"].to_numpy()
        has_parent = it["first_visit"].to_numpy() > 0
        frame = pd.DataFrame(
            {
                "host": p.host,
                "pipeline": p.name,
                "rank": it["rank"].to_numpy(),
                "id": it["iterator_id"].astype(str).to_numpy(),
                "parent": np.where(has_parent, parent.astype(str), ""),
                "name": it["name"].fillna("").to_numpy(),
                "long_name": it["long_name"].fillna("").to_numpy(),
                "start": it["start_ps"].to_numpy() / 1e6,
                "total": it["duration_ps"].to_numpy() / 1e6,
                "self": it["self_ps"].to_numpy() / 1e6,
                "calls": it["num_calls"].to_numpy(),
                "async": it["is_async"].fillna(False).astype(bool).to_numpy(),
                "blocking": it["is_blocking"].to_numpy(),
                "bottleneck": it["is_bottleneck"].to_numpy(),
            }
        )
        rows += [list(r) for r in zip(*(frame[c].tolist() for c in frame.columns))]
    return _table(columns, rows)

"""input_pipeline_analyzer: is the program input-bound, and where input time goes.

See docs/conversion.md §5.3.

Five DataTables, as upstream: [device-side input table (empty off TPU), step-time
table (the overview's), host input-op table, recommendations, diagnostics]. The
step-time and diagnostics tables are the overview page's, so both tools agree.

Usage::

    tables = convert([("host", space)], {})
    tables[2]["p"]["preprocessing_us"]     # host input time spent preprocessing
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis.host_summary import combined_op_stats, summaries_of
from ..analysis.input_pipeline import breakdown as ia
from ..analysis.input_pipeline import host_ops as input_ops
from ..analysis.ops.op_stats import OpStats
from ..common import errors
from .datatable import EMPTY_TABLE, Column, data_table, rows_from_columns, three_digits
from .overview_page import overview_diagnostics
from .overview_tables import diagnostics_table, host_step_time_table

_INPUT_OP_COLUMNS = (
    Column("opName", "Input Op", "string"),
    Column("count", "Count", "number"),
    Column("timeInMs", "Total Time (in ms)", "number"),
    Column("timeInPercent", "Total Time (as % of total input-processing time)", "number"),
    Column("selfTimeInMs", "Total Self Time (in ms)", "number"),
    Column("selfTimeInPercent", "Total Self Time (as % of total input-processing time)", "number"),
    Column("category", "Category", "string"),
)
_TF_DATA_API = "https://www.tensorflow.org/api_docs/python/tf/data"
RECOMMENDATIONS = (
    "Enqueuing data: you may want to combine small input data chunks into fewer but larger chunks.",
    "Data preprocessing: you may increase num_parallel_calls in "
    f'<a href="{_TF_DATA_API}/Dataset#map" target="_blank">Dataset map()</a> or preprocess '
    "the data OFFLINE.",
    "Reading data from files in advance: you may tune parameters in the following tf.data API "
    f'(<a href="{_TF_DATA_API}/Dataset#prefetch" target="_blank">prefetch size</a>, '
    f'<a href="{_TF_DATA_API}/Dataset#interleave" target="_blank">interleave cycle_length</a>, '
    f'<a href="{_TF_DATA_API}/TFRecordDataset#class_tfrecorddataset" target="_blank">reader '
    "buffer_size</a>)",
    "Reading data from files on demand: you should read data IN ADVANCE using the following "
    f'tf.data API (<a href="{_TF_DATA_API}/Dataset#prefetch" target="_blank">prefetch</a>, '
    f'<a href="{_TF_DATA_API}/Dataset#interleave" target="_blank">interleave</a>, '
    f'<a href="{_TF_DATA_API}/TFRecordDataset#class_tfrecorddataset" target="_blank">reader '
    "buffer</a>)",
    "Other data reading or processing: you may consider using the "
    '<a href="https://www.tensorflow.org/programmers_guide/datasets" target="_blank">tf.data '
    "API</a> (if you are not using it now)",
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> list:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    if not any(s.has_planes for _, s in summaries):
        raise errors.NotApplicable(
            "The profile holds no trace at all (no host or device timeline), so there is no "
            "input pipeline to analyse."
        )
    return input_pipeline_tables(combined_op_stats([s for _, s in summaries]))


def input_pipeline_tables(stats: OpStats) -> list:
    details = ia.step_details(stats.steps)
    ops = input_ops.input_ops(stats.host_ops)
    breakdown = input_ops.input_time_breakdown(ops, details)
    return [
        dict(EMPTY_TABLE),  # the per-core infeed table exists only for TPUs
        host_step_time_table(stats),
        input_op_table(ops, breakdown),
        recommendation_table(),
        diagnostics_table(*overview_diagnostics(stats)),
    ]


def input_op_table(ops, breakdown: input_ops.InputTimeBreakdown) -> dict:
    time_ms = ops["time_ps"].to_numpy(dtype=np.float64) / 1e9
    self_ms = ops["self_time_ps"].to_numpy(dtype=np.float64) / 1e9
    total_self_ms = self_ms.sum()
    # Both percent columns hold fractions of the total input *self* time.
    scale = 1 / total_self_ms if total_self_ms > 0 else 0.0
    rows = rows_from_columns(
        ops["name"],
        ops["occurrences"],
        time_ms,
        time_ms * scale,
        self_ms,
        self_ms * scale,
        ops["category"],
    )
    p = {
        "enqueue_us": three_digits(breakdown.enqueue_us),
        "demanded_file_read_us": three_digits(breakdown.demanded_file_read_us),
        "advanced_file_read_us": three_digits(breakdown.advanced_file_read_us),
        "preprocessing_us": three_digits(breakdown.preprocessing_us),
        "unclassified_nonequeue_us": three_digits(breakdown.unclassified_non_enqueue_us),  # sic
    }
    return data_table(_INPUT_OP_COLUMNS, rows, p)


def recommendation_table() -> dict:
    return data_table([Column("link", "link", "string")], [[text] for text in RECOMMENDATIONS])

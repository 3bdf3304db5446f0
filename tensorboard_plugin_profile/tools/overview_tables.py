"""The overview page's tables other than the analysis (docs/conversion.md §5.3 T1/T4, §5.4).

The step-time table (T1) and the diagnostics table (T4) are the same in the
input-pipeline analyzer, so they live here for both tools.
"""

from __future__ import annotations

import math

import pandas as pd

from ..analysis.environment import RunEnvironment, hardware_type_of
from ..analysis.input_pipeline import breakdown as ia
from ..analysis.ops.op_stats import has_framework_ops
from ..common.memo import memoized
from .datatable import Column, column_table, data_table, link, one_digit, two_digits

STEP_COLUMNS = (
    Column("stepnum", "Step number", "string"),
    Column("deviceComputeTimeMs", "Device compute", "number"),
    Column("deviceToDeviceTimeMs", "Device to device", "number"),
    Column("deviceCollectivesTimeMs", "Device collective communication", "number"),
    Column("hostComputeTimeMs", "Host compute", "number"),
    Column("kernelLaunchTimeMs", "Kernel launch", "number"),
    Column("infeedTimeMs", "Input", "number"),
    Column("outfeedTimeMs", "Output", "number"),
    Column("compileTimeMs", "Compilation", "number"),
    Column("otherTimeMs", "All others", "number"),
    Column("tooltip", "tooltip", "string", {"role": "tooltip"}),
    Column("stepTimeMs", "Step time", "number"),
)
# Table column id → step detail, in column order (input = wait + host-to-device).
_STEP_DETAILS = (
    ("deviceComputeTimeMs", "device_compute_ms", "device_compute"),
    ("deviceToDeviceTimeMs", "device_to_device_ms", "device_to_device"),
    ("deviceCollectivesTimeMs", "device_collectives_ms", "device_collectives"),
    ("hostComputeTimeMs", "host_compute_ms", "host_compute"),
    ("kernelLaunchTimeMs", "host_prepare_ms", "kernel_launch"),
    ("infeedTimeMs", "input_ms", "infeed"),
    ("outfeedTimeMs", "output_ms", "outfeed"),
    ("compileTimeMs", "host_compile_ms", "compile"),
    ("otherTimeMs", "unknown_time_ms", "other"),
)
_TOOLTIP_ORDER = (
    ("All others", "unknown_time_ms"),
    ("Compilation", "host_compile_ms"),
    ("Output", "output_ms"),
    ("Input", "input_ms"),
    ("Kernel launch", "host_prepare_ms"),
    ("Host compute", "host_compute_ms"),
    ("Device collectives", "device_collectives_ms"),
    ("Device to device", "device_to_device_ms"),
    ("Device compute", "device_compute_ms"),
)
GRAPH_COLUMN_IDS = (
    "stepnum,deviceComputeTimeMs,deviceToDeviceTimeMs,deviceCollectivesTimeMs,"
    "hostComputeTimeMs,kernelLaunchTimeMs,infeedTimeMs,outfeedTimeMs,compileTimeMs,"
    "otherTimeMs, tooltip"
)


def host_step_time_table(stats) -> dict:
    """The step-time table of an OpStats, as the overview and the input-pipeline analyzer
    both show it: made once per OpStats (thousands of steps, a tooltip each), read-only."""
    return memoized([stats], "step_time_table", lambda: _host_step_time_table(stats))


def _host_step_time_table(stats) -> dict:
    details = ia.step_details(stats.steps)
    tf_data = ia.tf_data_in_use(stats.host_ops, details)
    hardware = hardware_type_of(stats.run_environment.device_type)
    return step_time_table(details, ia.classify(details, tf_data), tf_data, hardware, stats.steps)


def step_time_table(
    details: pd.DataFrame,
    bottleneck: ia.Bottleneck,
    tf_data: bool,
    hardware_type: str,
    steps_db=None,
) -> dict:
    step_time = ia.summarize(details["max_step_time_ms"])
    p = {
        "step_time_graph_column_ids": GRAPH_COLUMN_IDS,
        "hardware_type": hardware_type,
        "steptime_ms_average": one_digit(step_time.average),
        "steptime_ms_standard_deviation": one_digit(step_time.standard_deviation),
        "steptime_ms_minimum": one_digit(step_time.minimum),
        "steptime_ms_maximum": one_digit(step_time.maximum),
        "input_conclusion": bottleneck.input_statement,
        # Upstream puts the statements (not the classifications) in these keys.
        "device_collectives_bottleneck": bottleneck.device_collectives_statement,
        "device_collectives_statement": bottleneck.device_collectives_statement,
        "kernel_launch_bottleneck": bottleneck.kernel_launch_statement,
        "kernel_launch_statement": bottleneck.kernel_launch_statement,
        "all_other_bottleneck": bottleneck.all_other_statement,
        "all_other_statement": bottleneck.all_other_statement,
        "summary_nextstep": ia.summary_next_step(bottleneck, tf_data),
    }
    for _, key, name in _STEP_DETAILS:
        summary = ia.summarize(details[key])
        p[f"{name}_time_ms_avg"] = one_digit(summary.average)
        p[f"{name}_time_ms_sdv"] = one_digit(summary.standard_deviation)
    if steps_db is not None and steps_db.guessed:
        p["steps_guessed_from"] = steps_db.guessed_from
    return column_table(STEP_COLUMNS, _step_columns(details), p)


def _step_columns(details: pd.DataFrame) -> list:
    """The values of each of ``STEP_COLUMNS``, one per step (hundreds to thousands):
    the name, the details in ms, a tooltip with each of them to two digits, the step
    time. Built a column at a time."""
    names = details["step_name"].tolist()
    step_time = details["step_time_ms"].tolist()
    heads = [
        f"Step {name}, duration: {text} ms"
        for name, text in zip(names, _two_digit_texts(step_time))
    ]
    lines = [
        [f"\n-{label}: {text} ms" for text in _two_digit_texts(details[key].tolist())]
        for label, key in _TOOLTIP_ORDER
    ]
    tooltips = ["".join(parts) for parts in zip(heads, *lines)]
    values = [details[key].tolist() for _, key, _ in _STEP_DETAILS]
    return [names, *values, tooltips, step_time]


def _two_digit_texts(values: list) -> list:
    """``two_digits`` of each value; one f-string each where all are finite."""
    if all(map(math.isfinite, values)):
        return [f"{v:.2f}" for v in values]
    return [two_digits(v) for v in values]


def run_environment_table(env: RunEnvironment) -> dict:
    columns = [
        Column(c, c, "string") for c in ("host_id", "command_line", "start_time", "bns_address")
    ]
    p = {
        "host_count": str(env.host_count),
        "device_type": _device_type_name(env),
        "device_core_count": str(env.device_core_count),
        "is_training": "true" if env.is_training else "false",
    }
    if env.host_count > 0 and env.task_count > 0:
        per_host = env.task_count // env.host_count
        p["task_count"] = f"{env.task_count} (num tasks per host = {per_host})"
    return data_table(columns, [], p)


def _device_type_name(env: RunEnvironment) -> str:
    # Upstream's combined environment names the hardware type, e.g. "GPU".
    return "GPU" if hardware_type_of(env.device_type) == "GPU" else env.device_type


def device_ops_tool(stats, hardware: str, has_xla_ops: bool) -> str:
    """The tool the device next step names: upstream's (op_profile on TPU, else TF stats),
    except that TF stats of a profile without TensorFlow ops is empty and not listed, so
    such a profile names hlo_stats when it has XLA ops (a JAX program), and none without."""
    if hardware == "TPU" or has_framework_ops(stats):
        return "op_profile" if hardware == "TPU" else "framework_op_stats"
    return "hlo_stats" if has_xla_ops else ""


def recommendation_table(stats, bottleneck: ia.Bottleneck, has_xla_ops: bool = False) -> dict:
    hardware = hardware_type_of(stats.run_environment.device_type)
    tool = device_ops_tool(stats, hardware, has_xla_ops)
    timeline = "TPU core" if hardware == "TPU" else hardware
    rows = [
        ["faq", "Refer to the TF2 Profiler FAQ", "Tool troubleshooting / FAQ"],
        [
            "host",
            "input_pipeline_analyzer (especially Section 3 for the breakdown of input "
            "operations on the Host)",
            "Next steps for reducing the Host time",
        ],
        [
            "host",
            "trace_viewer (look at the activities on the timeline of each Host Thread "
            "near the bottom of the trace view)",
            "Next steps for reducing the Host time",
        ],
        [
            "device",
            f"trace_viewer (look at the activities on the timeline of each {timeline} "
            "in the trace view)",
            "Next steps for reducing the Device time",
        ],
        [
            "doc",
            link(
                "https://www.tensorflow.org/guide/data_performance_analysis",
                "Analyze tf.data performance with the TF Profiler",
            ),
            "Other useful resources",
        ],
        [
            "doc",
            link(
                "https://www.tensorflow.org/guide/data_performance",
                "Better performance with the tf.data API",
            ),
            "Other useful resources",
        ],
    ]
    if tool:  # ours: never a row naming an empty tool (docs/differences.md)
        what = "XLA operations" if tool == "hlo_stats" else "operations"
        step = f"{tool} (identify the time-consuming {what} executed on the {hardware})"
        rows.insert(3, ["device", step, "Next steps for reducing the Device time"])
    columns = [Column(c, c, "string") for c in ("tip_type", "link", "description")]
    classification = bottleneck.input_classification
    p = {
        "bottleneck": classification,
        "statement": bottleneck.input_statement,
        "kernel_launch_bottleneck": bottleneck.kernel_launch_classification,
        "kernel_launch_statement": bottleneck.kernel_launch_statement,
        "all_other_bottleneck": bottleneck.all_other_classification,
        "all_other_statement": bottleneck.all_other_statement,
        "device_collectives_bottleneck": bottleneck.device_collectives_classification,
        "device_collectives_statement": bottleneck.device_collectives_statement,
        "precision_statement": _precision_statement(stats.steps),
        "non_bottleneck_tip_types": {"host": "device", "device": "host"}.get(classification, ""),
        # Ours: the page words the tips for this framework (docs/differences.md).
        "framework": stats.steps.framework or "",
    }
    return data_table(columns, rows, p)


def _precision_statement(db) -> str:
    total = db.precision_16bit_ps + db.precision_32bit_ps
    if total <= 0 or 100 * db.precision_16bit_ps / total >= 10:
        return ""
    share = one_digit(100 * db.precision_16bit_ps / total)
    return (
        f"Only {share}% of device computation is 16 bit. So you might want to replace "
        "more 32-bit Ops by 16-bit Ops to improve performance (if the reduced accuracy is "
        "acceptable)."
    )


def inference_latency_table() -> dict:
    columns = (
        Column("percentile", "percentile", "string"),
        Column("hostTimeMs", "Host time (in ms)", "number"),
        Column("deviceTimeMs", "Device time (in ms)", "number"),
        Column("communicationTimeMs", "Host-device communication time (in ms)", "number"),
        Column("totalTimeMs", "Total latency (in ms)", "number"),
    )
    return data_table(columns, [])


def diagnostics_table(info: list, warnings: list, errors: list) -> dict:
    columns = (Column("severity", "Severity", "string"), Column("message", "Message", "string"))
    rows = (
        [["INFO", m] for m in info]
        + [["WARNING", m] for m in warnings]
        + [["ERROR", m] for m in errors]
    )
    return data_table(columns, rows)

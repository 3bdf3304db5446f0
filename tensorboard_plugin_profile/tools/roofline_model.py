"""roofline_model: each HLO op's FLOP rate against its operational intensity.

Upstream's two tables: the ops (one row per HLO op, with the device's peak FLOP
rate and memory bandwidth in the table properties) and diagnostics. A roofline
needs those peaks. A GPU/TPU profile records them; a CPU profile carries none, so
there the user gives them (``peak_gflops`` and ``peak_gib_s``) or we measure this
machine's with numpy (``analysis/cpu_peaks.py``); the ``peak_source`` property and
a diagnostics row say which (docs/model_view.md, "Roofline on a CPU").

Usage::

    tables = convert(hosts, {})   # [ops table, diagnostics table], or NotApplicable
    tables = convert(hosts, {"peak_gflops": "200", "peak_gib_s": "20"})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..analysis import cpu_peaks
from ..analysis.host_summary import combined_hlo_ops, summaries_of
from ..common.errors import InvalidArgument, NotApplicable
from ..common.params import float_param
from .datatable import Column, data_table, rows_from_columns
from .hlo_stats import NO_XLA_OPS, rates

# Parameters: the roof of a CPU profile, given by the user (both, or neither).
PEAK_PARAMS = ("peak_gflops", "peak_gib_s")
# Ten times past the largest accelerators today: a typo, not a machine.
_MAX_PEAK = 1e8
_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("program_id", "Program id", "string"),
    Column("category", "Category", "string"),
    Column("operation", "Operation", "string"),
    Column("occurrences", "# Occurrences", "number"),
    Column("total_self_time", "Total self time (us)", "number"),
    Column("measured_flop_rate", "Measured FLOP rate (GFLOP/s)", "number"),
    Column("measured_memory_bw", "Memory BW (GiB/s)", "number"),
    Column("operational_intensity", "Operational Intensity (FLOP/Byte)", "number"),
    Column("bound_by", "Bound by", "string"),
    Column("roofline_efficiency", "Roofline efficiency", "number"),
)
_DIAGNOSTICS = (Column("severity", "Severity", "string"), Column("message", "Message", "string"))


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    return reduce(summaries_of(hosts), params)


def reduce(summaries: Sequence[tuple], params: Mapping[str, str]) -> list:
    """The answer from each host's summary (``analysis/host_summary.py``)."""
    table = combined_hlo_ops([s for _, s in summaries])
    if table.empty:
        raise NotApplicable(NO_XLA_OPS)
    peaks = roof_of(summaries[0][1].perf_env, params)
    peak_gflops, peak_gib_s = peaks.gflops, peaks.gib_s
    ridge = peak_gflops / peak_gib_s
    r = rates(table)
    roof = np.minimum(peak_gflops, r["intensity"] * peak_gib_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        efficiency = np.where(roof > 0, r["gflops"] / roof, 0.0)
    rows = rows_from_columns(
        np.arange(1, len(table) + 1),
        table["program_id"].astype(str),
        table["category"],
        table["hlo_op"],
        table["occurrences"].to_numpy(dtype=np.int64),
        table["self_ps"].to_numpy(dtype=np.float64) / 1e6,
        r["gflops"],
        r["gib_s"],
        r["intensity"],
        np.where(r["intensity"] >= ridge, "Compute", "Memory"),
        efficiency,
    )
    properties = {
        "peak_flop_rate": peak_gflops,
        "peak_hbm_bw": peak_gib_s,
        "hbm_ridge_point": ridge,
        "device_type": "GPU" if peaks.source == cpu_peaks.RECORDED else "CPU",
        "peak_source": peaks.source,
    }
    diagnostics = [] if peaks.source == cpu_peaks.RECORDED else [["INFO", _roof_note(peaks)]]
    return [data_table(_COLUMNS, rows, properties), data_table(_DIAGNOSTICS, diagnostics)]


def roof_of(perf, params: Mapping[str, str]) -> cpu_peaks.Peaks:
    """The peaks: the user's, else the profile's, else this machine's measured ones."""
    gflops, gib_s = (float_param(params, name, _MAX_PEAK) for name in PEAK_PARAMS)
    if gflops is not None or gib_s is not None:
        if gflops is None or gib_s is None or gflops <= 0 or gib_s <= 0:
            raise InvalidArgument(
                "Give both peak_gflops (GFLOP/s) and peak_gib_s (GiB/s) as positive "
                "numbers, or neither to use the profile's or this machine's measured peaks."
            )
        return cpu_peaks.Peaks(gflops=gflops, gib_s=gib_s, source=cpu_peaks.GIVEN)
    if perf.peak_tera_flops_per_second > 0 and perf.peak_hbm_bw_giga_bytes_per_second > 0:
        return cpu_peaks.Peaks(
            gflops=perf.peak_tera_flops_per_second * 1e3,
            gib_s=perf.peak_hbm_bw_giga_bytes_per_second * 1e9 / (1 << 30),
            source=cpu_peaks.RECORDED,
        )
    return cpu_peaks.measured_peaks()


def _roof_note(peaks: cpu_peaks.Peaks) -> str:
    roof = f"{peaks.gflops:.1f} GFLOP/s and {peaks.gib_s:.1f} GiB/s"
    if peaks.source == cpu_peaks.GIVEN:
        return f"The roof ({roof}) is given by the user (peak_gflops, peak_gib_s)."
    return (
        f"The profile records no peaks (XLA on a CPU), so the roof ({roof}) is measured on "
        "this machine with numpy (a float32 matrix product and an array copy): what numpy "
        "reaches here, not the vendor's figures. Give peak_gflops and peak_gib_s to set it."
    )

"""GPU kernel reports (docs/conversion.md §4.5): one row per distinct kernel launch shape and op.

Usage::

    reports = kernel_reports(space)                 # DataFrame, sorted, top 1000
    combined = combine_kernel_reports([a, b])       # several hosts
"""

from __future__ import annotations

import re
from typing import Iterable

import numpy as np
import pandas as pd

from ...kernels import per_name
from ...xspace import op_names, schema
from ...xspace.model import Plane, Space

MAX_KERNELS = 1000
TENSOR_CORE_KERNEL_MARKERS = (
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
)
_TC_OP_SUFFIXES = (
    "Conv2D",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "Conv3D",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "/MatMul",
    "FusedMatMul",
    "/CudnnRNN",
    "XlaDot",
    "XlaDotV2",
)
_TC_OP_PARTS = ("BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop")
IDENTITY = [
    "name",
    "grid_dim",
    "block_dim",
    "registers_per_thread",
    "static_shmem_bytes",
    "dynamic_shmem_bytes",
    "is_kernel_using_tensor_core",
    "is_op_tensor_core_eligible",
    "op_name",
]
COLUMNS = IDENTITY + [
    "occupancy_pct",
    "occurrences",
    "total_duration_ns",
    "min_duration_ns",
    "max_duration_ns",
]


def empty_reports() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})


def kernel_reports(space: Space) -> pd.DataFrame:
    frames = [_plane_kernels(p) for p in space.planes if schema.is_gpu_plane(p.name)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return empty_reports()
    return _aggregate(pd.concat(frames, ignore_index=True))


def _plane_kernels(plane: Plane) -> pd.DataFrame:
    ev = plane.events
    line_ids = plane.lines["id"].to_numpy(dtype=np.int64)
    derived = (line_ids >= schema.DERIVED_LINE_ID_MIN) & (line_ids <= schema.DERIVED_LINE_ID_MAX)
    # Kernel rows by index; names, tf_op parsing and tensor-core checks once per distinct value.
    keep = ~derived[ev["line"].to_numpy()] & (ev["duration_ps"].to_numpy() >= 1000)
    rows = np.flatnonzero(keep)
    rows = rows[per_name.per_value(ev["kernel_details"], lambda s: s != "", rows)]
    if not len(rows):
        return empty_reports()
    parsed = parse_kernel_details(ev["kernel_details"].iloc[rows])
    name_codes, distinct_names = per_name.distinct(ev["name"], rows)
    names = per_name.lookup(distinct_names.to_numpy(), name_codes, "nan")
    markers = _contains_any(distinct_names, TENSOR_CORE_KERNEL_MARKERS)
    uses_tc = per_name.lookup(markers, name_codes, False)
    op_codes, tf_ops = per_name.distinct(ev["tf_op"], rows)
    ops = pd.concat([tf_ops, pd.Series([""], dtype=object)], ignore_index=True)  # last: none
    op_of = np.where(op_codes < 0, len(tf_ops), op_codes)
    annotated = (ops != "").to_numpy()
    op_table = pd.Series("", index=ops.index, dtype=object)
    if annotated.any():
        op_table[annotated] = op_names.parse_op_names(ops[annotated].tolist())["name"].to_numpy()
    op_name = op_table.to_numpy(dtype=object)[op_of]
    eligible = is_tensor_core_eligible(op_table).to_numpy(dtype=bool)[op_of] | uses_tc
    out = parsed.assign(
        name=names,
        is_kernel_using_tensor_core=uses_tc,
        is_op_tensor_core_eligible=eligible,
        op_name=op_name,
        duration_ns=ev["duration_ps"].to_numpy(dtype=np.int64)[rows] // 1000,
    )
    return out


def parse_kernel_details(details: pd.Series) -> pd.DataFrame:
    """``regs:<n> static_shared:<n> dynamic_shared:<n> grid:x,y,z block:x,y,z occ_pct:<f>``."""
    codes, uniques = pd.factorize(details.reset_index(drop=True))
    text = pd.Series(uniques, dtype=object).astype(str)
    table = pd.DataFrame(
        {
            "registers_per_thread": _int_token(text, "regs"),
            "static_shmem_bytes": _int_token(text, "static_shared"),
            "dynamic_shmem_bytes": _int_token(text, "dynamic_shared"),
            "grid_dim": _dims_token(text, "grid"),
            "block_dim": _dims_token(text, "block"),
            "occupancy_pct": pd.to_numeric(_token(text, "occ_pct"), errors="coerce").fillna(0.0),
        }
    )
    return table.iloc[codes].reset_index(drop=True)


def _token(text: pd.Series, key: str) -> pd.Series:
    return text.str.extract(rf"(?:^|\s){key}:(\S*)", expand=False)


def _int_token(text: pd.Series, key: str) -> np.ndarray:
    values = pd.to_numeric(_token(text, key), errors="coerce").fillna(0)
    return values.to_numpy(dtype=np.int64)


def _dims_token(text: pd.Series, key: str) -> np.ndarray:
    values = _token(text, key).fillna("1,1,1")
    return values.where(values != "", "1,1,1").to_numpy(dtype=object)


def _contains_any(names: pd.Series, parts: Iterable[str]) -> pd.Series:
    pattern = "|".join(map(re.escape, parts))
    return names.str.contains(pattern, regex=True)


def is_tensor_core_eligible(op_name: pd.Series) -> pd.Series:
    """Whether a framework op could use tensor cores (convolutions, matmuls, RNNs)."""
    ends = op_name.str.endswith(_TC_OP_SUFFIXES)
    return ends | _contains_any(op_name, _TC_OP_PARTS)


def _aggregate(kernels: pd.DataFrame) -> pd.DataFrame:
    grouped = (
        kernels.groupby(IDENTITY, sort=False)
        .agg(
            occupancy_pct=("occupancy_pct", "first"),
            occurrences=("duration_ns", "size"),
            total_duration_ns=("duration_ns", "sum"),
            min_duration_ns=("duration_ns", "min"),
            max_duration_ns=("duration_ns", "max"),
        )
        .reset_index()
    )
    return sort_reports(grouped)


def sort_reports(reports: pd.DataFrame) -> pd.DataFrame:
    """Total duration descending, ties by identity ascending; top ``MAX_KERNELS``."""
    ordered = reports.sort_values(
        ["total_duration_ns"] + IDENTITY, ascending=[False] + [True] * len(IDENTITY), kind="stable"
    )
    return ordered.head(MAX_KERNELS)[COLUMNS].reset_index(drop=True)


def combine_kernel_reports(reports: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Hosts' reports concatenated (not merged, as upstream) and re-sorted."""
    frames = [r for r in reports if not r.empty]
    if not frames:
        return empty_reports()
    return sort_reports(pd.concat(frames, ignore_index=True))

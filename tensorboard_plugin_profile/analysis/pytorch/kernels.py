"""Kernel statistics of one PyTorch worker (torch-tb-profiler's Kernel view).

Per kernel name: calls, total / mean / max / min duration, blocks per SM and estimated
achieved occupancy (each the duration-weighted mean over calls, a missing value counting
as 0), and whether it uses Tensor Cores: its name holds one of the Tensor Core kernel
markers (``TENSOR_CORE_KERNEL_MARKERS``, from NVIDIA PyProf). The Tensor Core share is
the time of those kernels over all kernel time.

Usage::

    table = kernel_stats(space)      # sorted by total duration, longest first
    tensor_core_share(table)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...xspace.model import Space
from . import events as E

TENSOR_CORE_KERNEL_MARKERS = (
    "h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group", "xmma_implicit_gemm",
    "xmma_sparse_conv", "xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm",
    "c1688",
)  # fmt: skip
COLUMNS = ("name", "tensor_cores", "calls", "total_us", "mean_us", "max_us", "min_us",
           "blocks_per_sm", "occupancy")  # fmt: skip


def uses_tensor_cores(names) -> np.ndarray:
    """Per distinct name, once: does the kernel name carry a Tensor Core marker?"""
    series = pd.Series(names, dtype=object)
    pattern = "|".join(TENSOR_CORE_KERNEL_MARKERS)
    return series.str.contains(pattern, regex=True).fillna(False).to_numpy(dtype=bool)


def kernel_stats(space: Space) -> pd.DataFrame:
    ev = E.trace_events(space)
    k = ev[ev["type"] == E.KERNEL]
    if k.empty:
        return pd.DataFrame({c: [] for c in COLUMNS})
    dur = (k["end_ps"] - k["begin_ps"]).to_numpy(dtype=np.float64) / 1e6
    frame = pd.DataFrame(
        {
            "name": k["name"].to_numpy(dtype=object),
            "dur": dur,
            "bps_w": np.nan_to_num(k["blocks_per_sm"].to_numpy()) * dur,
            "occ_w": np.nan_to_num(k["occupancy"].to_numpy()) * dur,
        }
    )
    g = frame.groupby("name", sort=False)
    out = g["dur"].agg(["count", "sum", "mean", "max", "min"])
    weights = out["sum"].to_numpy()
    out["blocks_per_sm"] = _ratio(g["bps_w"].sum().to_numpy(), weights)
    out["occupancy"] = _ratio(g["occ_w"].sum().to_numpy(), weights)
    out = out.reset_index()
    out.columns = [
        "name",
        "calls",
        "total_us",
        "mean_us",
        "max_us",
        "min_us",
        "blocks_per_sm",
        "occupancy",
    ]
    out.insert(1, "tensor_cores", uses_tensor_cores(out["name"]))
    return out.sort_values("total_us", ascending=False, kind="stable", ignore_index=True)


def tensor_core_share(table: pd.DataFrame) -> float:
    total = float(table["total_us"].sum()) if len(table) else 0.0
    used = float(table.loc[table["tensor_cores"].astype(bool), "total_us"].sum()) if total else 0.0
    return used / total if total else 0.0


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out

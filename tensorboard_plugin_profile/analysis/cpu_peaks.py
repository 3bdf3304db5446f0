"""Peak FLOP rate and memory bandwidth of this machine's CPU, measured with numpy.

A CPU profile records no peak numbers, and a roofline needs two: the highest FLOP
rate and the highest memory bandwidth. When the user gives neither (``peak_gflops``,
``peak_gib_s``), we measure them once per process with a short numpy run and say so
on the page ("measured on this machine"):

- FLOP rate: the best of ten float32 matrix products of ``matrix_size`` squared
  (2*n^3 FLOPs each) through numpy's BLAS, on all the cores it uses;
- bandwidth: the best of ten copies of an array of ``copy_bytes`` (read + write).

These are what numpy reaches, not the vendor's peaks: a lower roof than the data
sheet, and the one a numpy/XLA program on this machine can aim at. The measurement
runs on the server's machine, which may not be the one that recorded the profile.

Usage::

    peaks = measured_peaks()            # Peaks(gflops=..., gib_s=..., source="measured ...")
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

MEASURED = "measured on this machine"
GIVEN = "given by the user"
RECORDED = "recorded in the profile"


@dataclasses.dataclass(frozen=True)
class Peaks:
    gflops: float  # FLOP/s / 1e9
    gib_s: float  # bytes/s / 2^30
    source: str  # MEASURED, GIVEN or RECORDED


def _best_seconds(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def measure(matrix_size: int = 512, copy_bytes: int = 64 << 20, repeats: int = 10) -> Peaks:
    """One measurement (about 0.1-0.5 s on a laptop-class CPU)."""
    rng = np.random.default_rng(0)
    a = rng.random((matrix_size, matrix_size), dtype=np.float32)
    b = rng.random((matrix_size, matrix_size), dtype=np.float32)
    out = np.empty_like(a)
    matmul_s = _best_seconds(lambda: np.matmul(a, b, out=out), repeats)
    gflops = 2 * matrix_size**3 / matmul_s / 1e9
    source = np.ones(copy_bytes // 8, dtype=np.float64)
    target = np.empty_like(source)
    copy_s = _best_seconds(lambda: np.copyto(target, source), repeats)
    gib_s = 2 * source.nbytes / copy_s / (1 << 30)  # every byte read once and written once
    return Peaks(gflops=gflops, gib_s=gib_s, source=MEASURED)


@functools.cache
def measured_peaks() -> Peaks:
    """``measure()`` once per process."""
    return measure()

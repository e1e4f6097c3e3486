"""What a benchmark figure ran on, and the machine's GEMM limit for a workload's matrix products.

``blas_record()``: the BLAS libraries NumPy (and SciPy) loaded, with the kernel set in use
(threadpoolctl's ``architecture``, e.g. ``SkylakeX`` = AVX-512, ``Haswell`` = AVX2) and their
thread counts; every benchmark puts it in its JSON line, so a figure says what it ran on.

``gemm_limit(gemms)``: the workload's GEMMs (``(m, k, n, transpose_a, transpose_b)``, as the
MatMul kernel calls NumPy) timed back to back with NumPy, best of ``repeats``: the GFLOP of one
step, the milliseconds they take and the rate. No step can be faster than those milliseconds on
this machine with this BLAS: that is the physical limit a step time is compared with.

    >>> sorted(gemm_limit([(64, 64, 64, False, False)], repeats=2))
    ['gemm_gflop_per_step', 'gemm_gflops', 'gemm_ms_per_step']
"""

from __future__ import annotations

import os
import time

import numpy as np


def blas_record() -> list[dict]:
    from threadpoolctl import threadpool_info

    return [{"library": os.path.basename(i.get("filepath", "")), "api": i.get("internal_api"),
             "version": i.get("version"), "architecture": i.get("architecture"), "threads": i.get("num_threads")}
            for i in threadpool_info() if i.get("user_api") == "blas"]


def dense_gemms(batch: int, sizes, input_grad: bool = True) -> list[tuple]:
    """The GEMMs of one training step of an MLP ``sizes[0] -> ... -> sizes[-1]``: per layer the
    forward product, the weight gradient (``x^T dz``) and the input gradient (``dz W^T``; for the
    first layer only with ``input_grad``, e.g. when embeddings below it are trained)."""
    out = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        out.append((batch, a, b, False, False))
        out.append((a, batch, b, True, False))
        if i or input_grad:
            out.append((batch, b, a, False, True))
    return out


def gemm_limit(gemms, repeats: int = 20, dtype=np.float32) -> dict:
    rng = np.random.default_rng(0)
    ops = []
    for m, k, n, ta, tb in gemms:
        a = rng.random((k, m) if ta else (m, k), dtype=dtype)
        b = rng.random((n, k) if tb else (k, n), dtype=dtype)
        ops.append((a, b, ta, tb))
    flop = sum(2.0 * m * k * n for m, k, n, _, _ in gemms)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for a, b, ta, tb in ops:
            np.matmul(a.T if ta else a, b.T if tb else b)
        best = min(best, time.perf_counter() - t0)
    return {"gemm_gflop_per_step": round(flop / 1e9, 3), "gemm_ms_per_step": round(best * 1e3, 2),
            "gemm_gflops": round(flop / best / 1e9, 1)}

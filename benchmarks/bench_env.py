"""What a benchmark figure ran on, and the machine's GEMM limit for a workload's matrix products.

``blas_record()``: the BLAS libraries NumPy (and SciPy) loaded, with the kernel set in use
(threadpoolctl's ``architecture``, e.g. ``SkylakeX`` = AVX-512, ``Haswell`` = AVX2) and their
thread counts; every benchmark puts it in its JSON line, so a figure says what it ran on.

``gemm_limit(gemms)``: the workload's GEMMs (``(m, k, n, transpose_a, transpose_b)``, as the
MatMul kernel calls them) timed back to back, best of ``repeats``, threaded by the BLAS library
and in blocks on sparseflow's pool: the GFLOP of one step, the milliseconds the faster way takes
and the rate. No step can be faster than those milliseconds on this machine with this BLAS: that
is the physical limit a step time is compared with.

    >>> sorted(gemm_limit([(64, 64, 64, False, False)], repeats=2))
    ['gemm_gflop_per_step', 'gemm_gflops', 'gemm_ms_by_threading', 'gemm_ms_per_step']
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
    """The best of the BLAS library threading each GEMM itself (one thread per CPU) and sparseflow's
    pool running it in blocks of rows (``parallel_gemm``); both are timed, the faster one is the limit."""
    from threadpoolctl import threadpool_limits

    from sparseflow._src.kernels import intra_op, parallel_gemm

    rng = np.random.default_rng(0)
    ops = []
    for m, k, n, ta, tb in gemms:
        a = rng.random((k, m) if ta else (m, k), dtype=dtype)
        b = rng.random((n, k) if tb else (k, n), dtype=dtype)
        ops.append((a.T if ta else a, b.T if tb else b))
    flop = sum(2.0 * m * k * n for m, k, n, _, _ in gemms)
    cpus = intra_op.intra_op_threads()
    mode = intra_op.gemm_mode()
    best = {}
    try:
        for name, blas_threads in (("blas", cpus), ("pool", 1)):
            intra_op.set_gemm_mode(name)
            with threadpool_limits(blas_threads, user_api="blas"):
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    for a, b in ops:
                        parallel_gemm.matmul(a, b)
                    times.append(time.perf_counter() - t0)
                best[name] = min(times)
    finally:
        intra_op.set_gemm_mode(mode)
    t = min(best.values())
    return {"gemm_gflop_per_step": round(flop / 1e9, 3), "gemm_ms_per_step": round(t * 1e3, 2),
            "gemm_gflops": round(flop / t / 1e9, 1),
            "gemm_ms_by_threading": {k: round(v * 1e3, 2) for k, v in best.items()}}

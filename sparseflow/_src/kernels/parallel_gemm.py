"""Matrix products on the intra-op pool: a large GEMM as blocks of output rows, each one
single-threaded BLAS call, claimed one at a time by the pool's threads and the caller.

This is how TensorFlow's CPU runtime shards a contraction over its intra-op pool, and it is what
``intra_op.gemm_mode() == "pool"`` selects (the BLAS library then runs one thread per call). The
other mode, ``"blas"``, leaves the threading to the BLAS library (OpenBLAS splits each GEMM
statically over its own threads, which wait spinning between calls). Blocks are claimed
dynamically, so a thread that loses its core to another process does not hold the others up;
no thread spins; and an ``epilogue`` (a bias and an activation) runs on each block while it is
still in cache.

Example:
    >>> import numpy as np
    >>> a, b = np.ones((300, 4), np.float32), np.ones((4, 2), np.float32)
    >>> matmul(a, b, min_flop=0)[:2].tolist()
    [[4.0, 4.0], [4.0, 4.0]]
"""

from __future__ import annotations

import itertools

import numpy as np

from sparseflow._src.kernels import intra_op

# Products smaller than this are one BLAS call. The split's hand-offs (~30 us to wake a pool thread)
# and second packing cost more than they save below ~0.2 ms of work: W3's skinny last-layer products
# (256x1024 by 10, 5.2 MFLOP) took 0.27 / 0.21 / 0.17 ms of CPU split against 0.20 / 0.17 / 0.13 ms
# as one call, no faster in wall time; 256x128x256 (17 MFLOP) 0.30 against 0.18 ms.
MIN_FLOP = 16_000_000
MIN_ROWS = 32  # rows per block at least
# More blocks than threads: a slow thread takes fewer. Two, not more: each block packs the shared
# operand again: W3's 256x1024x1024 product took 5-10% more CPU in 6 column blocks than in 2, ~4%
# more in 4; W3's step ~1.1 ms less CPU (of ~33) with 2 blocks per thread than with 3.
BLOCKS_PER_THREAD = 2
# Flops a block must do per element of the operand it packs again for two blocks per thread, not one.
# W3's products (batch 256: 2n = 2048 flops per element of the activations they share, 512 a block in
# four) are one block per thread: their three split GEMMs took 16.1 CPU ms so, 16.5 in four blocks
# (15 interleaved rounds on two threads), and no more time; W1's (batch 2048, split by rows:
# 2m = 4096) keep two per thread.
REPACK_FLOP_PER_ELEMENT = 1024


def matmul(a: np.ndarray, b: np.ndarray, epilogue=None, min_flop: int = MIN_FLOP) -> np.ndarray:
    """``a @ b`` (2-D, BLAS-able float arrays, transposed views allowed) into a new C-order array;
    ``epilogue(out, r0, r1, c0, c1)`` is applied to the block ``out[r0:r1, c0:c1]`` once it is made
    (the blocks tile the output).

    Each block's BLAS call packs the operand the blocks share again, so the product is split where
    that operand is smaller: by rows of ``a`` (``b`` repeated) or by columns of ``b`` (``a``
    repeated); each block is written in place in the output. Blocks are one per thread when the
    shared operand is large next to a block's work, else ``BLOCKS_PER_THREAD`` per thread."""
    m, k = a.shape
    n = b.shape[1]
    if k == 1 and a.dtype == b.dtype:
        # an outer product (the gradient of a one-unit layer's weights or input): each element is one
        # product, as in the GEMM (a * b + 0 rounds once), without BLAS's packing for a depth of one
        out = np.multiply(a, b)
        if epilogue is not None and out.size:
            epilogue(out, 0, m, 0, n)
        return out
    threads = intra_op.intra_op_threads() if intra_op.gemm_mode() == "pool" else 1
    flop = 2 * m * k * n
    by_rows = k * n <= m * k
    extent = m if by_rows else n
    if threads <= 1 or flop < min_flop or extent < 2 * MIN_ROWS:
        out = np.matmul(a, b)
        if epilogue is not None and out.size:
            epilogue(out, 0, m, 0, n)
        return out
    out = np.empty((m, n), np.result_type(a.dtype, b.dtype))
    shared = k * n if by_rows else m * k
    per_thread = BLOCKS_PER_THREAD if flop / shared >= REPACK_FLOP_PER_ELEMENT * threads * BLOCKS_PER_THREAD else 1
    blocks = min(threads * per_thread, extent // MIN_ROWS)
    bounds = [extent * i // blocks for i in range(blocks + 1)]
    claim = itertools.count()  # next() on a count is atomic under the GIL

    def work():
        while True:
            i = next(claim)
            if i >= blocks:
                return
            lo, hi = bounds[i], bounds[i + 1]
            if by_rows:
                np.matmul(a[lo:hi], b, out=out[lo:hi])
                if epilogue is not None:
                    epilogue(out, lo, hi, 0, n)
            else:  # a column block is a BLAS-able strided view of the output (unit column stride)
                np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
                if epilogue is not None:
                    epilogue(out, 0, m, lo, hi)

    intra_op.run_on_pool(work, min(threads, blocks))
    return out

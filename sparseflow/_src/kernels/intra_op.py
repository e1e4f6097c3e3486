"""Intra-op parallelism: the BLAS library's threads and a pool that runs a kernel's chunks on all cores.

``ConfigProto.intra_op_parallelism_threads`` (0: one per CPU) sets both, process-wide, as
TensorFlow's intra-op pool serves every session of a process:

- the BLAS threads of the GEMMs NumPy calls (OpenBLAS, MKL, BLIS...), set through
  ``threadpoolctl`` (the library NumPy loaded is found at run time, whatever it is);
- :func:`parallel_for`, which splits a range into chunks run at once by a numba loop compiled
  with ``nogil=True`` on the calling thread and pool threads. Kernels call it only for work large
  enough (``min_chunk``) to pay for the hand-off (~10-30 us).

:func:`blas_info` says which BLAS library, kernel (``architecture``) and thread count a process
runs with; benchmarks print it beside their figures.

Example:
    >>> import numpy as np
    >>> out = np.zeros(10)
    >>> def fill(lo, hi):
    ...     out[lo:hi] = np.arange(lo, hi)
    >>> parallel_for(fill, 10, min_chunk=1)
    >>> out.tolist()[:4]
    [0.0, 1.0, 2.0, 3.0]
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["blas_info", "intra_op_threads", "parallel_for", "set_intra_op_threads"]

_lock = threading.Lock()
_threads = 0  # 0: not set by any session (one per CPU)
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_controller = None


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def intra_op_threads() -> int:
    """Threads a kernel may use: the last ``intra_op_parallelism_threads`` set, else one per CPU."""
    return _threads or _cpu_count()


def set_intra_op_threads(n: int) -> None:
    """``n`` threads for kernels and for the BLAS library (``n <= 0``: leave both at their defaults).

    The BLAS threads are set only when ``n > 0``: a session without the setting leaves the library
    as the user (or ``OPENBLAS_NUM_THREADS``) set it."""
    global _threads
    n = int(n or 0)
    if n <= 0:
        return
    with _lock:
        _threads = n
        controller = _blas_controller()
        if controller is not None:
            controller.limit(limits=n, user_api="blas")


def _blas_controller():
    global _controller
    if _controller is None:
        try:
            import numpy  # noqa: F401 - its BLAS must be loaded before threadpoolctl looks
            from threadpoolctl import ThreadpoolController
        except ImportError:  # a missing optional library must not stop a session
            return None
        _controller = ThreadpoolController()
    return _controller


def blas_info() -> list[dict]:
    """The BLAS libraries loaded in this process: ``internal_api`` (``openblas``, ``mkl``, ...),
    ``version``, ``architecture`` (the kernel set in use, e.g. ``SkylakeX``, ``Haswell``) and
    ``num_threads``."""
    with _lock:
        controller = _blas_controller()
        if controller is None:
            return []
        out = []
        for lib in controller.select(user_api="blas").lib_controllers:
            info = lib.info()
            out.append({k: info.get(k) for k in ("internal_api", "version", "architecture", "num_threads",
                                                  "threading_layer")})
        return out


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    pool = _pool
    if pool is None or _pool_size < workers:
        with _lock:
            if _pool is None or _pool_size < workers:
                old = _pool
                _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sparseflow-intra-op")
                _pool_size = workers
                if old is not None:
                    old.shutdown(wait=False)
            pool = _pool
    return pool


def parallel_for(fn, n: int, min_chunk: int, threads: int | None = None) -> None:
    """Runs ``fn(lo, hi)`` over ``[0, n)`` in up to ``threads`` (default :func:`intra_op_threads`)
    contiguous chunks of at least ``min_chunk``: the first on the calling thread, the others on
    the pool, all finished (and the first error re-raised) when this returns."""
    k = min(threads or intra_op_threads(), n // max(1, min_chunk))
    if k <= 1:
        if n > 0:
            fn(0, n)
        return
    bounds = [n * i // k for i in range(k + 1)]
    pool = _executor(k - 1)
    futures = [pool.submit(fn, bounds[i], bounds[i + 1]) for i in range(1, k)]
    try:
        fn(bounds[0], bounds[1])
    finally:
        for f in futures:
            f.result()

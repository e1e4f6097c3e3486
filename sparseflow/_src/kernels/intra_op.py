"""Intra-op parallelism: one pool of threads for a kernel's chunks and for the GEMMs, on all cores.

``ConfigProto.intra_op_parallelism_threads`` (0: one per CPU) sets the threads, process-wide, as
TensorFlow's intra-op pool serves every session of a process:

- :func:`parallel_for` splits a range into chunks run at once by a numba loop compiled with
  ``nogil=True`` on the calling thread and pool threads. Kernels call it only for work large
  enough (``min_chunk``) to pay for the hand-off (~5-15 us). Its chunks are offered to every
  thread, also while jobs run beside the caller (:func:`run_beside`): a thread that waits for a
  job (a plan joining a fork) claims the chunks of the kernels still running meanwhile, so the
  two cores end a step's uneven jobs (two table pushes, the dense update) together.
- GEMMs (``parallel_gemm``) follow :func:`gemm_mode`: ``"pool"`` (the default) runs a large
  product as blocks of rows on this pool, each a one-thread BLAS call, so the BLAS library is set
  to one thread when a session starts; ``"blas"`` leaves the GEMM's threading to the BLAS library,
  whose threads are then set to the intra-op count. Either way the BLAS library NumPy loaded
  (OpenBLAS, MKL, BLIS) is found and set at run time through ``threadpoolctl``.

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

import _thread
import collections
import itertools
import os
import queue
import threading

__all__ = ["blas_info", "gemm_mode", "intra_op_threads", "parallel_for", "run_beside", "run_on_pool",
           "set_gemm_mode", "set_intra_op_threads", "total_threads"]

GEMM_MODES = ("pool", "blas")
_lock = threading.Lock()
_threads = 0  # 0: not set by any session (one per CPU)
_gemm_mode = "pool"
_pool: _Pool | None = None
_controller = None
_beside = 0  # jobs running beside the caller (run_beside): the threads are shared out among them
_helpers: collections.deque = collections.deque()  # queued run_on_pool jobs, which a waiting thread may run


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def intra_op_threads() -> int:
    """Threads a kernel's fixed split may use (a GEMM's blocks): the last ``intra_op_parallelism_threads``
    set, else one per CPU, shared out evenly while jobs run beside the caller (:func:`run_beside`)."""
    total = total_threads()
    return max(1, total // (1 + _beside)) if _beside else total


def total_threads() -> int:
    """All the intra-op threads, whatever jobs run beside the caller (see :func:`intra_op_threads`)."""
    return _threads or _cpu_count()


def gemm_mode() -> str:
    """``"pool"``: GEMMs in blocks on this pool, one BLAS thread per call; ``"blas"``: the BLAS
    library's own threads."""
    return _gemm_mode


def set_gemm_mode(mode: str) -> None:
    """Selects who runs a GEMM's threads (see :func:`gemm_mode`) and sets the BLAS threads to match."""
    global _gemm_mode
    if mode not in GEMM_MODES:
        raise ValueError(f"gemm mode must be one of {GEMM_MODES}, got {mode!r}")
    _gemm_mode = mode
    _apply_blas_threads()


def set_intra_op_threads(n: int) -> None:
    """``n`` threads for kernels and GEMMs (``n <= 0``: one per CPU), and the BLAS library's threads
    to match the GEMM mode: 1 in ``"pool"`` mode, ``n`` in ``"blas"`` mode (where ``n <= 0`` leaves
    the library as the user, or ``OPENBLAS_NUM_THREADS``, set it)."""
    global _threads
    n = int(n or 0)
    if n > 0:
        _threads = n
    _apply_blas_threads(n)


def _apply_blas_threads(n: int | None = None) -> None:
    n = _threads if n is None else n
    want = 1 if _gemm_mode == "pool" else n
    if want <= 0:
        return
    with _lock:
        controller = _blas_controller()
        if controller is not None:
            controller.limit(limits=want, user_api="blas")


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


class _Job:
    """One call handed to the pool. ``claim`` is taken once, by the pool thread that runs the job or
    by the caller that takes it back before any thread has (non-blocking acquires: no Condition, no
    Future); ``done`` is held until the job has run."""

    __slots__ = ("fn", "args", "claim", "done", "value", "error")

    def __init__(self, fn, args):
        self.fn, self.args = fn, args
        self.claim = _thread.allocate_lock()
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.value = self.error = None

    def run(self):
        try:
            self.value = self.fn(*self.args)
        except BaseException as e:  # re-raised on the joining thread
            self.error = e
        finally:
            self.fn = self.args = None  # what the call referenced (a table's old arrays) is not kept alive
            self.done.release()

    def take_back(self) -> bool:
        """True when no thread has started the job (it never will); the caller then runs it or drops it."""
        return self.claim.acquire(False)

    def result(self):
        """Waits for the job, running queued chunk claimers (:func:`run_on_pool`) of other kernels meanwhile."""
        while not self.done.acquire(False):
            helper = _steal_helper()
            if helper is None:
                self.done.acquire()
                break
            helper.run()
        if self.error is not None:
            raise self.error
        return self.value


def _steal_helper():
    """A queued job of :func:`run_on_pool` no thread has taken (now taken by the caller), or None."""
    for job in tuple(_helpers):
        if job.claim.acquire(False):
            return job
    return None


class _Pool:
    """Daemon threads serving one queue of jobs: a hand-off is a queue put and a lock release each
    way, a few microseconds (a ``ThreadPoolExecutor`` spends ~4x more in Futures and Conditions)."""

    def __init__(self):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.size = 0

    def grow(self, workers: int) -> None:
        while self.size < workers:
            self.size += 1
            threading.Thread(target=self._serve, name=f"sparseflow-intra-op_{self.size - 1}", daemon=True).start()

    def _serve(self):
        get = self.jobs.get
        while True:
            job = get()
            if job is None:
                return
            if job.claim.acquire(False):
                job.run()
            job = None  # nor by this thread while it waits for the next job

    def shutdown(self) -> None:
        """Ends the threads once the jobs queued before are done (a replaced pool, tests)."""
        for _ in range(self.size):
            self.jobs.put(None)
        self.size = 0

    def submit(self, fn, *args) -> _Job:
        job = _Job(fn, args)
        self.jobs.put(job)
        return job


def _executor(workers: int) -> _Pool:
    global _pool
    pool = _pool
    if pool is None or pool.size < workers:
        with _lock:
            if _pool is None:
                _pool = _Pool()
            _pool.grow(workers)
            pool = _pool
    return pool


def _after_fork_in_child():
    global _pool, _lock, _beside
    _pool, _lock, _beside = None, threading.Lock(), 0  # the parent's threads do not exist here
    _helpers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def run_on_pool(fn, threads: int) -> None:
    """Runs ``fn()`` on the calling thread and on ``threads - 1`` pool threads at once; ``fn`` shares
    out the work itself (claiming pieces until none are left), so a helper that has not started when
    the caller's ``fn`` returns is cancelled. Returns when the started ones are done, re-raising the
    first error."""
    if threads <= 1:
        fn()
        return
    pool = _executor(threads - 1)
    jobs = [pool.submit(fn) for _ in range(threads - 1)]
    _helpers.extend(jobs)  # a thread waiting for another job may run them (see _Job.result)
    try:
        fn()
    finally:
        for job in jobs:
            # a helper that has not started (its thread had no core) finds nothing left: not waited for
            if not job.take_back():
                job.result()
            _helpers.remove(job)  # only its submitter removes a job


def run_beside(fn, *args):
    """Starts ``fn(*args)`` on a pool thread beside the caller and returns a function that waits for
    it and returns its result (re-raising its error). Until it ends, GEMMs on either thread see
    their share of the threads (:func:`intra_op_threads`): two GEMMs run at once on two cores are
    each one BLAS call, instead of each split over both cores in turn (a :func:`parallel_for`'s
    chunks are offered to every thread). A job no thread has taken when it is joined runs on the
    joining thread; one that runs elsewhere is waited for while running queued chunks.

    >>> join = run_beside(sum, [1, 2, 3])
    >>> join()
    6
    """
    global _beside
    total = total_threads()
    with _lock:
        _beside += 1

    def job():
        global _beside
        try:
            return fn(*args)
        finally:
            with _lock:
                _beside -= 1

    try:
        handed = _executor(max(1, total - 1)).submit(job)
    except BaseException:
        with _lock:
            _beside -= 1
        raise

    def join():
        global _beside
        if handed.take_back():  # no thread has taken it yet (its core is busy elsewhere): run it here
            with _lock:
                _beside -= 1
            return fn(*args)
        return handed.result()

    return join


CHUNKS_PER_THREAD = 3  # more chunks than threads, claimed in turn: a thread that loses its core does fewer


def parallel_for(fn, n: int, min_chunk: int, threads: int | None = None) -> None:
    """Runs ``fn(lo, hi)`` over ``[0, n)`` in contiguous chunks of at least ``min_chunk``, claimed
    one at a time by the calling thread and up to ``threads - 1`` (default :func:`total_threads`,
    whatever runs beside: a chunk claimer that no thread takes costs a queue entry, and one that a
    thread freed or waiting takes evens out the cores) other threads; all finished (and the first
    error re-raised) when this returns. The chunks depend only on ``n``, ``min_chunk`` and
    ``threads``, never on timing."""
    threads = threads or total_threads()
    k = min(threads * CHUNKS_PER_THREAD, n // max(1, min_chunk))
    if k <= 1 or threads <= 1:
        if n > 0:
            fn(0, n)
        return
    bounds = [n * i // k for i in range(k + 1)]
    claim = itertools.count()  # next() on a count is atomic under the GIL
    failed: list = []

    def work():
        while not failed:
            i = next(claim)
            if i >= k:
                return
            try:
                fn(bounds[i], bounds[i + 1])
            except BaseException as e:
                failed.append(e)
                raise

    run_on_pool(work, min(threads, k))

"""Large RPC buffers from the heap: glibc's allocator settings for server processes.

A parameter server answers each pull with megabytes of rows and receives megabytes of gradients
per push; gRPC, protobuf and NumPy allocate a few buffers of that size per request. glibc serves
blocks above its mmap threshold (128 KiB, raised only as big blocks are freed) with fresh
``mmap`` pages and returns freed heap tops to the kernel above its trim threshold, so every request
pays a page fault per 4 KiB it touches: on the reference machine that is more than half the time
of a 2^16-key pull (benchmarks/ps_throughput.py). :func:`keep_large_buffers_in_heap` raises both
thresholds once per process (blocks up to 32 MiB come from the heap; up to 256 MiB of freed
memory is kept for reuse), which a ``tf.train.Server`` does when it starts.

It does nothing when the process already chose (``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` in the environment), when ``SPARSEFLOW_MALLOC_TUNING=0``, or when
the C library has no ``mallopt`` (not glibc).

Example:
    >>> keep_large_buffers_in_heap() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest allowed value on 64-bit systems
TRIM_THRESHOLD = 256 << 20

_done: list = []
_lock = threading.Lock()


def keep_large_buffers_in_heap() -> bool:
    """Raises glibc's mmap and trim thresholds once per process; True when they are set."""
    with _lock:
        if _done:
            return _done[0]
        _done.append(_tune())
        return _done[0]


def _tune() -> bool:
    env = os.environ
    if env.get("SPARSEFLOW_MALLOC_TUNING", "1") == "0" or "MALLOC_MMAP_THRESHOLD_" in env or \
            "MALLOC_TRIM_THRESHOLD_" in env or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))

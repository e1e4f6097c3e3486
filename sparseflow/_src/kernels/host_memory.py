"""Host memory: keep the C library's freed tensor buffers for the next step instead of returning
them to the system.

A training step allocates and frees the same large buffers (activations, gradients: megabytes
each) every step. With glibc's defaults a buffer that large is either its own ``mmap`` or sits at
the top of the heap, which is trimmed when freed; either way the next step's buffer is fresh
memory that the kernel must fault in and zero page by page (``clear_page`` and page faults were
~8% of W1's CPU time). :func:`keep_freed_buffers` sets glibc's ``M_MMAP_THRESHOLD`` (buffers up
to it come from the heap) and ``M_TRIM_THRESHOLD`` (free memory kept at the top of the heap), so
freed buffers are reused. It is what TensorFlow's own CPU allocator gets by pooling buffers.

Process-wide and done once, when the first session starts. Left alone: on a C library other than
glibc; when the user set any ``MALLOC_*_`` tunable in the environment; or when
``SPARSEFLOW_KEEP_FREED_BUFFERS=0``.

Example:
    >>> keep_freed_buffers() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

__all__ = ["keep_freed_buffers"]

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 64 << 20  # buffers up to 64 MiB from the heap (glibc's adaptive limit is 32 MiB)
TRIM_THRESHOLD_BYTES = 512 << 20  # free memory kept at the heap's top before it is returned
_USER_TUNABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
_lock = threading.Lock()
_done: bool | None = None


def keep_freed_buffers() -> bool:
    """Sets glibc to keep freed buffers for reuse (once per process); True when it is in force."""
    global _done
    with _lock:
        if _done is None:
            _done = _apply()
        return _done


def _apply() -> bool:
    if os.environ.get("SPARSEFLOW_KEEP_FREED_BUFFERS", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if any(name in os.environ for name in _USER_TUNABLES):
        return False  # the user tuned glibc's allocator: theirs stands
    libc = _glibc()
    if libc is None:
        return False
    try:
        mallopt = libc.mallopt
    except AttributeError:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD,
                                                                               TRIM_THRESHOLD_BYTES))


def _glibc():
    """The process's C library when it is glibc, else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        version = libc.gnu_get_libc_version
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_char_p
    return libc if version() else None

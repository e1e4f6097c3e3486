"""The row storage of a table shard: one float32 ``[capacity, width]`` block of anonymous memory.

Rows are appended at the end and the block grows by a small factor, so growth must not copy
and must not cost more than the memory it adds. The block is an anonymous ``mmap``:

* growing is ``mremap`` (``mmap.resize`` on Linux): the pages move, nothing is copied, and the
  new part is zero pages the kernel provides when a row is first written;
* the block asks for transparent huge pages (``MADV_HUGEPAGE``, as NumPy does for its own large
  arrays) and large blocks grow in whole huge pages, so random row access misses the TLB less and
  first writes fault once per 2 MiB instead of once per 4 KiB;
* shrinking gives the tail back to the operating system at once.

Where ``mremap`` is not available (or a view of the block is still held elsewhere) a resize
copies into a new block instead: slower, same result.

Example:
    >>> rows = RowStore(width=3, capacity=10)
    >>> rows.array[2] = 1.5
    >>> rows.resize(100_000)
    >>> rows.capacity >= 100_000, rows.array[2].tolist(), rows.array[99_999].tolist()
    (True, [1.5, 1.5, 1.5], [0.0, 0.0, 0.0])
"""

from __future__ import annotations

import mmap

import numpy as np

_PAGE = mmap.PAGESIZE
_HUGE_PAGE = 2 << 20
_HUGE_FROM = 16 * _HUGE_PAGE  # blocks at least this large grow in whole huge pages (<= 1/16 slack)


def _block_bytes(nbytes: int, exact: bool = False) -> int:
    unit = _HUGE_PAGE if nbytes >= _HUGE_FROM and not exact else _PAGE
    return max(unit, -(-nbytes // unit) * unit)


def _new_block(nbytes: int) -> mmap.mmap:
    if hasattr(mmap, "MAP_PRIVATE"):  # private: mmap(-1)'s default is a shared (file-backed) mapping
        mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20))
    else:
        mm = mmap.mmap(-1, nbytes)
    advise = getattr(mm, "madvise", None)
    if advise is not None and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            advise(mmap.MADV_HUGEPAGE)
        except OSError:  # huge pages unsupported here: only slower
            pass
    return mm


class RowStore:
    """``array``: the rows (float32 ``[capacity, width]``, a view of the block, never kept across a
    :meth:`resize`). Rows past those written read as zeros after growth."""

    def __init__(self, width: int, capacity: int):
        self.width = int(width)
        self._block = None
        self.array = None
        self.capacity = 0
        self._attach(_new_block(_block_bytes(max(1, capacity) * 4 * self.width)))

    def _attach(self, block):
        self._block = block
        self.capacity = len(block) // (4 * self.width)
        self.array = np.frombuffer(block, dtype=np.float32, count=self.capacity * self.width).reshape(
            self.capacity, self.width)

    @property
    def nbytes(self) -> int:
        """Bytes of the block (the table's memory accounting; pages never written cost nothing)."""
        return len(self._block)

    def resize(self, capacity: int, exact: bool = False):
        """Room for at least ``capacity`` rows (at least one), keeping the first
        ``min(capacity, self.capacity)`` rows. Large blocks get whole huge pages unless ``exact``
        (then whole pages: for trimming to the rows in use)."""
        nbytes = _block_bytes(max(1, int(capacity)) * 4 * self.width, exact)
        if nbytes == len(self._block):
            return
        old, self.array = self._block, None
        try:
            old.resize(nbytes)  # mremap: no copy
            self._attach(old)
            return
        except (BufferError, OSError, SystemError, ValueError):  # a view is alive elsewhere, or no mremap
            pass
        new = _new_block(nbytes)
        keep = min(len(old), nbytes) // 4
        src = np.frombuffer(old, dtype=np.float32, count=keep)
        np.frombuffer(new, dtype=np.float32, count=keep)[:] = src
        del src
        self._attach(new)

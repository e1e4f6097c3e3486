"""The rows' memory block (kernels/embedding_rows.py): growth keeps the rows and adds zeros,
shrinking hands memory back to the operating system, and a resize while someone still holds a
view of the rows copies instead of invalidating that view."""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.embedding_rows import RowStore


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def test_growth_keeps_rows_and_new_rows_read_zeros():
    rows = RowStore(width=5, capacity=3)
    assert rows.capacity >= 3 and rows.array.shape == (rows.capacity, 5) and rows.array.dtype == np.float32
    rows.array[:3] = np.arange(15, dtype=np.float32).reshape(3, 5)
    for cap in (1000, 100_000, 3_000_000, 7_000_000):  # through the huge-page sizes
        rows.resize(cap)
        assert rows.capacity >= cap and rows.nbytes >= cap * 20
        np.testing.assert_array_equal(rows.array[:3], np.arange(15, dtype=np.float32).reshape(3, 5))
        assert not rows.array[3:].any()
        rows.array[cap - 1] = 1.0
        rows.array[cap - 1] = 0.0


def test_exact_shrink_trims_to_pages_and_returns_memory():
    rows = RowStore(width=35, capacity=4_000_000)  # 560 MB of address space
    rows.array[:] = 1.0
    full = _rss_bytes()
    rows.resize(1000, exact=True)
    assert rows.capacity >= 1000 and rows.nbytes < 1000 * 140 + 4096
    assert full - _rss_bytes() > 400 << 20  # given back at once
    assert (rows.array[:1000] == 1.0).all()


def test_a_view_held_across_a_resize_stays_valid():
    rows = RowStore(width=4, capacity=10)
    rows.array[:10] = 2.0
    held = rows.array[:10]  # e.g. a reader that kept the array: the block cannot be remapped
    rows.resize(1_000_000)
    held[0] = 5.0  # still the old block: no crash, and the table's rows are the copied ones
    assert rows.array[0, 0] == 2.0 and (rows.array[:10] == 2.0).all() and rows.capacity >= 1_000_000

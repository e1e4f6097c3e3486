"""Order and selection: ``shuffle``, ``repeat``, ``take``, ``skip``, ``shard`` and ``cache``.

All of them pass blocks through when their input produces blocks (a reader), so a pipeline like
``reader.shuffle(10000).batch(512)`` moves NumPy blocks, never single rows.

Shuffling is deterministic for a given seed (the op seed, or one derived from the graph seed):
pass ``k`` of a reshuffling dataset uses the stream ``(seed, seed2, k)``, so every pass has its own
order and a rerun of the program sees the same orders. Rows are drawn from a buffer of
``buffer_size``: ``shuffle(1)`` keeps the input order.

Example:
    >>> import sparseflow as tf
    >>> ds = tf.data.Dataset.range(10).shard(3, 1).repeat(2).skip(1).take(4)
    >>> [int(v) for v in ds]
    [4, 7, 1, 4]
"""

from __future__ import annotations

import os
import secrets

import numpy as np

from sparseflow._src.data import cache_file
from sparseflow._src.data import dataset_structure as st
from sparseflow._src.data.dataset_transforms import UnaryDataset
from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_util import constant_value


class _BlockAware(UnaryDataset):
    """A transformation that works on blocks whenever its input produces them."""

    def _supports_batches(self):
        return self._input._supports_batches()


class ShuffleDataset(_BlockAware):
    """``shuffle``: each output is drawn uniformly from a buffer of the next ``buffer_size`` inputs."""

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=None):
        super().__init__(input_dataset)
        from sparseflow._src.framework.api_graph import get_seed

        if isinstance(seed, Tensor):
            seed = constant_value(seed)
            if seed is None:
                raise ValueError("`seed` of `shuffle` must be a Python int or a constant tensor.")
        s1, s2 = get_seed(None if seed is None else int(seed))
        if s1 is None:
            s1, s2 = secrets.randbits(62), secrets.randbits(62)
        self._seeds = (int(s1), int(s2))
        self._buffer = self._arg(buffer_size, dtypes.int64)
        self._reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)

    def _rng(self, ctx):
        n = int(ctx.value(self._buffer))
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "buffer_size must be greater than zero.")
        epoch = 0
        if self._reshuffle:
            key = ("shuffle_epoch", id(self))
            epoch = ctx.persistent.get(key, 0)
            ctx.persistent[key] = epoch + 1
        return n, np.random.default_rng([self._seeds[0], self._seeds[1], epoch])

    def _iter_elements(self, ctx):
        if self._input._supports_batches():
            yield from super()._iter_elements(ctx)  # rows out of the shuffled blocks
            return
        size, rng = self._rng(ctx)
        buf = []
        for el in ctx.iterate(self._input):
            if len(buf) < size:
                buf.append(el)
                continue
            j = int(rng.integers(len(buf)))
            out, buf[j] = buf[j], el
            yield out
        while buf:
            j = int(rng.integers(len(buf)))
            buf[j], buf[-1] = buf[-1], buf[j]
            yield buf.pop()

    def _iter_batches(self, ctx):
        size, rng = self._rng(ctx)
        s = st.structure(self._element_spec)
        pool: list = []  # (first row id, leaves, rows) of blocks with rows still in the buffer
        buf = np.empty(0, np.int64)  # row ids in the buffer
        next_id = 0
        chunk = max(1, size // 4)
        for block in ctx.iterate_batches(self._input):
            leaves = s.flatten(block)
            n = st.num_rows(leaves)
            if not n:
                continue
            pool.append((next_id, leaves, n))
            ids = np.arange(next_id, next_id + n, dtype=np.int64)
            next_id += n
            free = min(size - len(buf), n)
            if free > 0:
                buf = np.concatenate([buf, ids[:free]])
                ids = ids[free:]
            pos = 0
            while pos < len(ids):
                k = min(len(ids) - pos, chunk, len(buf))
                sel = rng.choice(len(buf), k, replace=False)
                out = buf[sel]
                buf[sel] = ids[pos:pos + k]
                pos += k
                yield s.pack(_gather(pool, out))
                low = int(buf.min())
                pool = [p for p in pool if p[0] + p[2] > low]
            if sum(p[2] for p in pool) > 2 * max(size, len(buf)):
                # a block stays while any of its rows is in the buffer, and a few rows of each may stay for
                # long: copy the buffer's rows into one block, so memory is bounded by the buffer, not the input
                compact = _gather(pool, buf)
                pool = [(next_id, compact, len(buf))]
                buf = np.arange(next_id, next_id + len(buf), dtype=np.int64)
                next_id += len(buf)
        if len(buf):
            yield s.pack(_gather(pool, buf[rng.permutation(len(buf))]))


def _gather(pool, ids):
    """Rows ``ids`` (global row ids, any order) out of the blocks in ``pool``."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    parts = []
    for base, leaves, n in pool:
        lo, hi = np.searchsorted(sorted_ids, base), np.searchsorted(sorted_ids, base + n)
        if hi > lo:
            parts.append([st.take_rows(v, sorted_ids[lo:hi] - base) for v in leaves])
    back = np.argsort(order, kind="stable")
    out = []
    for i in range(len(parts[0])):
        joined = st.concat_rows([p[i] for p in parts])
        out.append(st.take_rows(joined, back))
    return out


class RepeatDataset(_BlockAware):
    """``repeat``: ``count`` passes over the input (endless when None or -1; an empty input ends it)."""

    def __init__(self, input_dataset, count=None):
        super().__init__(input_dataset)
        self._count = self._arg(-1 if count is None else count, dtypes.int64)

    def _passes(self, ctx, iterate):
        count = int(ctx.value(self._count))
        done = 0
        while count < 0 or done < count:
            produced = False
            for x in iterate(self._input):
                produced = True
                yield x
            if not produced:
                return
            done += 1

    def _iter_elements(self, ctx):
        return self._passes(ctx, ctx.iterate)

    def _iter_batches(self, ctx):
        return self._passes(ctx, ctx.iterate_batches)


class TakeDataset(_BlockAware):
    """``take``: the first ``count`` elements (all when -1)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = self._arg(count, dtypes.int64)

    def _iter_elements(self, ctx):
        count = int(ctx.value(self._count))
        if count == 0:
            return
        src = ctx.iterate(self._input)
        try:
            for i, el in enumerate(src):
                yield el
                if i + 1 == count:
                    return
        finally:
            src.close()

    def _iter_batches(self, ctx):
        left = int(ctx.value(self._count))
        if left == 0:
            return
        s = st.structure(self._element_spec)
        src = ctx.iterate_batches(self._input)
        try:
            for block in src:
                leaves = s.flatten(block)
                n = st.num_rows(leaves)
                if 0 <= left <= n:
                    yield s.pack([st.slice_rows(v, 0, left) for v in leaves])
                    return
                left -= n if left > 0 else 0
                yield block
        finally:
            src.close()


class SkipDataset(_BlockAware):
    """``skip``: all but the first ``count`` elements (nothing when -1)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = self._arg(count, dtypes.int64)

    def _iter_elements(self, ctx):
        count = int(ctx.value(self._count))
        if count < 0:
            return
        for i, el in enumerate(ctx.iterate(self._input)):
            if i >= count:
                yield el

    def _iter_batches(self, ctx):
        left = int(ctx.value(self._count))
        if left < 0:
            return
        s = st.structure(self._element_spec)
        for block in ctx.iterate_batches(self._input):
            leaves = s.flatten(block)
            n = st.num_rows(leaves)
            if left >= n:
                left -= n
                continue
            if left:
                block = s.pack([st.slice_rows(v, left, n) for v in leaves])
                left = 0
            yield block


class ShardDataset(_BlockAware):
    """``shard``: elements ``index, index + num_shards, ...`` (one worker's share)."""

    def __init__(self, input_dataset, num_shards, index):
        super().__init__(input_dataset)
        self._n = self._arg(num_shards, dtypes.int64)
        self._i = self._arg(index, dtypes.int64)
        if not isinstance(self._n, Tensor) and not isinstance(self._i, Tensor):
            _check_shard(int(self._n), int(self._i))

    def _params(self, ctx):
        n, i = int(ctx.value(self._n)), int(ctx.value(self._i))
        _check_shard(n, i)
        return n, i

    def _iter_elements(self, ctx):
        n, index = self._params(ctx)
        for i, el in enumerate(ctx.iterate(self._input)):
            if i % n == index:
                yield el

    def _iter_batches(self, ctx):
        n, index = self._params(ctx)
        seen = 0
        s = st.structure(self._element_spec)
        for block in ctx.iterate_batches(self._input):
            leaves = s.flatten(block)
            rows = st.num_rows(leaves)
            first = (index - seen) % n
            seen += rows
            if first < rows:
                keep = np.arange(first, rows, n)
                yield s.pack([st.take_rows(v, keep) for v in leaves])


def _check_shard(n, i):
    if n <= 0:
        raise errors.InvalidArgumentError(None, None, f"Number of shards must be greater than zero "
                                                      f"(currently num_shards = {n}).")
    if not 0 <= i < n:
        raise errors.InvalidArgumentError(None, None, f"Index must be between 0 and {n - 1} (currently index = {i}).")


class CacheDataset(_BlockAware):
    """``cache``: the first complete pass is recorded (in memory, or in ``filename`` + ".sfcache"
    files that later programs reuse) and replayed by later passes of the same iterator."""

    def __init__(self, input_dataset, filename=""):
        super().__init__(input_dataset)
        self._filename = self._arg(filename, dtypes.string)

    def _iter_elements(self, ctx):
        if self._input._supports_batches():
            return super()._iter_elements(ctx)
        return self._cached(ctx, "elements", ctx.iterate)

    def _iter_batches(self, ctx):
        return self._cached(ctx, "blocks", ctx.iterate_batches)

    def _cached(self, ctx, kind, iterate):
        name = ctx.value(self._filename)
        name = name.item() if isinstance(name, np.ndarray) else name
        name = name.decode() if isinstance(name, bytes) else str(name)
        if name:
            yield from _file_cache(f"{name}.{kind}.sfcache", lambda: iterate(self._input), self.element_spec)
            return
        key = ("cache", id(self), kind)
        items = ctx.state.get(key)
        if items is not None:
            yield from items
            return
        items = []
        for x in iterate(self._input):
            items.append(x)
            yield x
        ctx.state[key] = items


def _file_cache(path, source, structure):
    if os.path.exists(path):
        with open(path, "rb") as f:
            for leaves in cache_file.read_items(f, path):
                yield st.pack_as(structure, leaves)
        return
    tmp = f"{path}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    complete = False
    try:
        with open(tmp, "wb") as f:
            cache_file.write_header(f)
            for x in source():
                cache_file.write_item(f, st.flatten(x))
                yield x
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        complete = True
    finally:
        if not complete and os.path.exists(tmp):
            os.remove(tmp)

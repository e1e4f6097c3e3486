"""Block sources (the reader interface): rows out of blocks, and batch / shuffle / take / skip / shard /
repeat / prefetch / cache working on whole blocks with the same results as the row-by-row path."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.data.dataset import Dataset
from sparseflow._src.data.dataset_structure import SparseTensorSpec, TensorSpec

D = tf.data.Dataset
ROWS = 23


def _row(i):
    return {"id": np.int64(i), "vec": np.array([i, -i], np.float32), "tags": np.arange(i % 4, dtype=np.int64) + 10}


class Blocks(Dataset):
    """A reader-like source: columnar blocks of 5 rows; rows are never produced one by one."""

    def __init__(self, rows=ROWS, block=5, rows_allowed=False):
        self._n = self._arg(rows)
        self._block = block
        self._rows_allowed = rows_allowed
        self._element_spec = {"id": TensorSpec([], tf.int64), "vec": TensorSpec([2], tf.float32),
                              "tags": SparseTensorSpec([None], tf.int64)}

    def _iter_batches(self, ctx):
        n = int(ctx.value(self._n))
        for a in range(0, n, self._block):
            rows = [_row(i) for i in range(a, min(a + self._block, n))]
            idx = [[r, j] for r, row in enumerate(rows) for j in range(len(row["tags"]))]
            yield {"id": np.array([r["id"] for r in rows]), "vec": np.stack([r["vec"] for r in rows]),
                   "tags": tf.SparseTensorValue(np.array(idx, np.int64).reshape(-1, 2),
                                                np.concatenate([r["tags"] for r in rows]),
                                                np.array([len(rows), max(len(r["tags"]) for r in rows)], np.int64))}

    def _iter_elements(self, ctx):
        if not self._rows_allowed:
            raise AssertionError("a block-aware transformation asked for single rows")
        return super()._iter_elements(ctx)


def _row_source(rows=ROWS):
    """The same rows through the row-by-row path (a generator)."""
    def gen():
        for i in range(rows):
            r = _row(i)
            yield {"id": r["id"], "vec": r["vec"], "idx": np.arange(len(r["tags"]), dtype=np.int64)[:, None],
                   "val": r["tags"]}

    spec = {"id": tf.int64, "vec": tf.float32, "idx": tf.int64, "val": tf.int64}
    shapes = {"id": [], "vec": [2], "idx": [None, 1], "val": [None]}
    return D.from_generator(gen, spec, shapes).map(
        lambda d: {"id": d["id"], "vec": d["vec"],
                   "tags": tf.SparseTensor(d["idx"], d["val"], tf.shape(d["val"], out_type=tf.int64))})


def _flat(batch):
    t = batch["tags"]
    return (batch["id"].tolist(), batch["vec"].tolist(), t.indices.tolist(), t.values.tolist(), t.dense_shape.tolist())


def test_rows_come_out_of_blocks_with_index_derived_sparse_shapes():
    rows = list(Blocks(rows_allowed=True))
    assert [int(r["id"]) for r in rows] == list(range(ROWS))
    assert rows[3]["vec"].tolist() == [3.0, -3.0]
    assert rows[3]["tags"].values.tolist() == [10, 11, 12] and rows[3]["tags"].dense_shape.tolist() == [3]
    assert rows[4]["tags"].indices.shape == (0, 1) and rows[4]["tags"].dense_shape.tolist() == [0]


@pytest.mark.parametrize("size,drop", [(4, False), (7, True), (5, False), (30, False)])
def test_batch_over_blocks_equals_batch_over_rows(size, drop):
    via_blocks = [_flat(b) for b in Blocks().batch(size, drop)]
    via_rows = [_flat(b) for b in _row_source().batch(size, drop)]
    assert via_blocks == via_rows
    assert len(via_blocks) == (ROWS // size if drop else -(-ROWS // size))


@pytest.mark.parametrize("make", [
    lambda ds: ds.take(12), lambda ds: ds.skip(7), lambda ds: ds.shard(3, 2), lambda ds: ds.repeat(2),
    lambda ds: ds.skip(3).take(9).repeat(2), lambda ds: ds.prefetch(2), lambda ds: ds.cache().repeat(2),
])
def test_block_transformations_equal_row_transformations(make):
    via_blocks = [_flat(b) for b in make(Blocks()).batch(4)]
    via_rows = [_flat(b) for b in make(_row_source()).batch(4)]
    assert via_blocks == via_rows


def test_shuffle_over_blocks_is_a_deterministic_buffered_permutation():
    ids = lambda ds: [i for b in ds for i in b["id"].tolist()]  # noqa: E731
    a = ids(Blocks(rows=200).shuffle(40, seed=9).batch(16))
    assert sorted(a) == list(range(200)) and a != list(range(200))
    assert ids(Blocks(rows=200).shuffle(40, seed=9).batch(16)) == a
    assert all(v < 40 + i for i, v in enumerate(a))  # drawn from a buffer of 40
    assert ids(Blocks(rows=30).shuffle(1, seed=9).batch(8)) == list(range(30))


def test_shuffle_over_blocks_moves_sparse_rows_with_their_dense_columns():
    for b in Blocks(rows=60).shuffle(25, seed=1).batch(10):
        t = b["tags"]
        for r, i in enumerate(b["id"].tolist()):
            assert t.values[t.indices[:, 0] == r].tolist() == list(range(10, 10 + i % 4))
            assert b["vec"][r].tolist() == [i, -i]


def test_map_after_batch_runs_once_per_block_batch():
    ds = Blocks().batch(8).map(lambda d: tf.reduce_sum(d["id"]))
    assert [int(v) for v in ds] == [sum(range(0, 8)), sum(range(8, 16)), sum(range(16, 23))]


def test_block_source_in_a_session_with_a_fed_argument():
    n = tf.placeholder(tf.int64, [])
    it = tf.data.make_initializable_iterator(Blocks(rows=n).batch(6, drop_remainder=True))
    nxt = it.get_next()
    assert nxt["id"].shape.as_list() == [6] and nxt["tags"].shape.as_list() == [6, None]
    with tf.Session() as sess:
        sess.run(it.initializer, {n: 13})
        first = sess.run(nxt)
        assert first["id"].tolist() == list(range(6))
        assert first["tags"].dense_shape.tolist() == [6, 3]
        sess.run(nxt)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)


class _TrackedBlocks(Dataset):
    """Blocks of 50 ids whose arrays are watched by weak references."""

    def __init__(self, rows):
        self._rows = rows
        self.alive = []
        self._element_spec = {"id": TensorSpec([], tf.int64)}

    def _iter_batches(self, ctx):
        import weakref

        for a in range(0, self._rows, 50):
            ids = np.arange(a, min(a + 50, self._rows), dtype=np.int64)
            self.alive.append(weakref.ref(ids))
            yield {"id": ids}


def test_shuffle_memory_is_bounded_by_the_buffer_not_the_input():
    # a block is kept while any of its rows is in the buffer, and some rows stay there for long: without
    # compaction every block of this input would still be held at its end
    source = _TrackedBlocks(40_000)
    seen, held = [], []
    for batch in source.shuffle(500, seed=1).batch(100):
        seen.append(batch["id"])
        held.append(sum(ref() is not None for ref in source.alive))
    assert sorted(np.concatenate(seen).tolist()) == list(range(40_000))
    assert max(held) <= 2 * 500 // 50 + 4, max(held)

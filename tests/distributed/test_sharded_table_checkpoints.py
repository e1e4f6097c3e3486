"""Checkpoints of embedding tables sharded over ps tasks: a sharded Saver has each ps write its own
rows, and a checkpoint restores into any number of shards (1, 3, one process) with identical
lookups, in both directions."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding as E
from sparseflow._src.framework.tensor_bundle import BundleReader
from tests.distributed.conftest import start_cluster

WORKER = "/job:worker/task:0"
RNG = np.random.default_rng(5)
BATCHES = [RNG.integers(0, 400, (32, 3)) * 3 for _ in range(4)]
PROBE = np.unique(np.concatenate([b.reshape(-1) for b in BATCHES]))


def _ps(n):
    return [f"/job:ps/task:{i}" for i in range(n)] if n else None


def _model(ps_tasks):
    t = E.EmbeddingTable("emb", 4, optimizer=E.Adam(0.05), admission=1, devices=_ps(ps_tasks))
    ids = tf.placeholder(tf.int64, [None, 3])
    probe = tf.placeholder(tf.int64, [None])
    with tf.device(WORKER if ps_tasks else ""):
        loss = tf.reduce_sum(tf.square(tf.reduce_sum(t.lookup(ids, labels=tf.ones([tf.shape(ids)[0]])), 1) - 1.0))
        train = E.apply_gradients(loss)
        rows = t.lookup(probe, training=False)
    return t, ids, train, probe, rows


class _Cluster:
    def __init__(self, ps):
        self.ps = ps
        self.servers = start_cluster(ps=ps, workers=1)[1] if ps else {}

    @property
    def target(self):
        return self.servers["worker:0"].target if self.ps else ""

    def close(self):
        for s in self.servers.values():
            s.stop(0)


def _save(tmp_path, ps, sharded=True, steps=3):
    (tmp_path / f"from{ps}").mkdir()
    c = _Cluster(ps)
    try:
        with tf.Graph().as_default() as g:
            t, ids, train, probe, rows = _model(ps)
            saver = tf.train.Saver(sharded=sharded)
            with tf.Session(c.target) as sess:
                for b in BATCHES[:steps]:
                    sess.run(train, {ids: b})
                path = saver.save(sess, str(tmp_path / f"from{ps}" / "model.ckpt"))
                want = sess.run(rows, {probe: PROBE})
                after = []
                for b in BATCHES[steps:]:
                    sess.run(train, {ids: b})
                after = sess.run(rows, {probe: PROBE})
            saves = [op for op in g.get_operations() if op.type == "SaveV2"]
        return path, want, after, saves
    finally:
        c.close()


def _restore(path, ps, steps=3):
    c = _Cluster(ps)
    try:
        with tf.Graph().as_default():
            t, ids, train, probe, rows = _model(ps)
            saver = tf.train.Saver(sharded=True)
            with tf.Session(c.target) as sess:
                saver.restore(sess, path)
                got = sess.run(rows, {probe: PROBE})
                for b in BATCHES[steps:]:
                    sess.run(train, {ids: b})
                return got, sess.run(rows, {probe: PROBE})
    finally:
        c.close()


@pytest.fixture(scope="module")
def saved_from_2ps(tmp_path_factory):
    return _save(tmp_path_factory.mktemp("ckpt"), 2)


def test_a_sharded_saver_has_each_ps_write_its_own_rows(saved_from_2ps):
    path, want, _, saves = saved_from_2ps
    with BundleReader(path) as r:
        names = set(r.names())
        for p in range(2):
            assert {f"emb/part-{p:05d}-of-00002/{f}" for f in ("keys", "values", "state", "show", "click", "seen",
                                                                 "step")} <= names
        assert sum(r.shape(f"emb/part-{p:05d}-of-00002/keys")[0] for p in range(2)) == np.count_nonzero(
            np.abs(want).sum(1))
    table_saves = [op for op in saves if any(t.op.type == "EmbeddingTableExport" for t in op.inputs)]
    assert sorted(op.device for op in table_saves) == [f"/job:ps/replica:0/task:{p}/device:CPU:0" for p in range(2)]


@pytest.mark.parametrize("ps", [1, 3, 0])
def test_saved_from_2ps_restores_into_any_number_of_shards(saved_from_2ps, ps):
    path, want, after, _ = saved_from_2ps
    got, got_after = _restore(path, ps)
    np.testing.assert_array_equal(got, want)
    # Optimizer state and steps came along. (A table of one process keeps Adam's betas in float64,
    # a sharded one in float32: the next updates agree to ~1e-6.)
    np.testing.assert_allclose(got_after, after, rtol=1e-6 if ps else 1e-5, atol=1e-7 if ps else 1e-6)


def test_a_table_saved_by_one_process_restores_into_2ps(tmp_path):
    path, want, after, _ = _save(tmp_path, 0, sharded=False)
    got, got_after = _restore(path, 2)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got_after, after, rtol=1e-5, atol=1e-6)


def test_a_non_sharded_saver_saves_a_sharded_table_too(tmp_path):
    path, want, _, _ = _save(tmp_path, 2, sharded=False)
    got, _ = _restore(path, 3)
    np.testing.assert_array_equal(got, want)


def test_restoring_with_another_optimizer_is_refused(saved_from_2ps):
    path = saved_from_2ps[0]
    c = _Cluster(2)
    try:
        with tf.Graph().as_default():
            E.EmbeddingTable("emb", 4, optimizer=E.Adagrad(0.1), devices=_ps(2))
            saver = tf.train.Saver(sharded=True)
            with tf.Session(c.target) as sess:
                with pytest.raises(tf.errors.InvalidArgumentError, match="uses optimizer 'adagrad'.*saved with 'adam'"):
                    saver.restore(sess, path)
    finally:
        c.close()


def test_a_shard_saveable_also_restores_from_tensors_read_by_name(saved_from_2ps):
    """The by-name path (RestoreV2 of the shard's own tensors, same sharding) loads the same rows."""
    from sparseflow._src.ops import io_ops

    path, want, _, _ = saved_from_2ps
    c = _Cluster(2)
    try:
        with tf.Graph().as_default():
            t, ids, train, probe, rows = _model(2)
            restores = []
            for s in t.saveables:
                with tf.device(s.device):
                    tensors = io_ops.restore_v2(path, [spec.name for spec in s.specs[:7]], [""] * 7,
                                                [spec.dtype for spec in s.specs[:7]])
                restores.append(s.restore(tensors, None))
            with tf.Session(c.target) as sess:
                sess.run(restores)
                np.testing.assert_array_equal(sess.run(rows, {probe: PROBE}), want)
    finally:
        c.close()


def test_a_refused_restore_of_a_sharded_table_changes_nothing(saved_from_2ps):
    """A table of another dimension: every shard checks the checkpoint before anything loads."""
    path = saved_from_2ps[0]
    c = _Cluster(2)
    try:
        with tf.Graph().as_default():
            t = E.EmbeddingTable("emb", 8, optimizer=E.Adam(0.05), devices=_ps(2))
            keys = tf.placeholder(tf.int64, [None])
            with tf.device(WORKER):
                rows = t.pull(keys)
            saver = tf.train.Saver(sharded=True)
            with tf.Session(c.target) as sess:
                before = sess.run(rows, {keys: PROBE[:5]})
                with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?s)Nothing was restored.*\(dim 8\): the "
                                                                         r"checkpoint has values of shape \[\d+, 4\]"):
                    saver.restore(sess, path)
                np.testing.assert_array_equal(sess.run(rows, {keys: PROBE[:5]}), before)
    finally:
        c.close()

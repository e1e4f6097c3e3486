"""A small model with an embedding table and a dense layer, for the synchronous-training tests
(tests/training/test_sync_replicas_tables.py in one session, tests/distributed/test_sync_sharded_tables.py
on a cluster), and its NumPy reference: gradients averaged over the workers of a step."""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from sparseflow import embedding as E

FIELDS, DIM, BATCH = 3, 4, 6
VOCAB = np.arange(1, 13, dtype=np.int64) * 7919
LR_DENSE, LR_TABLE, ADAGRAD_INIT = 0.1, 0.3, 0.1
W0 = (np.arange(FIELDS * DIM, dtype=np.float32).reshape(-1, 1) - 5.0) / 10.0
TIMEOUT = tf.RunOptions(timeout_in_ms=60000)


def batch(worker, step):
    """(ids [BATCH, FIELDS], y [BATCH, 1], clicks [BATCH]) of a worker's step; keys repeat."""
    r = np.random.RandomState(100 * step + worker)
    return (r.choice(VOCAB, (BATCH, FIELDS)), r.randn(BATCH, 1).astype(np.float32),
            (r.rand(BATCH) > 0.5).astype(np.float32))


def concatenated(batches):
    return tuple(np.concatenate(parts) for parts in zip(*batches))


def table_optimizer(kind):
    return E.SGD(LR_TABLE) if kind == "sgd" else E.Adagrad(LR_TABLE, ADAGRAD_INIT)


class Model:
    """The shared parameters: a table, a dense layer (w, b) and the global step, plus probes."""

    def __init__(self, kind, name="sync_emb", table_devices=None, ps=None, worker=None):
        self.table = E.EmbeddingTable(name, DIM, optimizer=table_optimizer(kind),
                                      initializer=("uniform", [-0.5, 0.5]), seed=7, devices=table_devices)
        with tf.device(ps or ""):
            self.w = tf.Variable(W0, name="w")
            self.b = tf.Variable(np.zeros(1, np.float32), name="b")
            self.global_step = tf.train.get_or_create_global_step()
        with tf.device(worker or ""):
            self.probe = tf.placeholder(tf.int64, [None], name="probe")
            self.first_rows = self.table.pull(self.probe)  # a training pull: creates the rows
            self.rows = self.table.lookup(self.probe, training=False)
        self.worker = worker

    def replica(self, optimizer, var_list=None):
        """One worker's placeholders, loss and train op (``sparseflow.embedding.minimize``; ``var_list=[]``:
        the table alone is trained)."""
        with tf.device(self.worker or ""):
            ids = tf.placeholder(tf.int64, [None, FIELDS], name="ids")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            clicks = tf.placeholder(tf.float32, [None], name="clicks")
            emb = tf.reshape(self.table.lookup(ids, labels=clicks), [-1, FIELDS * DIM])
            loss = tf.reduce_mean(tf.square(tf.matmul(emb, self.w) + self.b - y))
            train = E.minimize(loss, optimizer, global_step=self.global_step, var_list=var_list)
        return (ids, y, clicks), train

    def counters(self, sess):
        """{key: (show, click)} of the table's rows."""
        e = sess.run(self.table.export())
        return {int(k): (s, c) for k, s, c in zip(e.keys.view(np.int64), e.show, e.click)}


def feed(placeholders, b):
    return dict(zip(placeholders, b))


class Reference:
    """NumPy float64: one synchronous step averages the dense gradients and each key's row gradient
    (summed over its occurrences) over the workers; show/click add up every worker's counts."""

    def __init__(self, kind, first_rows):
        self.kind = kind
        self.rows = {int(k): np.asarray(r, np.float64) for k, r in zip(VOCAB, first_rows)}
        self.acc = {k: np.full(DIM, ADAGRAD_INIT) for k in self.rows}
        self.show = dict.fromkeys(self.rows, 0.0)
        self.click = dict.fromkeys(self.rows, 0.0)
        self.w, self.b = W0.astype(np.float64), np.zeros(1)

    def _grads(self, ids, y, clicks):
        emb = np.stack([[self.rows[int(k)] for k in row] for row in ids])
        x = emb.reshape(len(ids), -1)
        r = 2.0 * (x @ self.w + self.b - y) / len(ids)
        d_emb = (r @ self.w.T).reshape(emb.shape)
        rows = {}
        for i, row in enumerate(ids):
            for f, k in enumerate(row):
                rows[int(k)] = rows.get(int(k), 0.0) + d_emb[i, f]
        return x.T @ r, r.sum(axis=0), rows

    def step(self, batches):
        grads = [self._grads(*bt) for bt in batches]
        n = len(batches)
        self.w = self.w - LR_DENSE * sum(g[0] for g in grads) / n
        self.b = self.b - LR_DENSE * sum(g[1] for g in grads) / n
        for k in {k for g in grads for k in g[2]}:
            g = sum(gr[2].get(k, 0.0) for gr in grads) / n
            if self.kind == "sgd":
                self.rows[k] = self.rows[k] - LR_TABLE * g
            else:
                self.acc[k] = self.acc[k] + g * g
                self.rows[k] = self.rows[k] - LR_TABLE * g / np.sqrt(self.acc[k])
        for ids, _, clicks in batches:
            for i, row in enumerate(ids):
                for k in row:
                    self.show[int(k)] += 1.0
                    self.click[int(k)] += float(clicks[i])

    def check(self, sess, model):
        np.testing.assert_allclose(sess.run(model.rows, {model.probe: VOCAB}), [self.rows[int(k)] for k in VOCAB],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sess.run(model.w), self.w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sess.run(model.b), self.b, rtol=1e-5, atol=1e-6)
        counters = model.counters(sess)
        assert {k: counters[k] for k in self.show} == {k: (self.show[k], self.click[k]) for k in self.show}


def single_worker_run(kind, batches_per_step, name="sync_emb"):
    """The same model trained by one worker (plain optimizers) on each step's concatenated batches:
    (rows of VOCAB, w, b, {key: (show, click)})."""
    with tf.Graph().as_default():
        model = Model(kind, name)
        placeholders, train = model.replica(tf.train.GradientDescentOptimizer(LR_DENSE))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(model.first_rows, {model.probe: VOCAB})
            for batches in batches_per_step:
                sess.run(train, feed(placeholders, concatenated(batches)))
            return (sess.run(model.rows, {model.probe: VOCAB}), sess.run(model.w), sess.run(model.b),
                    model.counters(sess))

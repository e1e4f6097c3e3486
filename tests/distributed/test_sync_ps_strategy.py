"""ParameterServerStrategy(sync=True): two workers (threads of this process, one tf.train.Server each,
and a ps task, on 127.0.0.1) with batch B train the dense variables and table rows of one process with
batch 2B, through ``training_session`` (the sync optimizer's hook) and through a plain session after
``strategy.initialize`` (the W1 benchmark's way); no token is handed out before the first step."""

import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding
from sparseflow._src.distributed.cluster_resolver import SimpleClusterResolver
from sparseflow.distribute import ParameterServerStrategy
from tests.distributed.conftest import free_ports

N, B, STEPS = 2, 16, 4


def _data():
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 60, (STEPS, N * B, 3)).astype(np.int64)
    x = rng.normal(size=(STEPS, N * B, 4)).astype(np.float32)
    y = (rng.random((STEPS, N * B)) < 0.5).astype(np.float32)
    return keys, x, y


def _model(wrap=None):
    keys = tf.placeholder(tf.int64, [None, 3])
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None])
    table = embedding.EmbeddingTable("t", 4, optimizer=embedding.Adagrad(0.1, 0.1))
    w1 = tf.Variable(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8), name="w1")
    w2 = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1), name="w2")
    h = tf.nn.relu(tf.matmul(tf.concat([tf.reshape(table.lookup(keys), [-1, 12]), x], 1), w1))
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.reshape(tf.matmul(h, w2), [-1])))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.01)
    train = embedding.minimize(loss, wrap(opt) if wrap else opt, global_step=step)
    rows = table.lookup(tf.constant(np.arange(60, dtype=np.int64)), training=False)
    return (keys, x, y), train, [w1, w2], rows, step


@pytest.mark.parametrize("session", ["training_session", "initialize"])
def test_two_sync_workers_with_batch_b_train_like_one_process_with_batch_2b(session):
    keys, x, y = _data()
    with tf.Graph().as_default():
        (k, xp, yp), train, dense, rows, _ = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for s in range(STEPS):
                sess.run(train, {k: keys[s], xp: x[s], yp: y[s]})
            want, want_rows = sess.run(dense), sess.run(rows)

    ports = iter(free_ports(1 + N))
    spec = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{next(ports)}"], "worker": [f"127.0.0.1:{next(ports)}"
                                                                               for _ in range(N)]})
    ps = ParameterServerStrategy(SimpleClusterResolver(spec, task_type="ps", task_id=0), sync=True)
    workers = [ParameterServerStrategy(SimpleClusterResolver(spec, task_type="worker", task_id=i), sync=True)
               for i in range(N)]
    assert ps.serves_only and workers[0].init_tokens == 0
    results, failures = {}, []

    def work(i, strategy):
        try:
            with tf.Graph().as_default():
                with strategy.scope():
                    (k, xp, yp), train, dense, rows, step = _model(strategy.wrap_optimizer)
                part = slice(i * B, (i + 1) * B)
                if session == "training_session":
                    with strategy.training_session(max_wait_secs=120) as sess:
                        for s in range(STEPS):
                            sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                        strategy.finish(sess, timeout=120)
                        results[i] = (sess.run(dense), sess.run(rows), sess.run(step))
                else:
                    with tf.Session(strategy.target) as sess:
                        strategy.initialize(sess, timeout=120)
                        for s in range(STEPS):
                            sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                        strategy.finish(sess, timeout=120)
                        results[i] = (sess.run(dense), sess.run(rows), sess.run(step))
                strategy.release(timeout=120)
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=work, args=(i, s), daemon=True) for i, s in enumerate(workers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
            assert not t.is_alive(), "a worker did not finish in time"
        if failures:
            raise failures[0]
    finally:
        for s in workers + [ps]:
            s.server.stop(0)
    got, got_rows, step = results[0]
    assert step == STEPS  # one global step per step of every worker: no gradient dropped as stale
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_rows, want_rows, rtol=1e-5, atol=1e-6)

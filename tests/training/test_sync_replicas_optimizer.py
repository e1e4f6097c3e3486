"""tf.train.SyncReplicasOptimizer, with workers simulated by threads sharing one local session (each
worker builds its own optimizer over the same variables, as between-graph replicas do; the
accumulators and the token queue are shared by name). Results are checked against NumPy.
TensorFlow's own values for a threaded scenario are compared in test_queue_programs.py (q01)."""

import threading

import numpy as np
import pytest

import sparseflow as tf

LR = 0.1
W0 = np.array([[0.5], [-0.3], [0.2]], np.float32)
E0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
TIMEOUT = tf.RunOptions(timeout_in_ms=60000)


def _batch(worker, step):
    r = np.random.RandomState(10 * worker + step)
    x = r.randn(4, 3).astype(np.float32)
    y = r.randn(4, 1).astype(np.float32)
    ids = np.sort(r.choice(6, size=4, replace=False)).reshape(4, 1).astype(np.int64)  # sorted, unique rows
    return x, ids, y


def _numpy_grads(w, b, emb, x, ids, y):
    pred = x @ w + b + emb[ids[:, 0]].sum(axis=1, keepdims=True)
    r = 2.0 * (pred - y) / len(x)
    rows = {int(i): np.repeat(r[k], emb.shape[1]) for k, i in enumerate(ids[:, 0])}
    return x.T @ r, r.sum(axis=0), rows


def _numpy_step(state, worker_batches):
    """One synchronous step: dense gradients averaged over the workers, embedding rows averaged
    over the workers whose batch had them."""
    w, b, emb = state
    grads = [_numpy_grads(w, b, emb, *bt) for bt in worker_batches]
    w = w - LR * np.mean([g[0] for g in grads], axis=0)
    b = b - LR * np.mean([g[1] for g in grads], axis=0)
    emb = emb.copy()
    for row in range(len(emb)):
        have = [g[2][row] for g in grads if row in g[2]]
        if have:
            emb[row] -= LR * np.mean(have, axis=0)
    return w, b, emb


class _Cluster:
    """``num_workers`` replicas of one model in one graph, sharing its variables."""

    def __init__(self, num_workers, aggregate):
        self.global_step = tf.train.get_or_create_global_step()
        self.w = tf.Variable(W0, name="w")
        self.b = tf.Variable(tf.zeros([1]), name="b")
        self.emb = tf.Variable(E0, name="emb")
        self.workers = []
        for i in range(num_workers):
            with tf.name_scope(f"worker{i}"):
                x = tf.placeholder(tf.float32, [None, 3], name="x")
                ids = tf.placeholder(tf.int64, [None, 1], name="ids")
                y = tf.placeholder(tf.float32, [None, 1], name="y")
                pred = tf.matmul(x, self.w) + self.b + tf.reduce_sum(tf.gather(self.emb, ids), axis=[1, 2])[:, None]
                loss = tf.reduce_mean(tf.square(pred - y))
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                                     replicas_to_aggregate=aggregate, total_num_replicas=num_workers)
                self.workers.append(((x, ids, y), opt, opt.minimize(loss, global_step=self.global_step)))
        self.chief = self.workers[0][1]
        self.init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        self.init_tokens = self.chief.get_init_tokens_op(num_tokens=0)
        self.w_accum = tf.ConditionalAccumulator(tf.float32, shape=[3, 1], shared_name="w:0/grad_accum")

    def start(self, sess):
        sess.run(self.init)
        sess.run(self.chief.chief_init_op)
        for _, opt, _ in self.workers[1:]:
            sess.run(opt.local_step_init_op)
        sess.run(self.init_tokens)
        self.coord = tf.train.Coordinator()
        self.threads = self.chief.get_chief_queue_runner().create_threads(sess, coord=self.coord, daemon=True,
                                                                          start=True)

    def run_worker(self, sess, i, batch):
        (x, ids, y), _, train_op = self.workers[i]
        sess.run(train_op, feed_dict={x: batch[0], ids: batch[1], y: batch[2]}, options=TIMEOUT)

    def stop(self, sess):
        self.coord.request_stop()
        sess.close()  # cancels the chief's queue runner, waiting for the next step's gradients
        self.coord.join(self.threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in self.threads)


def _run_concurrently(fns):
    errors = []

    def guarded(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)


def test_two_workers_three_steps_match_numpy_averaged_gradients():
    cluster = _Cluster(num_workers=2, aggregate=2)
    sess = tf.Session()
    cluster.start(sess)
    state = (W0, np.zeros(1, np.float32), E0)
    for step in range(3):
        batches = [_batch(i, step) for i in range(2)]
        _run_concurrently([lambda i=i, b=batches: cluster.run_worker(sess, i, b[i]) for i in range(2)])
        state = _numpy_step(state, batches)
        assert sess.run(cluster.global_step) == step + 1
        np.testing.assert_allclose(sess.run(cluster.w), state[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(cluster.b), state[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(cluster.emb), state[2], rtol=1e-5, atol=1e-6)
    assert [sess.run(opt._local_step) for _, opt, _ in cluster.workers] == [3, 3]
    cluster.stop(sess)


def test_a_backup_worker_is_dropped_as_stale():
    cluster = _Cluster(num_workers=3, aggregate=2)
    sess = tf.Session()
    cluster.start(sess)
    state = (W0, np.zeros(1, np.float32), E0)
    batches = [_batch(i, 0) for i in range(3)]
    _run_concurrently([lambda i=i: cluster.run_worker(sess, i, batches[i]) for i in range(2)])
    cluster.run_worker(sess, 2, batches[2])  # after the step: its gradients are for step 0, now stale
    state = _numpy_step(state, batches[:2])
    assert sess.run(cluster.global_step) == 1
    np.testing.assert_allclose(sess.run(cluster.w), state[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(cluster.emb), state[2], rtol=1e-5, atol=1e-6)
    assert sess.run(cluster.w_accum.num_accumulated()) == 0
    assert [sess.run(opt._local_step) for _, opt, _ in cluster.workers] == [1, 1, 1]  # 3 tokens per step
    cluster.stop(sess)


def test_graph_structure_names_and_placement():
    with tf.device("/cpu:0"):
        cluster = _Cluster(num_workers=1, aggregate=1)
    opt = cluster.chief
    local = opt._local_step
    assert local in tf.local_variables() and local not in tf.global_variables()
    assert local.op.name == "worker0/sync_rep_local_step"
    accums = {a.accumulator_ref.op.get_attr("shared_name"): (a, d) for a, d in opt._accumulator_list}
    assert set(accums) == {b"w:0/grad_accum", b"b:0/grad_accum", b"emb:0/grad_accum"}
    assert accums[b"emb:0/grad_accum"][0].accumulator_ref.op.type == "SparseConditionalAccumulator"
    assert accums[b"w:0/grad_accum"][0].accumulator_ref.op.type == "ResourceConditionalAccumulator"
    assert all(d == cluster.w.device for _, d in accums.values())
    qr = opt.get_chief_queue_runner()
    assert qr.queue.name == "sync_token_q" and qr.queue.queue_ref.op.get_attr("shared_name") == b"sync_token_q"
    assert qr.enqueue_ops[0].type == "QueueEnqueueManyV2"
    assert opt.chief_init_op.type == "NoOp"
    assert opt.ready_for_local_init_op.op.graph is tf.get_default_graph()
    assert opt.get_init_tokens_op().type == "QueueEnqueueManyV2"


def test_argument_errors():
    v = tf.Variable([1.0, 2.0])
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=3,
                                         total_num_replicas=1)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="should be called after apply_gradients"):
        opt.get_init_tokens_op()
    with pytest.raises(ValueError, match="apply_gradient should be called before using the hook"):
        opt.make_session_run_hook(is_chief=True).begin()
    with pytest.raises(ValueError, match="Must supply at least one variable"):
        opt.apply_gradients([], global_step=step)
    with pytest.raises(ValueError, match="Global step is required"):
        opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    opt.apply_gradients([(tf.constant([1.0, 1.0]), v)], global_step=step)
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 1 \(given\) vs 2 \(needed\)"):
        opt.get_init_tokens_op(num_tokens=1)
    assert opt.get_init_tokens_op(num_tokens=2).type == "QueueEnqueueManyV2"


def test_monitored_training_session_with_the_hook_trains_like_plain_sgd():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(W0)
    unused = tf.Variable(1.0)  # no gradient: passed through, never updated
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), replicas_to_aggregate=1)
    train_op = opt.apply_gradients(opt.compute_gradients(loss, var_list=[w, unused]), global_step=step)
    hooks = [opt.make_session_run_hook(is_chief=True, num_tokens=0), tf.train.StopAtStepHook(last_step=4)]
    final = tf.train.FinalOpsHook([w, unused, step])
    expected = W0
    with tf.train.MonitoredTrainingSession(hooks=hooks + [final], stop_grace_period_secs=1) as sess:
        k = 0
        while not sess.should_stop():
            bx, _, by = _batch(0, k)
            sess.run(train_op, feed_dict={x: bx, y: by}, options=TIMEOUT)
            expected = expected - LR * (2.0 / len(bx)) * bx.T @ (bx @ expected - by)
            k += 1
    got_w, got_unused, got_step = final.final_ops_values
    assert k == 4 and got_step == 4 and got_unused == 1.0
    np.testing.assert_allclose(got_w, expected, rtol=1e-5, atol=1e-6)


def test_the_hook_of_a_non_chief_worker_only_sets_its_local_step():
    cluster = _Cluster(num_workers=2, aggregate=2)
    worker_opt = cluster.workers[1][1]
    hook = worker_opt.make_session_run_hook(is_chief=False)
    hook.begin()
    tokens = tf.FIFOQueue(-1, tf.int64, shapes=(), shared_name="sync_token_q", name="tokens_view")
    set_step = tf.assign(cluster.global_step, 7)
    with tf.Session() as sess:
        with pytest.raises(RuntimeError, match="not make model ready for SyncReplicasOptimizer local_init"):
            hook.after_create_session(sess, tf.train.Coordinator())  # the chief has not initialized yet
        sess.run(cluster.init)
        sess.run(set_step)
        coord = tf.train.Coordinator()
        hook.after_create_session(sess, coord)
        assert sess.run(worker_opt._local_step) == 7
        assert sess.run(tokens.size()) == 0 and not coord._registered_threads


def test_variable_averages_run_after_the_tokens_are_handed_out():
    class CountingAverages:  # stands for tf.train.ExponentialMovingAverage: apply(var_list) -> op
        def __init__(self):
            self.count = tf.Variable(0, name="averages_applied")
            self.var_list = None

        def apply(self, var_list):
            self.var_list = var_list
            return tf.assign_add(self.count, 1).op

    averages = CountingAverages()
    w = tf.Variable([1.0, 2.0])
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=1,
                                         variable_averages=averages, variables_to_average=[w])
    train_op = opt.apply_gradients([(tf.constant([1.0, 1.0]), w)], global_step=step)
    (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
    assert averages.var_list == [w] and sync_op.type == "AssignAdd"
    tokens = tf.FIFOQueue(-1, tf.int64, shapes=(), shared_name="sync_token_q", name="tokens_view")
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(), opt.chief_init_op])
        assert sess.run(opt.ready_for_local_init_op).tolist() == []
        worker = threading.Thread(target=lambda: sess.run(train_op, options=TIMEOUT))
        worker.start()
        sess.run(sync_op, options=TIMEOUT)  # update, hand out the token, then average
        worker.join(60)
        assert sess.run([w, step, averages.count, tokens.size()]) == [pytest.approx([0.5, 1.5]), 1, 1, 0]

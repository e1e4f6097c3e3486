"""tf.train.SyncReplicasOptimizer with worker threads sharing one session (as TensorFlow's own
tests do with in-process servers): every worker builds its own SyncReplicasOptimizer over the same
variables; accumulators and the token queue are shared by name. Scenario A: 2 workers, 2 gradients
aggregated per step, 3 steps. Scenario B: 3 workers, 2 aggregated (one backup worker whose
gradients arrive stale and are dropped), 2 steps. The model has dense variables and an embedding
(IndexedSlices gradients with repeated, unsorted ids)."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import threading

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


class Reporter:
    limit = 32

    def __call__(self, name, value):
        a = np.asarray(value)
        if a.size > self.limit:
            self.line(name + ".shape", " ".join(str(d) for d in a.shape))
            self.line(name + ".sum", f"{a.sum(dtype=np.float64):.6g}")
            self.line(name + ".abssum", f"{np.abs(a).sum(dtype=np.float64):.6g}")
        else:
            self.line(name, " ".join(self.token(t) for t in a.ravel().tolist()))

    @staticmethod
    def token(t):
        if isinstance(t, bool):
            return str(t)
        if isinstance(t, int):
            return f"{t:d}"
        if isinstance(t, float):
            return f"{t:.6g}"
        if isinstance(t, bytes):
            return t.decode()
        return str(t)

    @staticmethod
    def line(name, text):
        print(f"RESULT {name} {text}")


RESULT = Reporter()

rng = np.random.RandomState(7)
W0 = (0.1 * rng.randn(3, 1)).astype(np.float32)
E0 = (0.1 * rng.randn(6, 2)).astype(np.float32)
TIMEOUT = tf.RunOptions(timeout_in_ms=60000)


def batch(worker, step):
    r = np.random.RandomState(100 * worker + step)
    x = r.randn(4, 3).astype(np.float32)
    ids = r.randint(0, 6, size=(4, 2)).astype(np.int64)
    y = r.randn(4, 1).astype(np.float32)
    return x, ids, y


def scenario(tag, num_workers, aggregate, steps, lr):
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(W0, name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        emb = tf.Variable(E0, name="emb")
        workers = []
        for i in range(num_workers):
            with tf.name_scope(f"worker{i}"):
                x = tf.placeholder(tf.float32, [None, 3], name="x")
                ids = tf.placeholder(tf.int64, [None, 2], name="ids")
                y = tf.placeholder(tf.float32, [None, 1], name="y")
                e = tf.reduce_sum(tf.gather(emb, ids), axis=[1, 2])
                pred = tf.matmul(x, w) + b + tf.expand_dims(e, 1)
                loss = tf.reduce_mean(tf.square(pred - y))
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(lr),
                                                     replicas_to_aggregate=aggregate,
                                                     total_num_replicas=num_workers)
                train_op = opt.minimize(loss, global_step=global_step)
            workers.append(dict(feeds=(x, ids, y), opt=opt, train_op=train_op, loss=loss))
        chief = workers[0]["opt"]
        # The shared resources, looked up by name from outside the optimizers.
        w_accum = tf.ConditionalAccumulator(tf.float32, shape=[3, 1], shared_name=w.name + "/grad_accum")
        tokens = tf.FIFOQueue(-1, tf.int64, shapes=(), shared_name="sync_token_q", name="tokens_view")
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        init_tokens = chief.get_init_tokens_op(num_tokens=0)
        RESULT(tag + "_info_update_op_type", chief.get_chief_queue_runner().enqueue_ops[0].type)
        RESULT(tag + "_local_step_names", " ".join(wk["opt"]._local_step.op.name for wk in workers))

    sess = tf.Session(graph=graph)
    sess.run(init)
    sess.run(chief.chief_init_op)
    for wk in workers[1:]:
        sess.run(wk["opt"].local_step_init_op)
    sess.run(init_tokens)
    coord = tf.train.Coordinator()
    qr_threads = chief.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)

    def run_worker(i, step):
        x, ids, y = workers[i]["feeds"]
        bx, bids, by = batch(i, step)
        sess.run(workers[i]["train_op"], feed_dict={x: bx, ids: bids, y: by}, options=TIMEOUT)

    for step in range(steps):
        threads = [threading.Thread(target=run_worker, args=(i, step)) for i in range(aggregate)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(aggregate, num_workers):  # backup workers: their gradients are stale by now
            run_worker(i, step)
        RESULT(f"{tag}_step{step}_global_step", sess.run(global_step))
        RESULT(f"{tag}_step{step}_w", sess.run(w))
    RESULT(tag + "_b", sess.run(b))
    RESULT(tag + "_emb", sess.run(emb))
    RESULT(tag + "_local_steps", [sess.run(wk["opt"]._local_step) for wk in workers])
    RESULT(tag + "_w_accum_pending", sess.run(w_accum.num_accumulated()))
    RESULT(tag + "_tokens_left", sess.run(tokens.size()))
    coord.request_stop()
    sess.close()  # cancels the chief queue runner, blocked waiting for the next gradients
    coord.join(qr_threads, stop_grace_period_secs=30)
    RESULT(tag + "_threads_alive", sum(t.is_alive() for t in qr_threads))


scenario("A", num_workers=2, aggregate=2, steps=3, lr=0.1)
scenario("B", num_workers=3, aggregate=2, steps=2, lr=0.05)

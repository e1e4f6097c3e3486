"""Embedding tables in tf.train.SyncReplicasOptimizer's synchronous steps, with workers simulated by
threads sharing one local session (each builds its own replica of the model and its own optimizer
over the shared table and variables): row gradients accumulated by key, averaged over the
replicas, applied once by the chief before the tokens go out; stale and backup pushes dropped and
counted; a chief waiting for pushes is cancelled by closing the session."""

import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding as E
from tests.embedding import sync_model as M


def _sync_opt(aggregate, total):
    return tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(M.LR_DENSE),
                                          replicas_to_aggregate=aggregate, total_num_replicas=total)


class _Workers:
    """``total`` replicas of the model in one graph; worker 0 is the chief."""

    def __init__(self, kind, aggregate, total, var_list=None):
        self.model = M.Model(kind)
        self.replicas = []
        for i in range(total):
            with tf.name_scope(f"worker{i}"):
                opt = _sync_opt(aggregate, total)
                placeholders, train = self.model.replica(opt, var_list)
                self.replicas.append((placeholders, opt, train))
        self.chief = self.replicas[0][1]
        self.init_tokens = self.chief.get_init_tokens_op(num_tokens=0)

    def start(self, sess):
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())
        first = sess.run(self.model.first_rows, {self.model.probe: M.VOCAB})
        sess.run(self.chief.chief_init_op)
        for _, opt, _ in self.replicas[1:]:
            sess.run(opt.local_step_init_op)
        sess.run(self.init_tokens)
        self.coord = tf.train.Coordinator()
        self.threads = self.chief.get_chief_queue_runner().create_threads(sess, coord=self.coord, daemon=True,
                                                                          start=True)
        return first

    def run(self, sess, i, b):
        placeholders, _, train = self.replicas[i]
        sess.run(train, M.feed(placeholders, b), options=M.TIMEOUT)

    def stop(self, sess):
        self.coord.request_stop()
        sess.close()  # cancels the chief's queue runner, waiting for the next step's pushes
        self.coord.join(self.threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in self.threads)


def run_concurrently(fns):
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


@pytest.mark.parametrize("kind", ["sgd", "adagrad"])
def test_two_replicas_match_numpy_and_one_worker_with_the_concatenated_batch(kind):
    steps = 3
    batches = [[M.batch(i, s) for i in range(2)] for s in range(steps)]
    with tf.Graph().as_default():
        workers = _Workers(kind, aggregate=2, total=2)
        model = workers.model
        sess = tf.Session()
        ref = M.Reference(kind, workers.start(sess))
        for s in range(steps):
            run_concurrently([lambda i=i, b=batches[s][i]: workers.run(sess, i, b) for i in range(2)])
            ref.step(batches[s])
            assert sess.run(model.global_step) == s + 1
            ref.check(sess, model)
        stats = model.table.stats(sess)
        assert (stats["step"], stats["stale_pushes"]) == (steps, 0)  # one apply per global step
        got = (sess.run(model.rows, {model.probe: M.VOCAB}), sess.run(model.w), sess.run(model.b),
               model.counters(sess))
        workers.stop(sess)
    want = M.single_worker_run(kind, batches)
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert got[3] == want[3]


def test_a_stale_push_is_dropped_and_counted():
    with tf.Graph().as_default():
        t = E.EmbeddingTable("stale", 2, optimizer=E.SGD(1.0), initializer=0.0)
        keys = tf.constant([5, 6], tf.int64)
        rows = t.pull(keys)
        local_step = tf.placeholder(tf.int64, [])
        grads = tf.placeholder(tf.float32, [2, 2])
        pairs = [(grads, E.lookups()[0])]
        from sparseflow._src.embedding.sync import TableSyncStep

        sync = TableSyncStep(pairs)
        push, apply, set_step = sync.accumulate(local_step), sync.apply(1), sync.set_global_step(5)
        with tf.Session() as sess:
            sess.run(rows)
            sess.run(set_step)
            sess.run(push, {local_step: 4, grads: np.full((2, 2), 100.0)})  # computed at step 4 < 5: stale
            assert t.stats(sess)["stale_pushes"] == 1
            sess.run(push, {local_step: 5, grads: [[1.0, 2.0], [3.0, 4.0]]})
            sess.run(apply, options=M.TIMEOUT)
            np.testing.assert_allclose(sess.run(rows), [[-1.0, -2.0], [-3.0, -4.0]])
            sess.run(push, {local_step: 5, grads: np.ones((2, 2))})  # step 5 was applied: stale now
            s = t.stats(sess)
            assert (s["stale_pushes"], s["step"]) == (2, 1)
            (res,) = t.resources(sess)
            assert (res.grad_accumulator.global_step, res.grad_accumulator.num_accumulated) == (6, 0)


def test_a_backup_worker_is_dropped_as_stale_and_the_tables_only_step_uses_apply_gradients():
    """Three workers, two aggregated; the model has a table and no dense variables, trained by
    ``sparseflow.embedding.apply_gradients(loss, optimizer=sync_opt, global_step=...)``."""
    with tf.Graph().as_default():
        table = E.EmbeddingTable("backup", M.DIM, optimizer=E.SGD(M.LR_TABLE), initializer=0.25)
        gs = tf.train.get_or_create_global_step()
        replicas = []
        for i in range(3):
            with tf.name_scope(f"worker{i}"):
                ids = tf.placeholder(tf.int64, [None, M.FIELDS])
                loss = tf.reduce_mean(tf.square(tf.reduce_sum(table.lookup(ids), [1, 2]) - 1.0))
                opt = _sync_opt(2, 3)
                replicas.append((ids, opt, E.apply_gradients(loss, optimizer=opt, global_step=gs)))
        probe = table.lookup(tf.constant(M.VOCAB), training=False)
        chief = replicas[0][1]
        batches = [M.batch(i, 0)[0] for i in range(3)]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(), chief.chief_init_op])
            for _, opt, _ in replicas[1:]:
                sess.run(opt.local_step_init_op)
            coord = tf.train.Coordinator()
            threads = chief.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
            run_concurrently([lambda i=i: sess.run(replicas[i][2], {replicas[i][0]: batches[i]}, options=M.TIMEOUT)
                              for i in range(2)])
            sess.run(replicas[2][2], {replicas[2][0]: batches[2]}, options=M.TIMEOUT)  # late: stale, still a token
            assert sess.run(gs) == 1
            s = table.stats(sess)
            assert (s["stale_pushes"], s["step"]) == (1, 1)
            want = {int(k): np.full(M.DIM, 0.25) for k in M.VOCAB}
            for ids in batches[:2]:  # d loss / d row: 2 (sum - 1) / B per occurrence, averaged over 2 workers
                r = 2.0 * (ids.shape[1] * M.DIM * 0.25 - 1.0) / len(ids)
                for k in ids.reshape(-1):
                    want[int(k)] -= M.LR_TABLE * r / 2
            np.testing.assert_allclose(sess.run(probe), [want[int(k)] for k in M.VOCAB], rtol=1e-5)
            assert [sess.run(opt._local_step) for _, opt, _ in replicas] == [1, 1, 1]  # 3 tokens per step
            coord.request_stop()
            sess.close()
            coord.join(threads, stop_grace_period_secs=30)


def test_closing_the_session_cancels_a_chief_waiting_for_pushes():
    with tf.Graph().as_default():
        workers = _Workers("sgd", aggregate=2, total=2, var_list=[])  # the table alone: its apply waits
        sess = tf.Session()
        workers.start(sess)  # nothing is pushed: the chief's queue runner waits in the table's apply
        (res,) = workers.model.table.resources(sess)
        acc = res.grad_accumulator
        _wait_for(lambda: acc is not None and acc.waiting == 1)
        workers.stop(sess)  # joins the queue runner thread (bounded), which ended with CancelledError
        assert acc.waiting == 0 and acc.global_step == 0


def _wait_for(cond, seconds=30.0):
    done = threading.Event()
    deadline = threading.Timer(seconds, done.set)
    deadline.start()
    try:
        while not cond():
            if done.wait(0.01):
                raise AssertionError("condition not reached in time")
    finally:
        deadline.cancel()


def _ancestors(op):
    seen, stack = {}, [op]
    while stack:
        o = stack.pop()
        for dep in [t.op for t in o.inputs] + list(o.control_inputs):
            if dep.name not in seen:
                seen[dep.name] = dep
                stack.append(dep)
    return list(seen.values())


def test_graph_structure():
    with tf.Graph().as_default():
        workers = _Workers("adagrad", aggregate=2, total=2)
        opt = workers.chief
        ops = tf.get_default_graph().get_operations()
        types = [op.type for op in ops]
        assert types.count("EmbeddingTableAccumulate") == 2  # one per replica (one table, one part)
        assert "EmbeddingTablePush" not in types  # nothing is applied asynchronously
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        assert "EmbeddingTableApplyAccumulated" in {op.type for op in _ancestors(sync_op)}  # tokens after the apply
        (train_op,) = [t for _, o, t in workers.replicas if o is opt]
        dequeue = [op for op in _ancestors(train_op.op) if op.type.startswith("QueueDequeue")]
        assert dequeue and "EmbeddingTableAccumulate" in {op.type for op in _ancestors(dequeue[0])}  # pushed first
        init_types = {c.type for c in opt.chief_init_op.control_inputs}
        assert "EmbeddingTableSetSyncStep" in init_types


def _two_lookup_model(opt, global_step):
    """Two lookups of one table split over two CPUs (keys of both sides are averaged together)."""
    table = E.get_table("two_parts")
    a = tf.placeholder(tf.int64, [None, 2])
    b = tf.placeholder(tf.int64, [None])
    c = tf.placeholder(tf.float32, [None])
    pred = tf.reduce_sum(table.lookup(a), [1, 2]) * tf.reduce_sum(table.lookup(b, labels=c), 1)
    loss = tf.reduce_mean(tf.square(pred - 1.0))
    return (a, b, c), (E.minimize(loss, opt, global_step=global_step) if opt is not None else
                       E.apply_gradients(loss))


def _two_lookup_batch(worker, step):
    r = np.random.RandomState(10 * step + worker)
    return r.choice(M.VOCAB[:6], (4, 2)), r.choice(M.VOCAB[3:], 4), (r.rand(4) > 0.5).astype(np.float32)


def _export(sess, table):
    e = sess.run(table.export())  # the rows of each part, sorted by key
    order = np.argsort(e.keys)
    return tuple(x[order] for x in (e.keys, e.values, e.state, e.show, e.click))


TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


def test_a_table_in_two_parts_looked_up_twice_per_replica_trains_like_one_worker():
    """A replica's lookups of one table make one push per part per step (their gradients summed by key:
    applied once, unlike one worker's separate pushes per lookup, so SGD is what both do alike)."""
    steps = 2
    batches = [[_two_lookup_batch(i, s) for i in range(2)] for s in range(steps)]
    with tf.Graph().as_default() as g:
        table = E.EmbeddingTable("two_parts", 3, optimizer=E.SGD(0.2), seed=3, devices=["/cpu:0", "/cpu:1"])
        gs = tf.train.get_or_create_global_step()
        replicas = []
        for i in range(2):
            with tf.name_scope(f"worker{i}"):
                opt = _sync_opt(2, 2)
                replicas.append((*_two_lookup_model(opt, gs), opt))
        accumulates = [op for op in g.get_operations() if op.type == "EmbeddingTableAccumulate"]
        assert len(accumulates) == 4  # one per part per replica, each lookup's keys concatenated
        chief = replicas[0][2]
        with tf.Session(config=TWO_CPUS) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(), chief.chief_init_op])
            sess.run(replicas[1][2].local_step_init_op)
            coord = tf.train.Coordinator()
            threads = chief.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
            for s in range(steps):
                run_concurrently([lambda i=i, b=batches[s][i]: sess.run(replicas[i][1], M.feed(replicas[i][0], b),
                                                                         options=M.TIMEOUT) for i in range(2)])
            assert sess.run(gs) == steps
            assert [p.step for p in table.resources(sess)] == [steps, steps]
            got = _export(sess, table)
            coord.request_stop()
            sess.close()
            coord.join(threads, stop_grace_period_secs=30)
    with tf.Graph().as_default():
        table = E.EmbeddingTable("two_parts", 3, optimizer=E.SGD(0.2), seed=3)
        placeholders, train = _two_lookup_model(None, None)
        with tf.Session() as sess:
            for s in range(steps):
                sess.run(train, M.feed(placeholders, M.concatenated(batches[s])))
            want = _export(sess, table)
    np.testing.assert_array_equal(got[0], want[0])
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _direct_sync_ops(name="errs"):
    from sparseflow._src.embedding.sync import TableSyncStep

    t = E.EmbeddingTable(name, 2, optimizer=E.SGD(1.0), initializer=0.0)
    keys = tf.placeholder(tf.int64, [None])
    rows = t.pull(keys)
    grads = tf.placeholder(tf.float32, [None, None])
    sync = TableSyncStep([(grads, E.lookups()[-1])])
    return keys, rows, grads, sync


def test_errors_name_the_table_and_what_to_fix():
    with tf.Graph().as_default():
        keys, rows, grads, sync = _direct_sync_ops()
        push, apply = sync.accumulate(0), sync.apply(2)
        with tf.Session() as sess:
            sess.run(rows, {keys: [1, 2]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"table 'errs': gradients of shape \[2, 3\] for "
                                                                     r"2 keys of dim 2"):
                sess.run(push, {keys: [1, 2], grads: np.ones((2, 3))})
            sess.run(push, {keys: [1, 2], grads: np.ones((2, 2))})
            with pytest.raises(tf.errors.DeadlineExceededError, match=r"waiting for 2 pushes to embedding table "
                                                                      r"'errs' \(it has 1 for global step 0\)"):
                sess.run(apply, options=tf.RunOptions(timeout_in_ms=100))
        with pytest.raises(ValueError, match="at least one table lookup"):
            from sparseflow._src.embedding.sync import TableSyncStep

            TableSyncStep([])
        loss = tf.reduce_sum(rows)
        with pytest.raises(TypeError, match=r"takes a tf.train.SyncReplicasOptimizer.*sparseflow.embedding.minimize"):
            E.apply_gradients(loss, optimizer=tf.train.GradientDescentOptimizer(0.1))


def test_a_monitored_training_session_with_the_hook_trains_tables_like_one_plain_worker():
    steps = 3
    batches = [[M.batch(0, s)] for s in range(steps)]
    with tf.Graph().as_default():
        model = M.Model("adagrad")
        opt = _sync_opt(1, 1)
        placeholders, train = model.replica(opt)
        hooks = [opt.make_session_run_hook(is_chief=True, num_tokens=0), tf.train.StopAtStepHook(last_step=steps)]
        e = model.table.export()
        final = tf.train.FinalOpsHook([model.rows, model.w, model.b, e.keys, e.show, e.click],
                                      {model.probe: M.VOCAB})
        with tf.train.MonitoredTrainingSession(hooks=hooks + [final], stop_grace_period_secs=1) as sess:
            sess.run(model.first_rows, {model.probe: M.VOCAB})
            k = 0
            while not sess.should_stop():
                sess.run(train, M.feed(placeholders, batches[k][0]), options=M.TIMEOUT)
                k += 1
    rows, w, b, keys, show, click = final.final_ops_values
    got = (rows, w, b, {int(k): (s, c) for k, s, c in zip(keys.view(np.int64), show, click)})
    want = M.single_worker_run("adagrad", batches)
    assert k == steps
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert got[3] == want[3]

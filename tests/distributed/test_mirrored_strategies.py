"""MultiWorkerMirroredStrategy and HybridStrategy with their workers as threads of this process (one
tf.train.Server each, 127.0.0.1): placement, equivalence with one process at the total batch,
bit-identical mirrored variables, the chief's values broadcast at start, bucketed all-reduce
overlapping the backward pass (step stats), and the bound on the hybrid's pushes in flight."""

import json
import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding
from sparseflow._src.distributed.cluster_resolver import SimpleClusterResolver, TFConfigClusterResolver
from sparseflow._src.kernels import embedding_cluster, embedding_service
from sparseflow._src.kernels.embedding_cluster import flush_pending_pushes, pending_pushes
from sparseflow._src.training.distribute.all_reduce_optimizer import plan_buckets
from sparseflow.distribute import HybridStrategy, MultiWorkerMirroredStrategy, PsStrategy
from tests.distributed.conftest import free_ports

N, B = 2, 16
STRATEGIES = {"mirrored": MultiWorkerMirroredStrategy, "hybrid": HybridStrategy}


def _spec(jobs):
    ports = iter(free_ports(sum(jobs.values())))
    return tf.train.ClusterSpec({job: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for job, n in jobs.items()})


def _strategies(cls, n=N, **kw):
    spec = _spec({"worker": n})
    return [cls(SimpleClusterResolver(spec, task_type="worker", task_id=i), collective_timeout=60, **kw)
            for i in range(n)]


def _run_workers(strategies, work, timeout=120.0):
    """``work(i, strategy)`` in one thread per worker; their results (the first error is raised)."""
    results, errors = {}, []

    def run(i):
        try:
            results[i] = work(i, strategies[i])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(strategies))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout)
            assert not t.is_alive(), "a worker did not finish in time"
        if errors:
            raise errors[0]
        return [results[i] for i in range(len(strategies))]
    finally:
        for s in strategies:
            s.server.stop(0)


def _data(steps, seed=0):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 60, (steps, N * B, 3)).astype(np.int64)
    x = rng.normal(size=(steps, N * B, 4)).astype(np.float32)
    y = (rng.random((steps, N * B)) < 0.5).astype(np.float32)
    return keys, x, y


def _model(opt_name, wrap=None):
    """A table of dim 4 over 3 fields, two dense layers; returns placeholders, train op, dense variables,
    the table and the global step."""
    keys = tf.placeholder(tf.int64, [None, 3])
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None])
    table = embedding.EmbeddingTable("t", 4, optimizer=embedding.Adagrad(0.1, 0.1))
    w1 = tf.Variable(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8), name="w1")
    b1 = tf.Variable(np.zeros(8, np.float32), name="b1")
    w2 = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1), name="w2")
    h = tf.nn.relu(tf.matmul(tf.concat([tf.reshape(table.lookup(keys), [-1, 12]), x], 1), w1) + b1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.reshape(tf.matmul(h, w2), [-1])))
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.01) if opt_name == "adam" else tf.train.GradientDescentOptimizer(0.5)
    train = embedding.minimize(loss, wrap(opt) if wrap else opt, global_step=step)
    return (keys, x, y), train, [w1, b1, w2], table, step


def _rows(table):
    """The rows of every key the data has (an inference lookup: nothing inserted)."""
    return table.lookup(tf.constant(np.arange(60, dtype=np.int64)), training=False)


def test_placement_and_the_clusters_they_refuse():
    s = MultiWorkerMirroredStrategy(SimpleClusterResolver(_spec({"worker": 3}), task_type="worker", task_id=1),
                                    start_server=False)
    with tf.Graph().as_default():
        with s.scope():
            v = tf.Variable([1.0], name="v")
            step = tf.train.get_or_create_global_step()
            table = embedding.EmbeddingTable("t", 4)
            y = v * 2.0
    assert (v.device, step.device, y.device) == ("/job:worker/task:1",) * 3
    assert table.shard_devices == [f"/job:worker/replica:0/task:{i}/device:CPU:0" for i in range(3)]
    assert (s.num_workers, s.worker_index, s.is_chief) == (3, 1, False)
    for cls in STRATEGIES.values():
        with pytest.raises(ValueError, match="has no ps job"):
            cls(SimpleClusterResolver(_spec({"ps": 1, "worker": 2}), task_type="worker", task_id=0),
                start_server=False)
    with pytest.raises(ValueError, match="staleness must be >= 0"):
        HybridStrategy(SimpleClusterResolver(_spec({"worker": 1}), task_type="worker", task_id=0), staleness=-1,
                       start_server=False)
    with pytest.raises(ValueError, match="bucket_bytes must be positive"):
        MultiWorkerMirroredStrategy(SimpleClusterResolver(_spec({"worker": 1}), task_type="worker", task_id=0),
                                    bucket_bytes=0, start_server=False)


def test_tables_outside_the_scope_or_sharded_otherwise_are_refused():
    s = MultiWorkerMirroredStrategy(SimpleClusterResolver(_spec({"worker": 2}), task_type="worker", task_id=0),
                                    start_server=False)
    with tf.Graph().as_default():
        table = embedding.EmbeddingTable("local", 2)
        with s.scope():
            loss = tf.reduce_sum(table.lookup(tf.constant([1, 2], tf.int64)))
            with pytest.raises(ValueError, match=r"\['local'\] are not sharded over the workers"):
                embedding.minimize(loss, s.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1)))
    with tf.Graph().as_default():
        with s.scope():
            table = embedding.EmbeddingTable("reversed", 2, devices=["/job:worker/task:1", "/job:worker/task:0"])
            loss = tf.reduce_sum(table.lookup(tf.constant([1, 2], tf.int64)))
            with pytest.raises(ValueError, match="'reversed' is sharded over .* not one shard per worker in order"):
                embedding.minimize(loss, s.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1)))


def test_buckets_take_the_last_variables_first_and_keep_to_their_size():
    with tf.Graph().as_default():
        vs = [tf.Variable(tf.zeros(shape)) for shape in ([100], [10], [10], [300], [5])]  # float32: 4 bytes each
        ints = tf.Variable(tf.zeros([3], tf.int32))
        gv = [(tf.zeros_like(v), v) for v in vs] + [(None, ints)]
        # 200 bytes: [5] (20 B) cannot take [300] (1200 B, a bucket of its own); [10]+[10] fit; [100] does not
        assert plan_buckets(gv, 200) == [[4], [3], [2, 1], [0]]
        assert plan_buckets(gv, 10_000) == [[4, 3, 2, 1, 0]]
        gv[5] = (tf.zeros([3], tf.int32), ints)
        assert plan_buckets(gv, 10_000) == [[5], [4, 3, 2, 1, 0]]  # one dtype per bucket


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_two_workers_with_batch_b_train_like_one_process_with_batch_2b(opt):
    steps = 4
    keys, x, y = _data(steps)
    with tf.Graph().as_default():
        (k, xp, yp), train, dense, table, _ = _model(opt)
        rows = _rows(table)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for s in range(steps):
                sess.run(train, {k: keys[s], xp: x[s], yp: y[s]})
            want, want_rows = sess.run(dense), sess.run(rows)

    def work(i, strategy):
        with tf.Graph().as_default():
            with strategy.scope():
                (k, xp, yp), train, dense, table, step = _model(opt, strategy.wrap_optimizer)
                rows = _rows(table)
            with strategy.training_session(max_wait_secs=60) as sess:
                for s in range(steps):
                    part = slice(i * B, (i + 1) * B)
                    sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                out = sess.run(dense), sess.run(rows), sess.run(step)
                strategy.finish(sess, timeout=60)
            strategy.release(timeout=60)
            return out

    for got, rows, step in _run_workers(_strategies(MultiWorkerMirroredStrategy), work):
        assert step == steps
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rows, want_rows, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_mirrored_variables_stay_bit_identical_over_100_steps(name):
    steps = 100
    keys, x, y = _data(steps, seed=3)

    def work(i, strategy):
        with tf.Graph().as_default():
            with strategy.scope():
                (k, xp, yp), train, _, _, step = _model("adam", strategy.wrap_optimizer)
            mirrored = strategy.mirrored_variables()
            with strategy.training_session(max_wait_secs=60) as sess:
                run = sess.make_callable(train, [k, xp, yp]) if hasattr(sess, "make_callable") else None
                for s in range(steps):
                    part = slice(i * B, (i + 1) * B)
                    if run is not None:
                        run(keys[s][part], x[s][part], y[s][part])
                    else:
                        sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                values = {v.op.name: sess.run(v) for v in mirrored}
                strategy.finish(sess, timeout=60)
                assert pending_pushes(strategy.server.worker).in_flight() == 0
            strategy.release(timeout=60)
            return values

    options = {"staleness": 1} if name == "hybrid" else {}  # its pushes leave in the background
    chief, other = _run_workers(_strategies(STRATEGIES[name], **options), work, timeout=300)
    assert len(chief) >= 7 and chief.keys() == other.keys()  # weights, Adam slots and powers, the global step
    assert chief["global_step"] == steps
    for var, value in chief.items():
        assert value.dtype == other[var].dtype and value.tobytes() == other[var].tobytes(), var


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_chief_job_takes_part_as_rank_0_of_the_workers(name):
    """TF_CONFIG of a Kubeflow TFJob: {"chief": [...], "worker": [...]}; the chief trains, holds the
    first table shard and is the first member of the all-reduce (as in TensorFlow's strategy)."""
    ports = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    tasks = [{"type": "chief", "index": 0}, {"type": "worker", "index": 0}]
    strategies = [STRATEGIES[name](TFConfigClusterResolver(environ={"TF_CONFIG": json.dumps(
        {"cluster": cluster, "task": t})}), collective_timeout=60) for t in tasks]
    assert [(s.worker_index, s.is_chief, s.num_workers) for s in strategies] == [(0, True, 2), (1, False, 2)]
    assert strategies[1].workers == ["/job:chief/task:0", "/job:worker/task:0"]
    steps = 5
    keys, x, y = _data(steps, seed=5)
    with tf.Graph().as_default():
        (k, xp, yp), train, dense, table, _ = _model("adam")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for s in range(steps):
                sess.run(train, {k: keys[s], xp: x[s], yp: y[s]})
            want = sess.run(dense)

    def work(i, strategy):
        with tf.Graph().as_default():
            with strategy.scope():
                (k, xp, yp), train, dense, table, step = _model("adam", strategy.wrap_optimizer)
            mirrored = strategy.mirrored_variables()
            with strategy.training_session(max_wait_secs=60) as sess:
                for s in range(steps):
                    part = slice(i * B, (i + 1) * B)
                    sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                values = {v.op.name: sess.run(v) for v in mirrored}
                got = sess.run(dense)
                strategy.finish(sess, timeout=60)
            strategy.release(timeout=60)
            return table.shard_devices, [v.device for v in dense], values, got

    (shards0, devices0, chief, got0), (shards1, devices1, other, _) = _run_workers(strategies, work)
    assert shards0 == shards1 == ["/job:chief/replica:0/task:0/device:CPU:0",
                                  "/job:worker/replica:0/task:0/device:CPU:0"]
    assert devices0 == ["/job:chief/task:0"] * 3 and devices1 == ["/job:worker/task:0"] * 3
    assert chief["global_step"] == steps and chief.keys() == other.keys()
    for var, value in chief.items():
        assert value.tobytes() == other[var].tobytes(), var
    if name == "mirrored":  # synchronous tables: one process's numbers
        for g, w in zip(got0, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_clusters_with_more_than_one_chief_or_other_jobs_are_refused():
    for jobs, match in (({"chief": 2, "worker": 1}, "one chief task"),
                        ({"worker": 2, "sidecar": 1}, r"also has \['sidecar'\]")):
        with pytest.raises(ValueError, match=match):
            MultiWorkerMirroredStrategy(SimpleClusterResolver(_spec(jobs), task_type="worker", task_id=0),
                                        start_server=False)


def test_every_worker_starts_from_the_chiefs_values():
    def work(i, strategy):
        with tf.Graph().as_default():
            tf.set_random_seed(100 + i)  # each worker would initialize other values
            with strategy.scope():
                w = tf.Variable(tf.random_normal([5, 3]), name="w")
                counts = tf.Variable(tf.random_uniform([4], 0, 100, tf.int32), name="counts")
                loss = tf.reduce_sum(tf.matmul(tf.ones([2, 5]), w))
                train = strategy.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
            with strategy.training_session(max_wait_secs=60) as sess:
                start = sess.run([w, counts])
                sess.run(train)
                out = start + [sess.run(w)]
                strategy.finish(sess, timeout=60)
            strategy.release(timeout=60)
            return out

    (w0, c0, after0), (w1, c1, after1) = _run_workers(_strategies(MultiWorkerMirroredStrategy), work)
    assert w0.tobytes() == w1.tobytes() and c0.tolist() == c1.tolist() and after0.tobytes() == after1.tobytes()
    np.testing.assert_allclose(after0, w0 - 0.1 * 2.0, rtol=1e-6)  # d(sum(ones @ w))/dw = 2 everywhere


def test_a_buckets_all_reduce_starts_before_the_backward_pass_ends():
    """Step stats (FULL_TRACE): with buckets of one layer each, the last layers' all-reduce starts,
    and ends its Start op, before the first layer's gradient ops run (order of start/end micros)."""

    def work(i, strategy):
        with tf.Graph().as_default():
            with strategy.scope():
                x = tf.placeholder(tf.float32, [None, 64])
                h = x
                for layer in range(4):
                    h = tf.layers.dense(h, 64, activation=tf.nn.relu, name=f"layer{layer}")
                loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1, name="out")))
                train = strategy.wrap_optimizer(tf.train.GradientDescentOptimizer(0.01)).minimize(loss)
            with strategy.training_session(max_wait_secs=60) as sess:
                feed = {x: np.ones((32, 64), np.float32)}
                sess.run(train, feed)
                meta = tf.RunMetadata()
                sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
                strategy.finish(sess, timeout=60)
            strategy.release(timeout=60)
            return [n for d in meta.step_stats.dev_stats for n in d.node_stats]

    for nodes in _run_workers(_strategies(MultiWorkerMirroredStrategy, bucket_bytes=64 * 64 * 4), work):
        starts = sorted((n for n in nodes if "CollectiveReduceStart" in n.node_name), key=lambda n: n.all_start_micros)
        done = [n for n in nodes if "CollectiveReduceDone" in n.node_name]
        backward = [n for n in nodes if n.node_name.startswith("gradients/")]
        assert len(starts) == len(done) >= 5  # one bucket per layer's kernel at least
        first = starts[0]
        last_backward_end = max(n.all_start_micros + n.all_end_rel_micros for n in backward)
        first_layer_grads = [n for n in backward if n.node_name.startswith("gradients/layer0/")]
        assert first_layer_grads
        assert first.all_start_micros + first.all_end_rel_micros <= min(n.all_start_micros for n in first_layer_grads)
        assert first.all_start_micros < last_backward_end
        assert min(n.all_start_micros for n in done) >= max(n.all_start_micros for n in backward)


def test_hybrid_keeps_at_most_staleness_steps_of_pushes_in_flight(monkeypatch):
    """Worker 0 trains a table sharded over both workers alone (no dense variable: no all-reduce);
    worker 1's shard holds every push until released. Two steps return with their pushes in
    flight; the third waits for the first before it sends its own."""
    strategies = _strategies(HybridStrategy, staleness=2)
    release, held = threading.Event(), []
    serving = embedding_service.shards_of(strategies[1].server.worker.devices)
    real_push = type(serving).push

    def slow_push(self, items):
        if self is serving and any(len(it.keys) for it in items):
            held.append(len(items))
            release.wait(60)
        return real_push(self, items)

    monkeypatch.setattr(type(serving), "push", slow_push)
    waiting = threading.Event()  # set when a push waits for its run of `staleness` steps before
    real_wait = embedding_cluster._wait_replies

    def wait_replies(*args):
        waiting.set()
        return real_wait(*args)

    monkeypatch.setattr(embedding_cluster, "_wait_replies", wait_replies)
    s = strategies[0]
    try:
        with tf.Graph().as_default():
            with s.scope():
                keys = tf.placeholder(tf.int64, [None])
                table = embedding.EmbeddingTable("t", 2, optimizer=embedding.SGD(0.1), initializer=0.0)
                step = tf.train.get_or_create_global_step()
                train = embedding.minimize(tf.reduce_sum(table.lookup(keys)), s.wrap_optimizer(
                    tf.train.GradientDescentOptimizer(0.1)), step)
                init = tf.global_variables_initializer()  # not initialize(): its broadcast needs worker 1
            with tf.Session(s.target) as sess:
                sess.run(init)
                pending = pending_pushes(s.server.worker)
                feed = {keys: np.arange(40, dtype=np.int64)}  # keys on both shards
                sess.run(train, feed)
                sess.run(train, feed)
                assert pending.in_flight() == 2 and not waiting.is_set()  # both returned with their pushes held
                third = threading.Thread(target=sess.run, args=(train, feed), daemon=True)
                third.start()
                assert waiting.wait(60)  # the third step waits for the first's push ...
                assert len(held) <= 2 and pending.in_flight() == 2  # ... before it sends its own
                release.set()
                third.join(60)
                assert not third.is_alive()
                flush_pending_pushes(s.server.worker, 60)  # what finish() does first (alone, worker 0 would
                assert pending.in_flight() == 0 and int(sess.run(step)) == 3  # then wait for worker 1)
                rows = sess.run(table.lookup(keys, training=False), feed)
                np.testing.assert_allclose(rows, np.full((40, 2), -0.1 * 3 / N, np.float32), rtol=1e-6)
    finally:
        release.set()
        for st in strategies:
            st.server.stop(0)


def test_wrap_optimizer_is_idempotent_and_ps_strategies_are_unaffected():
    s = MultiWorkerMirroredStrategy(SimpleClusterResolver(_spec({"worker": 1}), task_type="worker", task_id=0),
                                    start_server=False)
    opt = s.wrap_optimizer(tf.train.AdamOptimizer())
    assert s.wrap_optimizer(opt) is opt and isinstance(opt.wrapped, tf.train.AdamOptimizer)
    ps = PsStrategy(SimpleClusterResolver(_spec({"worker": 1}), task_type="worker", task_id=0), start_server=False)
    plain = tf.train.AdamOptimizer()
    assert ps.wrap_optimizer(plain) is plain


@pytest.mark.parametrize("module", ["mirrored_strategies", "all_reduce_optimizer"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.training.distribute.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

"""Embedding tables sharded over ps tasks (in-process servers on 127.0.0.1): a Wide&Deep-like model
trains to the local numbers, each step sends exactly one pull and one push per ps for all tables,
hash sharding balances skewed ids, admission and eviction work sharded, and errors name the table
or the task."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding as E
from tests.distributed.conftest import start_cluster

PS2 = ["/job:ps/task:0", "/job:ps/task:1"]
WORKER = "/job:worker/task:0"
FIELDS = 4


def _batches(steps, seed=0, batch=16, vocab=200):
    rng = np.random.default_rng(seed)
    ids = [rng.zipf(1.3, (batch, FIELDS)) % vocab * 7919 for _ in range(steps)]
    labels = [(rng.random(batch) > 0.6).astype(np.float32) for _ in range(steps)]
    return ids, labels


def _wide_deep(table_devices, ps=(), worker="", names=("wide", "deep")):
    """Two tables (wide dim 1 with FTRL, deep dim 8 with Adagrad) and an MLP whose variables live
    on the ``ps`` devices (trained there by Adam), the rest on ``worker``."""
    rng = np.random.RandomState(0)
    ids = tf.placeholder(tf.int64, [None, FIELDS], name="ids")
    y = tf.placeholder(tf.float32, [None], name="y")
    wide = E.EmbeddingTable(names[0], 1, optimizer=E.Ftrl(0.05), devices=table_devices)
    deep = E.EmbeddingTable(names[1], 8, optimizer=E.Adagrad(0.05, 0.1), devices=table_devices)
    dense = []
    for i, shape in enumerate([(FIELDS * 8, 16), (16, 1)]):
        with tf.device(ps[i % len(ps)] if ps else ""):
            dense.append(tf.Variable(rng.randn(*shape).astype(np.float32) * 0.2, name=f"w{i}"))
            dense.append(tf.Variable(np.zeros(shape[1], np.float32), name=f"b{i}"))
    with tf.device(ps[0] if ps else ""):
        gs = tf.train.get_or_create_global_step()
    with tf.device(worker):
        w = tf.reduce_sum(wide.lookup(ids, labels=y), [1, 2])
        d = tf.reshape(deep.lookup(ids), [-1, FIELDS * 8])
        h = tf.nn.relu(tf.matmul(d, dense[0]) + dense[1])
        logit = tf.squeeze(tf.matmul(h, dense[2]) + dense[3], axis=1) + w
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
        train = E.minimize(loss, tf.train.AdamOptimizer(0.01), global_step=gs)
        probe = tf.placeholder(tf.int64, [None], name="probe")
        rows = [wide.lookup(probe, training=False), deep.lookup(probe, training=False)]
    return ids, y, loss, train, dense, probe, rows


def _train(target, table_devices, ps=(), worker="", steps=5, probe_ids=None, names=("wide", "deep")):
    ids_b, y_b = _batches(steps)
    with tf.Graph().as_default():
        ids, y, loss, train, dense, probe, rows = _wide_deep(table_devices, ps, worker, names)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {ids: ids_b[i], y: y_b[i]})[0] for i in range(steps)]
            want = np.unique(np.concatenate([b.reshape(-1) for b in ids_b])) if probe_ids is None else probe_ids
            return losses, sess.run(dense), sess.run(rows, {probe: want})


@pytest.fixture(scope="module")
def cluster():
    _, servers = start_cluster(ps=2, workers=2)
    yield servers
    for s in servers.values():
        s.stop(0)


def _resource(server, name, task):
    return server.worker.devices.resources(f"/job:ps/replica:0/task:{task}/device:CPU:0").lookup("", name)


def test_wide_and_deep_on_2ps_trains_to_the_local_numbers(cluster):
    local = _train("", None)
    dist = _train(cluster["worker:0"].target, PS2, PS2, WORKER)
    np.testing.assert_allclose(dist[0], local[0], rtol=1e-5)
    for a, b in zip(dist[1] + dist[2], local[1] + local[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # each ps holds the rows it owns, and the rows of both add up to the local table
    sizes = [_resource(cluster[f"ps:{i}"], f"deep_part_{i}", i).size() for i in range(2)]
    assert sum(sizes) == len(dist[2][1]) and min(sizes) > 0


def test_one_pull_and_one_push_per_ps_per_step_for_all_tables(cluster):
    ids_b, y_b = _batches(3, seed=1)
    with tf.Graph().as_default():
        ids, y, loss, train, *_ = _wide_deep(PS2, PS2, WORKER, names=("wide_c", "deep_c"))
        with tf.Session(cluster["worker:1"].target) as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(3):
                before = [dict(cluster[f"ps:{p}"].worker_service.table_requests) for p in range(2)]
                sess.run(train, {ids: ids_b[i], y: y_b[i]})
                for p in range(2):
                    after = cluster[f"ps:{p}"].worker_service.table_requests
                    assert {k: after[k] - before[p].get(k, 0) for k in ("TablePull", "TablePush")} == \
                        {"TablePull": 1, "TablePush": 1}


def test_two_workers_push_asynchronously_into_the_same_shards(cluster):
    """Steps of two workers, one after the other, train the shared tables as one worker running
    all the steps does."""
    ids_b, y_b = _batches(4, seed=2)
    probe_ids = np.unique(np.concatenate([b.reshape(-1) for b in ids_b]))
    graphs = []
    for w in range(2):
        g = tf.Graph()
        with g.as_default():
            t = E.EmbeddingTable("async_emb", 4, optimizer=E.SGD(0.5), initializer=0.1, devices=PS2)
            with tf.device(f"/job:worker/task:{w}"):
                ids = tf.placeholder(tf.int64, [None, FIELDS])
                loss = tf.reduce_sum(tf.square(t.lookup(ids) - 1.0))
                train = E.apply_gradients(loss)
                probe = tf.placeholder(tf.int64, [None])
                rows = t.lookup(probe, training=False)
        graphs.append((g, ids, train, (probe, rows)))
    sessions = [tf.Session(cluster[f"worker:{w}"].target, graph=graphs[w][0]) for w in range(2)]
    for i in range(4):
        _, ids, train, _ = graphs[i % 2]
        sessions[i % 2].run(train, {ids: ids_b[i]})
    probe, rows = graphs[0][3]
    got = sessions[0].run(rows, {probe: probe_ids})
    for s in sessions:
        s.close()
    with tf.Graph().as_default():
        t = E.EmbeddingTable("async_emb", 4, optimizer=E.SGD(0.5), initializer=0.1)
        ids = tf.placeholder(tf.int64, [None, FIELDS])
        train = E.apply_gradients(tf.reduce_sum(tf.square(t.lookup(ids) - 1.0)))
        probe = tf.placeholder(tf.int64, [None])
        rows = t.lookup(probe, training=False)
        with tf.Session() as sess:
            for i in range(4):
                sess.run(train, {ids: ids_b[i]})
            want = sess.run(rows, {probe: probe_ids})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_two_workers_training_at_the_same_time_apply_every_push(cluster):
    import threading

    ids_b, _ = _batches(6, seed=3)
    errors = []
    start = [dict(cluster[f"ps:{p}"].worker_service.table_requests) for p in range(2)]

    def work(w):
        try:
            with tf.Graph().as_default():
                t = E.EmbeddingTable("concurrent", 4, optimizer=E.Adagrad(0.1), devices=PS2)
                with tf.device(f"/job:worker/task:{w}"):
                    ids = tf.placeholder(tf.int64, [None, FIELDS])
                    train = E.apply_gradients(tf.reduce_sum(tf.square(t.lookup(ids))))
                with tf.Session(cluster[f"worker:{w}"].target) as sess:
                    for b in ids_b:
                        sess.run(train, {ids: b})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors and not any(th.is_alive() for th in threads)
    for p in range(2):
        shard = _resource(cluster[f"ps:{p}"], f"concurrent_part_{p}", p)
        assert shard.step == 12  # 2 workers x 6 steps, every push applied
        done = cluster[f"ps:{p}"].worker_service.table_requests
        assert done["TablePush"] - start[p].get("TablePush", 0) == 12


def test_a_shard_on_the_sessions_own_task_is_served_in_process(cluster):
    """A session on ps:0's server: shard 0 is local (no RPC to ps:0), shard 1 remote."""
    local = _train("", None, steps=2, names=("wide_i", "deep_i"))
    before = dict(cluster["ps:0"].worker_service.table_requests)
    dist = _train(cluster["ps:0"].target, ["/job:ps/task:0", "/job:ps/task:1"], steps=2, names=("wide_i", "deep_i"))
    assert dict(cluster["ps:0"].worker_service.table_requests) == before
    np.testing.assert_allclose(dist[0], local[0], rtol=1e-5)


def test_hash_sharding_balances_ids_that_are_all_multiples_of_the_shard_count():
    _, servers = start_cluster(ps=3, workers=1)
    try:
        with tf.Graph().as_default():
            t = E.EmbeddingTable("skewed", 2, devices=[f"/job:ps/task:{i}" for i in range(3)])
            keys = tf.placeholder(tf.int64, [None])
            with tf.device(WORKER):
                rows = t.pull(keys)
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(rows, {keys: np.arange(3000, dtype=np.int64) * 3})  # key % 3 == 0 for all
        sizes = [_resource(servers[f"ps:{i}"], f"skewed_part_{i}", i).size() for i in range(3)]
        assert sum(sizes) == 3000 and all(900 <= s <= 1100 for s in sizes), sizes
    finally:
        for s in servers.values():
            s.stop(0)


def _lifecycle_run(target, devices):
    """Admission after 2 sightings, eviction of rows unseen for 2 steps (a pass every step)."""
    ids_b = [np.array([[1, 2], [3, 1]]), np.array([[1, 4], [2, 5]]), np.array([[4, 6], [6, 7]]),
             np.array([[8, 9], [8, 6]])]
    with tf.Graph().as_default():
        t = E.EmbeddingTable("life", 3, optimizer=E.SGD(0.1), admission=2,
                             eviction=E.Eviction(max_age=2, every_n_steps=1), devices=devices)
        ids = tf.placeholder(tf.int64, [None, 2])
        with tf.device(WORKER if devices else ""):
            train = E.apply_gradients(tf.reduce_sum(t.lookup(ids)))
            probe = t.lookup(tf.range(10, dtype=tf.int64), training=False)
        with tf.Session(target) as sess:
            for b in ids_b:
                sess.run(train, {ids: b})
            return sess.run(probe), t.stats(sess)  # sharded: stats ops on each ps, on the shards pulls made


def test_admission_and_eviction_work_sharded(cluster):
    want, stats = _lifecycle_run("", None)
    got, got_stats = _lifecycle_run(cluster["worker:0"].target, PS2)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for field in ("keys", "candidates", "step", "dropped_gradients", "evicted", "admitted"):
        assert got_stats[field] == stats[field], field
    shards = [_resource(cluster[f"ps:{i}"], f"life_part_{i}", i) for i in range(2)]
    assert sum(s.size() for s in shards) == stats["keys"] == 2
    assert sum(s.evicted for s in shards) == stats["evicted"] > 0
    assert sum(s.dropped for s in shards) == stats["dropped_gradients"] > 0  # keys not admitted yet
    assert sum(s.num_candidates() for s in shards) == stats["candidates"]
    assert {s.step for s in shards} == {4}  # every shard got one push per step


def test_a_table_recreated_with_another_dim_is_refused_naming_it(cluster):
    with tf.Graph().as_default():
        t = E.EmbeddingTable("dimtab", 4, devices=PS2)
        keys = tf.placeholder(tf.int64, [None])
        with tf.Session(cluster["worker:0"].target) as sess:
            sess.run(t.pull(keys), {keys: [1, 2, 3]})
    with tf.Graph().as_default():
        t = E.EmbeddingTable("dimtab", 8, devices=PS2)
        keys = tf.placeholder(tf.int64, [None])
        rows = t.pull(keys)
        with tf.Session(cluster["worker:0"].target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"'dimtab' shard \d on .*other settings "
                                                                     r"\(dim 4.*\(dim 8"):
                sess.run(rows, {keys: [1, 2, 3]})


def test_a_push_to_a_table_no_ps_has_is_refused_naming_it(cluster):
    with tf.Graph().as_default():
        t = E.EmbeddingTable("never_pulled", 2, devices=PS2)
        keys = tf.constant([1, 2, 3], tf.int64)
        push = t.push(keys, tf.ones([3, 2]))
        with tf.Session(cluster["worker:0"].target) as sess:
            with pytest.raises(tf.errors.NotFoundError, match=r"'never_pulled' has no shard \d on /job:ps/.*nothing "
                                                              r"pulled it"):
                sess.run(push)


def test_a_ps_that_is_down_or_restarted_is_reported_by_name():
    cluster, servers = start_cluster(ps=2, workers=1)
    try:
        with tf.Graph().as_default():
            t = E.EmbeddingTable("downtab", 2, devices=PS2)
            keys = tf.placeholder(tf.int64, [None])
            with tf.device(WORKER):
                rows = t.pull(keys)
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(rows, {keys: np.arange(20)})
                servers["ps:1"].stop(0)
                with pytest.raises(tf.errors.UnavailableError, match=r"/job:ps/replica:0/task:1 .* is unreachable "
                                                                     r"\(TablePull\)"):
                    sess.run(rows, {keys: np.arange(20)})
                # back on its address, empty: the step is refused rather than training fresh rows
                servers["ps:1"] = tf.train.Server(cluster, job_name="ps", task_index=1)
                servers["worker:0"].remote_worker("/job:ps/replica:0/task:1").get_status(30.0)  # reconnected
                with pytest.raises(tf.errors.AbortedError, match=r"/job:ps/replica:0/task:1 restarted .* lost their "
                                                                 r"rows"):
                    sess.run(rows, {keys: np.arange(20)})
    finally:
        for s in servers.values():
            s.stop(0)


def test_dense_variables_on_ps_are_updated_by_ops_on_the_ps():
    with tf.Graph().as_default() as g:
        _wide_deep(PS2, PS2, WORKER)
        applies = [op for op in g.get_operations() if op.type.startswith("Apply")]
    assert applies and all("/job:ps" in op.device for op in applies), [(op.name, op.device) for op in applies]

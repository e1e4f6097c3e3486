"""Synchronous training (tf.train.SyncReplicasOptimizer) of an embedding table sharded over two
parameter servers, with worker tasks of an in-process cluster on 127.0.0.1 driven by threads:
each worker step sends one TableAccumulate per ps (no TablePush), the chief applies the averaged
gradients on the ps once per step, the numbers match NumPy and one worker with the concatenated
batch, backup workers' pushes are dropped as stale on every shard, and closing the chief's session
ends the parameter servers' waits."""

import threading

import numpy as np
import pytest

import sparseflow as tf
from tests.distributed.conftest import start_cluster
from tests.embedding import sync_model as M
from tests.training.test_sync_replicas_tables import run_concurrently

PS2 = ["/job:ps/task:0", "/job:ps/task:1"]


def _cluster(workers):
    _, servers = start_cluster(ps=2, workers=workers)
    return servers


def _stop(servers):
    for s in servers.values():
        s.stop(0)


class _Replicas:
    """One graph and session per worker task (between-graph replication); worker 0 is the chief."""

    def __init__(self, servers, kind, aggregate, total, var_list=None, task=None):
        """``task``: run every replica on that task (its server's sessions) instead of worker i."""
        self.parts = []
        for i in range(total):
            job, index = (task or f"worker:{i}").split(":")
            g = tf.Graph()
            with g.as_default():
                model = M.Model(kind, table_devices=PS2, ps=PS2[0], worker=f"/job:{job}/task:{index}")
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(M.LR_DENSE),
                                                     replicas_to_aggregate=aggregate, total_num_replicas=total)
                placeholders, train = model.replica(opt, [] if var_list == [] else None)
                init = (tf.global_variables_initializer(), tf.local_variables_initializer())
                tokens = opt.get_init_tokens_op(num_tokens=0)
            sess = tf.Session(servers[task or f"worker:{i}"].target, graph=g)
            self.parts.append((model, opt, placeholders, train, init, tokens, sess))

    @property
    def chief(self):
        return self.parts[0]

    def start(self):
        model, opt, _, _, init, tokens, sess = self.chief
        sess.run(init)
        first = sess.run(model.first_rows, {model.probe: M.VOCAB})
        sess.run(opt.chief_init_op)
        sess.run(tokens)
        for _, other, _, _, init, _, s in self.parts[1:]:
            s.run(init[1])
            s.run(other.local_step_init_op)
        self.coord = tf.train.Coordinator()
        self.threads = opt.get_chief_queue_runner().create_threads(sess, coord=self.coord, daemon=True, start=True)
        return first

    def run(self, i, b):
        _, _, placeholders, train, _, _, sess = self.parts[i]
        sess.run(train, M.feed(placeholders, b), options=M.TIMEOUT)

    def stop(self):
        self.coord.request_stop()
        for part in self.parts:
            part[-1].close()
        self.coord.join(self.threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in self.threads)


def _requests(servers):
    return [dict(servers[f"ps:{p}"].worker_service.table_requests) for p in range(2)]


def _shards(servers, name="sync_emb"):
    return [servers[f"ps:{p}"].worker.devices.resources(f"/job:ps/replica:0/task:{p}/device:CPU:0")
            .lookup("", f"{name}_part_{p}") for p in range(2)]


@pytest.mark.parametrize("kind", ["sgd", "adagrad"])
def test_two_workers_on_two_ps_match_numpy_and_one_worker_with_the_concatenated_batch(kind):
    steps = 3
    batches = [[M.batch(i, s) for i in range(2)] for s in range(steps)]
    servers = _cluster(workers=2)
    try:
        reps = _Replicas(servers, kind, aggregate=2, total=2)
        ref = M.Reference(kind, reps.start())
        model, sess = reps.chief[0], reps.chief[-1]
        before = _requests(servers)
        for s in range(steps):
            run_concurrently([lambda i=i, b=batches[s][i]: reps.run(i, b) for i in range(2)])
            ref.step(batches[s])
            assert sess.run(model.global_step) == s + 1
            ref.check(sess, model)
        after = _requests(servers)
        for p in range(2):  # one accumulate-push per ps per worker step, nothing applied asynchronously
            assert after[p].get("TableAccumulate", 0) - before[p].get("TableAccumulate", 0) == 2 * steps
            assert after[p].get("TablePush", 0) == before[p].get("TablePush", 0)
            assert after[p].get("TableApplyAccumulated", 0) >= steps
        shards = _shards(servers)
        assert [s.step for s in shards] == [steps, steps] and all(s.size() > 0 for s in shards)
        got = (sess.run(model.rows, {model.probe: M.VOCAB}), sess.run(model.w), sess.run(model.b),
               model.counters(sess))
        reps.stop()
    finally:
        _stop(servers)
    want = M.single_worker_run(kind, batches)
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert got[3] == want[3]


def test_a_backup_worker_is_dropped_as_stale_on_every_shard():
    servers = _cluster(workers=3)
    try:
        reps = _Replicas(servers, "sgd", aggregate=2, total=3)
        ref = M.Reference("sgd", reps.start())
        model, sess = reps.chief[0], reps.chief[-1]
        batches = [M.batch(i, 0) for i in range(3)]
        run_concurrently([lambda i=i: reps.run(i, batches[i]) for i in range(2)])
        reps.run(2, batches[2])  # after the step: its gradients are for step 0, now stale; it still gets a token
        ref.step(batches[:2])
        assert sess.run(model.global_step) == 1
        ref.check(sess, model)
        assert [s.grad_accumulator.stale for s in _shards(servers)] == [1, 1]
        assert model.table.stats(sess)["stale_pushes"] == 1  # every shard saw the one stale push
        assert [p[-1].run(p[1]._local_step) for p in reps.parts] == [1, 1, 1]
        reps.stop()
    finally:
        _stop(servers)


def test_closing_the_chiefs_session_ends_the_parameter_servers_waits():
    servers = _cluster(workers=2)
    try:
        reps = _Replicas(servers, "sgd", aggregate=2, total=2, var_list=[])  # the chief waits in the table's apply
        reps.start()
        accumulators = []

        def waiting():
            if not accumulators:
                accumulators.extend(s.grad_accumulator for s in _shards(servers))
            return all(a is not None and a.waiting == 1 for a in accumulators)

        _wait_for(waiting)
        reps.stop()  # the chief's step is cancelled, its TableApplyAccumulated calls too
        _wait_for(lambda: all(a.waiting == 0 for a in accumulators))
        assert [a.global_step for a in accumulators] == [0, 0]  # nothing was applied
    finally:
        _stop(servers)


def _wait_for(cond, seconds=30.0):
    expired = threading.Event()
    timer = threading.Timer(seconds, expired.set)
    timer.start()
    try:
        while not cond():
            if expired.wait(0.01):
                raise AssertionError("condition not reached in time")
    finally:
        timer.cancel()


def test_the_chiefs_step_deadline_bounds_the_parameter_servers_waits():
    servers = _cluster(workers=1)
    try:
        reps = _Replicas(servers, "sgd", aggregate=1, total=1, var_list=[])
        model, opt, _, _, init, _, sess = reps.chief
        sess.run(init)
        sess.run(model.first_rows, {model.probe: M.VOCAB})
        sess.run(opt.chief_init_op)
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        with pytest.raises(tf.errors.DeadlineExceededError):  # no push: the apply waits, until the deadline
            sess.run(sync_op, options=tf.RunOptions(timeout_in_ms=300))
        accumulators = [s.grad_accumulator for s in _shards(servers)]
        _wait_for(lambda: all(a.waiting == 0 for a in accumulators))
        assert [a.global_step for a in accumulators] == [0, 0]
        sess.close()
    finally:
        _stop(servers)


def test_a_shard_on_the_chiefs_own_task_accumulates_and_waits_in_process():
    """Replicas running on ps:0: its shard is served without RPCs (also the chief's wait, which
    closing the session cancels), shard 1 over TableAccumulate / TableApplyAccumulated."""
    batches = [[M.batch(i, s) for i in range(2)] for s in range(2)]
    servers = _cluster(workers=1)
    try:
        reps = _Replicas(servers, "sgd", aggregate=2, total=2, var_list=[], task="ps:0")
        reps.start()
        before = _requests(servers)
        for s in range(2):
            run_concurrently([lambda i=i, b=batches[s][i]: reps.run(i, b) for i in range(2)])
        after = _requests(servers)
        assert after[0] == before[0] == {}  # ps:0 served its shard in-process
        assert after[1]["TableAccumulate"] - before[1].get("TableAccumulate", 0) == 4
        accumulators = [s.grad_accumulator for s in _shards(servers)]
        _wait_for(lambda: all(a.waiting == 1 for a in accumulators))  # the chief waits for step 2's pushes
        reps.stop()
        _wait_for(lambda: all(a.waiting == 0 for a in accumulators))
        assert [a.global_step for a in accumulators] == [2, 2]
    finally:
        _stop(servers)

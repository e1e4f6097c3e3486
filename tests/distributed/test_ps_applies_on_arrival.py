"""Asynchronous parameter-server training applies each gradient on the ps as soon as it arrives,
as TensorFlow's dataflow executor does, not all of a step's updates after its last gradient: a
ps's part of a step runs each node once its inputs are there, updates fed by another task are not
grouped, and a batch of receives brings each value as soon as its sender has it."""

import threading
import time

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.distributed.proto import worker_pb2
from sparseflow._src.distributed.worker_service import WorkerServicer
from sparseflow._src.framework import errors
from sparseflow._src.runtime.rendezvous import create_key
from tests.distributed.conftest import start_cluster

A = "/job:worker/replica:0/task:0/device:CPU:0"
B = "/job:ps/replica:0/task:0/device:CPU:0"


@pytest.fixture
def cluster_1ps_1worker():
    cluster, servers = start_cluster(ps=1, workers=1)
    yield cluster, servers
    for s in servers.values():
        s.stop(0)


def test_the_first_gradient_is_applied_while_the_worker_computes_the_second(cluster_1ps_1worker):
    _, servers = cluster_1ps_1worker
    done_slow = []

    def slow(g):
        time.sleep(0.4)
        done_slow.append(time.time())
        return g * 2.0

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/job:ps/task:0"):
            w1 = tf.Variable(np.zeros(3, np.float32), name="w1")
            w2 = tf.Variable(np.zeros(3, np.float32), name="w2")
        with tf.device("/job:worker/task:0"):
            g1 = x * w1.read_value() + 1.0
            g2 = tf.py_func(slow, [g1], tf.float32, name="slow")  # computed after g1 is sent
            g2.set_shape([3])
        opt = tf.train.AdamOptimizer(0.1)
        train = opt.apply_gradients([(g1, w1), (g2, w2)])
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: [1.0, 2.0, 3.0]})  # kernels built (and compiled) on first use
            done_slow.clear()
            md = tf.RunMetadata()
            sess.run(train, {x: [1.0, 2.0, 3.0]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            w1_now, w2_now = sess.run([w1, w2])
    ends = {ns.node_name: (ns.all_start_micros + ns.all_end_rel_micros) / 1e6
            for d in md.step_stats.dev_stats if "/job:ps" in d.device for ns in d.node_stats}
    applies = sorted(n for n in ends if "ApplyAdam" in n)
    assert len(applies) == 2 and not [n for n in ends if "grouped" in n]  # one update per variable
    w1_apply = next(n for n in applies if "w1" in n)
    assert ends[w1_apply] < done_slow[0]  # applied while the worker still computed g2
    np.testing.assert_allclose([w1_now, w2_now], _adam_reference([1.0, 2.0, 3.0], steps=2), rtol=1e-5, atol=1e-6)


def test_an_update_on_another_ps_than_the_beta_powers_does_not_wait_for_the_last_gradient():
    cluster, servers = start_cluster(ps=2, workers=1)
    done_slow = []

    def slow(g):
        time.sleep(0.4)
        done_slow.append(time.time())
        return g * 2.0

    try:
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [3])
            with tf.device("/job:ps/task:0"):
                a = tf.Variable(np.zeros(3, np.float32), name="a")  # Adam's beta powers go beside it
            with tf.device("/job:ps/task:1"):
                b = tf.Variable(np.zeros(3, np.float32), name="b")
            with tf.device("/job:worker/task:0"):
                g_b = x * b.read_value() + 1.0
                g_a = tf.py_func(slow, [g_b], tf.float32, name="slow")
                g_a.set_shape([3])
            train = tf.train.AdamOptimizer(0.1).apply_gradients([(g_a, a), (g_b, b)])
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train, {x: [1.0, 2.0, 3.0]})
                done_slow.clear()
                md = tf.RunMetadata()
                sess.run(train, {x: [1.0, 2.0, 3.0]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=md)
                b_now, a_now = sess.run([b, a])
    finally:
        for s in servers.values():
            s.stop(0)
    ends = {ns.node_name: (ns.all_start_micros + ns.all_end_rel_micros) / 1e6
            for d in md.step_stats.dev_stats if "/job:ps/replica:0/task:1" in d.device for ns in d.node_stats}
    b_apply = next(n for n in ends if "ApplyAdam" in n)
    assert ends[b_apply] < done_slow[0]  # the beta powers came from ps 0 at the start of the step
    np.testing.assert_allclose([b_now, a_now], _adam_reference([1.0, 2.0, 3.0], steps=2), rtol=1e-5, atol=1e-6)


def _adam_reference(x, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    x = np.asarray(x, np.float64)
    w = [np.zeros(3), np.zeros(3)]
    m = [np.zeros(3), np.zeros(3)]
    v = [np.zeros(3), np.zeros(3)]
    for t in range(1, steps + 1):
        g1 = x * w[0] + 1.0
        for i, g in enumerate((g1, 2.0 * g1)):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            w[i] = w[i] - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m[i] / (np.sqrt(v[i]) + eps)
    return w


def test_a_batch_of_receives_brings_each_value_as_its_sender_has_it(cluster_1ps_1worker):
    _, servers = cluster_1ps_1worker
    ps, wk = servers["ps:0"].worker, servers["worker:0"].worker
    inc = ps.devices.incarnations[B]
    k1, k2, k3 = (create_key(B, inc, A, n) for n in ("a", "b", "c"))
    step = 91
    wk.steps.get(step).rendezvous.prefetch([[k1, k2, k3]])
    ps.steps.get(step).rendezvous.send(k1, np.float32(1))
    assert wk.steps.get(step).rendezvous.recv(k1, 10) == 1.0  # before k2 and k3 are sent
    ps.steps.get(step).rendezvous.send(k3, np.float32(3))
    assert wk.steps.get(step).rendezvous.recv(k3, 10) == 3.0
    with pytest.raises(errors.DeadlineExceededError):
        wk.steps.get(step).rendezvous.recv(k2, 0.2)
    ps.steps.get(step).rendezvous.send(k2, np.arange(4.0))
    assert wk.steps.get(step).rendezvous.recv(k2, 10).tolist() == [0.0, 1.0, 2.0, 3.0]
    wk.cleanup_graph(step)
    ps.cleanup_graph(step)


class _Context:
    def is_active(self):
        return True


def _ps_receiving(cluster, step):
    """The ps's worker, its servicer, B's incarnation, keys a, b, c from A to B, the step's local rendezvous."""
    _, servers = cluster
    ps = servers["ps:0"].worker
    inc = ps.devices.incarnations[B]
    return (ps, WorkerServicer(ps), inc, [create_key(B, inc, A, n) for n in ("a", "b", "c")],
            ps.steps.get(step).rendezvous.local)


def test_an_any_ready_reply_names_what_it_brings_and_leaves_the_rest_for_the_next_call(cluster_1ps_1worker):
    ps, service, inc, keys, table = _ps_receiving(cluster_1ps_1worker, 92)
    step = 92
    table.send(keys[1], np.float32(2))
    resp = service.RecvTensors(worker_pb2.RecvTensorsRequest(step_id=step, rendezvous_key=keys, any_ready=True,
                                                             request_id=1), _Context())
    assert list(resp.index) == [1] and len(resp.tensor) == 1
    # the waits for the others were withdrawn: values sent now stay for the next call
    table.send(keys[0], np.float32(1))
    table.send(keys[2], np.float32(3))
    resp = service.RecvTensors(worker_pb2.RecvTensorsRequest(step_id=step, rendezvous_key=[keys[0], keys[2]],
                                                             any_ready=True, request_id=2), _Context())
    assert list(resp.index) == [] and len(resp.tensor) == 2  # everything asked for: no index
    # without any_ready, the reply waits for every key
    out = []
    keys2 = [create_key(B, inc, A, n) for n in ("d", "e")]
    t = threading.Thread(target=lambda: out.append(service.RecvTensors(worker_pb2.RecvTensorsRequest(
        step_id=step, rendezvous_key=keys2, request_id=3), _Context())))
    t.start()
    table.send(keys2[0], np.float32(4))
    time.sleep(0.2)
    assert not out
    table.send(keys2[1], np.float32(5))
    t.join(10)
    assert len(out[0].tensor) == 2 and list(out[0].index) == []
    ps.cleanup_graph(step)


class _StreamContext(_Context):
    def __init__(self):
        self.callbacks = []
        self.active = True

    def is_active(self):
        return self.active

    def add_callback(self, fn):
        self.callbacks.append(fn)
        return True

    def end(self):
        self.active = False
        for fn in self.callbacks:
            fn()


def test_a_stream_of_receives_sends_one_message_per_arrival_and_ends_with_the_last_key(cluster_1ps_1worker):
    ps, service, inc, keys, table = _ps_receiving(cluster_1ps_1worker, 93)
    step = 93
    table.send(keys[1], np.float32(2))
    stream = service.RecvTensorStream(worker_pb2.RecvTensorsRequest(step_id=step, rendezvous_key=keys,
                                                                    request_id=1), _StreamContext())
    first = next(stream)
    assert list(first.index) == [1] and len(first.tensor) == 1
    table.send(keys[2], np.float32(3))
    table.send(keys[0], np.float32(1))
    second = next(stream)  # both arrived by then: one message, positions ascending
    assert list(second.index) == [0, 2] and len(second.tensor) == 2
    assert [float(np.frombuffer(t.tensor.tensor_content, np.float32)[0]) for t in second.tensor] == [1.0, 3.0]
    with pytest.raises(StopIteration):
        next(stream)
    ps.cleanup_graph(step)


def test_a_stream_whose_receiver_goes_away_ends_without_failing_the_senders_step(cluster_1ps_1worker):
    _, servers = cluster_1ps_1worker
    ps = servers["ps:0"].worker
    service = WorkerServicer(ps)
    keys = [create_key(B, ps.devices.incarnations[B], A, n) for n in ("a", "b")]
    step = 94
    ctx = _StreamContext()
    stream = service.RecvTensorStream(worker_pb2.RecvTensorsRequest(step_id=step, rendezvous_key=keys,
                                                                    request_id=1), ctx)
    threading.Timer(0.2, ctx.end).start()
    with pytest.raises(StopIteration):
        next(stream)
    # the receiver's step failed with its own error, which the master hands every task (not a
    # "went away" that could win the race); the waits were withdrawn: a later send stays in the table
    table = ps.steps.get(step).rendezvous.local
    table.send(keys[0], np.float32(1))
    assert table.try_recv(keys[0]) == 1.0
    ps.cleanup_graph(step)


def test_a_stream_for_a_restarted_sender_fails_naming_the_key(cluster_1ps_1worker):
    _, servers = cluster_1ps_1worker
    ps = servers["ps:0"].worker
    service = WorkerServicer(ps)
    stale = create_key(B, ps.devices.incarnations[B] ^ 1, A, "a")
    stream = service.RecvTensorStream(worker_pb2.RecvTensorsRequest(step_id=95, rendezvous_key=[stale],
                                                                    request_id=1), _StreamContext())
    with pytest.raises(errors.AbortedError, match="has restarted"):
        next(stream)
    ps.cleanup_graph(95)

"""One rendezvous contract, passed by the local table and by the remote (RecvTensor) rendezvous:
send before or after recv, async receives, timeouts, abort reaching every waiter, stale keys."""

import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import errors
from sparseflow._src.runtime.rendezvous import LocalRendezvous, create_key
from tests.distributed.conftest import start_cluster

A = "/job:worker/replica:0/task:0/device:CPU:0"
B = "/job:ps/replica:0/task:0/device:CPU:0"


class LocalPair:
    """Sender and receiver share one in-process table."""

    def __init__(self):
        self.table = LocalRendezvous()

    def key(self, name):
        return create_key(A, 1, A.replace("CPU:0", "CPU:1"), name)

    def send(self, key, value):
        self.table.send(key, value)

    def recv(self, key, timeout=None):
        return self.table.recv(key, timeout)

    def recv_async(self, key, cb):
        self.table.recv_async(key, cb)

    def abort(self, err):
        self.table.abort(err)


class RemotePair:
    """The receiver (worker task) pulls from the sender's (ps task) worker over gRPC."""

    def __init__(self, servers, step_id=77):
        self.ps = servers["ps:0"].worker
        self.wk = servers["worker:0"].worker
        self.step_id = step_id
        self.inc = self.ps.devices.incarnations[B]

    def key(self, name):
        return create_key(B, self.inc, A, name)

    def send(self, key, value):
        self.ps.steps.get(self.step_id).rendezvous.send(key, value)

    def recv(self, key, timeout=None):
        return self.wk.steps.get(self.step_id).rendezvous.recv(key, timeout)

    def recv_async(self, key, cb):
        self.wk.steps.get(self.step_id).rendezvous.recv_async(key, cb)

    def abort(self, err):
        self.wk.steps.get(self.step_id).abort(err)


@pytest.fixture(params=["local", "remote"])
def pair(request):
    if request.param == "local":
        yield LocalPair()
        return
    cluster, servers = start_cluster(ps=1, workers=1)
    try:
        yield RemotePair(servers)
    finally:
        for s in servers.values():
            s.stop(0)


def test_send_then_recv_and_recv_then_send(pair):
    k1, k2 = pair.key("a"), pair.key("b")
    pair.send(k1, np.arange(3.0))
    assert pair.recv(k1, 10).tolist() == [0.0, 1.0, 2.0]
    got = []
    t = threading.Thread(target=lambda: got.append(pair.recv(k2, 10)))
    t.start()
    pair.send(k2, np.float32(5))
    t.join(10)
    assert got == [5.0]


def test_recv_async_calls_back_once_the_value_arrives(pair):
    k = pair.key("c")
    done = threading.Event()
    box = []
    pair.recv_async(k, lambda v, e: (box.append((v, e)), done.set()))
    pair.send(k, np.ones([2, 2], np.float32))
    assert done.wait(10)
    value, err = box[0]
    assert err is None and value.shape == (2, 2)


def test_a_timeout_is_deadline_exceeded(pair):
    with pytest.raises(errors.DeadlineExceededError):
        pair.recv(pair.key("never"), 0.2)


def test_abort_reaches_every_waiter_with_the_error(pair):
    k = pair.key("d")
    box = []
    done = threading.Event()
    pair.recv_async(k, lambda v, e: (box.append(e), done.set()))
    pair.abort(errors.InvalidArgumentError(None, None, "the first error"))
    assert done.wait(10)
    assert isinstance(box[0], errors.InvalidArgumentError) and "the first error" in str(box[0])
    with pytest.raises(errors.InvalidArgumentError, match="the first error"):
        pair.recv(pair.key("e"), 5)


def test_a_key_with_a_stale_incarnation_is_refused():
    cluster, servers = start_cluster(ps=1, workers=1)
    try:
        pair = RemotePair(servers)
        stale = create_key(B, pair.inc ^ 0x1234, A, "x")
        with pytest.raises(errors.AbortedError, match="has restarted"):
            pair.recv(stale, 10)
    finally:
        for s in servers.values():
            s.stop(0)


def test_partitions_of_one_step_meet_in_any_order_across_devices():
    """Cross-device edges in both directions (a -> b -> a) run without deadlock."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/cpu:1"):
            a = x * 2.0
        b = a + 1.0
        with tf.device("/cpu:1"):
            c = b * 3.0
        d = c - x
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            for _ in range(20):
                assert sess.run(d, {x: [1.0, 2.0, 3.0]}).tolist() == [8.0, 13.0, 18.0]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=2)) as sess:
            assert sess.run(d, {x: [1.0, 2.0, 3.0]}).tolist() == [8.0, 13.0, 18.0]


def test_a_withdrawn_async_receive_leaves_the_value_for_a_later_receive():
    table = LocalRendezvous()
    k = create_key(A, 1, B, "w")
    got = []

    def cb(v, e):
        got.append(v)

    table.recv_async(k, cb)
    assert table.cancel_recv(k, cb) and not table.cancel_recv(k, cb)
    table.send(k, 7)
    assert got == [] and table.recv(k, 1) == 7
    table.recv_async(k, cb)
    table.send(k, 8)
    assert got == [8] and not table.cancel_recv(k, cb)  # already called back

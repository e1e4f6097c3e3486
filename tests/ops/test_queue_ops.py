"""Queues: FIFO / padding / random-shuffle / priority order, close semantics, blocking with deadlines and
cancellation, sharing by shared_name. Expected orders and messages were checked with TensorFlow 2.21."""

import threading
import time

import numpy as np
import pytest

import sparseflow as tf

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _poll(predicate, timeout=20.0):
    """Waits (polling) until ``predicate()``; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


class _Background:
    """Runs ``fn`` in a thread and keeps its result or exception."""

    def __init__(self, fn):
        self.result = self.error = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except BaseException as e:  # noqa: BLE001 - inspected by the test
            self.error = e

    def join(self):
        self.thread.join(20)
        assert not self.thread.is_alive(), "background run did not finish"
        return self


def _resource(sess, name):
    return sess.devices.resources(DEVICE).lookup("", name)


def test_fifo_order_names_and_static_shapes():
    q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]])
    enq = q.enqueue([1, [1.0, 2.0]])
    enq_many = q.enqueue_many([[2, 3], [[3.0, 4.0], [5.0, 6.0]]])
    one, many, up_to = q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(5)
    assert (q.name, q.queue_ref.op.type, q.queue_ref.dtype) == ("fifo_queue", "FIFOQueueV2", tf.resource)
    assert (enq.name, enq.type, enq_many.name) == ("fifo_queue_enqueue", "QueueEnqueueV2", "fifo_queue_EnqueueMany")
    assert one[0].name == "fifo_queue_Dequeue:0" and one[1].shape.as_list() == [2]
    assert many[1].shape.as_list() == [2, 2] and up_to[1].shape.as_list() == [None, 2]
    assert q.size().dtype == tf.int32 and q.size().name == "fifo_queue_Size_1:0"
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(enq_many)
        assert sess.run(q.size()) == 3
        first = sess.run(one)
        assert first[0] == 1 and first[1].tolist() == [1.0, 2.0]
        ints, floats = sess.run(many)
        assert ints.tolist() == [2, 3] and floats.tolist() == [[3, 4], [5, 6]]


def test_names_make_elements_dicts():
    q = tf.FIFOQueue(4, [tf.int32, tf.string], shapes=[[], []], names=["id", "word"])
    with tf.Session() as sess:
        sess.run(q.enqueue({"word": "a", "id": 1}))
        sess.run(q.enqueue_many({"id": [2, 3], "word": ["b", "c"]}))
        assert sess.run(q.dequeue()) == {"id": 1, "word": b"a"}
        got = sess.run(q.dequeue_many(2))
        assert got["id"].tolist() == [2, 3] and got["word"].tolist() == [b"b", b"c"]
        assert all(type(w) is bytes for w in got["word"])  # not 0-d arrays inside an object array
    with pytest.raises(ValueError, match="must enqueue a dictionary"):
        q.enqueue([1, "x"])
    with pytest.raises(ValueError, match="do not match names"):
        q.enqueue({"id": 1})


def test_close_refuses_enqueues_then_drains_then_out_of_range():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    fill, close = q.enqueue_many([[1, 2, 3]]), q.close()
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(close)
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(q.enqueue(4))
        with pytest.raises(tf.errors.OutOfRangeError, match=r"insufficient elements \(requested 4, current size 3\)"):
            sess.run(q.dequeue_many(4))
        assert sess.run(q.size()) == 3  # a failed dequeue_many gives its elements back
        assert sess.run(q.dequeue()) == 1
        assert sess.run(q.dequeue_up_to(5)).tolist() == [2, 3]
        with pytest.raises(tf.errors.OutOfRangeError, match="fifo_queue_DequeueUpTo"):
            sess.run(q.dequeue_up_to(5))
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 1, current size 0"):
            sess.run(q.dequeue())


def test_dequeue_many_needs_shapes_and_shape_errors_name_the_component():
    q = tf.FIFOQueue(10, tf.float32)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have specified shapes"):
            sess.run(q.dequeue_many(2))
        assert sess.run(q.dequeue()) == 1.0
    p = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
    bad = p.enqueue([tf.placeholder_with_default([[1]], None)])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"component 0. Expected \[\?\], got \[1,1\]"):
            sess.run(bad)
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.int32, shapes=[[None]])


def test_dequeue_waiting_past_the_deadline_names_the_op():
    q = tf.FIFOQueue(3, tf.float32)
    d = q.dequeue(name="next_example")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            sess.run(d, options=tf.RunOptions(timeout_in_ms=100))
    msg = str(info.value)
    assert "next_example" in msg and "QueueDequeueV2" in msg and "timeout_in_ms" in msg
    config = tf.ConfigProto(operation_timeout_in_ms=100)
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="next_example"):
            sess.run(d)
        sess.run(q.enqueue(5.0))
        assert sess.run(d) == 5.0


def test_session_close_from_another_thread_cancels_a_blocked_dequeue():
    q = tf.FIFOQueue(3, tf.float32, shared_name="waiting")
    d = q.dequeue()
    sess = tf.Session()
    sess.run(q.size())  # creates the queue resource
    waiter = _Background(lambda: sess.run(d))
    queue = _resource(sess, "waiting")
    _poll(lambda: len(queue._dequeue_line) == 1)
    sess.close()
    assert isinstance(waiter.join().error, tf.errors.CancelledError)
    assert "fifo_queue_Dequeue" in str(waiter.error)


def test_blocked_enqueue_is_cancelled_by_close_with_cancel_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]], shared_name="full")
    second = q.enqueue(2)
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        blocked = _Background(lambda: sess.run(second))
        queue = _resource(sess, "full")
        _poll(lambda: len(queue._enqueue_line) == 1)
        sess.run(q.close(cancel_pending_enqueues=True))
        assert isinstance(blocked.join().error, tf.errors.CancelledError)
        assert "cancel_pending_enqueues" in str(blocked.error)
        assert sess.run(q.dequeue()) == 1


def test_close_without_cancel_lets_pending_enqueues_finish():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]], shared_name="full2")
    second = q.enqueue(2)
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        pending = _Background(lambda: sess.run(second))
        queue = _resource(sess, "full2")
        _poll(lambda: len(queue._enqueue_line) == 1)
        sess.run(q.close())
        assert sess.run(q.dequeue_many(2)).tolist() == [1, 2]
        assert pending.join().error is None


def test_batches_larger_than_the_capacity_flow_through():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    producer_op, consumer_op = q.enqueue_many([[1, 2, 3, 4, 5]]), q.dequeue_many(5)
    with tf.Session() as sess:
        producer = _Background(lambda: sess.run(producer_op))
        assert sess.run(consumer_op).tolist() == [1, 2, 3, 4, 5]
        assert producer.join().error is None


def test_blocked_dequeue_wakes_on_enqueue_from_another_thread():
    q = tf.FIFOQueue(3, tf.int64, shapes=[[]])
    d = q.dequeue()
    with tf.Session() as sess:
        waiter = _Background(lambda: sess.run(d))
        sess.run(q.enqueue(np.int64(42)))
        assert waiter.join().result == 42


def test_padding_queue_pads_each_batch_to_its_longest_element():
    q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None], []])
    seq = tf.placeholder(tf.int32, [None])
    word = tf.placeholder(tf.string, [])
    enq = q.enqueue([seq, word])
    many = q.dequeue_many(2)
    assert many[0].shape.as_list() == [2, None]
    with tf.Session() as sess:
        for s, w in (([1, 2, 3], "a"), ([4], "b"), ([], "c")):
            sess.run(enq, {seq: s, word: w})
        first = sess.run(q.dequeue())
        assert first[0].tolist() == [1, 2, 3] and first[1] == b"a"
        padded, words = sess.run(many)
        assert padded.tolist() == [[4], [0]] and words.tolist() == [b"b", b"c"]
        assert all(type(w) is bytes for w in words)
    strings = tf.PaddingFIFOQueue(5, tf.string, shapes=[[None]])
    with tf.Session() as sess:
        sess.run(strings.enqueue([["x", "y"]]))
        sess.run(strings.enqueue([["z"]]))
        assert sess.run(strings.dequeue_many(2)).tolist() == [[b"x", b"y"], [b"z", b""]]
    with pytest.raises(ValueError, match="list of shapes must be provided"):
        tf.PaddingFIFOQueue(3, tf.int32, shapes=None)


@pytest.mark.parametrize("graph_seed, op_seed, expected", [
    # TensorFlow 2.21's dequeue orders for the same seeds.
    (None, 7, ([7, 1, 5], [6, 4, 3], [2, 8, 103, 9], [0, 102, 101, 100])),
    (3, None, ([1, 9, 2], [3, 6, 7], [8, 5, 4, 100], [101, 103, 102, 0])),
    (3, 7, ([6, 1, 5], [3, 4, 0], [9, 100, 101, 102], [103, 8, 2, 7])),
])
def test_random_shuffle_order_with_seeds_is_tensorflows(graph_seed, op_seed, expected):
    if graph_seed is not None:
        tf.set_random_seed(graph_seed)
    q = tf.RandomShuffleQueue(20, 2, tf.int32, shapes=[[]], seed=op_seed)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(10))]))
        first = [int(sess.run(q.dequeue())) for _ in range(3)]
        second = sess.run(q.dequeue_many(3)).tolist()
        sess.run(q.enqueue_many([list(range(100, 104))]))
        third = sess.run(q.dequeue_many(4)).tolist()
        sess.run(q.close())
        rest = sess.run(q.dequeue_up_to(10)).tolist()  # min_after_dequeue no longer holds once closed
    assert (first, second, third, rest) == tuple(expected)


def test_random_shuffle_keeps_min_after_dequeue_until_closed():
    q = tf.RandomShuffleQueue(20, 5, tf.int32, shapes=[[]], seed=1)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(6))]))
        first = int(sess.run(q.dequeue()))
        with pytest.raises(tf.errors.DeadlineExceededError, match="RandomShuffleQueue"):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=50))
        assert sess.run(q.size()) == 5
        sess.run(q.close())
        rest = sess.run(q.dequeue_many(5)).tolist()
        assert sorted([first] + rest) == list(range(6))


def test_random_shuffle_seed_attrs_for_shared_queues():
    tf.set_random_seed(3)
    shared = tf.RandomShuffleQueue(10, 0, tf.int32, shapes=[[]], shared_name="sh")
    assert (shared.queue_ref.op.get_attr("seed"), shared.queue_ref.op.get_attr("seed2")) == (3, 1089868587)
    with pytest.raises(tf.errors.InvalidArgumentError, match="min_after_dequeue"):
        with tf.Session() as sess:
            sess.run(tf.RandomShuffleQueue(3, 3, tf.int32).size())


def test_priority_queue_dequeues_lowest_priority_first():
    q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    assert q.dtypes == [tf.int64, tf.string]
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[5, 1, 3, 1], ["e", "a", "c", "a2"]]))
        assert sess.run(q.dequeue()) == [1, b"a"]
        priorities, values = sess.run(q.dequeue_many(2))
        assert priorities.tolist() == [1, 3] and values.tolist() == [b"a2", b"c"]
        sess.run(q.close())
        assert sess.run(q.dequeue_up_to(4))[1].tolist() == [b"e"]
        with pytest.raises(tf.errors.OutOfRangeError, match="PriorityQueue"):
            sess.run(q.dequeue_up_to(2))


def test_queues_with_one_shared_name_are_one_queue():
    a = tf.FIFOQueue(5, tf.int32, shared_name="shq", name="a")
    b = tf.FIFOQueue(5, tf.int32, shared_name="shq", name="b")
    other_capacity = tf.FIFOQueue(6, tf.int32, shared_name="shq", name="c")
    other_type = tf.FIFOQueue(5, tf.float32, shared_name="shq", name="d")
    private = tf.FIFOQueue(5, tf.int32, name="e")
    with tf.Session() as sess:
        sess.run(a.enqueue(7))
        assert sess.run(b.dequeue()) == 7
        sess.run(private.enqueue(1))
        assert sess.run(a.size()) == 0
        with pytest.raises(tf.errors.InvalidArgumentError, match="capacity 5 but requested capacity was 6") as info:
            sess.run(other_capacity.size())
        assert "'c'" in str(info.value)  # the error names the op that asked for the queue
        with pytest.raises(tf.errors.InvalidArgumentError, match="component types int32 but requested"):
            sess.run(other_type.size())


def test_a_queue_lives_across_runs_and_is_private_to_its_session():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(q.enqueue(1))
        assert s1.run(q.size()) == 1 and s2.run(q.size()) == 0


def test_queue_ops_have_no_gradient():
    q = tf.FIFOQueue(5, tf.float32, shapes=[[]])
    x = tf.constant(2.0)
    enq = q.enqueue(x * 3.0)
    y = q.dequeue()
    assert enq.type == "QueueEnqueueV2"
    assert tf.gradients(y * 2.0, [x]) == [None]

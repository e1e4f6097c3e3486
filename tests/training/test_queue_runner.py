"""QueueRunner, start_queue_runners and the Coordinator: pipelines filled by threads, closing the queue
at the end of the input, error reporting, clean stops, MetaGraphDef round trips, monitored sessions."""

import threading
import time

import pytest

import sparseflow as tf
from sparseflow._src.framework.proto.queue_runner_pb2 import QueueRunnerDef


def _poll(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


def _counting_pipeline(limit, capacity=4):
    """A queue filled by a runner with 1, 2, ..., limit; then the runner's input ends."""
    counter = tf.Variable(0, dtype=tf.int64, name="counter")
    q = tf.FIFOQueue(capacity, tf.int64, shapes=[[]])
    value = counter.count_up_to(limit) + 1  # OutOfRangeError once counter reached the limit
    qr = tf.train.QueueRunner(q, [q.enqueue(value)])
    tf.train.add_queue_runner(qr)
    return counter, q, qr


def test_a_runner_fills_the_queue_and_closes_it_at_the_end_of_its_input():
    counter, q, qr = _counting_pipeline(limit=10)
    batch = q.dequeue_up_to(3)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [qr] and qr.name == q.name
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 2  # the enqueue thread and the one that cancels on stop
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.extend(sess.run(batch).tolist())
        assert got == list(range(1, 11))
        coord.request_stop()
        coord.join(threads)
        assert sess.run(q.is_closed())


def test_the_last_of_several_threads_closes_the_queue():
    a = tf.Variable(0, dtype=tf.int64)
    b = tf.Variable(100, dtype=tf.int64)
    q = tf.FIFOQueue(3, tf.int64, shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue(a.count_up_to(5)), q.enqueue(b.count_up_to(103))])
    batch = q.dequeue_up_to(100)
    with tf.Session() as sess:
        sess.run([a.initializer, b.initializer])
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        assert qr.create_threads(sess, coord=coord) == []  # already running in this session
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.extend(sess.run(batch).tolist())
        assert sorted(got) == [0, 1, 2, 3, 4, 100, 101, 102]
        coord.request_stop()
        coord.join(threads)


def test_an_enqueue_error_is_reported_to_the_coordinator():
    x = tf.placeholder_with_default(-1.0, [])
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    with tf.control_dependencies([tf.Assert(x > 0.0, ["x must be positive"])]):
        bad = q.enqueue(x)
    qr = tf.train.QueueRunner(q, [bad])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="x must be positive"):
            coord.join(threads)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the thread re-raises
def test_without_a_coordinator_errors_are_kept_in_exceptions_raised():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    closed = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue(closed.dequeue())],
                              queue_closed_exception_types=(tf.errors.CancelledError,))
    with tf.Session() as sess:
        sess.run(closed.close())
        (t,) = qr.create_threads(sess, start=True)
        t.join(20)
        assert len(qr.exceptions_raised) == 1
        assert isinstance(qr.exceptions_raised[0], tf.errors.OutOfRangeError)
    with pytest.raises(TypeError, match="must be a tuple of tf.error types"):
        tf.train.QueueRunner(q, [q.enqueue(1.0)], queue_closed_exception_types=[tf.errors.OutOfRangeError])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        tf.train.QueueRunner(q, [])


def test_request_stop_unblocks_a_runner_waiting_on_a_full_queue():
    counter, q, qr = _counting_pipeline(limit=1000, capacity=2)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        _poll(lambda: sess.run(q.size()) == 2)  # full: the enqueue thread now waits for room
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=20)  # the cancel op ended the wait; no error re-raised
        assert not any(t.is_alive() for t in threads)
        assert sess.run(q.dequeue_many(2)).tolist() == [1, 2]


def test_coordinator_keeps_only_the_error_that_caused_the_stop():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.request_stop(ValueError("a consequence of stopping"))
    coord.join([])  # nothing to re-raise
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("the cause"))
    coord.request_stop(RuntimeError("later"))
    with pytest.raises(ValueError, match="the cause"):
        coord.join([])


def test_start_queue_runners_needs_a_session():
    _counting_pipeline(limit=3)
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="must be a `tf.Session`"):
        tf.train.start_queue_runners(sess=object())
    with tf.Session() as sess:
        threads = tf.train.start_queue_runners(coord=tf.train.Coordinator(), start=False)  # the default session
        assert len(threads) == 2 and not any(t.is_alive() for t in threads)
        del sess


def test_queue_runner_def_round_trip_and_meta_graph_export(tmp_path):
    counter, q, qr = _counting_pipeline(limit=4)
    d = qr.to_proto()
    assert isinstance(d, QueueRunnerDef)
    assert (d.queue_name, list(d.enqueue_op_name), list(d.queue_closed_exception_types)) == (
        "fifo_queue", ["fifo_queue_enqueue"], [tf.errors.OUT_OF_RANGE])
    back = tf.train.QueueRunner.from_proto(d)
    assert back.enqueue_ops[0] is qr.enqueue_ops[0] and back.cancel_op is qr.cancel_op
    path = str(tmp_path / "m.meta")
    tf.train.export_meta_graph(filename=path)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path)
        (imported,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert imported.name == "fifo_queue" and imported.enqueue_ops[0].name == "fifo_queue_enqueue"
        g = tf.get_default_graph()
        with tf.Session() as sess:
            sess.run(g.get_operation_by_name("counter/Assign"))
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            dequeue = g.get_tensor_by_name("fifo_queue:0")
            assert dequeue.dtype == tf.resource
            coord.request_stop()
            coord.join(threads)


def test_monitored_session_starts_the_runners_and_stops_them_on_close():
    counter, q, qr = _counting_pipeline(limit=10 ** 6, capacity=3)
    x = q.dequeue()
    with tf.train.MonitoredSession() as sess:
        assert [sess.run(x) for _ in range(3)] == [1, 2, 3]
        threads = [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread-fifo_queue")]
        assert len(threads) == 2
    for t in threads:
        t.join(20)
    assert not any(t.is_alive() for t in threads)
    assert tf.train.start_queue_runners(sess=sess) == []  # a monitored session starts its own


def test_monitored_session_ends_quietly_when_the_input_ends():
    counter, q, qr = _counting_pipeline(limit=5)
    batch = q.dequeue_many(2)
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.extend(sess.run(batch).tolist())
    assert seen == [1, 2, 3, 4]

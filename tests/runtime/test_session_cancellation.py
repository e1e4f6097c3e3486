"""Session.close() from another thread cancels the session's steps in flight (kernels blocked on a
queue or an accumulator raise CancelledError promptly), with every executor."""

import sys
import threading
import time

import pytest

import sparseflow as tf


def _poll(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


def _blocked_in_a_kernel():
    """Some thread waits in a blocking kernel (kernels/blocking.py wait_until)."""
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code.co_name == "wait_until" and frame.f_code.co_filename.endswith("blocking.py"):
                return True
            frame = frame.f_back
    return False


@pytest.mark.parametrize("config", [None, tf.ConfigProto(inter_op_parallelism_threads=2),
                                    tf.ConfigProto(operation_timeout_in_ms=60000)],
                         ids=["sequential", "parallel", "traced-with-timeout"])
def test_close_cancels_a_step_blocked_in_take_grad(config):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    take = acc.take_grad(3) * 2.0
    sess = tf.Session(config=config)
    errors = []

    def run():
        try:
            sess.run(take)
        except Exception as e:  # noqa: BLE001 - inspected below
            errors.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    _poll(lambda: len(sess._master.live_steps) == 1 and _blocked_in_a_kernel())
    sess.close()
    t.join(20)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], tf.errors.CancelledError), errors
    assert "ResourceAccumulatorTakeGradient" in str(errors[0])
    assert not sess._master.live_steps
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(take)


def test_finished_and_failed_steps_are_forgotten():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue(1.0))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(2), options=tf.RunOptions(timeout_in_ms=20))
        assert not sess._master.live_steps
        assert sess.run(q.size()) == 1

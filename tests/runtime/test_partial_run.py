"""Partial runs of a local session: each op of the step runs once, however the step is staged (the
cluster's masters: tests/distributed/tf1_programs/d05_partial_run.py, checked against TensorFlow)."""

import numpy as np
import pytest

import sparseflow as tf


def _counting_graph():
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    counter = tf.Variable(0.0, name="counter")
    bump = tf.assign_add(counter, 1.0)  # needs no feed: runs when the step starts
    with tf.control_dependencies([bump]):
        after_bump = tf.identity(a * 2.0, name="after_bump")  # control edge to an op of an earlier stage
    total = tf.add(after_bump, b, name="total")
    return a, b, counter, after_bump, total


def test_each_op_runs_once_whatever_the_stages():
    with tf.Graph().as_default():
        a, b, counter, after_bump, total = _counting_graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            h = sess.partial_run_setup([after_bump, total, a], [a, b])
            assert sess.run(counter) == 1.0  # the feed-independent update ran at setup, once
            assert sess.partial_run(h, after_bump, feed_dict={a: 3.0}) == 6.0
            assert sess.partial_run(h, a) == 3.0  # a fed tensor may be fetched
            assert sess.partial_run(h, total, feed_dict={b: 1.0}) == 7.0
            assert sess.run(counter) == 1.0


def test_stages_are_compiled_once_for_a_step_repeated_in_a_loop():
    with tf.Graph().as_default():
        a, b, counter, after_bump, total = _counting_graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sizes = []
            for i in range(4):
                h = sess.partial_run_setup([after_bump, total], [a, b])
                assert sess.partial_run(h, after_bump, feed_dict={a: float(i)}) == 2.0 * i
                assert sess.partial_run(h, total, feed_dict={b: 1.0}) == 2.0 * i + 1.0
                sizes.append(len(sess._master._graphs))
            assert sizes[1] == sizes[-1]
            assert sess.run(counter) == 4.0
            assert not sess._master._partial_runs  # finished runs are forgotten


def test_a_failing_stage_ends_the_partial_run_with_the_ops_error():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.placeholder(tf.float32, [None], name="y")
        checked = tf.debugging.check_numerics(x, "x has a NaN")
        out = checked + y
        with tf.Session() as sess:
            h = sess.partial_run_setup([checked, out], [x, y])
            with pytest.raises(tf.errors.InvalidArgumentError, match="x has a NaN"):
                sess.partial_run(h, checked, feed_dict={x: np.array([np.nan], np.float32)})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
                sess.partial_run(h, out, feed_dict={y: [1.0]})


def test_bad_feeds_and_fetches_are_refused_before_anything_runs():
    with tf.Graph().as_default():
        a, b, counter, after_bump, total = _counting_graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            h = sess.partial_run_setup([total], [a, b])
            with pytest.raises(ValueError, match="shape"):
                sess.partial_run(h, total, feed_dict={a: [1.0, 2.0], b: 1.0})
            with pytest.raises(tf.errors.InvalidArgumentError, match="can't be computed"):
                sess.partial_run(h, total, feed_dict={a: 1.0})
            with pytest.raises(RuntimeError, match="target_list"):
                sess.partial_run(h, total.op, feed_dict={a: 1.0, b: 2.0})
            assert sess.partial_run(h, total, feed_dict={a: 1.0, b: 2.0}) == 4.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
                sess.partial_run("no-such-handle", total)

"""``tf.test.TestCase``: sessions, default graph and seed per test, and TensorFlow's assertion rules."""

import unittest

import numpy as np
import pytest

import sparseflow as tf


def _run(case_cls, name):
    result = unittest.TestResult()
    case_cls(name).run(result)
    return result


class _Cases(tf.test.TestCase):
    __test__ = False  # run by the tests below, not collected on its own

    def test_sessions(self):
        x = tf.constant([1.0, 2.0])
        with self.cached_session() as sess:
            first = sess
            self.assertIs(tf.get_default_session(), sess)
            self.assertAllClose(self.evaluate(x * 2), [2.0, 4.0])
        with self.cached_session() as sess:
            self.assertIs(sess, first)
        with self.session() as sess:
            self.assertIsNot(sess, first)
            self.assertAllEqual(sess.run(tf.constant([b"a", b"b"])), [b"a", b"b"])
        with self.test_session() as sess:
            self.assertIs(sess, first)

    def test_fresh_graph_with_default_seed(self):
        self.assertEqual(tf.get_default_graph().seed, 87654321)
        self.assertEqual(len(tf.get_default_graph().get_operations()), 0)
        tf.constant(1)

    def test_nested_all_close_fails(self):
        self.assertAllClose({"a": [1.0, 2.0], "b": (3.0, np.array([4.0]))},
                            {"a": [1.0, 2.0 + 1e-7], "b": (3.0, np.array([4.0]))})
        self.assertAllClose([1.0, 2.0], [1.0, 2.1])

    def test_all_equal_shape(self):
        self.assertAllEqual([[1, 2]], [1, 2])

    def test_op_error(self):
        with self.cached_session():
            with self.assertRaisesOpError("Incompatible shapes|must be"):
                self.evaluate(tf.placeholder_with_default([1, 2], [None]) + tf.constant([1, 2, 3]))


def test_sessions_are_default_and_cached():
    assert _run(_Cases, "test_sessions").wasSuccessful()


def test_each_test_gets_a_fresh_graph_with_tensorflows_default_seed():
    assert _run(_Cases, "test_fresh_graph_with_default_seed").wasSuccessful()
    assert _run(_Cases, "test_fresh_graph_with_default_seed").wasSuccessful()


def test_all_close_recurses_and_reports_the_mismatch():
    result = _run(_Cases, "test_nested_all_close_fails")
    assert len(result.failures) == 1 and "not close" in result.failures[0][1]


def test_all_equal_checks_shapes():
    result = _run(_Cases, "test_all_equal_shape")
    assert len(result.failures) == 1 and "Shape mismatch" in result.failures[0][1]


def test_assert_raises_op_error():
    assert _run(_Cases, "test_op_error").wasSuccessful()


def test_tolerance_rule_is_tensorflows():
    case = tf.test.TestCase()
    with pytest.raises(AssertionError):  # |a - b| = 2e-4 > atol + rtol * |b| = 1.01e-4
        case.assertAllClose(100.0, 100.0002, rtol=1e-6, atol=1e-6)
    case.assertAllClose(100.0, 100.00009, rtol=1e-6, atol=1e-6)
    case.assertNear(1.0, 1.05, 0.1)
    case.assertAllInRange([0, 0.5, 1], 0, 1)
    with pytest.raises(AssertionError):
        case.assertAllInRange([0, 1], 0, 1, open_upper_bound=True)
    assert not tf.test.is_gpu_available() and tf.test.gpu_device_name() == ""

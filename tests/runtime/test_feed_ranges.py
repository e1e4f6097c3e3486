"""A fed value is converted to the placeholder's dtype only when every element fits: nothing is
wrapped, truncated or made infinite."""

import numpy as np
import pytest

import sparseflow as tf


@pytest.mark.parametrize("dtype, value, why", [
    (tf.int32, np.array([2**40], np.int64), r"the value 1099511627776 is out of the range of int32"),
    (tf.int32, 2**40, r"the value 1099511627776 is out of the range of int32"),
    (tf.uint8, -1, r"the value -1 is out of the range of uint8 \[0, 255\]"),
    (tf.uint8, [300], r"the value 300 is out of the range of uint8"),
    (tf.uint8, np.array([1, 300]), r"the value 300 is out of the range of uint8"),
    (tf.int64, np.array([2**64 - 1], np.uint64), r"out of the range of int64"),
    (tf.uint64, np.array([-1]), r"the value -1 is out of the range of uint64"),
    (tf.int32, [1.5], r"the value 1.5 is not an integer"),
    (tf.int64, np.array([np.nan]), r"is not an integer"),
    (tf.int32, np.array([3e9]), r"out of the range of int32"),
    (tf.bool, [2], r"the value 2 is not 0 or 1"),
    (tf.float32, np.array([1e300]), r"beyond the range of float32 \(it would become inf\)"),
    (tf.float16, [1e6], r"beyond the range of float16"),
    (tf.int32, 2**70, r"too large"),
])
def test_values_that_do_not_fit_are_refused_naming_the_tensor(dtype, value, why):
    x = tf.placeholder(dtype, None, name="x")
    y = tf.identity(x)
    with tf.Session() as sess, pytest.raises(TypeError, match=r"Cannot feed value .* to Tensor 'x:0'.*" + why):
        sess.run(y, {x: value})


@pytest.mark.parametrize("dtype, value, expect", [
    (tf.int32, np.arange(3), [0, 1, 2]), (tf.int32, np.array([1.0, -2.0]), [1, -2]), (tf.uint8, [0, 255], [0, 255]),
    (tf.int64, np.array([2**63 - 1], np.uint64), [2**63 - 1]), (tf.bool, [0, 1], [False, True]),
    (tf.float32, [1, 2], [1.0, 2.0]), (tf.float32, np.array([np.inf, -np.inf]), [np.inf, -np.inf]),
    (tf.int8, True, 1), (tf.float64, np.float32(0.5), 0.5),
])
def test_values_that_fit_are_converted(dtype, value, expect):
    x = tf.placeholder(dtype, None, name="x")
    with tf.Session() as sess:
        got = sess.run(tf.identity(x), {x: value})
    assert np.asarray(got).tolist() == expect

"""tf.check_numerics / tf.debugging.check_numerics / verify_tensor_all_finite: values pass through,
a NaN or an infinity fails the run naming the message, and so does one in the gradient."""

import numpy as np
import pytest

import sparseflow as tf


@pytest.mark.parametrize("values, what", [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"),
                                          ([np.nan, -np.inf], "Inf and NaN")])
def test_check_numerics_refuses_nan_and_inf_with_the_message(values, what):
    x = tf.placeholder(tf.float32, [None])
    y = tf.debugging.check_numerics(x, "after layer 3")
    assert y.shape.as_list() == [None] and y.op.type == "CheckNumerics"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"after layer 3 : Tensor had {what} values"):
            sess.run(y, {x: values})


def test_the_gradient_is_checked_too():
    x = tf.placeholder(tf.float64, [2])
    y = tf.check_numerics(x, "sqrt input")
    (g,) = tf.gradients(tf.reduce_sum(tf.sqrt(y)), [x])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 4.0]}), [0.5, 0.25])
        with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient. sqrt input : Tensor had Inf"):
            sess.run(g, {x: [0.0, 4.0]})


def test_verify_tensor_all_finite_and_assert_all_finite():
    a = tf.verify_tensor_all_finite(tf.constant([1.0, np.inf]), "weights")
    b = tf.debugging.assert_all_finite(tf.constant([1.0, 2.0]), "ok")
    with tf.Session() as sess:
        assert sess.run(b).tolist() == [1.0, 2.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights : Tensor had Inf values"):
            sess.run(a)


def test_check_numerics_of_an_integer_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="floating-point tensor, got int32"):
        tf.check_numerics(tf.constant([1, 2]), "ints")


@pytest.mark.parametrize("module", ["ops.numerics_ops", "framework.tensor_proto", "framework.graph_io"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

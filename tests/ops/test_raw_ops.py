"""``tf.raw_ops``: every registered op type by TensorFlow's argument names, TensorFlow's result shapes."""

import doctest

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import registered_ops
from sparseflow._src.ops import raw_ops


def run(x):
    with tf.Session() as sess:
        return sess.run(x)


def test_docstring_example():
    result = doctest.testmod(raw_ops)
    assert result.attempted > 0 and result.failed == 0


def test_every_registered_op_is_there():
    assert set(dir(tf.raw_ops)) == set(registered_ops())
    assert tf.compat.v1.raw_ops.Sum is tf.raw_ops.Sum


def test_results_follow_tensorflow_conventions():
    single = tf.raw_ops.Neg(x=[1.0, -2.0])
    assert isinstance(single, tf.Tensor) and single.op.type == "Neg"
    parts = tf.raw_ops.Split(axis=0, value=[1, 2, 3, 4], num_split=2)  # one list output: a list
    assert isinstance(parts, list) and len(parts) == 2
    u = tf.raw_ops.UniqueWithCounts(x=[5, 5, 2])  # several outputs: a namedtuple by output names
    assert u._fields == ("y", "idx", "count")
    np.testing.assert_array_equal(run(u.count), [2, 1])
    assert isinstance(tf.raw_ops.NoOp(), tf.Operation)
    np.testing.assert_array_equal(run(parts[1]), [3, 4])


def test_tensorflow_api_names_of_renamed_arguments():
    x = tf.constant([[1, 2], [3, 4]])
    assert run(tf.raw_ops.Sum(input=x, axis=[0, 1])) == 10
    assert run(tf.raw_ops.ExpandDims(input=x, axis=0)).shape == (1, 2, 2)
    assert run(tf.raw_ops.Squeeze(input=[[1]], axis=[0])).shape == (1,)
    np.testing.assert_array_equal(run(tf.raw_ops.Select(condition=[True, False], x=[1, 2], y=[3, 4])), [1, 4])
    assert tf.raw_ops.Conj(input=tf.constant([1 + 2j])).op.type == "Conj"


def test_bad_calls_say_what_the_op_takes():
    with pytest.raises(TypeError, match="keyword arguments only"):
        tf.raw_ops.Neg([1.0])
    with pytest.raises(TypeError, match="missing required input.*y"):
        tf.raw_ops.Add(x=1.0)
    with pytest.raises(TypeError, match="unexpected argument.*bogus.*inputs \\(x, y\\)"):
        tf.raw_ops.Add(x=1.0, y=2.0, bogus=3)
    with pytest.raises(AttributeError, match="not registered"):
        tf.raw_ops.NoSuchOp  # noqa: B018

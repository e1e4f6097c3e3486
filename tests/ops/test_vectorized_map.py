"""tf.vectorized_map: values and static shapes as TensorFlow 2.21 gives them (recorded with tf.compat.v1)."""

import pytest

import sparseflow as tf


def test_vectorized_map_matches_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        w = tf.constant([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])
        vm = tf.vectorized_map(lambda r: tf.reduce_sum(r * r), x)
        vm2 = tf.vectorized_map(lambda t: (t[0] + 1, tf.cast(t[1], tf.float32) * 2),
                                (x, tf.constant([[1, 2, 3], [4, 5, 6]])))
        vm3 = tf.vectorized_map(lambda r: tf.matmul(tf.expand_dims(r, 0), w), x)
        assert vm.shape.as_list() == [2] and vm3.shape.as_list() == [2, 1, 2]
        assert sess.run(vm).tolist() == [5.25, 2.875]
        assert [a.tolist() for a in sess.run(vm2)] == [[[1.5, 0.0, 3.0], [2.5, 1.25, 0.25]],
                                                        [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]]
        got = sess.run(vm3)
        assert got.shape == (2, 1, 2)
        assert got.ravel().tolist() == pytest.approx([0.75, 1.7, -0.15, -0.25], rel=1e-6)


def test_vectorized_map_refuses_scalars():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank at least 1"):
            tf.vectorized_map(lambda r: r, tf.constant(1.0))

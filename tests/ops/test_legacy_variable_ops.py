"""tf.create_partitioned_variables and tf.batch_scatter_update; expected values recorded from
TensorFlow 2.21 (tf.compat.v1) on the same programs."""

import pytest

import sparseflow as tf


def test_create_partitioned_variables_names_shapes_and_slices_as_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        parts = tf.create_partitioned_variables([5, 4], [3, 1], tf.constant_initializer(2.5), name="pv")
        default = tf.create_partitioned_variables([6], [2], tf.ones_initializer())
        # TensorFlow 2.21: names, shapes and save-slice specs of the shards
        assert [(v.name, v.shape.as_list(), v._save_slice_info.spec) for v in parts] == [
            ("pv/part_0:0", [2, 4], "5 4 0,2:0,4"), ("pv/part_1:0", [2, 4], "5 4 2,2:0,4"),
            ("pv/part_2:0", [1, 4], "5 4 4,1:0,4")]
        assert [(v.name, v.shape.as_list()) for v in default] == [
            ("PartitionedVariable/part_0:0", [3]), ("PartitionedVariable/part_1:0", [3])]
        assert [v.name for v in tf.trainable_variables()] == [v.name for v in parts + default]
        sess.run(tf.global_variables_initializer())
        assert [a.tolist() for a in sess.run(parts)] == [[[2.5] * 4] * 2, [[2.5] * 4] * 2, [[2.5] * 4]]


def test_create_partitioned_variables_reuse_and_errors():
    with tf.Graph().as_default():
        first = tf.create_partitioned_variables([4], [2], tf.zeros_initializer(), name="r", trainable=False)
        again = tf.create_partitioned_variables([4], [2], tf.zeros_initializer(), name="r", reuse=True)
        assert [v.name for v in again] == [v.name for v in first]
        assert tf.trainable_variables() == []
        with pytest.raises(ValueError, match="must have the length"):
            tf.create_partitioned_variables([4, 2], [2], tf.zeros_initializer())
        with pytest.raises(ValueError, match="rank at least 1"):
            tf.create_partitioned_variables([], [], tf.zeros_initializer())
        with pytest.raises(ValueError, match="one dimension"):
            tf.create_partitioned_variables([4, 4], [2, 2], tf.zeros_initializer())


def test_batch_scatter_update_matches_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        r = tf.Variable([[1, 2, 3], [4, 5, 6]])
        r3 = tf.Variable(tf.reshape(tf.range(24.0), [2, 3, 4]))
        cases = [
            (r, [0], [[9, 9, 9]]),
            (r3, [[0, 2], [1, 1]], [[[1.0] * 4, [2.0] * 4], [[3.0] * 4, [4.0] * 4]]),
            (r3, [[[0, 3], [1, 2], [2, 2]], [[0, 0], [1, 1], [2, 0]]], tf.fill([2, 3, 2], -1.0)),
        ]
        outs = [tf.batch_scatter_update(ref, i, u) for ref, i, u in cases]
        got = []
        for out in outs:
            sess.run(tf.global_variables_initializer())
            got.append(sess.run(out).tolist())
    assert got == [  # TensorFlow 2.21
        [[9, 9, 9], [4, 5, 6]],
        [[[1.0, 1.0, 1.0, 1.0], [4.0, 5.0, 6.0, 7.0], [2.0, 2.0, 2.0, 2.0]],
         [[12.0, 13.0, 14.0, 15.0], [4.0, 4.0, 4.0, 4.0], [20.0, 21.0, 22.0, 23.0]]],
        [[[-1.0, 1.0, 2.0, -1.0], [4.0, -1.0, -1.0, 7.0], [8.0, 9.0, -1.0, 11.0]],
         [[-1.0, 13.0, 14.0, 15.0], [16.0, -1.0, 18.0, 19.0], [-1.0, 21.0, -1.0, 23.0]]],
    ]


def test_batch_scatter_update_refuses_scalar_indices():
    with tf.Graph().as_default():
        v = tf.Variable([1, 2, 3])
        with pytest.raises(ValueError, match="rank at least 1"):
            tf.batch_scatter_update(v, 1, 5)

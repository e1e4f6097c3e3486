"""The collective ops in a local session whose devices are the members (TF's names and attrs), their
shapes, repeated runs, and the error naming the op when a member does not take part."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow.distribute import collectives as C


def two_cpus():
    return tf.ConfigProto(device_count={"CPU": 2})


def test_v1_and_v2_ops_across_two_devices():
    with tf.Graph().as_default():
        outs = []
        for i in range(2):
            with tf.device(f"/cpu:{i}"):
                x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1))
                red = C.all_reduce(x, 2, 1, 1)
                mean = C.all_reduce_v2(x, 2, 1, 2, final_op="Div")
                gat = C.all_gather(x, 2, 1, 3)
                gat2 = C.all_gather_v2(x, 2, 1, 4)
                if i == 0:
                    b = C.broadcast_send(x, [2, 3], tf.float32, 2, 1, 5)
                    b2 = C.broadcast_send_v2(x, 2, 1, 6)
                else:
                    b = C.broadcast_recv([2, 3], tf.float32, 2, 1, 5)
                    b2 = C.broadcast_recv_v2(tf.constant([2, 3]), tf.float32, 2, 1, 6)
                outs.append([red, mean, gat, gat2, b, b2])
        assert outs[0][0].op.type == "CollectiveReduce" and outs[0][1].op.type == "CollectiveReduceV2"
        assert outs[0][0].op.get_attr("merge_op") == b"Add" and outs[0][0].op.get_attr("group_size") == 2
        assert outs[1][4].op.type == "CollectiveBcastRecv" and outs[1][5].op.type == "CollectiveBcastRecvV2"
        assert outs[0][0].shape.as_list() == [2, 3] and outs[0][2].shape.as_list() == [None, 3]
        assert outs[1][4].shape.as_list() == [2, 3] and outs[1][5].shape.as_list() == [2, 3]
        base = np.arange(6, dtype=np.float32).reshape(2, 3)
        with tf.Session(config=two_cpus()) as sess:
            for _ in range(3):  # the same ops every run: runs pair up by count
                got = sess.run(outs)
                for member in got:
                    np.testing.assert_array_equal(member[0], base * 3)
                    np.testing.assert_array_equal(member[1], base * 1.5)
                    np.testing.assert_array_equal(member[2], np.concatenate([base, base * 2]))
                    np.testing.assert_array_equal(member[3], np.concatenate([base, base * 2]))
                    np.testing.assert_array_equal(member[4], base)
                    np.testing.assert_array_equal(member[5], base)


def test_no_gradient_through_a_collective():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = C.all_reduce(x, 1, 1, 1)
        assert tf.gradients(tf.reduce_sum(y), x) == [None]


def test_a_group_of_one():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2]], dtype=tf.int64)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(C.all_reduce(x, 1, 3, 1, final_op="Div")), [[1, 2]])
            np.testing.assert_array_equal(sess.run(C.all_gather(x, 1, 3, 2)), [[1, 2]])


def test_a_missing_member_fails_the_op_within_its_timeout():
    with tf.Graph().as_default():
        y = C.all_reduce(tf.constant([1.0]), 2, 5, 1, timeout=0.5, name="lonely_reduce")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError, match="lonely_reduce") as e:
                sess.run(y)
        assert "1 of its 2 members" in str(e.value)


def test_bad_attrs_are_refused():
    with tf.Graph().as_default():
        with pytest.raises((ValueError, TypeError)):
            C.all_reduce(tf.constant([1.0]), 2, 1, 1, merge_op="Sum")

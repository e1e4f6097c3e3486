"""Session handles (tf.get_session_handle / get_session_tensor / delete_session_tensor): values and
errors as TensorFlow 2.21 gives them on the same program (recorded with tf.compat.v1)."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.runtime.session_handle import TensorHandle

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_handles_keep_values_across_runs_as_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        h = sess.run(tf.get_session_handle(a * 2))
        assert isinstance(h, TensorHandle)
        assert h.handle == str(h) == f"GetSessionHandle;0;{CPU0}"  # TensorFlow's handle for this program
        np.testing.assert_array_equal(h.eval(), [[2.0, 4.0], [6.0, 8.0]])
        holder, t = tf.get_session_tensor(h.handle, tf.float32)
        assert t.op.type == "GetSessionTensor" and t.device == CPU0 and holder.dtype == tf.string
        y = t + 1
        np.testing.assert_array_equal(sess.run(y, {holder: h.handle}), [[3.0, 5.0], [7.0, 9.0]])
        x = tf.placeholder(tf.float32)
        np.testing.assert_array_equal(sess.run(x * 10, {x: h}), [[20.0, 40.0], [60.0, 80.0]])  # a handle fed
        h2 = sess.run(tf.get_session_handle(y), {holder: h.handle})
        assert h2.handle == f"GetSessionHandle_1;1;{CPU0}"
        np.testing.assert_array_equal(h2.eval(), [[3.0, 5.0], [7.0, 9.0]])
        dholder, dop = tf.delete_session_tensor(h.handle)
        assert dop.type == "DeleteSessionTensor"
        sess.run(dop, {dholder: h.handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            sess.run(y, {holder: h.handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session store"):
            sess.run(dop, {dholder: h.handle})
        h2.delete()
        with pytest.raises(tf.errors.InvalidArgumentError):
            h2.eval()
        hs = sess.run(tf.get_session_handle(tf.constant(5)))
        assert hs.eval() == 5
        p, wrong = tf.get_session_tensor(hs.handle, tf.float32)
        with pytest.raises(tf.errors.InternalError, match="holds int32"):  # TensorFlow: InternalError too
            sess.run(wrong, {p: hs.handle})


def test_a_value_is_readable_from_the_next_run_on():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([1.0])
        h = tf.get_session_handle(x)
        same_run = tf.raw_ops.GetSessionTensor(handle=h, dtype=tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="this same run"):  # TensorFlow: the same error
            sess.run(same_run)


def test_handles_are_per_session_and_freed_on_close():
    with tf.Graph().as_default():
        v = tf.Variable([1, 2])
        get = tf.get_session_handle(v.read_value())
        with tf.Session() as sess:
            sess.run(v.initializer)
            h = sess.run(get)
            sess.run(v.assign([7, 8]))
            assert h.eval().tolist() == [1, 2]  # the value kept, not the variable's storage
            holder, t = tf.get_session_tensor(h.handle, tf.int32)
        with tf.Session() as other:
            with pytest.raises(tf.errors.InvalidArgumentError, match="another session"):
                other.run(t, {holder: h.handle})


def test_handle_arguments_are_checked():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="must be of type Tensor"):
            tf.get_session_handle([1, 2])
        with pytest.raises(ValueError, match="not a session tensor handle"):
            tf.get_session_tensor("bogus", tf.float32)
        with pytest.raises(ValueError, match="not a session tensor handle"):
            tf.delete_session_tensor("a;b")
        assert tf.get_session_handle(tf.constant(5), name="myh").name == "myh:0"

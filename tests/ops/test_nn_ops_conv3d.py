"""``tf.nn.conv3d`` / ``conv3d_transpose`` and their gradients give TensorFlow's values
(``conv3d_programs.py``, recorded in ``conv3d_expected.py``) and pass finite-difference checks."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.grad.grad_check import check_gradients
from tests.ops import conv3d_expected as expected
from tests.ops import conv3d_programs as programs


@pytest.fixture(scope="module")
def got():
    return programs.convolutions(tf)


@pytest.mark.parametrize("case", sorted(expected.CONVOLUTIONS))
def test_conv3d_matches_tensorflow(got, case):
    g, w = got[case], expected.CONVOLUTIONS[case]
    assert g["shape"] == w["shape"] and g["static_shape"] == w["static_shape"]
    np.testing.assert_allclose(g["y"], w["y"], rtol=1e-4, atol=1e-4)
    for key in ("y_sum", "grad_x_sum", "transpose_sum"):
        np.testing.assert_allclose(g[key], w[key], rtol=1e-4, atol=1e-3, err_msg=key)
    np.testing.assert_allclose(g["grad_f"], w["grad_f"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("data_format", ["NDHWC", "NCDHW"])
@pytest.mark.parametrize("padding,strides", [("SAME", [1, 2, 1]), ("VALID", [1, 1, 2])])
def test_conv3d_gradients_match_finite_differences(data_format, padding, strides):
    r = np.random.RandomState(1)
    shape = [1, 3, 4, 3, 2] if data_format == "NDHWC" else [1, 2, 3, 4, 3]

    def build(x, f):
        y = tf.nn.conv3d(x, f, strides=strides, padding=padding, data_format=data_format)
        return [y, tf.gradients(tf.reduce_sum(y * y), x)[0]]  # second order through the backprop ops

    check_gradients(build, [r.uniform(-1, 1, size=shape), r.uniform(-1, 1, size=[2, 2, 2, 2, 2])])


def test_ncdhw_equals_ndhwc_transposed():
    r = np.random.RandomState(2)
    x = r.uniform(-1, 1, size=[2, 4, 5, 6, 3]).astype(np.float32)
    f = r.uniform(-1, 1, size=[2, 3, 2, 3, 4]).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        a = sess.run(tf.nn.conv3d(x, f, strides=[1, 1, 2, 1, 1], padding="SAME"))
        b = sess.run(tf.nn.conv3d(x.transpose(0, 4, 1, 2, 3), f, strides=[1, 1, 1, 2, 1], padding="SAME",
                                  data_format="NCDHW"))
    np.testing.assert_allclose(a, b.transpose(0, 2, 3, 4, 1), rtol=1e-5, atol=1e-5)


def test_conv3d_rejects_batch_strides_and_bad_ranks():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="strides in the batch and depth"):
            tf.nn.conv3d(tf.zeros([1, 3, 3, 3, 1]), tf.zeros([1, 1, 1, 1, 1]), strides=[2, 1, 1, 1, 1], padding="SAME")
        with pytest.raises(ValueError):
            tf.nn.conv3d(tf.zeros([1, 3, 3, 1]), tf.zeros([1, 1, 1, 1, 1]), strides=[1, 1, 1, 1, 1], padding="SAME")

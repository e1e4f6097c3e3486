"""Conv2D (+ backprops, depthwise) and pooling against direct-loop NumPy references."""

import math

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def_library import apply_op

RNG = np.random.RandomState(2)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def pads(size, k, stride, dilation, padding, explicit=None):
    """(before, after, out) of one spatial dimension, as TensorFlow defines them."""
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return 0, 0, (size - eff) // stride + 1
    if padding == "SAME":
        out = math.ceil(size / stride)
        total = max((out - 1) * stride + eff - size, 0)
        return total // 2, total - total // 2, out
    lo, hi = explicit
    return lo, hi, (size + lo + hi - eff) // stride + 1


def conv_ref(x, f, strides, padding, dilations=(1, 1), explicit=((0, 0), (0, 0))):
    """Direct NHWC convolution: every output cell is a sum over its window."""
    n, h, w, c = x.shape
    kh, kw, _, co = f.shape
    t, b, oh = pads(h, kh, strides[0], dilations[0], padding, explicit[0])
    left, right, ow = pads(w, kw, strides[1], dilations[1], padding, explicit[1])
    xp = np.pad(x.astype(np.float64), ((0, 0), (t, b), (left, right), (0, 0)))
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for bb in range(kw):
                    cell = xp[:, i * strides[0] + a * dilations[0], j * strides[1] + bb * dilations[1], :]
                    out[:, i, j, :] += cell @ f[a, bb].astype(np.float64)
    return out


def conv_input_grad_ref(x_shape, f, dy, strides, padding):
    n, h, w, c = x_shape
    kh, kw, _, co = f.shape
    t, b, oh = pads(h, kh, strides[0], 1, padding)
    left, right, ow = pads(w, kw, strides[1], 1, padding)
    dxp = np.zeros((n, h + t + b, w + left + right, c))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for bb in range(kw):
                    dxp[:, i * strides[0] + a, j * strides[1] + bb, :] += dy[:, i, j, :] @ f[a, bb].T
    return dxp[:, t:t + h, left:left + w, :]


CASES = [  # (input shape, filter shape, strides, padding)
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "SAME"),
    ((2, 7, 6, 3), (3, 2, 3, 5), (2, 2), "SAME"),
    ((1, 8, 9, 2), (3, 3, 2, 3), (2, 3), "VALID"),
    ((3, 5, 5, 1), (1, 1, 1, 2), (1, 1), "VALID"),
    ((1, 4, 4, 2), (5, 5, 2, 2), (1, 1), "SAME"),
]


@pytest.mark.parametrize("in_shape,f_shape,strides,padding", CASES)
def test_conv2d_nhwc(in_shape, f_shape, strides, padding):
    x = RNG.randn(*in_shape).astype(np.float32)
    f = RNG.randn(*f_shape).astype(np.float32)
    y = tf.nn.conv2d(x, f, strides=[1, strides[0], strides[1], 1], padding=padding)
    ref = conv_ref(x, f, strides, padding)
    assert y.op.type == "Conv2D" and y.shape.as_list() == list(ref.shape)
    np.testing.assert_allclose(run(y), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("in_shape,f_shape,strides,padding", CASES[:3])
def test_conv2d_nchw_matches_nhwc(in_shape, f_shape, strides, padding):
    x = RNG.randn(*in_shape).astype(np.float64)
    f = RNG.randn(*f_shape).astype(np.float64)
    y = tf.nn.conv2d(x.transpose(0, 3, 1, 2), f, strides=list(strides), padding=padding, data_format="NCHW")
    ref = conv_ref(x, f, strides, padding).transpose(0, 3, 1, 2)
    assert y.op.get_attr("strides") == [1, 1, strides[0], strides[1]]
    assert y.shape.as_list() == list(ref.shape)
    np.testing.assert_allclose(run(y), ref, rtol=1e-10)


def test_conv2d_explicit_padding_and_dilations():
    x = RNG.randn(2, 6, 7, 2).astype(np.float32)
    f = RNG.randn(3, 2, 2, 3).astype(np.float32)
    explicit = ((1, 2), (0, 1))
    y = tf.nn.conv2d(x, f, strides=1, padding=[[0, 0], list(explicit[0]), list(explicit[1]), [0, 0]])
    assert y.op.get_attr("padding") in ("EXPLICIT", b"EXPLICIT")
    ref = conv_ref(x, f, (1, 1), "EXPLICIT", explicit=explicit)
    assert y.shape.as_list() == list(ref.shape)
    np.testing.assert_allclose(run(y), ref, rtol=1e-4, atol=1e-4)
    d = tf.nn.conv2d(x, f, strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1])
    ref = conv_ref(x, f, (1, 1), "SAME", dilations=(2, 2))
    assert d.shape.as_list() == list(ref.shape)
    np.testing.assert_allclose(run(d), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_int32_float16_and_empty_batch():
    x = RNG.randint(-3, 4, (1, 4, 4, 2)).astype(np.int32)
    f = RNG.randint(-3, 4, (2, 2, 2, 3)).astype(np.int32)
    got = run(tf.nn.conv2d(x, f, strides=1, padding="VALID"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, conv_ref(x, f, (1, 1), "VALID").astype(np.int32))
    h = run(tf.nn.conv2d(x.astype(np.float16), f.astype(np.float16), strides=1, padding="SAME"))
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, conv_ref(x, f, (1, 1), "SAME"), rtol=1e-2)
    assert run(tf.nn.conv2d(np.zeros((0, 5, 5, 2), np.float32), f.astype(np.float32), strides=2,
                            padding="SAME")).shape == (0, 3, 3, 3)


def test_conv2d_static_shapes():
    x = tf.placeholder(tf.float32, [None, 16, 16, 1])
    w = tf.placeholder(tf.float32, [3, 3, 1, 8])
    assert tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME").shape.as_list() == [None, 16, 16, 8]
    assert tf.nn.conv2d(x, w, strides=[1, 2, 2, 1], padding="VALID").shape.as_list() == [None, 7, 7, 8]
    partial = tf.placeholder(tf.float32, [None, None, 10, 1])
    out = tf.nn.conv2d(partial, w, strides=[1, 3, 3, 1], padding="SAME")
    assert out.shape.as_list() == [None, None, 4, 8]
    nchw = tf.placeholder(tf.float32, [None, 1, 16, 16])
    assert tf.nn.conv2d(nchw, w, strides=[1, 1, 2, 2], padding="SAME",
                        data_format="NCHW").shape.as_list() == [None, 8, 8, 8]
    unknown = tf.nn.conv2d(tf.placeholder(tf.float32), w, strides=1, padding="SAME")
    assert unknown.shape.as_list() == [None, None, None, 8]


def test_conv2d_errors():
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    with pytest.raises(ValueError, match="multiple of input depth"):
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 2, 4]), strides=1, padding="SAME")
    with pytest.raises(ValueError, match="negative"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [1, 2, 2, 3]), tf.placeholder(tf.float32, [4, 4, 3, 1]),
                     strides=1, padding="VALID")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [4, 4, 3]), tf.placeholder(tf.float32, [3, 3, 3, 1]),
                     strides=1, padding="SAME")
    with pytest.raises(ValueError, match="length 1, 2 or 4"):
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 1]), strides=[1, 1, 1], padding="SAME")
    with pytest.raises(TypeError):
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 1]), strides=1, padding="FULL")
    y = tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 1]), strides=[2, 1, 1, 1], padding="SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch and depth"):
        run(y, {x: np.zeros((1, 4, 4, 3)), y.op.inputs[1]: np.zeros((3, 3, 3, 1))})


@pytest.mark.parametrize("strides,padding", [((1, 1), "SAME"), ((2, 2), "SAME"), ((2, 1), "VALID")])
def test_conv2d_backprop_input_and_filter(strides, padding):
    x = RNG.randn(2, 6, 5, 3)
    f = RNG.randn(3, 2, 3, 4)
    y_ref = conv_ref(x, f, strides, padding)
    dy = RNG.randn(*y_ref.shape)
    st = [1, strides[0], strides[1], 1]
    dx = apply_op("Conv2DBackpropInput", [np.array(x.shape, np.int32), f, dy],
                  {"strides": st, "padding": padding}).outputs[0]
    df = apply_op("Conv2DBackpropFilter", [x, np.array(f.shape, np.int32), dy],
                  {"strides": st, "padding": padding}).outputs[0]
    assert dx.shape.as_list() == list(x.shape) and df.shape.as_list() == list(f.shape)
    got_dx, got_df = run([dx, df])
    np.testing.assert_allclose(got_dx, conv_input_grad_ref(x.shape, f, dy, strides, padding), rtol=1e-9)
    # d(sum(conv(x, f) * dy)) / df[a, b, c, o], by linearity of the convolution in f.
    ref_df = np.zeros_like(f)
    for idx in np.ndindex(*f.shape):
        e = np.zeros_like(f)
        e[idx] = 1.0
        ref_df[idx] = np.sum(conv_ref(x, e, strides, padding) * dy)
    np.testing.assert_allclose(got_df, ref_df, rtol=1e-9)


def test_conv2d_transpose_is_backprop_input():
    x = RNG.randn(1, 3, 3, 2).astype(np.float32)
    f = RNG.randn(3, 3, 4, 2).astype(np.float32)
    y = tf.nn.conv2d_transpose(x, f, output_shape=[1, 6, 6, 4], strides=[1, 2, 2, 1], padding="SAME")
    assert y.op.type == "Conv2DBackpropInput" and y.shape.as_list() == [1, 6, 6, 4]
    ref = conv_input_grad_ref((1, 6, 6, 4), f, x, (2, 2), "SAME")
    np.testing.assert_allclose(run(y), ref, rtol=1e-4, atol=1e-5)


def test_depthwise_conv2d_native():
    x = RNG.randn(2, 5, 6, 3)
    f = RNG.randn(2, 3, 3, 2)
    y = tf.nn.depthwise_conv2d_native(x, f, strides=[1, 2, 1, 1], padding="SAME")
    assert y.shape.as_list() == [2, 3, 6, 6]
    ref = np.concatenate([conv_ref(x[..., c:c + 1], f[:, :, c:c + 1, :], (2, 1), "SAME") for c in range(3)],
                         axis=-1)
    np.testing.assert_allclose(run(y), ref, rtol=1e-9)


def pool_ref(x, k, s, padding, kind):
    """Direct pooling over the real (unpadded) cells of each window."""
    n, h, w, c = x.shape
    t, _, oh = pads(h, k[0], s[0], 1, padding)
    left, _, ow = pads(w, k[1], s[1], 1, padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - t, j * s[1] - left
            win = x[:, max(r0, 0):min(r0 + k[0], h), max(c0, 0):min(c0 + k[1], w), :]
            out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


POOLS = [((2, 2), (2, 2), "SAME"), ((3, 3), (2, 2), "SAME"), ((3, 2), (1, 2), "VALID"),
         ((2, 2), (3, 3), "SAME")]


@pytest.mark.parametrize("k,s,padding", POOLS)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pools_nhwc_and_nchw(k, s, padding, kind):
    x = RNG.randn(2, 7, 5, 3).astype(np.float32) - 2.0  # all-negative windows catch zero padding
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    y = fn(x, ksize=[1, k[0], k[1], 1], strides=[1, s[0], s[1], 1], padding=padding)
    assert y.op.name == ("MaxPool" if kind == "max" else "AvgPool")
    ref = pool_ref(x, k, s, padding, kind)
    assert y.shape.as_list() == list(ref.shape)
    z = fn(x.transpose(0, 3, 1, 2), ksize=list(k), strides=list(s), padding=padding, data_format="NCHW")
    got, got_nchw = run([y, z])
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_nchw, ref.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-6)


def test_pool_dtypes_names_and_static_shapes():
    xi = RNG.randint(-50, 50, (1, 4, 4, 2)).astype(np.int32)
    got = run(tf.nn.max_pool(tf.constant(xi), 2, 2, "SAME"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, pool_ref(xi, (2, 2), (2, 2), "SAME", "max"))
    assert tf.nn.max_pool2d(xi, 2, 2, "VALID").op.name == "MaxPool2d"
    assert tf.nn.avg_pool2d(xi.astype(np.float32), 2, 2, "VALID").op.name == "AvgPool2D"
    p = tf.placeholder(tf.float32, [None, 16, 16, 8])
    assert tf.nn.max_pool(p, [1, 2, 2, 1], [1, 2, 2, 1], "SAME").shape.as_list() == [None, 8, 8, 8]
    assert tf.nn.avg_pool(p, [1, 3, 3, 1], [1, 3, 3, 1], "VALID").shape.as_list() == [None, 5, 5, 8]
    assert run(tf.nn.avg_pool(np.zeros((0, 4, 4, 1), np.float32), 2, 2, "SAME")).shape == (0, 2, 2, 1)
    with pytest.raises(TypeError):
        tf.nn.avg_pool(np.zeros((1, 4, 4, 1), np.int32), 2, 2, "SAME")
    with pytest.raises(ValueError, match="ksize"):
        tf.nn.max_pool(p, [1, 0, 2, 1], 1, "SAME")
    with pytest.raises(ValueError, match="4 values"):
        apply_op("MaxPool", [p], {"ksize": [1, 2, 2], "strides": [1, 1, 1, 1], "padding": "SAME"})
    y = tf.nn.max_pool(p, [2, 2, 2, 1], 1, "SAME")
    with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
        run(y, {p: np.zeros((1, 16, 16, 8))})


def test_max_pool_grad_routes_to_first_maximum():
    x = np.array([[1, 5, 5, 2], [0, 3, 1, 5], [4, 4, 0, 0], [4, 1, 2, 2]], np.float32).reshape(1, 4, 4, 1)
    out = tf.nn.max_pool(x, 2, 2, "VALID")
    dy = np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 2, 2, 1)
    dx = apply_op("MaxPoolGrad", [x, out, dy], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                               "padding": "VALID"}).outputs[0]
    expected = np.zeros((4, 4), np.float32)
    expected[0, 1], expected[0, 2], expected[2, 0], expected[3, 2] = 1, 2, 3, 4
    np.testing.assert_array_equal(run(dx)[0, :, :, 0], expected)


def test_pool_grads_match_finite_differences():
    x = RNG.randn(1, 5, 5, 2)
    for kind, op_type in (("max", "MaxPoolGrad"), ("avg", "AvgPoolGrad")):
        ref = pool_ref(x, (3, 3), (2, 2), "SAME", kind)
        dy = RNG.randn(*ref.shape)
        attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
        first = [x, ref] if kind == "max" else [np.array(x.shape, np.int32)]
        got = run(apply_op(op_type, first + [dy], attrs).outputs[0])
        num = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            e = np.zeros_like(x)
            e[idx] = 1e-6
            num[idx] = np.sum((pool_ref(x + e, (3, 3), (2, 2), "SAME", kind) - ref) * dy) / 1e-6
        np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-5)

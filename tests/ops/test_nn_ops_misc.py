"""TopKV2, InTopKV2, FusedBatchNormV3 and FusedBatchNormGradV3 against NumPy references."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def_library import apply_op

RNG = np.random.RandomState(4)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def top_k_ref(x, k):
    idx = np.array([sorted(range(x.shape[-1]), key=lambda i: (-float(row[i]), i))[:k]
                    for row in x.reshape(-1, x.shape[-1])]).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, axis=-1), idx


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_top_k_matches_stable_reference(dtype):
    x = RNG.randint(0, 5, (3, 4, 9)).astype(dtype)  # many ties
    values, indices = tf.nn.top_k(x, k=4)
    assert values.op.type == "TopKV2" and values.shape.as_list() == [3, 4, 4]
    assert indices.dtype.as_numpy_dtype == np.int32
    got_v, got_i = run([values, indices])
    ref_v, ref_i = top_k_ref(x, 4)
    np.testing.assert_array_equal(got_v, ref_v)
    np.testing.assert_array_equal(got_i, ref_i)


def test_top_k_defaults_index_type_and_shapes():
    x = np.array([1.0, 3.0, -2.0, 3.0], np.float32)
    out = tf.nn.top_k(x)
    assert out.values.shape.as_list() == [1] and run(out.indices).tolist() == [1]
    r = tf.nn.top_k(x, k=3, index_type=tf.int64)
    assert r.indices.dtype.as_numpy_dtype == np.int64 and run(r.indices).tolist() == [1, 3, 0]
    p = tf.placeholder(tf.float32, [None, 5])
    k = tf.placeholder(tf.int32, [])
    assert tf.nn.top_k(p, 2).values.shape.as_list() == [None, 2]
    assert tf.nn.top_k(p, k).values.shape.as_list() == [None, None]
    assert run(tf.nn.top_k(np.zeros((2, 3), np.float32), 0).values).shape == (2, 0)
    with pytest.raises(ValueError, match="k = 6"):
        tf.nn.top_k(p, 6)
    with pytest.raises(ValueError):
        tf.nn.top_k(tf.constant(1.0), 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns"):
        run(tf.nn.top_k(p, k).values, {p: np.zeros((1, 5)), k: 7})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need k >= 0"):
        run(tf.nn.top_k(p, k).values, {p: np.zeros((1, 5)), k: -1})


def in_top_k_ref(pred, targets, k):
    out = []
    for row, t in zip(pred, targets):
        if not 0 <= t < len(row) or not np.all(np.isfinite(row)):
            out.append(False)
        else:
            out.append(int(np.sum(row > row[t])) < k)
    return np.array(out)


def test_in_top_k_tie_semantics():
    pred = np.array([[0.1, 0.3, 0.3, 0.2], [0.5, 0.5, 0.5, 0.5], [0.9, 0.1, 0.0, 0.0],
                     [0.2, np.nan, 0.3, 0.1], [0.1, 0.2, 0.3, 0.4]], np.float32)
    targets = np.array([2, 3, 1, 2, 4], np.int32)
    first = tf.nn.in_top_k(pred, targets, 1)
    assert first.op.name == "in_top_k/InTopKV2" and first.dtype.name == "bool"
    assert first.shape.as_list() == [5]
    assert run(first).tolist() == [True, True, False, False, False]
    for k in (0, 1, 2, 4):
        got = run(tf.nn.in_top_k(pred, targets, k))
        np.testing.assert_array_equal(got, in_top_k_ref(pred, targets, k))
    r = tf.nn.in_top_k(pred, tf.constant(targets.astype(np.int64)), 2)
    assert r.op.get_attr("T").as_numpy_dtype == np.int64
    np.testing.assert_array_equal(run(r), in_top_k_ref(pred, targets, 2))


def test_in_top_k_random_and_errors():
    pred = RNG.randint(0, 4, (20, 6)).astype(np.float32)
    targets = RNG.randint(0, 6, 20).astype(np.int32)
    np.testing.assert_array_equal(run(tf.nn.in_top_k(pred, targets, 3)), in_top_k_ref(pred, targets, 3))
    with pytest.raises(ValueError):
        tf.nn.in_top_k(np.zeros((3, 2), np.float32), np.zeros(4, np.int32), 1)
    with pytest.raises(ValueError):
        tf.nn.in_top_k(np.zeros(3, np.float32), np.zeros(3, np.int32), 1)
    with pytest.raises((TypeError, ValueError)):  # TF raises TypeError; sparseflow's conversion ValueError
        tf.nn.in_top_k(tf.constant(np.zeros((3, 2), np.float64)), np.zeros(3, np.int32), 1)


def bn_ref(x, scale, offset, mean, var, eps, axis):
    shape = [-1 if i == axis else 1 for i in range(x.ndim)]
    normed = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return normed * scale.reshape(shape) + offset.reshape(shape)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_training(data_format):
    x = (RNG.randn(4, 3, 5, 2) * 3 + 1).astype(np.float32)
    axis = 3 if data_format == "NHWC" else 1
    depth = x.shape[axis]
    scale, offset = RNG.rand(depth).astype(np.float32) + 0.5, RNG.randn(depth).astype(np.float32)
    y, mean, var = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3, data_format=data_format)
    assert y.op.type == "FusedBatchNormV3" and y.shape.as_list() == list(x.shape)
    assert mean.shape.as_list() == [depth] and len(y.op.outputs) == 6
    axes = tuple(i for i in range(4) if i != axis)
    bm, bv = x.astype(np.float64).mean(axis=axes), x.astype(np.float64).var(axis=axes)
    n = x.size // depth
    got_y, got_m, got_v = run([y, mean, var])
    np.testing.assert_allclose(got_y, bn_ref(x, scale, offset, bm, bv, 1e-3, axis), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_m, bm, rtol=1e-5)
    np.testing.assert_allclose(got_v, bv * n / (n - 1), rtol=1e-5)  # the running variance is unbiased
    saved = run(y.op.outputs[3:5])
    np.testing.assert_allclose(saved[1], bv, rtol=1e-5)


def test_fused_batch_norm_inference_and_moving_average():
    x = RNG.randn(2, 3, 3, 4).astype(np.float32)
    scale, offset = np.ones(4, np.float32), np.zeros(4, np.float32)
    mean, var = RNG.randn(4).astype(np.float32), RNG.rand(4).astype(np.float32) + 0.1
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=1e-7, is_training=False)
    assert y.op.get_attr("epsilon") == pytest.approx(1.001e-5)  # TF's minimum epsilon
    got_y, got_m, got_v = run([y, m, v])
    np.testing.assert_allclose(got_y, bn_ref(x, scale, offset, mean, var, 1.001e-5, 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got_m, mean)
    np.testing.assert_array_equal(got_v, var)
    y2, m2, v2 = tf.nn.fused_batch_norm(x, scale, offset, mean, var, exponential_avg_factor=0.25)
    bm, bv = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    n = x.size // 4
    got_m2, got_v2 = run([m2, v2])
    np.testing.assert_allclose(got_m2, 0.75 * mean + 0.25 * bm, rtol=1e-5)
    np.testing.assert_allclose(got_v2, 0.75 * var + 0.25 * bv * n / (n - 1), rtol=1e-5)
    with pytest.raises(ValueError, match="mean"):
        tf.nn.fused_batch_norm(x, scale, offset, is_training=False)
    with pytest.raises(ValueError):
        tf.nn.fused_batch_norm(x, np.ones(3, np.float32), offset)
    with pytest.raises(ValueError):
        tf.nn.fused_batch_norm(np.zeros((2, 3), np.float32), scale, offset)


def test_fused_batch_norm_grad_matches_finite_differences():
    x = RNG.randn(2, 2, 3, 2)
    scale, offset = RNG.rand(2) + 0.5, RNG.randn(2)
    dy = RNG.randn(*x.shape)
    eps = 1e-3

    def loss(xv, sv, ov):
        m, v = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
        return np.sum(bn_ref(xv, sv, ov, m, v, eps, 3) * dy)

    m, v = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    outs = apply_op("FusedBatchNormGradV3",
                    [dy.astype(np.float32), x.astype(np.float32), scale.astype(np.float32),
                     m.astype(np.float32), v.astype(np.float32), np.float32(0)],
                    {"epsilon": eps}).outputs
    assert outs[0].shape.as_list() == list(x.shape) and outs[3].shape.as_list() == []
    dx, ds, do = run(outs[:3])
    h = 1e-6
    num_dx = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        num_dx[idx] = (loss(x + e, scale, offset) - loss(x - e, scale, offset)) / (2 * h)
    num_ds = np.array([(loss(x, scale + h * np.eye(2)[c], offset) - loss(x, scale - h * np.eye(2)[c], offset))
                       / (2 * h) for c in range(2)])
    np.testing.assert_allclose(dx, num_dx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(ds, num_ds, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(do, dy.sum(axis=(0, 1, 2)), rtol=1e-5)


def test_local_response_normalization():
    x = RNG.randn(2, 3, 3, 7).astype(np.float32)
    y = tf.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)
    assert y.op.type == "LRN" and y.shape.as_list() == [2, 3, 3, 7]
    sq = x.astype(np.float64) ** 2
    sums = np.stack([sq[..., max(d - 2, 0):d + 3].sum(-1) for d in range(7)], axis=-1)
    np.testing.assert_allclose(run(y), x / (1.5 + 0.3 * sums) ** 0.75, rtol=1e-5)
    with pytest.raises(ValueError):
        tf.nn.local_response_normalization(np.zeros((2, 3), np.float32))

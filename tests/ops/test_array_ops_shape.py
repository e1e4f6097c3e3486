"""Shape ops against NumPy: reshape, shape/size/rank, expand_dims/squeeze, transpose, broadcasting."""

import numpy as np
import pytest

import sparseflow as tf

rng = np.random.default_rng(0)
DTYPES = [np.float32, np.int32, np.int64, np.float64, np.bool_]


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def rand(shape, dtype=np.float32):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_matches_numpy_with_inferred_dim(dtype):
    x = rand([4, 6], dtype)
    p = tf.placeholder(tf.as_dtype(dtype), [None, 6])
    y = tf.reshape(p, [-1, 2, 3])
    assert y.op.type == "Reshape" and y.op.name == "Reshape"
    assert y.shape.as_list() == [None, 2, 3]
    got = run(y, {p: x})
    np.testing.assert_array_equal(got, x.reshape(-1, 2, 3))
    assert got.dtype == dtype


def test_reshape_static_shapes():
    assert tf.reshape(tf.zeros([3, 4]), [2, -1]).shape.as_list() == [2, 6]
    assert tf.reshape(tf.zeros([0, 2]), [-1, 6]).shape.as_list() == [0, 6]
    assert tf.reshape(tf.zeros([1]), []).shape.as_list() == []
    partial = tf.placeholder(tf.float32, [None, 2, 3])
    assert tf.reshape(partial, [-1, -1, 2]).shape.as_list() == [None, None, 2]
    assert tf.reshape(tf.placeholder(tf.float32), [2, 3]).shape.as_list() == [2, 3]
    assert tf.reshape(tf.zeros([2]), tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.reshape(x, tf.shape(x)[::-1]).shape.as_list() == [3, None]
    assert tf.reshape(x, tf.stack([tf.shape(x)[0], 3])).shape.as_list() == [None, 3]
    known = tf.zeros([5, 3])
    assert tf.reshape(tf.zeros([15]), [tf.shape(known)[0], -1]).shape.as_list() == [5, 3]


def test_reshape_static_errors():
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 12 elements to shape \[5,5\] \(25"):
        tf.reshape(tf.zeros([3, 4]), [5, 5])
    with pytest.raises(ValueError, match="evenly divisible by 5 but is 12"):
        tf.reshape(tf.zeros([3, 4]), [5, -1])


def test_reshape_runtime_errors_name_the_op():
    p = tf.placeholder(tf.float32, [None])
    y = tf.reshape(p, [5, -1], name="bad_reshape")
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires a multiple of 5") as e:
        run(y, {p: np.zeros(7, np.float32)})
    assert "bad_reshape" in str(e.value)
    z = tf.reshape(p, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="with 3 values, but the requested shape has 4"):
        run(z, {p: np.zeros(3, np.float32)})
    w = tf.reshape(p, tf.placeholder_with_default(np.array([-1, -1], np.int32), [2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only one input size may be -1"):
        run(w, {p: np.zeros(4, np.float32)})


def test_reshape_empty_and_int64_shape():
    p = tf.placeholder(tf.int64, [None, 4])
    y = tf.reshape(p, tf.constant([-1, 2], tf.int64))
    assert y.op.get_attr("Tshape") == tf.int64
    assert run(y, {p: np.zeros([0, 4], np.int64)}).shape == (0, 2)


def test_shape_size_rank_are_constants_when_known():
    x = tf.zeros([2, 3])
    shape, size, rank = tf.shape(x), tf.size(x), tf.rank(x)
    assert (shape.op.name, size.op.name, rank.op.name) == ("Shape", "Size", "Rank")
    for t, value in ((shape, [2, 3]), (size, 6), (rank, 2)):
        assert t.op.type == "Const"
        np.testing.assert_array_equal(run(t), value)
    assert tf.size(tf.placeholder(tf.float32, [None, 0])).op.type == "Const"


def test_shape_size_rank_ops_on_unknown_shapes():
    p = tf.placeholder(tf.float32, [None, 3])
    q = tf.placeholder(tf.float32)
    s64 = tf.shape(p, out_type=tf.int64)
    assert s64.op.type == "Shape" and s64.dtype == tf.int64 and s64.shape.as_list() == [2]
    assert tf.shape(q).shape.as_list() == [None]
    size, rank = tf.size(p), tf.rank(q)
    assert size.op.type == "Size" and rank.op.type == "Rank" and rank.shape.as_list() == []
    x = rand([4, 3])
    out = run([s64, size, rank, tf.size(q, out_type=tf.int64)], {p: x, q: np.zeros([2, 0, 5])})
    np.testing.assert_array_equal(out[0], [4, 3])
    assert out[0].dtype == np.int64 and out[1] == 12 and out[2] == 3 and out[3] == 0
    assert isinstance(out[1], np.int32) and isinstance(out[3], np.int64)


def test_shape_n():
    a, b = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [3])
    sa, sb = tf.shape_n([a, b], out_type=tf.int64)
    assert sa.op.type == "ShapeN" and sa.shape.as_list() == [2] and sb.dtype == tf.int64
    got = run([sa, sb], {a: np.zeros([5, 2]), b: np.zeros([3])})
    np.testing.assert_array_equal(got[0], [5, 2])
    np.testing.assert_array_equal(got[1], [3])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(axis):
    x = rand([2, 3], np.int32)
    p = tf.placeholder(tf.int32, [None, 3])
    y = tf.expand_dims(p, axis)
    expected = np.expand_dims(x, axis)
    assert y.shape.as_list() == [None if d == 7 else d for d in np.expand_dims(np.zeros([7, 3]), axis).shape]
    np.testing.assert_array_equal(run(y, {p: x}), expected)


def test_expand_dims_errors():
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(tf.zeros([2]))
    with pytest.raises(ValueError, match=r"dim 3 not in the interval \[-3, 2\]"):
        tf.expand_dims(tf.zeros([2, 2]), 3)
    d = tf.placeholder(tf.int32, [])
    y = tf.expand_dims(tf.zeros([2, 2]), d)
    assert y.shape.ndims is None
    with pytest.raises(tf.errors.InvalidArgumentError, match="expand dim index 5"):
        run(y, {d: 5})


def test_squeeze():
    x = rand([1, 3, 1, 2])
    p = tf.placeholder(tf.float32, [1, None, 1, 2])
    assert tf.squeeze(p).shape.ndims is None
    assert tf.squeeze(p, axis=2).shape.as_list() == [1, None, 2]
    assert tf.squeeze(p, [0, -2]).shape.as_list() == [None, 2]
    assert tf.squeeze(tf.zeros([1, 3, 1])).shape.as_list() == [3]
    got = run([tf.squeeze(p), tf.squeeze(p, axis=2), tf.squeeze(p, squeeze_dims=[0])], {p: x})
    np.testing.assert_array_equal(got[0], np.squeeze(x))
    np.testing.assert_array_equal(got[1], np.squeeze(x, 2))
    np.testing.assert_array_equal(got[2], np.squeeze(x, 0))
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension of 1, got 3"):
        tf.squeeze(tf.zeros([1, 3]), axis=1)
    q = tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not squeeze dim\[0\]"):
        run(tf.squeeze(q, 0), {q: np.zeros([3, 2])})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64])
def test_transpose(dtype):
    x = (rand([2, 3, 4]) + (1j * rand([2, 3, 4]) if dtype == np.complex64 else 0)).astype(dtype)
    p = tf.placeholder(tf.as_dtype(dtype), [None, 3, 4])
    t1, t2 = tf.transpose(p), tf.transpose(p, [1, 0, 2])
    assert t1.op.type == "Transpose" and t1.op.name == "transpose"
    assert t1.shape.as_list() == [4, 3, None] and t2.shape.as_list() == [3, None, 4]
    got = run([t1, t2, tf.transpose(p, conjugate=True)], {p: x})
    np.testing.assert_array_equal(got[0], x.T)
    np.testing.assert_array_equal(got[1], x.transpose(1, 0, 2))
    np.testing.assert_array_equal(got[2], np.conj(x.T))


def test_transpose_partial_and_errors():
    assert tf.transpose(tf.zeros([2, 3]), tf.placeholder(tf.int32, [2])).shape.as_list() == [None, None]
    assert tf.transpose(tf.placeholder(tf.float32), [1, 0]).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="out of range of input rank"):
        tf.transpose(tf.zeros([2, 3]), [0, 2])
    perm = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicated in perm"):
        run(tf.transpose(tf.zeros([2, 3]), perm), {perm: [1, 1]})
    x = rand([2, 3, 4])
    np.testing.assert_array_equal(run(tf.matrix_transpose(x)), x.transpose(0, 2, 1))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_matrix_transpose_of_unknown_rank(shape):
    """As TensorFlow's: the permutation is computed when run (conjugated for complex with conjugate=True)."""
    x = tf.placeholder(tf.complex64)
    value = (np.arange(np.prod(shape)) * (1 + 1j)).reshape(shape).astype(np.complex64)
    plain, conj = run([tf.matrix_transpose(x), tf.linalg.matrix_transpose(x, conjugate=True)], {x: value})
    np.testing.assert_array_equal(plain, np.swapaxes(value, -1, -2))
    np.testing.assert_array_equal(conj, np.conj(np.swapaxes(value, -1, -2)))


def test_invert_permutation():
    perm = rng.permutation(7).astype(np.int32)
    y = tf.invert_permutation(perm)
    assert y.shape.as_list() == [7]
    np.testing.assert_array_equal(run(y), np.argsort(perm))
    p = tf.placeholder(tf.int64, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicated"):
        run(tf.invert_permutation(p), {p: [0, 0]})


def test_broadcast_to_and_args():
    x = rand([3, 1])
    y = tf.broadcast_to(x, [2, 3, 4])
    assert y.op.type == "BroadcastTo" and y.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(run(y), np.broadcast_to(x, [2, 3, 4]))
    s = tf.placeholder(tf.int32, [None])
    assert tf.broadcast_to(tf.zeros([3]), s).shape.ndims is None
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unable to broadcast"):
        run(tf.broadcast_to(x, s), {s: [2, 2]})
    r = tf.broadcast_dynamic_shape(tf.constant([2, 1, 3]), tf.constant([4, 1]))
    assert r.op.type == "BroadcastArgs" and r.shape.as_list() == [3]
    np.testing.assert_array_equal(run(r), [2, 4, 3])
    bad = tf.broadcast_dynamic_shape(tf.constant([2, 3]), s)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs. \[4\]"):
        run(bad, {s: [4]})


def test_broadcast_static_shape():
    f = tf.broadcast_static_shape
    assert f(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1])).as_list() == [None, 4, 3]
    assert f(tf.TensorShape([1, None]), tf.TensorShape([5, 1])).as_list() == [5, None]
    assert f(tf.TensorShape(None), tf.TensorShape([2])).ndims is None
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        f(tf.TensorShape([2, 3]), tf.TensorShape([4]))


def test_ensure_shape():
    p = tf.placeholder(tf.float32)
    y = tf.ensure_shape(p, [None, 3])
    assert y.op.type == "EnsureShape" and y.shape.as_list() == [None, 3]
    np.testing.assert_array_equal(run(y, {p: np.ones([2, 3])}), np.ones([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not compatible with expected shape"):
        run(y, {p: np.ones([2, 2])})
    with pytest.raises(ValueError):
        tf.ensure_shape(tf.zeros([2, 2]), [3, 2])


@pytest.mark.parametrize("s0,s1", [([2, 3, 4], [4]), ([1, 3], [5, 1]), ([], [2, 2]), ([1, 1], [1]),
                                   ([2, 1, 3], [2, 4, 3])])
def test_broadcast_gradient_args(s0, s1):
    from sparseflow._src.ops.array_shape_ops import broadcast_gradient_args

    r0, r1 = broadcast_gradient_args(np.array(s0, np.int32), np.array(s1, np.int32))
    got0, got1 = run([r0, r1])
    out = np.broadcast_shapes(tuple(s0), tuple(s1))
    for shape, got in ((s0, got0), (s1, got1)):
        # Summing a gradient of the output shape over the returned axes gives back the input's size.
        g = np.ones(out).sum(axis=tuple(got.tolist()), keepdims=True)
        assert g.size == int(np.prod(shape)) and g.reshape(shape).shape == tuple(shape)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        run(broadcast_gradient_args([2, 3], [4]))

"""Reductions, arg-reductions, scans and AddN against NumPy: axes (negative, lists, none), keepdims,
legacy argument names, empty inputs, integer means, static shapes and errors."""

import numpy as np
import pytest

import sparseflow as tf

RNG = np.random.default_rng(1)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _trunc_mean(x, axis, keepdims):
    s = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
    n = x.size // max(np.asarray(s).size, 1) if x.size else 0
    return (np.trunc(s / n) if n else np.zeros_like(s)).astype(x.dtype)


# (public name, NumPy reference(x, axis, keepdims), dtypes)
REDUCTIONS = [
    ("reduce_sum", lambda x, a, k: np.sum(x, axis=a, keepdims=k, dtype=x.dtype),
     [np.float32, np.float64, np.int32, np.int64]),
    ("reduce_mean", lambda x, a, k: np.mean(x, axis=a, keepdims=k) if x.dtype.kind == "f"
     else _trunc_mean(x, a, k), [np.float32, np.float64, np.int32]),
    ("reduce_prod", lambda x, a, k: np.prod(x, axis=a, keepdims=k, dtype=x.dtype), [np.float32, np.int32]),
    ("reduce_max", lambda x, a, k: np.max(x, axis=a, keepdims=k), [np.float32, np.int32, np.int64, np.uint8]),
    ("reduce_min", lambda x, a, k: np.min(x, axis=a, keepdims=k), [np.float32, np.float64, np.int32]),
    ("reduce_all", lambda x, a, k: np.all(x, axis=a, keepdims=k), [np.bool_]),
    ("reduce_any", lambda x, a, k: np.any(x, axis=a, keepdims=k), [np.bool_]),
    ("reduce_euclidean_norm", lambda x, a, k: np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=a,
                                                             keepdims=k)), [np.float32, np.float64]),
    ("reduce_logsumexp", lambda x, a, k: np.log(np.sum(np.exp(x.astype(np.float64)), axis=a, keepdims=k)),
     [np.float32, np.float64]),
    ("reduce_variance", lambda x, a, k: np.var(x.astype(np.float64), axis=a, keepdims=k), [np.float32]),
    ("reduce_std", lambda x, a, k: np.std(x.astype(np.float64), axis=a, keepdims=k), [np.float64]),
]
AXES = [None, 0, 1, -1, [0, 2], (-1, -3), [-2, 0], []]


def _sample(dtype, shape):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.3
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0 if np.dtype(dtype).kind == "u" else -5, 6, size=shape).astype(dtype)
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


@pytest.mark.parametrize("name,ref,dtype", [(n, r, d) for n, r, ds in REDUCTIONS for d in ds],
                         ids=[f"{n}-{np.dtype(d).name}" for n, _, ds in REDUCTIONS for d in ds])
def test_reduction_matches_numpy(name, ref, dtype):
    fn = getattr(tf.math, name)
    x = _sample(dtype, (2, 3, 4))
    outs, wants = [], []
    for axis in AXES:
        for keep in (False, True):
            t = fn(tf.constant(x), axis=axis, keepdims=keep)
            want = np.asarray(ref(x, tuple(axis) if isinstance(axis, list) else axis, keep))
            assert t.shape.as_list() == list(want.shape), (axis, keep)
            assert t.dtype.as_numpy_dtype == (np.bool_ if dtype == np.bool_ else dtype)
            outs.append(t)
            wants.append(want)
    for got, want in zip(run(outs), wants):
        assert np.asarray(got).dtype == np.dtype(dtype)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
        else:
            np.testing.assert_array_equal(got, want)


def test_reduction_arguments_and_names():
    x = tf.constant([[1, 2], [3, 4]], name="x")
    s = tf.reduce_sum(x)
    assert s.op.type == "Sum" and s.op.name == "Sum" and s.op.inputs[1].op.name == "Const"
    assert tf.reduce_sum(x, 1, name="rsum").op.inputs[1].op.name == "rsum/reduction_indices"
    r = tf.reduce_sum(x, reduction_indices=[0], keep_dims=True)
    assert r.shape.as_list() == [1, 2] and r.op.attrs["keep_dims"] is True
    np.testing.assert_array_equal(run(r), [[4, 6]])
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
        tf.reduce_mean(x, keepdims=True, keep_dims=True)
    assert run(tf.reduce_max([[1, 5], [3, 2]])) == 5  # Python list input
    assert run(tf.reduce_sum(7)) == 7  # scalar: reduces nothing
    dup = tf.reduce_sum(x, [1, -1])  # a repeated axis is an error when it runs, as in TensorFlow 2.21
    assert dup.shape.as_list() == [2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Axes contains duplicate dimension: 1"):
        run(dup)


def test_reduction_integer_mean_truncates_and_sum_wraps():
    x = tf.constant([[-1, -2], [3, 4], [-5, 2]], tf.int32)
    np.testing.assert_array_equal(run(tf.reduce_mean(x, axis=1)), [-1, 3, -1])
    big = tf.constant([2 ** 31 - 1, 1], tf.int32)
    assert run(tf.reduce_sum(big)) == -(2 ** 31)


def test_empty_reductions_give_identities():
    e = tf.constant(np.zeros((0, 3), np.float32))
    s, p, mx, mn, mean = run([tf.reduce_sum(e, 0), tf.reduce_prod(e, 0), tf.reduce_max(e, 0),
                              tf.reduce_min(e, 0), tf.reduce_mean(e, 0)])
    np.testing.assert_array_equal(s, [0, 0, 0])
    np.testing.assert_array_equal(p, [1, 1, 1])
    assert np.all(mx == -np.inf) and np.all(mn == np.inf) and np.all(np.isnan(mean))
    ei = tf.constant(np.zeros((2, 0), np.int32))
    mx_i, mean_i, any_e = run([tf.reduce_max(ei, 1), tf.reduce_mean(ei, 1),
                               tf.reduce_any(np.zeros((0,), bool))])
    np.testing.assert_array_equal(mx_i, [np.iinfo(np.int32).min] * 2)
    np.testing.assert_array_equal(mean_i, [0, 0])
    assert any_e == np.False_
    assert tf.reduce_sum(e, 0).shape.as_list() == [3]


def test_reduction_static_shapes_partial_and_errors():
    p = tf.placeholder(tf.float32, [None, 3, None])
    assert tf.reduce_sum(p, 1).shape.as_list() == [None, None]
    assert tf.reduce_sum(p, [0, 2], keepdims=True).shape.as_list() == [1, 3, 1]
    assert tf.reduce_sum(p).shape.as_list() == []
    axis = tf.placeholder(tf.int32, [None])
    assert tf.reduce_sum(p, axis).shape.ndims is None
    assert tf.reduce_sum(p, axis, keepdims=True).shape.as_list() == [None, None, None]
    with pytest.raises(ValueError, match="Invalid reduction dimension 3 for input with 3 dimensions"):
        tf.reduce_sum(p, 3)
    with pytest.raises(ValueError, match="must have rank at most 1"):
        tf.reduce_sum(p, [[0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        run(tf.reduce_sum(tf.constant([1.0, 2.0]), axis), {axis: [4]})
    with pytest.raises(TypeError):
        tf.reduce_sum(tf.constant([True]))
    with pytest.raises(TypeError):
        tf.math.reduce_variance(tf.constant([1, 2]))


def test_reduce_logsumexp_is_stable_and_handles_infinity():
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [0.0, -np.inf]], np.float32)
    got, kept = run([tf.reduce_logsumexp(x, axis=1), tf.reduce_logsumexp(x, axis=1, keepdims=True)])
    np.testing.assert_allclose(got, [1000 + np.log(2), -np.inf, 0.0], rtol=1e-6)
    assert kept.shape == (3, 1)
    assert tf.reduce_logsumexp(x).shape.as_list() == []


def test_count_nonzero():
    x = np.array([[0, 1, 2], [0, 0, 3]], np.int32)
    t = tf.count_nonzero(x, axis=1)
    assert t.dtype == tf.int64
    np.testing.assert_array_equal(run(t), [2, 1])
    assert run(tf.count_nonzero(x)) == 3
    assert tf.count_nonzero(x, dtype=tf.int32, keepdims=True).dtype == tf.int32
    np.testing.assert_array_equal(run(tf.count_nonzero(tf.constant(["", "a", "b"]))), 2)
    np.testing.assert_array_equal(run(tf.count_nonzero(x, reduction_indices=0)), [0, 1, 2])


@pytest.mark.parametrize("fn,ref", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
def test_arg_reductions(fn, ref):
    x = RNG.normal(size=(3, 4, 5)).astype(np.float32)
    outs = [fn(x, axis=a) for a in (0, 1, 2, -1)] + [fn(x)]
    for t, a in zip(outs, (0, 1, 2, -1, 0)):
        assert t.dtype == tf.int64
        assert t.shape.as_list() == list(np.delete(x.shape, a))
    got = run(outs)
    for g, a in zip(got, (0, 1, 2, -1, 0)):
        np.testing.assert_array_equal(g, ref(x, axis=a))
    t = fn([3, 1, 3], output_type=tf.int32, name="pick")
    assert t.dtype == tf.int32 and t.op.name == "pick" and t.shape.as_list() == []
    assert t.op.inputs[1].op.name == "pick/dimension"
    assert run(fn([[1, 2]], dimension=1)).tolist() == [int(ref([1, 2]))]
    assert fn(tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.int32, [])).shape.as_list() == [None]
    with pytest.raises(ValueError, match=r"must be in the range \[-2, 2\)"):
        fn(np.zeros((2, 2)), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Reduction axis 0 is empty"):
        run(fn(tf.placeholder_with_default(np.zeros((0, 2), np.float32), [None, 2]), 0))


def _scan_ref(x, axis, exclusive, reverse, prod):
    x = np.flip(x, axis) if reverse else x
    r = np.cumprod(x, axis=axis, dtype=x.dtype) if prod else np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        r = np.concatenate([np.full_like(np.take(r, [0], axis=axis), 1 if prod else 0),
                            np.delete(r, -1, axis=axis)], axis=axis)
    return np.flip(r, axis) if reverse else r


@pytest.mark.parametrize("prod", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_scans(prod, dtype):
    fn = tf.cumprod if prod else tf.cumsum
    x = RNG.integers(-3, 4, size=(3, 4)).astype(dtype)
    cases = [(a, e, r) for a in (0, 1, -1) for e in (False, True) for r in (False, True)]
    outs = [fn(x, axis=a, exclusive=e, reverse=r) for a, e, r in cases]
    for t in outs:
        assert t.shape.as_list() == [3, 4] and t.dtype.as_numpy_dtype == dtype
    for (a, e, r), got in zip(cases, run(outs)):
        np.testing.assert_allclose(got, _scan_ref(x, a, e, r, prod))
    assert run(fn(np.zeros((0, 2), dtype), exclusive=True)).shape == (0, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis in the range"):
        run(fn(x, axis=tf.placeholder_with_default(2, [])))


def test_cumulative_logsumexp():
    x = RNG.normal(size=(2, 5)).astype(np.float64)
    got = run(tf.math.cumulative_logsumexp(x, axis=1, reverse=True, exclusive=True))
    want = np.flip(np.logaddexp.accumulate(np.flip(x, 1), axis=1), 1)
    want = np.concatenate([want[:, 1:], np.full((2, 1), -np.inf)], axis=1)
    np.testing.assert_allclose(got, want)


def test_add_n_and_accumulate_n():
    a, b, c = (RNG.normal(size=(2, 3)).astype(np.float32) for _ in range(3))
    t = tf.add_n([a, tf.constant(b), c])
    assert t.op.type == "AddN" and t.op.attrs["N"] == 3 and t.shape.as_list() == [2, 3]
    np.testing.assert_allclose(run(t), a + b + c, rtol=1e-6)
    one = tf.constant(a)
    assert tf.add_n([one]) is one
    assert tf.add_n([one], name="only").op.type == "Identity"
    np.testing.assert_array_equal(run(tf.add_n([[1, 2], [3, 4]])), [4, 6])
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])
    with pytest.raises(ValueError, match="From merging shape 0"):
        tf.add_n([np.zeros((2,), np.float32), np.zeros((3,), np.float32)])
    with pytest.raises(TypeError, match="don't all match"):
        tf.add_n([tf.constant([1.0]), tf.constant([1])])
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.add_n([p, tf.placeholder(tf.float32, [2, None])]).shape.as_list() == [2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size and shape"):
        run(tf.add_n([p, p + 1, tf.placeholder_with_default(np.zeros((1, 3), np.float32), [None, 3])]),
            {p: np.zeros((2, 3), np.float32)})
    np.testing.assert_allclose(run(tf.accumulate_n([a, b], shape=[2, 3], tensor_dtype=tf.float32)), a + b,
                               rtol=1e-6)
    with pytest.raises(ValueError):
        tf.accumulate_n([a, b], shape=[3, 3])
    with pytest.raises(ValueError):
        tf.accumulate_n([tf.constant([1.0]), tf.constant([1])])


def test_reductions_of_unknown_rank_use_range_of_rank():
    p = tf.placeholder(tf.float32)
    s = tf.reduce_sum(p)
    assert s.shape.as_list() == []  # set because axis=None and keepdims=False
    assert s.op.inputs[1].op.type == "Range"
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run([s, tf.reduce_logsumexp(p), tf.count_nonzero(p), tf.reduce_mean(p, keepdims=True)], {p: x})
    assert got[0] == 15.0 and got[2] == 5
    np.testing.assert_allclose(got[1], np.log(np.sum(np.exp(x))), rtol=1e-6)
    np.testing.assert_allclose(got[3], [[2.5]])


@pytest.mark.parametrize("op,dtype", [(op, d) for op in ("Sum", "Mean", "Prod", "Max", "Min")
                                      for d in (np.float32, np.float16, np.int32, np.complex64)
                                      if not (d == np.complex64 and op in ("Max", "Min"))])
def test_a_reduction_over_no_axis_is_a_copy_of_its_input(op, dtype):
    from sparseflow._src.framework import dtypes
    from sparseflow._src.kernels.registry import KernelNode, get_kernel

    d = dtypes.as_dtype(dtype)
    k = get_kernel(op).factory(KernelNode("r", op, {"T": d, "keep_dims": False}, [], [d], ""))
    x = np.array([[1.5, -2.0], [np.nan, np.inf]] if dtype != np.int32 else [[1, -2], [7, 0]], dtype)
    got = k(x, np.zeros(0, np.int32))
    np.testing.assert_array_equal(got, x)
    assert got.dtype == dtype and got is not x and not np.shares_memory(got, x)

"""Segment reductions (sorted, unsorted, sparse), their grad ops and (Dense)Bincount vs NumPy."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def_library import apply_op

RNG = np.random.RandomState(3)
REDUCERS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def segment_ref(kind, data, ids, rows, empty):
    out = np.full((rows,) + data.shape[1:], empty, np.float64)
    for s in range(rows):
        sel = data[ids == s]
        if len(sel):
            out[s] = REDUCERS[kind](sel.astype(np.float64), axis=0)
    return out


@pytest.mark.parametrize("kind", sorted(REDUCERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_sorted_segment_ops(kind, dtype):
    data = (RNG.randn(9, 3) * 3).astype(dtype)
    ids = np.array([0, 0, 1, 3, 3, 3, 4, 6, 6], np.int64)  # 2 and 5 are empty
    y = getattr(tf, f"segment_{kind}")(data, ids)
    assert y.op.type == f"Segment{kind.capitalize()}" and y.shape.as_list() == [None, 3]
    got = run(y)
    assert got.dtype == dtype
    ref = segment_ref(kind, data, ids, 7, 1 if kind == "prod" else 0)
    if dtype == np.int32 and kind == "mean":
        sums = segment_ref("sum", data, ids, 7, 0)
        counts = np.maximum(np.bincount(ids, minlength=7), 1)[:, None]
        ref = np.trunc(sums / counts)  # integer division truncates toward zero
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_sorted_segment_static_shape_empty_and_errors():
    data = tf.placeholder(tf.float32, [None, 2, 5])
    ids = tf.placeholder(tf.int32, [None])
    y = tf.segment_sum(data, ids)
    assert y.shape.as_list() == [None, 2, 5]
    assert run(y, {data: np.zeros((0, 2, 5)), ids: np.zeros(0, np.int32)}).shape == (0, 2, 5)
    with pytest.raises(ValueError):
        tf.segment_sum(tf.placeholder(tf.float32, [4, 2]), tf.placeholder(tf.int32, [3]))
    with pytest.raises(ValueError):
        tf.segment_sum(tf.placeholder(tf.float32, [4, 2]), tf.placeholder(tf.int32, [4, 1]))
    with pytest.raises(TypeError):
        tf.segment_sum([1.0, 2.0], [0.0, 1.0])
    feed = {data: np.ones((3, 2, 5))}
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        run(y, {**feed, ids: [0, 2, 1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be >= 0"):
        run(y, {**feed, ids: [-3, -2, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        run(y, {**feed, ids: [-1, 0, 0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        run(y, {**feed, ids: [0, 0]})


UNSORTED_EMPTY = {"sum": 0, "prod": 1, "max": np.finfo(np.float32).min, "min": np.finfo(np.float32).max}


@pytest.mark.parametrize("kind", sorted(UNSORTED_EMPTY))
def test_unsorted_segment_ops_drop_negative_ids(kind):
    data = (RNG.randn(8, 3) * 2).astype(np.float32)
    ids = np.array([3, 0, -1, 3, 1, 0, -5, 3], np.int32)
    y = getattr(tf, f"unsorted_segment_{kind}")(data, ids, num_segments=5)
    assert y.shape.as_list() == [5, 3] and y.op.type == f"UnsortedSegment{kind.capitalize()}"
    ref = segment_ref(kind, data, ids, 5, UNSORTED_EMPTY[kind])
    np.testing.assert_allclose(run(y), ref, rtol=1e-5)


def test_unsorted_segment_sum_multi_dim_ids_int_and_empty():
    data = RNG.randint(-9, 9, (2, 3, 4)).astype(np.int64)
    ids = np.array([[0, 2, 2], [-1, 0, 1]], np.int64)
    y = tf.unsorted_segment_sum(data, ids, np.int64(3))
    assert y.shape.as_list() == [3, 4]
    flat_d, flat_i = data.reshape(6, 4), ids.reshape(6)
    np.testing.assert_array_equal(run(y), segment_ref("sum", flat_d, flat_i, 3, 0).astype(np.int64))
    empty = tf.unsorted_segment_max(np.zeros((0, 2), np.int32), np.zeros(0, np.int32), 2)
    np.testing.assert_array_equal(run(empty), np.full((2, 2), np.iinfo(np.int32).min))


def test_unsorted_segment_static_shapes_and_errors():
    n = tf.placeholder(tf.int32, [])
    y = tf.unsorted_segment_sum(tf.placeholder(tf.float32, [None, 4, 2]), tf.placeholder(tf.int32, [None, 4]),
                                n)
    assert y.shape.as_list() == [None, 2]
    assert tf.unsorted_segment_sum(tf.placeholder(tf.float32, [5, 2]), tf.placeholder(tf.int32),
                                   3).shape.ndims is None
    with pytest.raises(ValueError):
        tf.unsorted_segment_sum(tf.placeholder(tf.float32, [5, 2]), tf.placeholder(tf.int32, [4]), 3)
    with pytest.raises(ValueError):
        tf.unsorted_segment_sum(tf.placeholder(tf.float32, [5, 2]), tf.placeholder(tf.int32, [5]), [3])
    with pytest.raises(TypeError):
        tf.unsorted_segment_max(np.zeros(2, np.complex64), [0, 1], 2)
    d, i = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int32, [None])
    y = tf.unsorted_segment_sum(d, i, 3)
    msg = r"segment_ids\[2\] = 3 is out of range \[0, 3\)"
    with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
        run(y, {d: [1.0, 2.0, 3.0], i: [0, 2, 3]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with"):
        run(y, {d: [1.0, 2.0, 3.0], i: [0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must not be negative"):
        run(tf.unsorted_segment_sum(d, i, n), {d: [1.0], i: [0], n: -1})


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
def test_sparse_segment_ops(kind):
    data = RNG.randn(6, 3).astype(np.float32)
    indices = np.array([0, 2, 2, 5, 1], np.int32)
    seg = np.array([0, 0, 1, 3, 3], np.int64)
    y = getattr(tf, f"sparse_segment_{kind}")(data, indices, tf.constant(seg))
    op_type = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean", "sqrt_n": "SparseSegmentSqrtN"}[kind]
    assert y.op.type == op_type and y.shape.as_list() == [None, 3]
    assert y.op.get_attr("Tsegmentids").as_numpy_dtype == np.int64
    picked = data[indices].astype(np.float64)
    ref = segment_ref("sum", picked, seg, 4, 0)
    counts = np.bincount(seg, minlength=4)[:, None]
    if kind == "mean":
        ref = ref / np.maximum(counts, 1)
    elif kind == "sqrt_n":
        ref = ref / np.sqrt(np.maximum(counts, 1))
    np.testing.assert_allclose(run(y), ref, rtol=1e-5)
    with_n = getattr(tf, f"sparse_segment_{kind}")(data, indices, seg, num_segments=6)
    assert with_n.op.type == op_type + "WithNumSegments" and with_n.shape.as_list() == [6, 3]
    np.testing.assert_allclose(run(with_n), np.concatenate([ref, np.zeros((2, 3))]), rtol=1e-5)


def test_sparse_segment_errors_and_empty():
    d = tf.placeholder(tf.float32, [None, 2])
    idx, seg = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])
    y = tf.sparse_segment_mean(d, idx, seg)
    data = np.ones((3, 2), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Bad: indices\[1\] == 7 out of range \[0, 3\)"):
        run(y, {d: data, idx: [0, 7], seg: [0, 0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        run(y, {d: data, idx: [0, 1], seg: [1, 0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        run(y, {d: data, idx: [0, 1], seg: [0]})
    assert run(y, {d: data, idx: np.zeros(0, np.int32), seg: np.zeros(0, np.int32)}).shape == (0, 2)
    with pytest.raises(ValueError):
        tf.sparse_segment_sum(d, tf.placeholder(tf.int32, [3]), tf.placeholder(tf.int32, [4]))
    with pytest.raises(TypeError):
        tf.sparse_segment_mean(np.zeros((2, 2), np.int32), [0], [0])


@pytest.mark.parametrize("kind", ["Sum", "Mean", "SqrtN"])
def test_sparse_segment_grad_ops(kind):
    grad = RNG.randn(3, 2)
    indices = np.array([4, 0, 4, 1], np.int32)
    seg = np.array([0, 0, 2, 2], np.int32)
    out = apply_op(f"SparseSegment{kind}Grad", [grad, indices, seg, np.int32(5)]).outputs[0]
    assert out.shape.as_list() == [5, 2]
    counts = np.bincount(seg, minlength=3).astype(np.float64)
    scale = {"Sum": np.ones(3), "Mean": 1 / np.maximum(counts, 1),
             "SqrtN": 1 / np.sqrt(np.maximum(counts, 1))}[kind]
    ref = np.zeros((5, 2))
    for i, s in zip(indices, seg):
        ref[i] += grad[s] * scale[s]
    np.testing.assert_allclose(run(out), ref, rtol=1e-12)


def test_dense_bincount_and_bincount_ops():
    arr = np.array([1, 4, 4, 0, 7, 4], np.int32)
    counts = apply_op("DenseBincount", [arr, np.int32(9), np.zeros(0, np.int32)]).outputs[0]
    assert counts.shape.as_list() == [9] and counts.dtype.as_numpy_dtype == np.int32
    np.testing.assert_array_equal(run(counts), np.bincount(arr, minlength=9))
    w = RNG.rand(6).astype(np.float32)
    weighted = apply_op("DenseBincount", [arr, np.int32(5), w]).outputs[0]
    np.testing.assert_allclose(run(weighted), np.bincount(arr[arr < 5], weights=w[arr < 5], minlength=5),
                               rtol=1e-6)
    binary = apply_op("DenseBincount", [arr, np.int32(8), np.zeros(0, np.float32)],
                      {"binary_output": True}).outputs[0]
    np.testing.assert_array_equal(run(binary), (np.bincount(arr, minlength=8) > 0).astype(np.float32))
    rows = apply_op("DenseBincount", [np.array([[0, 1, 1], [2, 2, 2]], np.int64), np.int64(3),
                                      np.zeros(0, np.int64)]).outputs[0]
    assert rows.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(run(rows), [[1, 2, 0], [0, 0, 3]])
    legacy = apply_op("Bincount", [arr, np.int32(3), np.zeros(0, np.float64)]).outputs[0]
    np.testing.assert_array_equal(run(legacy), [1, 1, 0])
    a = tf.placeholder(tf.int32, [None])
    neg = apply_op("Bincount", [a, np.int32(3), np.zeros(0, np.int32)]).outputs[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        run(neg, {a: [1, -1]})
    assert run(neg, {a: np.zeros(0, np.int32)}).tolist() == [0, 0, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_numba_scatter_matches_ufunc_at(dtype):
    from sparseflow._src.kernels import nn_segment_kernels as k

    rows = (RNG.randn(300, 3) * 5).astype(dtype)
    ids = RNG.randint(-2, 7, 300)
    for kind, ufunc, init in (("Sum", np.add, 0), ("Prod", np.multiply, 1), ("Max", np.maximum, -100),
                              ("Min", np.minimum, 100)):
        out = np.full((7, 3), init, dtype)
        k.scatter_rows_numba(out, ids.astype(np.intp), rows, k._OP_CODES[kind], 0, 7)
        ref = np.full((7, 3), init, dtype)
        ufunc.at(ref, ids[ids >= 0], rows[ids >= 0])
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("kind", ["Sum", "Max"])
def test_a_scatter_split_over_threads_by_segment_range_equals_one_thread(kind, monkeypatch):
    from sparseflow._src.kernels import intra_op
    from sparseflow._src.kernels import nn_segment_kernels as k

    rows = RNG.randn(40000, 8).astype(np.float32)  # each segment gets many rows: the order of its sums matters
    ids = RNG.randint(-1, 500, 40000)
    got = {}
    for threads in (1, 3):
        monkeypatch.setattr(intra_op, "_threads", threads)
        monkeypatch.setattr(k, "PARALLEL_MIN_ELEMENTS", 1000)
        out = np.empty((500, 8), np.float32)
        k.scatter_rows(kind, out, ids, rows, fill=k._identity(kind, np.float32, True))
        got[threads] = out
    np.testing.assert_array_equal(got[1], got[3])
    ref = np.full((500, 8), k._identity(kind, np.float32, True), np.float32)
    k._UFUNCS[kind].at(ref, ids[ids >= 0], rows[ids >= 0])
    np.testing.assert_array_equal(got[1], ref)


def test_large_unsorted_segment_sum_uses_the_same_semantics():
    data = RNG.randn(6000, 8).astype(np.float32)  # above the numba threshold
    ids = RNG.randint(-1, 50, 6000).astype(np.int32)
    got, got_max = run([tf.unsorted_segment_sum(data, ids, 60), tf.unsorted_segment_max(data, ids, 60)])
    ref = np.zeros((60, 8), np.float64)
    np.add.at(ref, ids[ids >= 0], data[ids >= 0])
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert np.all(got_max[50:] == np.finfo(np.float32).min)
    np.testing.assert_array_equal(got_max[7], data[ids == 7].max(axis=0))

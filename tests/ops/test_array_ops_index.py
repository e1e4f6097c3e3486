"""Data-dependent indexing against NumPy: gather, gather_nd, scatter_nd, unique, setdiff1d,
dynamic_partition/stitch, boolean_mask and sequence_mask."""

import numpy as np
import pytest

import sparseflow as tf

rng = np.random.default_rng(3)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def rand(shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, object])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_matches_numpy(dtype, index_dtype):
    strings = np.array([[b"a", b"b"], [b"c", b"d"], [b"e", b"f"]], object)
    x = strings if dtype is object else rand([3, 2], dtype)
    idx = np.array([[2, 0], [1, 1]], index_dtype)
    p = tf.placeholder(tf.as_dtype(dtype), [None, 2])
    q = tf.placeholder(tf.as_dtype(index_dtype), [2, None])
    rows, cols = tf.gather(p, q), tf.gather(p, [1, 0, 1], axis=1)
    assert rows.op.type == "GatherV2" and rows.op.name == "GatherV2"
    assert rows.shape.as_list() == [2, None, 2] and cols.shape.as_list() == [None, 3]
    got = run([rows, cols], {p: x, q: idx})
    np.testing.assert_array_equal(got[0], x[idx])
    np.testing.assert_array_equal(got[1], x[:, [1, 0, 1]])


def test_gather_batch_dims_and_empty():
    params = rand([2, 3, 4])
    idx = np.array([[0, 2], [1, 1]], np.int32)
    y = tf.gather(params, idx, axis=1, batch_dims=1)
    assert y.shape.as_list() == [2, 2, 4]
    np.testing.assert_array_equal(run(y), np.stack([params[b][idx[b]] for b in range(2)]))
    z = tf.gather(params, idx, axis=2, batch_dims=1)
    assert z.shape.as_list() == [2, 3, 2]
    np.testing.assert_array_equal(run(z), np.stack([params[b][:, idx[b]] for b in range(2)]))
    e = tf.gather(params, np.zeros([0], np.int32))
    assert e.shape.as_list() == [0, 3, 4] and run(e).shape == (0, 3, 4)
    ax = tf.placeholder(tf.int32, [])
    assert tf.gather(params, [0, 1], axis=ax).shape.as_list() == [None, None, None]


def test_gather_out_of_range_is_invalid_argument_naming_the_op():
    i = tf.placeholder(tf.int32, [None, 2])
    y = tf.gather(tf.zeros([4, 3]), i, name="pick")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1,0\] = 7 is not in \[0, 4\)") as e:
        run(y, {i: [[0, 1], [7, 2]]})
    assert "pick" in str(e.value) and "GatherV2" in str(e.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0,1\] = -1 is not in"):
        run(y, {i: [[0, -1]]})
    with pytest.raises(ValueError, match="rank at least 3"):
        tf.gather(tf.zeros([2, 2]), [0], axis=2)


def test_gather_nd_matches_numpy():
    x = rand([4, 6])
    p = tf.placeholder(tf.float32, [None, 6])
    pts = tf.gather_nd(p, [[0, 1], [3, 5], [2, 2]])
    rows = tf.gather_nd(p, [[[1]], [[0]]])
    assert pts.op.type == "GatherNd" and pts.shape.as_list() == [3]
    assert rows.shape.as_list() == [2, 1, 6]
    got = run([pts, rows], {p: x})
    np.testing.assert_array_equal(got[0], x[[0, 3, 2], [1, 5, 2]])
    np.testing.assert_array_equal(got[1], x[np.array([[1], [0]])])
    i = tf.placeholder(tf.int64, [None, 2])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[3, 7\] does not index into param shape \[4,6\]"):
        run(tf.gather_nd(p, i), {p: x, i: [[0, 0], [3, 7]]})
    with pytest.raises(ValueError, match="indices.shape\\[-1\\] must be <= params.rank"):
        tf.gather_nd(tf.zeros([2]), [[0, 0]])


def test_scatter_nd_sums_duplicates():
    idx = np.array([[0], [2], [0]], np.int64)
    upd = rand([3, 4])
    y = tf.scatter_nd(idx, upd, tf.constant([5, 4], tf.int64))
    assert y.op.type == "ScatterNd" and y.shape.as_list() == [5, 4]
    expected = np.zeros([5, 4], np.float32)
    np.add.at(expected, idx[:, 0], upd)
    np.testing.assert_allclose(run(y), expected, rtol=1e-6)
    pts = tf.scatter_nd([[1, 1], [0, 2]], [7, 8], [2, 3])
    np.testing.assert_array_equal(run(pts), [[0, 0, 8], [0, 7, 0]])
    with pytest.raises(ValueError, match="must match dimensions"):
        tf.scatter_nd([[0]], tf.zeros([1, 3]), [5, 4])
    bad = tf.placeholder(tf.int32, [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
        run(tf.scatter_nd(bad, [1.0], [3]), {bad: [[3]]})


@pytest.mark.parametrize("values", [
    np.array([7, 3, 7, 1, 3, 7, 9], np.int64), np.array([2.5, -1.0, 2.5], np.float32),
    np.array([b"b", b"a", b"c", b"a"], object), np.array([], np.int32),
])
def test_unique_first_occurrence_order(values):
    p = tf.placeholder(tf.as_dtype(values.dtype), [None])
    y, idx = tf.unique(p, out_idx=tf.int64)
    _, _, counts = tf.unique_with_counts(p)
    assert y.shape.as_list() == [None] and idx.dtype == tf.int64 and counts.dtype == tf.int32
    got_y, got_idx, got_counts = run([y, idx, counts], {p: values})
    order = []
    for v in values.tolist():
        if v not in order:
            order.append(v)
    assert got_y.tolist() == order
    assert got_idx.tolist() == [order.index(v) for v in values.tolist()]
    assert got_counts.tolist() == [values.tolist().count(v) for v in order]
    with pytest.raises(ValueError, match="rank 1"):
        tf.unique(tf.zeros([2, 2]))


def test_setdiff1d():
    out, idx = tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    assert out.op.type == "ListDiff" and out.shape.as_list() == [None]
    got = run([out, idx])
    assert got[0].tolist() == [2, 4, 6] and got[1].tolist() == [1, 3, 5]
    s_out, _ = tf.setdiff1d(tf.constant([b"a", b"b"]), tf.constant([b"b"]))
    assert run(s_out).tolist() == [b"a"]


def test_dynamic_partition_and_stitch_round_trip():
    data = rand([7, 2])
    parts_np = rng.integers(0, 3, 7).astype(np.int32)
    d = tf.placeholder(tf.float32, [None, 2])
    pi = tf.placeholder(tf.int32, [None])
    parts = tf.dynamic_partition(d, pi, num_partitions=3)
    positions = tf.dynamic_partition(tf.constant(np.arange(7, dtype=np.int32)), pi, 3)
    stitched = tf.dynamic_stitch(positions, parts)
    assert parts[0].op.type == "DynamicPartition" and parts[1].shape.as_list() == [None, 2]
    assert stitched.op.type == "DynamicStitch" and stitched.shape.as_list() == [None, 2]
    got = run(parts + [stitched], {d: data, pi: parts_np})
    for k in range(3):
        np.testing.assert_array_equal(got[k], data[parts_np == k])
    np.testing.assert_array_equal(got[3], data)
    plain = tf.dynamic_stitch([[0, 2], [1, 3], [2]], [[1.0, 2.0], [3.0, 4.0], [9.0]])
    assert plain.shape.as_list() == [4]
    np.testing.assert_array_equal(run(plain), [1, 3, 9, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1\] = 5 is not in \[0, 3\)"):
        run(parts[0], {d: data[:2], pi: [0, 5]})


def test_boolean_mask_matches_numpy():
    x = rand([4, 3])
    p = tf.placeholder(tf.float32, [None, 3])
    m = tf.placeholder(tf.bool, [None])
    rows = tf.boolean_mask(p, m)
    elems = tf.boolean_mask(p, tf.constant(x > 0))
    cols = tf.boolean_mask(p, [True, False, True], axis=1)
    assert rows.shape.as_list() == [None, 3] and cols.shape.as_list() == [None, None]
    assert rows.op.name.startswith("boolean_mask/")
    mask = np.array([True, False, True, True])
    got = run([rows, elems, cols, p[tf.constant(x > 0)]], {p: x, m: mask})
    np.testing.assert_array_equal(got[0], x[mask])
    np.testing.assert_array_equal(got[1], x[x > 0])
    np.testing.assert_array_equal(got[2], x[:, [0, 2]])
    np.testing.assert_array_equal(got[3], x[x > 0])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(p, True)
    with pytest.raises(ValueError):
        tf.boolean_mask(tf.zeros([4, 3]), [True, False])


def test_sequence_mask():
    y = tf.sequence_mask([1, 3, 2], maxlen=4)
    assert y.dtype == tf.bool and y.shape.as_list() == [3, 4]
    np.testing.assert_array_equal(run(y), np.arange(4) < np.array([[1], [3], [2]]))
    lens = tf.placeholder(tf.int32, [None, 2])
    z = tf.sequence_mask(lens, dtype=tf.float32)
    assert z.dtype == tf.float32 and z.shape.as_list() == [None, 2, None]
    got = run(z, {lens: [[0, 2], [3, 1]]})
    expected = np.arange(3) < np.array([[0, 2], [3, 1]])[..., None]
    np.testing.assert_array_equal(got, expected.astype(np.float32))


@pytest.mark.parametrize("threads", [1, 3])
def test_a_large_gather_on_several_threads_equals_numpy(threads, monkeypatch):
    from sparseflow._src.kernels import intra_op

    monkeypatch.setattr(intra_op, "_threads", threads)
    params, idx = rand((5000, 16)), rng.integers(0, 5000, (2048, 26))
    with tf.Graph().as_default():
        got = run(tf.gather(tf.constant(params), tf.placeholder_with_default(idx, [None, 26])))
    np.testing.assert_array_equal(got, np.take(params, idx, axis=0))
    with tf.Graph().as_default(), pytest.raises(tf.errors.InvalidArgumentError, match="5000"):
        run(tf.gather(tf.constant(params), tf.placeholder_with_default(idx + 1, [None, 26])))

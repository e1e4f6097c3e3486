"""Random ops through tf.Session: TensorFlow's node names, seeds, streams, shapes, dtypes and errors.

Expected draws are TensorFlow 2.21's for /work/shared/tf1-programs/t23_random_streams.py (graph seed
1234), printed with ``%.6g``.
"""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import get_op_def
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.ops import random_ops

RANDOM_OPS = ["RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal", "RandomShuffle",
              "Multinomial"]


def g6(values):
    """Values as the t23 program prints them: floats ``%.6g``, integers ``%d``."""
    flat = np.asarray(values).ravel().tolist()
    return " ".join(f"{v:.6g}" if isinstance(v, float) else f"{v:d}" for v in flat)


def raw(op_type, shape, dtype=tf.float32, seed=0, seed2=0):
    return apply_op(op_type, [shape], {"dtype": dtype, "seed": seed, "seed2": seed2}).outputs[0]


def seeds(t):
    return t.op.attrs["seed"], t.op.attrs["seed2"]


# ------------------------------------------------------------------------------ definitions and names
def test_random_ops_are_stateful_so_passes_never_fold_or_merge_them():
    for op_type in RANDOM_OPS:
        assert get_op_def(op_type).is_stateful, op_type


def test_uniform_float_int_shuffle_and_multinomial_node_names():
    g = tf.get_default_graph()
    tf.random_uniform([6], seed=2)
    tf.random_uniform([8], minval=0, maxval=100, dtype=tf.int32, seed=4)
    tf.random_shuffle(tf.range(10), seed=6)
    tf.multinomial([[0.0, 1.0]], 8, seed=7)
    tf.random.categorical([[0.0, 1.0]], 3, seed=8)
    names = [(op.name, op.type) for op in g.get_operations()]
    for want in [("random_uniform/shape", "Const"), ("random_uniform/RandomUniform", "RandomUniform"),
                 ("random_uniform_1/min", "Const"), ("random_uniform_1/max", "Const"),
                 ("random_uniform_1", "RandomUniformInt"), ("RandomShuffle", "RandomShuffle"),
                 ("multinomial/logits", "Const"), ("multinomial/Multinomial/num_samples", "Const"),
                 ("multinomial/Multinomial", "Multinomial"), ("categorical/Multinomial", "Multinomial")]:
        assert want in names
    assert not any(n.startswith("random_uniform/m") for n, _ in names)  # [0, 1) floats: no min/max/Mul


def test_scaled_wrappers_build_tensorflows_nodes():
    g = tf.get_default_graph()
    n = tf.random_normal([6], seed=1)
    t = tf.truncated_normal([6], mean=1.0, stddev=2.0, seed=3)
    u = tf.random_uniform([2, 3], minval=-1.0, maxval=1.0, dtype=tf.float64, seed=5)
    m = tf.random_uniform([2], maxval=5.0, seed=6)
    assert (n.op.name, n.op.type) == ("random_normal", "AddV2")
    assert [op.name for op in g.get_operations()][:6] == [
        "random_normal/shape", "random_normal/mean", "random_normal/stddev",
        "random_normal/RandomStandardNormal", "random_normal/mul", "random_normal"]
    assert t.op.name == "truncated_normal" and t.op.inputs[0].op.inputs[0].op.type == "TruncatedNormal"
    assert (u.op.name, u.dtype) == ("random_uniform", tf.float64)
    assert [i.op.name for i in u.op.inputs] == ["random_uniform/mul", "random_uniform/min"]
    assert u.op.inputs[0].op.inputs[1].op.name == "random_uniform/sub"
    assert (m.op.name, m.op.type) == ("random_uniform_1/Mul", "Mul")
    assert n.shape.as_list() == [6] and u.shape.as_list() == [2, 3]


# ------------------------------------------------------------------------------ seeds
def test_seed_derivation_follows_tensorflow():
    assert seeds(tf.random_uniform([1])) == (0, 0)  # neither: nondeterministic
    assert seeds(tf.random_uniform([1], seed=77)) == (87654321, 77)  # op seed only
    tf.set_random_seed(1234)
    assert seeds(tf.random_uniform([1])) == (1234, 0)  # graph seed only: a per-graph counter
    assert seeds(tf.random_uniform([1], seed=5)) == (1234, 5)
    assert seeds(tf.random_uniform([1])) == (1234, 1)
    assert seeds(tf.random_uniform([1], seed=2**31 + 5)) == (1234, 6)  # truncated mod 2**31 - 1
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        assert seeds(tf.random_uniform([1], seed=0)) == (0, 2**31 - 1)  # (0, 0) would mean "random"
        assert seeds(tf.random_uniform([1])) == (0, 2**31 - 1)  # the counter's first value is 0 too
        assert seeds(tf.random_uniform([1])) == (0, 1)
    with tf.Graph().as_default():
        tf.set_random_seed(1234)
        assert seeds(tf.random_uniform([1])) == (1234, 0)  # each graph counts from 0
    assert tf.random.get_seed(None) == (1234, 2)


def test_get_seed_without_ops():
    assert random_ops.get_seed(None) == (None, None)
    assert random_ops.get_seed(3) == (87654321, 3)
    tf.set_random_seed(-1)
    assert random_ops.get_seed(None) == (2**31 - 2, 0)


# ------------------------------------------------------------------------------ TensorFlow's streams
def test_uniform_ints_shuffle_and_multinomial_match_tensorflow():
    tf.set_random_seed(1234)
    u = tf.random_uniform([6], seed=2)
    ints = tf.random_uniform([8], minval=0, maxval=100, dtype=tf.int32, seed=4)
    shuffled = tf.random_shuffle(tf.constant(np.arange(10, dtype=np.int32)), seed=6)
    draws = tf.multinomial(tf.constant(np.log([[0.1, 0.2, 0.7]]).astype(np.float32)), 8, seed=7)
    with tf.Session() as sess:
        first_u, first_i = sess.run([u, ints])
        assert g6(first_u) == "0.527629 0.830138 0.05072 0.231282 0.675649 0.0169933"
        assert g6(first_i) == "76 54 36 42 97 44 29 62" and first_i.dtype == np.int32
        assert g6(sess.run(u)) == "0.771657 0.989291 0.96014 0.771758 0.185043 0.856157"
        assert g6(sess.run(shuffled)) == "5 1 9 6 3 2 8 0 4 7"
        out = sess.run(draws)
        assert g6(out) == "2 2 2 1 2 2 1 2" and out.dtype == np.int64 and out.shape == (1, 8)


def test_raw_normal_truncated_and_double_streams_match_tensorflow():
    n = raw("RandomStandardNormal", [6], seed=1234, seed2=1)
    t = raw("TruncatedNormal", [6], seed=1234, seed2=3)
    d = raw("RandomUniform", [2, 3], tf.float64, seed=1234, seed2=5)
    lone = raw("RandomStandardNormal", [5], seed=87654321, seed2=77)
    with tf.Session() as sess:
        a, b, c, e = sess.run([n, t, d, lone])
        assert g6(a) == "-0.323648 1.85774 0.39557 0.23117 0.24244 -1.94858"
        assert g6(b * np.float32(2) + np.float32(1)) == "0.72275 0.504215 0.556405 2.8313 1.65109 -0.0035094"
        assert c.dtype == np.float64 and c.shape == (2, 3)
        assert g6(c * 2.0 - 1.0) == "-0.693305 -0.0464845 0.620583 -0.097005 0.217338 0.891147"
        assert g6(e) == "0.225701 0.53865 0.035636 3.45275 0.922927"
        assert g6(sess.run(n)) == "1.47337 0.0325499 -0.401394 -0.453159 -1.26315 0.641258"


def test_t23_wrapper_streams_match_tensorflow():
    tf.set_random_seed(1234)
    normal = tf.random_normal([6], seed=1)
    trunc = tf.truncated_normal([6], mean=1.0, stddev=2.0, seed=3)
    doubles = tf.random_uniform([2, 3], minval=-1.0, maxval=1.0, dtype=tf.float64, seed=5)
    graph_only = tf.random_normal([4])
    twin = tf.random_normal([6], seed=1)
    with tf.Session() as sess:
        a, b, c, d = sess.run([normal, trunc, doubles, graph_only])
        assert g6(a) == "-0.323648 1.85774 0.39557 0.23117 0.24244 -1.94858"
        assert g6(b) == "0.72275 0.504215 0.556405 2.8313 1.65109 -0.0035094"
        assert g6(c) == "-0.693305 -0.0464845 0.620583 -0.097005 0.217338 0.891147"
        assert g6(d) == "-0.302002 1.99549 -1.43466 -2.59828"
        assert g6(sess.run(normal)) == "1.47337 0.0325499 -0.401394 -0.453159 -1.26315 0.641258"
        np.testing.assert_array_equal(sess.run(twin), a)


# ------------------------------------------------------------------------------ stream semantics
def test_repeated_runs_advance_and_new_sessions_restart():
    tf.set_random_seed(42)
    u = tf.random_uniform([3, 2], seed=1)
    with tf.Session() as sess:
        first, second = sess.run(u), sess.run(u)
        together = sess.run([u, u])  # one fetch, one execution
        assert not np.array_equal(first, second)
        np.testing.assert_array_equal(together[0], together[1])
        assert not np.array_equal(together[0], second)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(u), first)


def test_identical_ops_keep_separate_streams_and_rebuilt_graphs_repeat():
    def build():
        tf.set_random_seed(7)
        a = tf.random_uniform([4], seed=3)
        b = tf.random_uniform([4], seed=3)
        c = tf.random_uniform([4])
        return a, b, c

    a, b, c = build()
    with tf.Session() as sess:
        va, vb, vc = sess.run([a, b, c])
        np.testing.assert_array_equal(va, vb)
        a2, b2 = sess.run(a), sess.run(b)
        assert not np.array_equal(a2, va)
        np.testing.assert_array_equal(a2, b2)
    with tf.Graph().as_default():
        a2, _, c2 = build()
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(a2), va)
            np.testing.assert_array_equal(sess.run(c2), vc)


def test_unseeded_ops_differ_between_sessions():
    u = tf.random_uniform([16])
    with tf.Session() as s1, tf.Session() as s2:
        assert not np.array_equal(s1.run(u), s2.run(u))


def test_failed_run_does_not_advance_the_stream():
    lo = tf.placeholder(tf.int64, [])
    hi = tf.placeholder(tf.int64, [])
    r = tf.random_uniform([5], minval=lo, maxval=hi, dtype=tf.int64, seed=9)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, got 4 >= 4"):
            sess.run(r, {lo: 4, hi: 4})
        after_error = sess.run(r, {lo: -3, hi: 1000})
        empty = tf.random_uniform([0], minval=lo, maxval=hi, dtype=tf.int64, seed=9)
        assert sess.run(empty, {lo: 4, hi: 4}).shape == (0,)  # zero impossible draws are fine
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(r, {lo: -3, hi: 1000}), after_error)
    assert after_error.dtype == np.int64 and after_error.min() >= -3 and after_error.max() < 1000


# ------------------------------------------------------------------------------ shapes and dtypes
def test_shape_as_tuple_tensorshape_tensor_and_scalar():
    dims = tf.placeholder(tf.int32, [2])
    a = tf.random_uniform((2, 3), seed=1)
    b = tf.random_uniform(tf.TensorShape([4]), seed=1)
    c = tf.random_uniform(dims, seed=1)
    d = tf.random_uniform([], seed=1)
    e = tf.random_uniform([0, 5], seed=1)
    f = tf.random_uniform(np.array([3], dtype=np.int64), seed=1)
    assert a.shape.as_list() == [2, 3] and b.shape.as_list() == [4]
    assert c.shape.as_list() == [None, None] and d.shape.as_list() == [] and f.shape.as_list() == [3]
    assert f.op.inputs[0].dtype == tf.int64
    with tf.Session() as sess:
        va, vc, vd, ve = sess.run([a, c, d, e], {dims: [5, 7]})
    assert va.shape == (2, 3) and vc.shape == (5, 7) and np.shape(vd) == () and ve.shape == (0, 5)
    assert va.dtype == vc.dtype == np.float32


def test_float_dtypes():
    h = tf.random_uniform([100], dtype=tf.float16, seed=1)
    bf = raw("RandomStandardNormal", [50], tf.bfloat16, seed=1, seed2=2)
    d = raw("TruncatedNormal", [51], tf.float64, seed=1, seed2=3)
    assert (h.dtype, bf.dtype, d.dtype) == (tf.float16, tf.bfloat16, tf.float64)
    with tf.Session() as sess:
        vh, vb, vd = sess.run([h, bf, d])
    assert vh.dtype == np.float16 and 0 <= vh.min() and vh.max() < 1
    assert (vb.view(np.uint32) & 0xFFFF == 0).all()  # bfloat16 values, stored as float32
    assert vd.dtype == np.float64 and np.abs(vd).max() < 2


def test_int64_uniform_covers_its_range():
    r = tf.random_uniform([20000], minval=3, maxval=9, dtype=tf.int64, seed=13)
    with tf.Session() as sess:
        v = sess.run(r)
    assert v.dtype == np.int64 and sorted(set(v.tolist())) == [3, 4, 5, 6, 7, 8]
    assert abs(v.mean() - 5.5) < 0.05


def test_shuffle_rows_scalars_and_strings():
    m = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    rows = tf.random_shuffle(m, seed=3)
    one = tf.random_shuffle(tf.constant([[1, 2, 3]]), seed=3)
    words = tf.random_shuffle(tf.constant(["a", "b", "c", "d"]), seed=4)
    with tf.Session() as sess:
        vr, vo, vw = sess.run([rows, one, words])
    assert rows.shape.as_list() == [6, 2]
    assert sorted(map(tuple, vr.tolist())) == [(2.0 * i, 2.0 * i + 1) for i in range(6)]
    assert vo.tolist() == [[1, 2, 3]]
    assert sorted(vw.tolist()) == [b"a", b"b", b"c", b"d"]


def test_multinomial_output_dtype_shape_and_impossible_classes():
    logits = tf.constant([[0.0, -np.inf, 1.0], [5.0, 5.0, -np.inf]], dtype=tf.float32)
    s = tf.multinomial(logits, 2000, seed=1, output_dtype=tf.int32)
    c = tf.random.categorical(logits, 7, seed=2)
    assert s.shape.as_list() == [2, 2000] and s.dtype == tf.int32 and c.dtype == tf.int64
    with tf.Session() as sess:
        vs = sess.run(s)
    assert set(vs[0].tolist()) == {0, 2} and set(vs[1].tolist()) == {0, 1}
    assert abs((vs[0] == 2).mean() - np.e / (1 + np.e)) < 0.04


def test_large_draw_statistics():
    n = raw("RandomStandardNormal", [200000], seed=5, seed2=1)
    t = raw("TruncatedNormal", [200000], seed=5, seed2=2)
    with tf.Session() as sess:
        vn, vt = sess.run([n, t])
    assert abs(vn.mean()) < 0.01 and abs(vn.std() - 1) < 0.01
    assert np.abs(vt).max() < 2 and abs(vt.std() - 0.8796) < 0.01


# ------------------------------------------------------------------------------ errors
def test_wrapper_argument_errors():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="invalid value"):
        tf.random_uniform([2], dtype=tf.string)
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="invalid value"):
        tf.multinomial([[0.0, 1.0]], 3, output_dtype=tf.float32)
    with pytest.raises(ValueError, match="rank"):
        tf.multinomial([0.0, 1.0], 3)
    with pytest.raises(ValueError, match="minval must be a scalar"):
        tf.random_uniform([2], minval=[0, 1], maxval=5, dtype=tf.int32)


def test_runtime_shape_errors():
    dims = tf.placeholder(tf.int32, [None])
    r = tf.random_uniform(dims, seed=1)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -2 must be >= 0"):
            sess.run(r, {dims: [3, -2]})
        assert sess.run(r, {dims: [2]}).shape == (2,)

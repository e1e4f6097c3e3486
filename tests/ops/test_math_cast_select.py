"""Cast, saturate_cast, clip_by_value and where / where_v2 (Select, SelectV2, Where) against NumPy."""

import numpy as np
import pytest

import sparseflow as tf

RNG = np.random.default_rng(3)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


CAST_PAIRS = [(np.float32, np.int32), (np.float64, np.int64), (np.int32, np.float32), (np.int64, np.int32),
              (np.float32, np.bool_), (np.int32, np.bool_), (np.bool_, np.float32), (np.float32, np.float16),
              (np.uint8, np.int32), (np.int32, np.uint8), (np.float32, np.float64),
              (np.complex64, np.float32), (np.float32, np.complex128)]


@pytest.mark.parametrize("src,dst", CAST_PAIRS, ids=[f"{np.dtype(a).name}-{np.dtype(b).name}"
                                                     for a, b in CAST_PAIRS])
def test_cast_matches_numpy(src, dst):
    if np.dtype(src) == np.bool_:
        x = RNG.random((3, 4)) > 0.5
    elif np.dtype(src).kind == "c":
        x = (RNG.normal(size=(3, 4)) * 5 + 1j).astype(src)
    elif np.dtype(src).kind == "u":
        x = RNG.integers(0, 255, size=(3, 4)).astype(src)
    else:
        x = (RNG.normal(size=(3, 4)) * 5).astype(src)
        x[0, 0] = 0
    t = tf.cast(x, dst)
    assert t.op.type == "Cast" and t.dtype.as_numpy_dtype == dst and t.shape.as_list() == [3, 4]
    assert t.op.attrs["Truncate"] is False
    got, empty = run([t, tf.cast(np.zeros((0, 2), src), dst)])
    want = np.real(x).astype(dst) if np.dtype(src).kind == "c" else x.astype(dst)
    assert got.dtype == dst and empty.dtype == dst and empty.shape == (0, 2)
    np.testing.assert_array_equal(got, want)


def test_cast_names_identity_and_variants():
    x = tf.constant([1.5, -2.5])
    assert tf.cast(x, tf.float32) is x
    c = tf.cast([1, 2], tf.float32)
    assert c.op.name == "Cast" and c.op.inputs[0].op.name == "Cast/x"
    assert tf.to_float(tf.constant([1])).op.name == "ToFloat"
    assert tf.to_int64(x).dtype == tf.int64 and tf.to_double(x).dtype == tf.float64
    assert tf.to_int32(x, name="i").op.name == "i"
    np.testing.assert_array_equal(run(tf.cast(x, tf.int32)), [1, -2])
    assert run(tf.cast(2.9, tf.int32)) == 2
    sp = tf.cast(tf.SparseTensor([[0, 0]], [1.5], [2, 2]), tf.int32)
    assert isinstance(sp, tf.SparseTensor) and sp.values.dtype == tf.int32
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float"):
        run(tf.cast(tf.constant(["1"]), tf.float32))


def test_saturate_cast():
    x = tf.constant([-300.0, -1.5, 7.5, 300.0, 1e10])
    u8, i32 = tf.saturate_cast(x, tf.uint8), tf.saturate_cast(x, tf.int32)
    assert u8.op.inputs[0].op.type == "ClipByValue" and u8.op.inputs[0].op.name == "saturate_cast/clamp"
    got_u8, got_i32 = run([u8, i32])
    np.testing.assert_array_equal(got_u8, [0, 0, 7, 255, 255])
    assert got_i32[-1] == 2147483520 and got_i32[0] == -300
    np.testing.assert_array_equal(run(tf.saturate_cast(tf.constant([-5, 70000]), tf.int16)), [-5, 32767])


def test_clip_by_value():
    x = RNG.normal(size=(3, 4)).astype(np.float32) * 3
    t = tf.clip_by_value(x, -1.0, 1.5)
    assert t.op.type == "Maximum" and t.op.name == "clip_by_value"
    assert t.op.inputs[0].op.type == "Minimum"
    lo, hi = np.full((4,), -0.5, np.float32), np.float32(2.0)
    got = run([t, tf.clip_by_value(x, lo, hi), tf.clip_by_value(np.array([5, -5]), 0, 3)])
    np.testing.assert_array_equal(got[0], np.clip(x, -1.0, 1.5))
    np.testing.assert_array_equal(got[1], np.clip(x, lo, hi))
    np.testing.assert_array_equal(got[2], [3, 0])
    with pytest.raises(ValueError, match="incompatible"):
        tf.clip_by_value(np.zeros((2,), np.float32), np.zeros((3, 2), np.float32), 1.0)
    from sparseflow._src.ops.math_cwise import apply1

    op = apply1("ClipByValue", [x, -1.0, 1.5])
    np.testing.assert_array_equal(run(op), np.clip(x, -1.0, 1.5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="clip_value_min"):
        run(apply1("ClipByValue", [x, np.zeros(2, np.float32), 1.0]))


def test_where_one_argument():
    x = np.array([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]], np.float32)
    w = tf.where(x > 2.0)
    assert w.dtype == tf.int64 and w.shape.as_list() == [None, 2] and w.op.type == "Where"
    np.testing.assert_array_equal(run(w), np.argwhere(x > 2.0))
    np.testing.assert_array_equal(run(tf.where(x)), np.argwhere(x))
    assert run(tf.where(np.zeros((0, 3), bool))).shape == (0, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unhandled input dimensions: 0"):
        run(tf.where(True))  # a scalar condition has no coordinates: TensorFlow 2.21 raises too
    assert tf.where(tf.placeholder(tf.bool)).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(x > 1.0, x)


def test_where_select_v1_semantics():
    x = RNG.normal(size=(3, 2)).astype(np.float32)
    y = -x
    c = x > 0
    full = tf.where(c, x, y)
    rows = tf.where([True, False, True], x, y)
    scalar = tf.where(True, x, y)
    assert full.op.type == "Select" and full.op.name == "Select" and rows.shape.as_list() == [3, 2]
    got = run([full, rows, scalar])
    np.testing.assert_array_equal(got[0], np.where(c, x, y))
    np.testing.assert_array_equal(got[1], np.where(np.array([True, False, True])[:, None], x, y))
    np.testing.assert_array_equal(got[2], x)
    assert tf.where(c, x, np.zeros((3, 2), np.float32)).op.inputs[2].op.name == "Select_3/e"
    with pytest.raises(ValueError, match="not compatible"):  # TF1's Select does not broadcast
        tf.where(c, x, 0.0)
    with pytest.raises(ValueError):
        tf.where([True, False], x, y)
    with pytest.raises(ValueError):
        tf.where(c, x, np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError):
        tf.where(c, tf.constant(x), tf.constant(np.zeros((3, 2), np.int32)))
    with pytest.raises(TypeError):
        tf.where(tf.constant(x), x, y)
    p = tf.placeholder(tf.bool, [None])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.where(p, tf.placeholder_with_default(x, [None, 2]), y), {p: [True, False]})


def test_where_v2_broadcasts():
    c = np.array([[True], [False]])
    x = np.array([1, 2, 3], np.int32)
    t = tf.where_v2(c, x, 0)
    assert t.op.type == "SelectV2" and t.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(run(t), np.where(c, x, 0))
    p = tf.placeholder(tf.bool, [None, 1])
    assert tf.where_v2(p, x, tf.placeholder(tf.int32, [4, 1, 1])).shape.as_list() == [4, None, 3]
    np.testing.assert_array_equal(run(tf.where_v2([True, False])), [[0]])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.where_v2([True, False], x, 0)

"""Joining, splitting, tiling, padding and reversing against NumPy, plus list autopacking."""

import numpy as np
import pytest

import sparseflow as tf

rng = np.random.default_rng(1)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def rand(shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 10).astype(dtype)


STRINGS = np.array([[b"a", b"bc"], [b"", b"d"]], dtype=object)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, object])
def test_concat_matches_numpy(dtype):
    a = STRINGS if dtype is object else rand([2, 2], dtype)
    b = np.concatenate([a, a[:1]]) if dtype is object else rand([3, 2], dtype)
    pa = tf.placeholder(tf.as_dtype(dtype), [None, 2])
    y = tf.concat([pa, b], axis=0)
    z = tf.concat([pa, pa], axis=-1)
    assert y.op.type == "ConcatV2" and y.op.name == "concat"
    assert y.shape.as_list() == [None, 2] and z.shape.as_list() == [None, 4]
    got = run([y, z], {pa: a})
    np.testing.assert_array_equal(got[0], np.concatenate([a, b]))
    np.testing.assert_array_equal(got[1], np.concatenate([a, a], axis=1))


def test_concat_static_shapes_and_single_input():
    assert tf.concat([tf.zeros([2, 3]), tf.zeros([4, 3])], 0).shape.as_list() == [6, 3]
    assert tf.concat([tf.zeros([2, 3]), tf.placeholder(tf.float32)], 1).shape.as_list() == [2, None]
    assert tf.concat([tf.zeros([2, 3]), tf.zeros([2, 0])], 1).shape.as_list() == [2, 3]
    ax = tf.placeholder(tf.int32, [])
    assert tf.concat([tf.zeros([2, 3]), tf.zeros([2, 3])], ax).shape.as_list() == [None, None]
    with tf.Graph().as_default():
        single = tf.concat([tf.zeros([2])], 0)
        assert single.op.type == "Identity" and single.op.name == "concat"
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 4"):
        tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0)
    with pytest.raises(ValueError, match="Can't concatenate scalars"):
        tf.concat([1.0, 2.0], ax)


def test_concat_runtime_errors():
    a = tf.placeholder(tf.float32, [None, None])
    y = tf.concat([a, tf.zeros([2, 2])], 0, name="joined")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension 1 in both shapes must be equal") as e:
        run(y, {a: np.zeros([1, 3])})
    assert "joined" in str(e.value)
    ax = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="range"):
        run(tf.concat([tf.zeros([2]), tf.zeros([2])], ax), {ax: 3})


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_unstack(axis):
    xs = [rand([3, 4]) for _ in range(2)]
    ps = [tf.placeholder(tf.float32, [None, 4]) for _ in xs]
    s = tf.stack(ps, axis=axis)
    expected = np.stack(xs, axis=axis)
    assert s.op.type == "Pack" and s.op.name == "stack"
    assert s.shape.as_list() == [None if d == 3 else d for d in expected.shape]
    np.testing.assert_array_equal(run(s, dict(zip(ps, xs))), expected)
    parts = tf.unstack(tf.constant(expected), axis=axis)
    assert len(parts) == expected.shape[axis] and parts[0].op.type == "Unpack"
    for got, want in zip(run(parts), np.moveaxis(expected, axis, 0)):
        np.testing.assert_array_equal(got, want)


def test_stack_of_constants_is_a_constant_and_errors():
    c = tf.stack([[1, 2], [3, 4]])
    assert c.op.type == "Const" and c.op.name == "stack"
    with pytest.raises(ValueError, match=r"axis` = 3 not in range \[-3, 3\)"):
        tf.stack([tf.zeros([2, 2]), tf.zeros([2, 2])], axis=3)
    with pytest.raises(ValueError, match="From merging shape 0"):
        tf.stack([tf.zeros([2]), tf.zeros([3])], axis=1)
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        run(tf.stack([p, tf.zeros([2])], axis=1), {p: np.zeros(3)})


def test_autopacking_lists_with_tensors():
    i = tf.placeholder(tf.int32, [])
    t = tf.convert_to_tensor([i, 2, 3])
    assert t.op.type == "Pack" and t.op.name == "packed" and t.shape.as_list() == [3]
    assert t.op.inputs[1].op.name == "packed/1"
    np.testing.assert_array_equal(run(t, {i: 7}), [7, 2, 3])
    nested = tf.convert_to_tensor([[i, 1], [2, 3]])
    assert nested.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(run(nested, {i: 5}), [[5, 1], [2, 3]])
    v = tf.concat([tf.zeros([2]), [tf.constant(4.0)]], axis=0)
    np.testing.assert_array_equal(run(v), [0, 0, 4])
    with pytest.raises((TypeError, ValueError)):
        tf.convert_to_tensor([tf.constant(1.0), tf.constant(1)])


def test_split_num_and_sizes():
    x = rand([4, 6])
    p = tf.placeholder(tf.float32, [None, 6])
    even = tf.split(p, 3, axis=1)
    uneven = tf.split(p, [1, -1, 3], axis=1)
    assert even[0].op.type == "Split" and uneven[0].op.type == "SplitV"
    assert [t.shape.as_list() for t in even] == [[None, 2]] * 3
    assert [t.shape.as_list() for t in uneven] == [[None, 1], [None, 2], [None, 3]]
    got = run(even + uneven, {p: x})
    for g, w in zip(got, np.split(x, 3, axis=1) + np.split(x, [1, 3], axis=1)):
        np.testing.assert_array_equal(g, w)
    rows = tf.split(tf.constant(x), [4, 0], axis=0)
    assert run(rows[1]).shape == (0, 6)


def test_split_errors():
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
        tf.split(tf.zeros([2, 6]), 4, axis=1)
    with pytest.raises(ValueError, match="can't split axis of size 6"):
        tf.split(tf.zeros([2, 6]), [1, 2], axis=1)
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.split(tf.zeros([6]), tf.placeholder(tf.int32, [None]))
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divide"):
        run(tf.split(p, 2), {p: np.zeros(5)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Determined shape must either match"):
        run(tf.split(p, [2, 2]), {p: np.zeros(5)})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, object])
def test_tile(dtype):
    x = STRINGS if dtype is object else rand([2, 2], dtype)
    p = tf.placeholder(tf.as_dtype(dtype), [None, 2])
    y = tf.tile(p, [3, 2])
    assert y.op.type == "Tile" and y.shape.as_list() == [None, 4]
    np.testing.assert_array_equal(run(y, {p: x}), np.tile(x, [3, 2]))
    assert tf.tile(tf.zeros([2, 3]), [0, 2]).shape.as_list() == [0, 6]
    with pytest.raises(tf.errors.InvalidArgumentError, match="length 2 but got length 3"):
        m = tf.placeholder(tf.int32, [None])
        run(tf.tile(p, m), {p: x, m: [1, 1, 1]})


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_modes(mode):
    x = rand([3, 4])
    pads = [[1, 2], [2, 0]]
    p = tf.placeholder(tf.float32, [None, 4])
    y = tf.pad(p, pads, mode=mode.lower())
    assert y.op.type == {"CONSTANT": "Pad", "REFLECT": "MirrorPad", "SYMMETRIC": "MirrorPad"}[mode]
    assert y.shape.as_list() == [None, 6]
    np.testing.assert_array_equal(run(y, {p: x}), np.pad(x, pads, mode=mode.lower()))


def test_pad_constant_values_and_errors():
    x = rand([2, 3]).astype(np.int32)
    y = tf.pad(x, [[0, 1], [1, 1]], constant_values=9)
    assert y.op.type == "PadV2" and y.shape.as_list() == [3, 5]
    np.testing.assert_array_equal(run(y), np.pad(x, [[0, 1], [1, 1]], constant_values=9))
    s = tf.pad(tf.constant(STRINGS), [[1, 0], [0, 0]])
    assert run(s)[0].tolist() == [b"", b""]
    with pytest.raises(ValueError, match="mode"):
        tf.pad(x, [[0, 0], [0, 0]], mode="WRAP")
    with pytest.raises(ValueError, match="Paddings must be non-negative"):
        tf.pad(x, [[0, -1], [0, 0]])
    p = tf.placeholder(tf.int32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="less than the dimension size"):
        run(tf.pad(tf.zeros([2, 2]), p, mode="REFLECT"), {p: [[2, 0], [0, 0]]})


def test_reverse_and_reverse_sequence():
    x = rand([3, 4, 2])
    p = tf.placeholder(tf.float32, [None, 4, 2])
    y = tf.reverse(p, [0, -1])
    assert y.op.type == "ReverseV2" and y.shape.as_list() == [None, 4, 2]
    np.testing.assert_array_equal(run(y, {p: x}), x[::-1, :, ::-1])
    with pytest.raises(ValueError, match="specified more than once"):
        tf.reverse(tf.zeros([2, 2]), [1, -1])
    lens = [2, 4, 0]
    r = tf.reverse_sequence(p, lens, seq_axis=1, batch_axis=0)
    assert r.op.type == "ReverseSequence" and r.shape.as_list() == [3, 4, 2]
    expected = x.copy()
    for b, n in enumerate(lens):
        expected[b, :n] = x[b, :n][::-1]
    np.testing.assert_array_equal(run(r, {p: x}), expected)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_lens"):
        run(tf.reverse_sequence(p, [5, 1, 1], seq_axis=1), {p: x})


def test_concat_offset():
    from sparseflow._src.framework.op_def_library import apply_op

    offsets = apply_op("ConcatOffset", [1, [[2, 3, 5], [2, 7, 5], [2, 1, 5]]]).outputs
    got = run(offsets)
    assert [g.tolist() for g in got] == [[0, 0, 0], [0, 3, 0], [0, 10, 0]]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("axis", [1, 2, -1])
def test_a_large_concat_in_blocks_of_rows_equals_numpy(threads, axis, monkeypatch):
    from sparseflow._src.kernels import intra_op

    monkeypatch.setattr(intra_op, "_threads", threads)
    a, b = rand((700, 30, 8)), rand((700, 5, 8) if axis == 1 else (700, 30, 5))
    with tf.Graph().as_default():
        got = run(tf.concat([tf.placeholder_with_default(a, None), tf.placeholder_with_default(b, None)], axis))
    np.testing.assert_array_equal(got, np.concatenate([a, b], axis))

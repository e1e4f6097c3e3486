"""State ops on reference variables: Assign*, Scatter*, ScatterNd*, CountUpTo, IsVariableInitialized."""

import numpy as np
import pytest

import sparseflow as tf

RNG = np.random.default_rng(7)


def _run_after_init(fetches, *variables):
    with tf.Session() as sess:
        sess.run(tf.variables_initializer(list(variables)))
        return sess.run(fetches)


def test_op_types_names_dtypes_and_static_shapes():
    v = tf.Variable(np.zeros([4, 3], np.float32), name="v")
    ops = [tf.assign(v, np.ones([4, 3], np.float32)), tf.assign_add(v, np.ones([4, 3], np.float32)),
           tf.assign_sub(v, np.ones([4, 3], np.float32)), tf.scatter_update(v, [0], [[1.0, 2.0, 3.0]]),
           tf.scatter_add(v, [0], [[1.0, 2.0, 3.0]]), tf.scatter_nd_update(v, [[1, 2]], [5.0]),
           tf.scatter_nd_add(v, [[1]], [[1.0, 1.0, 1.0]])]
    assert [t.op.name for t in ops] == ["Assign", "AssignAdd", "AssignSub", "ScatterUpdate", "ScatterAdd",
                                        "ScatterNdUpdate", "ScatterNdAdd"]
    for t in ops:
        assert t.dtype == tf.float32._as_ref and t.shape.as_list() == [4, 3]
        assert t.op.inputs[0] is v._ref()
    assert ops[0].op.get_attr("use_locking") is True and ops[1].op.get_attr("use_locking") is False
    c = tf.Variable(0, name="c")
    assert tf.count_up_to(c, 3).op.type == "CountUpTo" and tf.count_up_to(c, 3).dtype == tf.int32
    init = tf.is_variable_initialized(v)
    assert (init.op.type, init.dtype, init.shape.as_list()) == ("IsVariableInitialized", tf.bool, [])


def test_static_shape_errors():
    v = tf.Variable(np.zeros([3], np.float32), name="v")
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 4"):
        tf.assign(v, np.zeros([4], np.float32))
    with pytest.raises(ValueError, match="must be equal"):
        tf.assign_add(v, np.zeros([2], np.float32))
    with pytest.raises(ValueError):
        tf.scatter_update(v, [0, 1], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="l-value"):
        tf.assign(tf.constant([1.0]), [2.0])
    with pytest.raises(TypeError):
        tf.assign_add(tf.Variable([True]), [True])  # not a number type


def test_assign_family_against_numpy():
    x0 = RNG.normal(size=[2, 3]).astype(np.float32)
    d = RNG.normal(size=[2, 3]).astype(np.float32)
    v = tf.Variable(x0, name="v")
    p = tf.placeholder(tf.float32, [2, 3])
    add, sub, put = tf.assign_add(v, p), tf.assign_sub(v, p), tf.assign(v, p)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(add, {p: d}), x0 + d, rtol=1e-6)
        np.testing.assert_allclose(sess.run(sub, {p: d}), x0, rtol=1e-6)
        np.testing.assert_array_equal(sess.run(put, {p: d}), d)
        np.testing.assert_array_equal(sess.run(v), d)


def test_runtime_errors():
    v = tf.Variable([1.0, 2.0], validate_shape=False, name="v")
    add = tf.assign_add(v, tf.placeholder_with_default([1.0, 2.0, 3.0], [None]))
    strict = tf.assign(v, tf.placeholder_with_default([1.0, 2.0, 3.0], [None]))
    u = tf.Variable([1.0], name="u")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
            sess.run(add)
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be the same size"):
            sess.run(add)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Assign requires shapes of both tensors"):
            sess.run(strict)
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value u"):
            sess.run(tf.scatter_add(u, [0], [1.0]))


@pytest.mark.parametrize("fn, ufunc", [(tf.scatter_add, np.add), (tf.scatter_sub, np.subtract),
                                       (tf.scatter_mul, np.multiply), (tf.scatter_div, np.divide),
                                       (tf.scatter_min, np.minimum), (tf.scatter_max, np.maximum)])
def test_scatter_arithmetic_with_duplicate_indices(fn, ufunc):
    x0 = RNG.uniform(1, 2, size=[5, 2]).astype(np.float32)
    idx = np.array([[0, 3], [3, 4]], np.int64)
    upd = RNG.uniform(1, 2, size=[2, 2, 2]).astype(np.float32)
    v = tf.Variable(x0, name="v")
    got = _run_after_init(fn(v, idx, upd), v)
    want = x0.copy()
    ufunc.at(want, idx.reshape(-1), upd.reshape(-1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_update_scalar_updates_and_integer_division():
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="v")
    got = _run_after_init(tf.scatter_update(v, [2, 0], 7.0), v)
    want = np.arange(12, dtype=np.float32).reshape(4, 3)
    want[[2, 0]] = 7.0
    np.testing.assert_array_equal(got, want)
    w = tf.Variable([7, -7, 9], name="w")
    divided = _run_after_init(tf.scatter_div(w, [0, 1, 2, 2], [2, 2, 2, 2]), w)
    np.testing.assert_array_equal(divided, [3, -3, 2])  # rounds toward zero; duplicates divide twice


def test_scatter_bad_index():
    v = tf.Variable(np.zeros([3, 2], np.float32), name="v")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 3\)"):
        _run_after_init(tf.scatter_update(v, [0, 5], np.ones([2, 2], np.float32)), v)


def test_scatter_nd_family_against_numpy():
    x0 = RNG.normal(size=[3, 4]).astype(np.float32)
    v = tf.Variable(x0, name="v")
    elems = tf.scatter_nd_update(v, [[0, 1], [2, 3]], [10.0, 20.0])
    rows = tf.scatter_nd_add(v, [[1], [1]], np.ones([2, 4], np.float32))
    sub = tf.scatter_nd_sub(v, [[2, 0]], [1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        want = x0.copy()
        want[0, 1], want[2, 3] = 10.0, 20.0
        np.testing.assert_allclose(sess.run(elems), want)
        want[1] += 2.0
        np.testing.assert_allclose(sess.run(rows), want, rtol=1e-6)
        want[2, 0] -= 1.0
        np.testing.assert_allclose(sess.run(sub), want, rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
            sess.run(tf.scatter_nd_update(v, [[3, 0]], [1.0]))
    with pytest.raises(ValueError, match="updates has shape"):
        tf.scatter_nd_update(v, [[0, 1]], [[1.0, 2.0]])


def test_count_up_to():
    c = tf.Variable(np.int64(0), name="c")
    nxt = tf.count_up_to(c, 2)
    with tf.Session() as sess:
        sess.run(c.initializer)
        assert [sess.run(nxt), sess.run(nxt)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(nxt)
        assert sess.run(c) == 2 and sess.run(c).dtype == np.int64


def test_identity_of_a_variable_reads_it_when_used_and_fetched_values_never_change():
    # As TensorFlow's Identity aliases the variable's buffer, its users (here the fetch, at the end of
    # the step) read the value when they run: TF 2.21 prints [11, 12] for `before` too. A value
    # handed to the caller never changes afterwards.
    v = tf.Variable([1.0, 2.0], name="v")
    before = tf.identity(v)
    with tf.control_dependencies([before]):
        bumped = tf.assign_add(v, [10.0, 10.0])
    scat = tf.scatter_add(v, [0], [100.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        b, a = sess.run([before, bumped])
        np.testing.assert_array_equal(b, [11.0, 12.0])
        np.testing.assert_array_equal(a, [11.0, 12.0])
        fetched = sess.run(v)
        sess.run(scat)
        np.testing.assert_array_equal(fetched, [11.0, 12.0])
        np.testing.assert_array_equal(sess.run(v), [111.0, 12.0])


def test_is_variable_initialized_and_shared_state_between_runs():
    v = tf.Variable(5, name="v")
    flag = tf.is_variable_initialized(v)
    with tf.Session() as sess:
        assert not sess.run(flag)
        sess.run(tf.assign(v, 6))
        assert sess.run(flag) and sess.run(v) == 6

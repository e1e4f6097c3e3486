"""Gradient accumulators: averages, staleness, global steps, sparse aggregation by index, shape checks.
Expected values and messages were produced by TensorFlow 2.21 with the same calls."""

import threading

import numpy as np
import pytest

import sparseflow as tf


def _dense(shape=(2,), **kwargs):
    acc = tf.ConditionalAccumulator(tf.float32, shape=list(shape), **kwargs)
    grad = tf.placeholder(tf.float32, list(shape))
    step = tf.placeholder(tf.int64, [])
    return acc, acc.apply_grad(grad, local_step=step), grad, step


def test_take_grad_averages_then_advances_the_global_step():
    acc, apply, g, step = _dense(shared_name="acc1")
    take, count = acc.take_grad(2), acc.num_accumulated()
    assert (acc.accumulator_ref.op.type, acc.name, apply.type, take.op.type) == (
        "ResourceConditionalAccumulator", "conditional_accumulator", "ResourceAccumulatorApplyGradient",
        "ResourceAccumulatorTakeGradient")
    assert take.shape.as_list() == [2] and count.name == "conditional_accumulator_NumAccumulated:0"
    with tf.Session() as sess:
        sess.run(apply, {g: [1, 2], step: 0})
        sess.run(apply, {g: [3, 4], step: 0})
        assert sess.run(count) == 2
        assert sess.run(take).tolist() == [2.0, 3.0]
        assert sess.run(count) == 0
        sess.run(apply, {g: [10, 10], step: 0})  # stale: the accumulator is at step 1 now
        assert sess.run(count) == 0
        sess.run(apply, {g: [10, 10], step: 1})
        sess.run(apply, {g: [20, 20], step: 5})  # newer than the accumulator: accepted
        assert sess.run(take).tolist() == [15.0, 15.0]


def test_set_global_step_moves_the_staleness_bar_both_ways():
    acc, apply, g, step = _dense()
    new_step = tf.placeholder(tf.int64, [])
    set_step, count = acc.set_global_step(new_step), acc.num_accumulated()
    with tf.Session() as sess:
        sess.run(set_step, {new_step: 10})
        sess.run(apply, {g: [1, 1], step: 9})
        assert sess.run(count) == 0
        sess.run(apply, {g: [1, 1], step: 10})
        assert sess.run(count) == 1
        sess.run(set_step, {new_step: 3})  # lower: logged, but applied (as TensorFlow does)
        sess.run(apply, {g: [1, 1], step: 4})
        assert sess.run(count) == 2


def test_sum_reduction_and_shape_checks():
    acc = tf.ConditionalAccumulator(tf.float32, shape=None, reduction_type="SUM")
    with tf.Session() as sess:
        sess.run(acc.apply_grad([[1.0, 2.0]]))
        sess.run(acc.apply_grad([[3.0, 4.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape mismatch: expected \[1,2\], got \[2\]"):
            sess.run(acc.apply_grad([1.0, 2.0]))
        assert sess.run(acc.take_grad(2)).tolist() == [[4.0, 6.0]]
    partial = tf.ConditionalAccumulator(tf.float32, shape=[None, 2])
    with tf.Session() as sess:
        sess.run(partial.apply_grad([[1.0, 2.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected \[1,2\], got \[2,2\]"):
            sess.run(partial.apply_grad([[3.0, 4.0], [5.0, 6.0]]))
        assert sess.run(partial.take_grad(1)).tolist() == [[1.0, 2.0]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be positive, but was 0"):
            sess.run(partial.take_grad(0))
    with pytest.raises(ValueError):
        tf.ConditionalAccumulator(tf.float32, shape=[2]).apply_grad([1.0, 2.0, 3.0])


def test_take_grad_blocks_until_enough_gradients_or_the_deadline():
    acc, apply, g, step = _dense()
    take = acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(apply, {g: [1, 1], step: 0})
        with pytest.raises(tf.errors.DeadlineExceededError, match="waiting for 2 gradients") as info:
            sess.run(take, options=tf.RunOptions(timeout_in_ms=50))
        assert "ResourceAccumulatorTakeGradient" in str(info.value)
        out = {}
        taker = threading.Thread(target=lambda: out.update(v=sess.run(take)))
        taker.start()
        sess.run(apply, {g: [3, 3], step: 0})
        taker.join(20)
        assert out["v"].tolist() == [2.0, 2.0]


def test_accumulators_with_one_shared_name_are_one_accumulator():
    a = tf.ConditionalAccumulator(tf.float32, [2], shared_name="x")
    b = tf.ConditionalAccumulator(tf.float32, [2], shared_name="x")
    c = tf.ConditionalAccumulator(tf.float32, [3], shared_name="x")
    with tf.Session() as sess:
        sess.run(a.apply_grad([1.0, 2.0]))
        assert sess.run(b.num_accumulated()) == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared accumulator 'x' has shape"):
            sess.run(c.num_accumulated())


def _sparse():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=(), shared_name="s1")
    idx = tf.placeholder(tf.int64, [None])
    val = tf.placeholder(tf.float32, [None, 2])
    step = tf.placeholder(tf.int64, [])
    apply = acc.apply_indexed_slices_grad(tf.IndexedSlices(val, idx, tf.constant([5, 2], tf.int64)), local_step=step)
    return acc, apply, idx, val, step


def test_sparse_rows_are_averaged_over_the_gradients_that_have_them():
    acc, apply, idx, val, step = _sparse()
    take = acc.take_indexed_slices_grad(2)
    assert (acc.accumulator_ref.dtype, apply.type, apply.get_attr("has_known_shape")) == (
        tf.string._as_ref, "SparseAccumulatorApplyGradient", True)
    with tf.Session() as sess:
        sess.run(apply, {idx: [0, 2, 5], val: [[1, 1], [2, 2], [3, 3]], step: 0})
        sess.run(apply, {idx: [2, 4], val: [[4, 4], [5, 5]], step: 0})
        got = sess.run(take)
    assert got.indices.tolist() == [0, 2, 4, 5]
    assert got.values.tolist() == [[1, 1], [3, 3], [5, 5], [3, 3]]
    assert got.dense_shape.tolist() == [-1, 2]


def test_sparse_merge_of_unsorted_repeated_indices_is_tensorflows():
    acc, apply, idx, val, step = _sparse()
    take2, take3 = acc.take_indexed_slices_grad(2), acc.take_grad(3)
    with tf.Session() as sess:
        sess.run(apply, {idx: [3, 1, 3], val: [[1, 1], [2, 2], [4, 4]], step: 0})
        sess.run(apply, {idx: [0, 3], val: [[10, 10], [20, 20]], step: 0})
        got = sess.run(take2)
        assert got.indices.tolist() == [0, 3, 1, 3]
        assert got.values.tolist() == [[10, 10], [10.5, 10.5], [2, 2], [4, 4]]
        sess.run(apply, {idx: [4, 2], val: [[1, 1], [2, 2]], step: 1})
        sess.run(apply, {idx: [2], val: [[3, 3]], step: 0})  # stale
        sess.run(apply, {idx: [2], val: [[5, 5]], step: 1})
        sess.run(apply, {idx: [1], val: [[7, 7]], step: 2})
        indices, values, shape = sess.run(take3)
        assert indices.tolist() == [1, 2, 4, 2] and values[:, 0].tolist() == [7, 5, 1, 2]
        sess.run(apply, {idx: [], val: np.zeros((0, 2)), step: 2})  # an empty gradient counts
        sess.run(apply, {idx: [1], val: [[7, 7]], step: 2})
        got = sess.run(take2)
        assert got.indices.tolist() == [1] and got.values.tolist() == [[7, 7]]


@pytest.mark.parametrize("indices, values, shape, message", [
    ([7], [[3.0, 3.0]], None, "index of slice 0 exceeded limits of shape; index is 7 exceeded 4"),
    ([1], [[3.0, 3.0, 3.0]], None, "expected values dim 1 to be 2, got 3"),
    ([1], [[3.0, 3.0]], [5, 2], "expected shape dim 0 to be 4, got 5"),
    ([1], [[3.0, 3.0]], [4], "expected shape rank at least 2, got 1"),
    ([1], [3.0], None, "expected values rank at least 2, got 1"),
    ([1, 2], [[3.0, 3.0]], None, "Expected 2 non-empty input values, got 1"),
])
def test_sparse_shape_checks(indices, values, shape, message):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2], reduction_type="SUM")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(acc.apply_grad(indices, values, grad_shape=shape, local_step=1))
        sess.run(acc.apply_grad([2, 0], [[1.0, 1.0], [2.0, 2.0]]))
        indices, values, shape = sess.run(acc.take_grad(1))
        assert indices.tolist() == [2, 0] and values.tolist() == [[1, 1], [2, 2]] and shape.tolist() == [4, 2]


def test_sparse_values_of_higher_rank_and_float64():
    acc = tf.SparseConditionalAccumulator(tf.float64, shape=[None, 3, 2])
    ones = np.ones((2, 3, 2))
    with tf.Session() as sess:
        sess.run(acc.apply_grad([5, 1], ones, grad_shape=[7, 3, 2]))
        sess.run(acc.apply_grad([1, 6], 3 * ones))
        indices, values, shape = sess.run(acc.take_grad(2))
    assert indices.tolist() == [1, 5, 1, 6] and values.dtype == np.float64
    assert values[:, 0, 0].tolist() == [3, 1, 1, 3] and shape.tolist() == [-1, 3, 2]

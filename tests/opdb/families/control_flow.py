"""Functional control flow (If, Case, While through ``tf.cond``/``tf.switch_case``/``tf.while_loop``)
and the TensorList ops, each built into a small chain that ends in a fetchable tensor.

TensorFlow records the same programs with its own control flow (its v1 graphs build Switch/Merge
rather than If; the values and gradients are what is compared). Predicates and branch indices are
fed like any input, so the unknown-rank modes reach the functional ops' shape inference too.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular

_F = ("float32", "float64")


def _cond(tf, pred, x):
    return tf.cond(pred, lambda: x * 2.0 + 1.0, lambda: tf.sin(x))


def _case(tf, index, x):
    return tf.switch_case(index, [lambda: x * 3.0, lambda: tf.square(x), lambda: x - 1.0])


def _while(tf, n, x):
    _, y = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 1.5 + 0.25), [tf.constant(0), x])
    return y


ENTRIES = [
    OpEntry("If", [
        Sample("true_matrix", {"pred": np.bool_(True), "x": regular(2, 3)}, fd=True),
        Sample("false_matrix", {"pred": np.bool_(False), "x": regular(2, 3)}, fd=True),
        Sample("rank0", {"pred": np.bool_(False), "x": regular()}, fd=True),
        Sample("empty", {"pred": np.bool_(True), "x": empty(0, 3)}),
        Sample("pred_not_scalar", {"pred": np.array([True]), "x": regular(2)}, grad=False),
    ], build=_cond, dtypes=_F,
        differs={"pred_not_scalar|*|rank": "a predicate of unknown rank that turns out a vector: TensorFlow 1's "
                                           "cond (Switch) raises; sparseflow's cond is an If op, which takes a "
                                           "non-empty tensor as true (the rule of TensorFlow's If op)"}),
    OpEntry("Case", [
        Sample("first", {"index": i32(0), "x": regular(2, 3)}, fd=True),
        Sample("middle", {"index": i32(1), "x": regular(2, 3)}, fd=True),
        Sample("out_of_range_is_last", {"index": i32(7), "x": regular(3)}, fd=True),
        Sample("negative_is_last", {"index": i32(-1), "x": regular()}),
        Sample("empty", {"index": i32(1), "x": empty(0, 2)}),
    ], build=_case, dtypes=_F),
    OpEntry("While", [
        Sample("three_steps", {"n": i32(3), "x": regular(2, 3)}, fd=True),
        Sample("no_steps", {"n": i32(0), "x": regular(2)}, fd=True),
        Sample("rank0", {"n": i32(2), "x": regular()}, fd=True),
        Sample("empty", {"n": i32(4), "x": empty(0, 3)}),
    ], build=_while, dtypes=_F),
]


# ---------------------------------------------------------------- TensorList chains
def _stack(tf, handle, dtype, element_shape=-1):
    return tf.raw_ops.TensorListStack(input_handle=handle, element_shape=element_shape, element_dtype=dtype)


def _from_tensor(tf, tensor, element_shape):
    h = tf.raw_ops.TensorListFromTensor(tensor=tensor, element_shape=element_shape)
    return [_stack(tf, h, tensor.dtype), tf.raw_ops.TensorListLength(input_handle=h)]


def _reserve_set(tf, item, num_elements, index, resize=False):
    h = tf.raw_ops.TensorListReserve(element_shape=tf.shape(item), num_elements=num_elements,
                                     element_dtype=item.dtype)
    h = tf.raw_ops.TensorListSetItem(input_handle=h, index=index, item=item, resize_if_index_out_of_bounds=resize)
    return [_stack(tf, h, item.dtype), tf.raw_ops.TensorListLength(input_handle=h)]


def _get_item(tf, tensor, index):
    h = tf.raw_ops.TensorListFromTensor(tensor=tensor, element_shape=tf.shape(tensor)[1:])
    return tf.raw_ops.TensorListGetItem(input_handle=h, index=index, element_shape=-1, element_dtype=tensor.dtype)


def _gather(tf, tensor, indices):
    h = tf.raw_ops.TensorListFromTensor(tensor=tensor, element_shape=tf.shape(tensor)[1:])
    return tf.raw_ops.TensorListGather(input_handle=h, indices=indices, element_shape=-1, element_dtype=tensor.dtype)


def _split_concat(tf, tensor, lengths):
    h = tf.raw_ops.TensorListSplit(tensor=tensor, element_shape=-1, lengths=lengths)
    out = tf.raw_ops.TensorListConcatV2(input_handle=h, element_shape=-1, leading_dims=tf.zeros([0], tf.int64),
                                        element_dtype=tensor.dtype)
    return [out.tensor, out.lengths]


def _scatter(tf, tensor, updates, indices):
    h = tf.raw_ops.TensorListFromTensor(tensor=tensor, element_shape=tf.shape(tensor)[1:])
    h = tf.raw_ops.TensorListScatterIntoExistingList(input_handle=h, tensor=updates, indices=indices)
    return _stack(tf, h, tensor.dtype)


ENTRIES += [
    OpEntry("TensorListFromTensor", [
        Sample("rows", {"tensor": regular(3, 2), "element_shape": i32([2])}, fd=True),
        # A fed scalar -1 of known shape is refused when built (as TensorFlow's): no gradient in static mode.
        Sample("unknown_element_shape", {"tensor": regular(2, 2), "element_shape": i32(-1)}),
        Sample("scalars", {"tensor": regular(4), "element_shape": i32([])}),
        Sample("empty", {"tensor": empty(0, 2), "element_shape": i32([2])}),
        Sample("rank0", {"tensor": regular(), "element_shape": i32([])}),
    ], build=_from_tensor, dtypes=_F),
    OpEntry("TensorListReserve", [
        Sample("set_middle", {"item": regular(2), "num_elements": i32(3), "index": i32(1)}),
        Sample("set_past_end", {"item": regular(2), "num_elements": i32(2), "index": i32(3)}),
        Sample("resize", {"item": regular(2), "num_elements": i32(1), "index": i32(2)}, {"resize": True}),
        Sample("negative_index", {"item": regular(2), "num_elements": i32(2), "index": i32(-1)}),
    ], build=_reserve_set, dtypes=_F),
    OpEntry("TensorListSetItem", [
        Sample("set_first", {"item": regular(2, 2), "num_elements": i32(2), "index": i32(0)}, fd=True),
        Sample("rank0_item", {"item": regular(), "num_elements": i32(1), "index": i32(0)}, fd=True),
        Sample("empty_item", {"item": empty(0), "num_elements": i32(2), "index": i32(1)}),
    ], build=_reserve_set, dtypes=_F),
    OpEntry("TensorListLength", [
        Sample("three", {"tensor": regular(3, 2), "element_shape": i32([2])}),
        Sample("none", {"tensor": empty(0, 2), "element_shape": i32([2])}),
    ], build=_from_tensor, dtypes=_F),
    OpEntry("TensorListStack", [
        Sample("rows", {"tensor": regular(2, 3), "element_shape": i32([3])}, fd=True),
        Sample("empty", {"tensor": empty(0, 3), "element_shape": i32([3])}),
    ], build=_from_tensor, dtypes=_F),
    OpEntry("TensorListGetItem", [
        Sample("middle", {"tensor": regular(3, 2), "index": i32(1)}, fd=True),
        Sample("scalar_items", {"tensor": regular(3), "index": i32(2)}, fd=True),
        Sample("out_of_range", {"tensor": regular(2, 2), "index": i32(2)}),
        Sample("negative", {"tensor": regular(2, 2), "index": i32(-1)}),
        Sample("empty_element", {"tensor": empty(2, 0), "index": i32(1)}),
    ], build=_get_item, dtypes=_F),
    OpEntry("TensorListGather", [
        Sample("some", {"tensor": regular(4, 2), "indices": i32([3, 0, 3])}, fd=True),
        Sample("none", {"tensor": regular(2, 2), "indices": i32([])}),
        Sample("empty_elements", {"tensor": empty(3, 0), "indices": i32([2, 0])}),
        Sample("out_of_range", {"tensor": regular(2, 2), "indices": i32([2])}),
    ], build=_gather, dtypes=_F,
        differs={"some:grad": "a row gathered twice: TensorFlow's gradient scatters the row gradients (the last "
                              "wins); sparseflow's sums them (checked by finite differences)"}),
    OpEntry("TensorListSplit", [
        Sample("uneven", {"tensor": regular(5, 2), "lengths": np.array([2, 0, 3], np.int64)}, fd=True),
        Sample("one", {"tensor": regular(3), "lengths": np.array([3], np.int64)}, fd=True),
        Sample("sum_mismatch", {"tensor": regular(3), "lengths": np.array([1, 1], np.int64)}),
        Sample("empty", {"tensor": empty(0, 2), "lengths": np.array([0, 0], np.int64)}),
    ], build=_split_concat, dtypes=_F),
    OpEntry("TensorListConcatV2", [
        Sample("pieces", {"tensor": regular(4, 3), "lengths": np.array([1, 3], np.int64)}, fd=True),
        Sample("empty", {"tensor": empty(0, 3), "lengths": np.array([0, 0], np.int64)}),
    ], build=_split_concat, dtypes=_F),
    OpEntry("TensorListScatterIntoExistingList", [
        Sample("rows", {"tensor": regular(3, 2), "updates": regular(2, 2, seed=1), "indices": i32([2, 0])}, fd=True),
        Sample("no_updates", {"tensor": regular(2, 2), "updates": empty(0, 2), "indices": i32([])}),
        Sample("past_end_grows", {"tensor": regular(1, 2), "updates": regular(1, 2, seed=1), "indices": i32([2])}),
    ], build=_scatter, dtypes=_F,
        differs={"past_end_grows": "scattering past the end: TensorFlow aborts (float64) or leaves the skipped "
                                   "element uninitialized (float32); sparseflow grows the list with zeros"}),
]

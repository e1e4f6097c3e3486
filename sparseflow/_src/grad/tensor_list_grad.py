"""Gradients of the TensorList ops behind ``tf.TensorArray``, like TensorFlow's list_ops gradients.

The gradient of a list is a list of the gradients of its elements; elements never written in a
gradient list read as zeros (reads pass the element's dynamic shape).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     ta = tf.TensorArray(tf.float32, size=2).unstack(x)
    ...     y = tf.reduce_sum(ta.read(1) * 3.0)
    ...     print(sess.run(tf.gradients(y, x)[0]).tolist())
    [[0.0, 0.0], [3.0, 3.0]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient

NotDifferentiable("TensorListReserve")
NotDifferentiable("TensorListLength")


def _shape(t):
    from sparseflow._src.ops import array_ops

    return array_ops.shape(t)


def _element_shape_of(t):
    """The dynamic shape of the rows of ``t`` (``shape(t)[1:]``)."""
    from sparseflow._src.ops import array_ops

    if t.shape.ndims is not None and t.shape[1:].is_fully_defined():
        from sparseflow._src.ops import constant_op

        return constant_op.constant(t.shape[1:].as_list(), dtype=dtypes.int32)
    return array_ops.slice(_shape(t), [1], [-1])


def _empty_like_list(handle, element_dtype):
    """A list as long as ``handle`` with no element written (every element reads as zeros)."""
    from sparseflow._src.ops.tensor_array_ops import build_element_shape

    n = apply_op("TensorListLength", [handle]).outputs[0]
    return apply_op("TensorListReserve", [build_element_shape(None), n],
                    {"element_dtype": element_dtype}).outputs[0]


@RegisterGradient("TensorListFromTensor")
def _from_tensor_grad(op, dlist):
    t = op.inputs[0]
    if dlist is None:
        return [None, None]
    n = t.shape[0].value if t.shape.ndims else None
    stacked = apply_op("TensorListStack", [dlist, _element_shape_of(t)],
                       {"element_dtype": t.dtype.base_dtype, "num_elements": -1 if n is None else n})
    return [stacked.outputs[0], None]


@RegisterGradient("TensorListStack")
def _stack_grad(op, dtensor):
    lst = apply_op("TensorListFromTensor", [dtensor, _element_shape_of(dtensor)]).outputs[0]
    return [lst, None]


@RegisterGradient("TensorListSetItem")
def _set_item_grad(op, dlist):
    from sparseflow._src.ops import array_ops

    _, index, item = op.inputs
    if dlist is None:
        return [None, None, None]
    list_grad = apply_op("TensorListSetItem", [dlist, index, array_ops.zeros_like(item)]).outputs[0]
    item_grad = apply_op("TensorListGetItem", [dlist, index, _shape(item)],
                         {"element_dtype": item.dtype.base_dtype}).outputs[0]
    return [list_grad, None, item_grad]


@RegisterGradient("TensorListGetItem")
def _get_item_grad(op, ditem):
    handle, index, _ = op.inputs
    dlist = _empty_like_list(handle, ditem.dtype.base_dtype)
    return [apply_op("TensorListSetItem", [dlist, index, ditem]).outputs[0], None, None]


@RegisterGradient("TensorListGather")
def _gather_grad(op, dtensor):
    """Rows gathered more than once get the sum of their gradients (TensorFlow's gradient scatters
    them, so the last occurrence wins)."""
    from sparseflow._src.ops import array_ops, nn_ops

    handle, indices, _ = op.inputs
    unique, position = array_ops.unique(indices)
    summed = nn_ops.unsorted_segment_sum(dtensor, position, array_ops.size(unique))
    dlist = _empty_like_list(handle, dtensor.dtype.base_dtype)
    dlist = apply_op("TensorListScatterIntoExistingList", [dlist, summed, unique]).outputs[0]
    return [dlist, None, None]


@RegisterGradient("TensorListScatterIntoExistingList")
def _scatter_grad(op, dlist):
    from sparseflow._src.ops import array_ops

    _, tensor, indices = op.inputs
    if dlist is None:
        return [None, None, None]
    list_grad = apply_op("TensorListScatterIntoExistingList",
                         [dlist, array_ops.zeros_like(tensor), indices]).outputs[0]
    tensor_grad = apply_op("TensorListGather", [dlist, indices, _element_shape_of(tensor)],
                           {"element_dtype": tensor.dtype.base_dtype}).outputs[0]
    return [list_grad, tensor_grad, None]


@RegisterGradient("TensorListConcatV2")
def _concat_grad(op, dtensor, unused_dlengths):
    from sparseflow._src.ops.tensor_array_ops import build_element_shape

    if dtensor is None:
        return [None, None, None]
    dlist = apply_op("TensorListSplit", [dtensor, build_element_shape(None), op.outputs[1]]).outputs[0]
    return [dlist, None, None]


@RegisterGradient("TensorListSplit")
def _split_grad(op, dlist):
    from sparseflow._src.ops import array_ops, constant_op

    tensor = op.inputs[0]
    if dlist is None:
        return [None, None, None]
    elem = array_ops.concat([constant_op.constant([-1], dtype=dtypes.int32), _element_shape_of(tensor)], 0)
    known = constant_value(op.inputs[2])
    leading = constant_op.constant(0 if known is None else int(known.size), dtype=dtypes.int64)
    out = apply_op("TensorListConcatV2", [dlist, elem, leading], {"element_dtype": tensor.dtype.base_dtype})
    return [out.outputs[0], None, None]

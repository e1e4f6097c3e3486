"""Gradient functions of the array ops: shapes, fills and slices here; joins, pads and reversals in
``array_grad_join``, gathers, scatters and partitions in ``array_grad_index`` (imported below).

Each function follows TensorFlow's rule for the op (``tensorflow/python/ops/array_grad.py``): a
reshape's gradient is the gradient reshaped back, a slice's is the gradient padded back, a
strided slice's is ``StridedSliceGrad``, a broadcast's is summed over the broadcast axes by the
shared ``unbroadcast`` helper. Ops that only compute shapes, indices or constants are declared
NotDifferentiable.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ...     g = tf.gradients(tf.reduce_sum(x[:, 1:] * 2.0), x)[0]
    ...     print(sess.run(g).tolist())
    [[0.0, 2.0, 2.0], [0.0, 2.0, 2.0]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.grad.grad_util import unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.array_util import constant_value

__all__: list[str] = []


def dense(grad):
    """``grad`` as a dense Tensor (an IndexedSlices is summed into its dense shape)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def fill_none(op, grads):
    """``grads`` with each None replaced by zeros shaped like the matching output of ``op``
    (for multi-output ops whose gradient needs every output's gradient)."""
    return [array_ops.zeros_like(op.outputs[i]) if g is None else dense(g) for i, g in enumerate(grads)]


def _reshape_to_input(op, grad):
    return array_ops.reshape(dense(grad), array_ops.shape(op.inputs[0]))


# ---------------------------------------------------------------------------- shape ops
for _op_type in ("Shape", "ShapeN", "Size", "Rank", "InvertPermutation", "BroadcastArgs",
                 "BroadcastGradientArgs", "ZerosLike", "OnesLike", "Range", "LinSpace", "OneHot",
                 "Const", "Placeholder"):
    NotDifferentiable(_op_type)


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    in_shape = op.inputs[0].shape
    if in_shape.ndims is not None and not in_shape.is_fully_defined():
        dims = in_shape.as_list()
        unknown = [i for i, d in enumerate(dims) if d is None]
        if len(unknown) == 1 and 0 not in dims:  # a -1 avoids a data dependency on Shape
            dims[unknown[0]] = -1
            return [array_ops.reshape(dense(grad), dims), None]
    return [_reshape_to_input(op, grad), None]


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [_reshape_to_input(op, grad), None]


@RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return [_reshape_to_input(op, grad)]


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1])), None]


@RegisterGradient("ConjugateTranspose")
def _conjugate_transpose_grad(op, grad):
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1]), conjugate=True), None]


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    shape = op.inputs[1]
    static = constant_value(shape)
    if static is not None:
        shape = convert_to_tensor(static, dtype=dtypes.int32)
    elif shape.dtype.base_dtype != dtypes.int32:  # compared with the int32 Shape of the input
        shape = math_ops.cast(shape, dtypes.int32)
    return [unbroadcast(grad, op.inputs[0], grad_shape=shape), None]


@RegisterGradient("EnsureShape")
def _ensure_shape_grad(op, grad):
    return [grad]


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    from sparseflow._src.ops.numerics_ops import check_numerics

    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                                 f"{op.get_attr('message').decode('utf-8', 'replace')}")]


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]


# ---------------------------------------------------------------------------- fill
@RegisterGradient("Fill")
def _fill_grad(op, grad):
    return [None, math_ops.reduce_sum(grad)]


# ---------------------------------------------------------------------------- slices
@RegisterGradient("Slice")
def _slice_grad(op, grad):
    """Pads the gradient back: ``begin`` zeros before and ``shape - size - begin`` after, per axis."""
    x, begin = op.inputs[0], op.inputs[1]
    index_dtype = begin.dtype.base_dtype
    slice_size = array_ops.shape(op.outputs[0], out_type=index_dtype)
    column = array_ops.stack([array_ops.rank(x), 1])
    before = array_ops.reshape(begin, column)
    after = array_ops.reshape(array_ops.shape(x, out_type=index_dtype) - slice_size - begin, column)
    return [array_ops.pad(grad, array_ops.concat([before, after], 1)), None, None]


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _static_or_tensor(t):
    value = constant_value(t)
    return t if value is None else convert_to_tensor(value, dtype=t.dtype)


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    begin, end, strides = op.inputs[1:4]
    index_dtype = begin.dtype.base_dtype
    if index_dtype not in (dtypes.int32, dtypes.int64):  # StridedSliceGrad takes int32 or int64
        begin, end, strides = (math_ops.cast(t, dtypes.int32) for t in (begin, end, strides))
        index_dtype = dtypes.int32
    shape = _static_or_tensor(array_ops.shape(op.inputs[0], out_type=index_dtype))
    inputs = [shape] + [_static_or_tensor(t) for t in (begin, end, strides)] + [dense(grad)]
    attrs = {k: op.get_attr(k) for k in _MASKS}
    return [apply_op("StridedSliceGrad", inputs, attrs, name="StridedSliceGrad").outputs[0], None, None, None]


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    begin, end, strides = op.inputs[1:4]
    sliced = array_ops.strided_slice(grad, begin, end, strides, **{k: op.get_attr(k) for k in _MASKS})
    return [None, None, None, None, sliced]


from sparseflow._src.grad import array_grad_index, array_grad_join  # noqa: E402,F401 - registers the rest

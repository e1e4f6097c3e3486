"""Gradient functions of joining, splitting, tiling, padding and reversing ops.

Concat's gradient slices the incoming gradient at ``ConcatOffset`` (or splits it, for more than 16
inputs) and keeps IndexedSlices sparse; Pack and Unpack, Split and Concat are each other's
gradients; Tile sums the tiles; Pad slices the original region back; MirrorPad folds the
mirrored borders back onto the rows they copy.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1.0, 2.0])
    ...     g = tf.gradients(tf.reduce_sum(tf.tile(x, [3])), x)[0]
    ...     print(sess.run(g).tolist())
    [3.0, 3.0]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.grad.array_grad import dense, fill_none
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops, nn_ops
from sparseflow._src.ops.array_util import constant_value

__all__: list[str] = []

NotDifferentiable("ConcatOffset")


# ---------------------------------------------------------------------------- ConcatV2
def _input_shapes(values):
    """The shapes of ``values``: constants when all are statically known, else one ShapeN."""
    shapes = [array_ops.shape(v) for v in values]
    if all(s.op.type == "Const" for s in shapes):
        return shapes
    return array_ops.shape_n(values)


def _concat_dense_grads(grad, values, dim):
    sizes = _input_shapes(values)
    if len(sizes) > 16:  # one Split is cheaper than many Slices for many inputs
        along = array_ops.squeeze(array_ops.slice(array_ops.stack(sizes, axis=1), array_ops.stack([dim, 0]),
                                                  [1, -1]))
        return array_ops.split(grad, along, dim, num=len(values))
    offsets = apply_op("ConcatOffset", [dim, list(sizes)]).outputs
    return [array_ops.slice(grad, begin, size) for begin, size in zip(offsets, sizes)]


def _concat_sparse_grads(grad, values, dim, axis):
    """Per-input IndexedSlices of an IndexedSlices gradient of a concat along static ``axis``."""
    sizes = [array_ops.shape(v) for v in values]
    out = []
    if axis > 0:  # every input keeps all rows; its columns are a slice of grad.values
        rank = array_ops.shape(sizes[0])
        mask = array_ops.concat([array_ops.zeros(array_ops.expand_dims(dim, 0), dtype=dtypes.int32), [1],
                                 array_ops.zeros(rank - dim - 1, dtype=dtypes.int32)], 0)
        begin = array_ops.zeros(rank, dtype=dtypes.int32)
        for size in sizes:
            values_size = array_ops.concat([[-1], array_ops.slice(size, [1], [-1])], 0)
            out.append(IndexedSlices(array_ops.slice(grad.values, begin, values_size), grad.indices, size))
            begin = math_ops.add(begin, size * mask)
        return out
    index_dtype = grad.indices.dtype.base_dtype
    start = array_ops.zeros([], dtype=index_dtype)
    for size in sizes:  # axis 0: each input takes the rows that fall in its range
        rows = math_ops.cast(array_ops.gather(size, dim), index_dtype)
        end = start + rows
        inside = math_ops.logical_and(grad.indices >= start, grad.indices < end)
        picked = array_ops.squeeze(math_ops.where(inside), axis=[1])
        out.append(IndexedSlices(array_ops.gather(grad.values, picked),
                                 array_ops.gather(grad.indices, picked) - start, size))
        start = end
    return out


@RegisterGradient("ConcatV2")
def _concat_v2_grad(op, grad):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    dim = math_ops.cast(axis_t, dtypes.int32) if axis_t.dtype.base_dtype != dtypes.int32 else axis_t
    dim = dim % array_ops.rank(values[0])
    if isinstance(grad, IndexedSlices):
        axis = constant_value(axis_t)
        if axis is None:
            raise ValueError("Can only compute IndexedSlices gradient with statically-known concat_dim")
        axis = int(axis)
        if axis < 0:
            rank = values[0].shape.ndims
            if rank is None:
                raise ValueError("Can only compute IndexedSlices gradient with negative concat_dim when "
                                 "first value rank is statically-known.")
            axis %= rank
        return _concat_sparse_grads(grad, values, dim, axis) + [None]
    if not isinstance(grad, Tensor):
        raise TypeError(f"Expected Tensor or IndexedSlices, got {type(grad)}")
    return _concat_dense_grads(grad, values, dim) + [None]


# ---------------------------------------------------------------------------- Pack, Unpack, Split
@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return array_ops.unstack(dense(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return [array_ops.stack(fill_none(op, grads), axis=op.get_attr("axis"))]


@RegisterGradient("Split")
def _split_grad(op, *grads):
    return [None, array_ops.concat(fill_none(op, grads), op.inputs[0])]


@RegisterGradient("SplitV")
def _split_v_grad(op, *grads):
    return [array_ops.concat(fill_none(op, grads), op.inputs[2]), None, None]


# ---------------------------------------------------------------------------- Tile
@RegisterGradient("Tile")
def _tile_grad(op, grad):
    """Reshapes grad to interleaved [multiple, size] pairs and sums over the multiples."""
    multiples = op.inputs[1]
    in_shape = array_ops.shape(op.inputs[0], out_type=multiples.dtype.base_dtype)
    split_shape = array_ops.reshape(array_ops.transpose(array_ops.stack([multiples, in_shape])), [-1])
    axes = array_ops.range(0, array_ops.size(split_shape), 2)
    if isinstance(grad, IndexedSlices):  # fold the rows of every tile onto the first tile first
        rows = math_ops.cast(in_shape[0], grad.indices.dtype.base_dtype)
        grad = nn_ops.unsorted_segment_sum(grad.values, math_ops.floormod(grad.indices, rows), rows)
        split_shape = array_ops.concat([[1], split_shape[1:]], axis=0)
    input_grad = math_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes)
    input_grad.set_shape(op.inputs[0].shape)
    return [input_grad, None]


# ---------------------------------------------------------------------------- Pad, PadV2, MirrorPad
def _pad_grad(op, grad):
    x, paddings = op.inputs[0], op.inputs[1]
    before = array_ops.slice(paddings, [0, 0], array_ops.stack([array_ops.rank(x), 1]))
    begin = array_ops.reshape(before, [-1])
    x_grad = array_ops.slice(grad, begin, array_ops.shape(x, out_type=begin.dtype.base_dtype))
    return [x_grad] + [None] * (len(op.inputs) - 1)


RegisterGradient("Pad")(_pad_grad)
RegisterGradient("PadV2")(_pad_grad)  # like TensorFlow, no gradient for constant_values


@RegisterGradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [apply_op("MirrorPadGrad", [dense(grad), op.inputs[1]], {"mode": op.get_attr("mode")}).outputs[0], None]


@RegisterGradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [apply_op("MirrorPad", [dense(grad), op.inputs[1]], {"mode": op.get_attr("mode")}).outputs[0], None]


# ---------------------------------------------------------------------------- reversals
@RegisterGradient("ReverseV2")
def _reverse_v2_grad(op, grad):
    return [array_ops.reverse(grad, op.inputs[1]), None]


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [array_ops.reverse_sequence(grad, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                                       batch_axis=op.get_attr("batch_dim")), None]

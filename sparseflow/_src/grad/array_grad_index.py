"""Gradient functions of indexing ops: GatherV2, GatherNd, ScatterNd, DynamicPartition, DynamicStitch.

The gradient of an axis-0 gather is an ``IndexedSlices`` (the gathered rows' gradients, the
indices, and the params' dense shape): it stays sparse until someone needs it dense, so that an
embedding table of millions of rows is updated only at the rows a batch touched. Other axes and
``batch_dims`` are moved to the front, summed with UnsortedSegmentSum and moved back.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     table = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ...     g = tf.gradients(tf.reduce_sum(tf.gather(table, [2, 0, 2])), table)[0]
    ...     print(type(g).__name__, sess.run(g.indices).tolist(), sess.run(tf.convert_to_tensor(g)).tolist())
    IndexedSlices [2, 0, 2] [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.grad.array_grad import dense, fill_none
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops, nn_ops
from sparseflow._src.ops.array_util import constant_value

__all__: list[str] = []

# Which distinct value an element is, or which elements are missing from another list: index
# outputs, and values that are copies whose multiplicity changes under any perturbation.
for _op_type in ("Unique", "UniqueWithCounts", "ListDiff"):
    NotDifferentiable(_op_type)


# ---------------------------------------------------------------------------- GatherV2
def _batch_indices(params_shape, indices, batch_dims):
    """``indices`` plus the flat offset of their batch position, for a gather with ``batch_dims``."""
    index_dtype = indices.dtype.base_dtype
    shape = math_ops.cast(params_shape, index_dtype)
    stride = array_ops.ones([], dtype=index_dtype)
    out = indices
    for dim in range(batch_dims, 0, -1):
        dim_size = shape[dim - 1]
        stride *= shape[dim]
        offsets = array_ops.range(array_ops.zeros([], index_dtype), dim_size,
                                  array_ops.ones([], index_dtype)) * stride
        bshape = array_ops.concat([array_ops.tile([1], [dim - 1]), [dim_size],
                                   array_ops.tile([1], [array_ops.rank(indices) - dim])], axis=0)
        out += array_ops.reshape(offsets, bshape)
    return out


def _batch_gather_grad(params_shape, values, indices, batch_dims, gather_dim_size):
    """The dense gradient of a gather along the first non-batch axis of params."""
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    if batch_dims:
        values_shape = array_ops.shape(values)
        outer_shape = values_shape[:batch_dims]
        inner_shape = values_shape[batch_dims:][1:]
        flat_values_shape = array_ops.concat([[-1], inner_shape], 0)
        gather_dim_size *= math_ops.reduce_prod(outer_shape, [0])
        indices = _batch_indices(params_shape, indices, batch_dims)
        values = array_ops.reshape(values, flat_values_shape)
    indices = array_ops.reshape(indices, indices_size)
    params_grad = nn_ops.unsorted_segment_sum(values, indices, gather_dim_size)
    if batch_dims:
        params_grad = array_ops.reshape(params_grad, array_ops.concat([outer_shape, flat_values_shape], 0))
    return params_grad


@RegisterGradient("GatherV2")
def _gather_v2_grad(op, grad):
    params, indices, axis = op.inputs
    with op.graph.colocate_with(params.op):  # the shape is read where the params (a variable) live
        params_shape = array_ops.shape(params)
    indices_size = array_ops.expand_dims(array_ops.size(indices), 0)
    axis_static = constant_value(axis)
    batch_dims = int(op.get_attr("batch_dims"))
    if batch_dims < 0:
        if indices.shape.ndims is None:
            raise ValueError(f"The gradient of tf.gather with batch_dims={batch_dims} < 0 needs the rank of "
                             f"the indices {indices.name!r} to be known statically (use tf.ensure_shape)")
        batch_dims += indices.shape.ndims
    if axis_static is not None and int(axis_static) == 0:
        values_shape = array_ops.concat([indices_size, params_shape[1:]], 0)
        values = array_ops.reshape(dense(grad), values_shape)
        return [IndexedSlices(values, array_ops.reshape(indices, indices_size), params_shape), None, None]
    # Move the gathered axis next to the batch axes, gather-grad there, and move it back.
    outer_shape = params_shape[:axis]
    inner_shape = params_shape[axis:][1:]
    values_shape = array_ops.concat([outer_shape, [-1], inner_shape], 0)
    values_dims = array_ops.size(values_shape)
    axis_dims = array_ops.size(outer_shape)
    outer_batch = array_ops.range(batch_dims)
    batch_axis = array_ops.range(batch_dims, axis_dims)
    inner_axes = array_ops.range(axis_dims + 1, values_dims)
    values = array_ops.reshape(dense(grad), values_shape)
    perm = array_ops.concat([outer_batch, [axis_dims], batch_axis, inner_axes], 0)
    params_grad = _batch_gather_grad(array_ops.gather(params_shape, perm), array_ops.transpose(values, perm),
                                     indices, batch_dims, params_shape[axis])
    inverse = array_ops.concat([outer_batch, batch_axis + 1, [batch_dims], inner_axes], 0)
    params_grad = array_ops.transpose(params_grad, inverse)
    return [array_ops.reshape(params_grad, array_ops.shape(params)), None, None]


# ---------------------------------------------------------------------------- GatherNd, ScatterNd
@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    params_shape = array_ops.shape(params, out_type=indices.dtype.base_dtype)
    if indices.shape.ndims == 2 and indices.shape[-1].value == 1:  # whole rows: stays sparse
        return [IndexedSlices(dense(grad), array_ops.squeeze(indices, axis=[-1]), params_shape), None]
    return [array_ops.scatter_nd(indices, dense(grad), params_shape), None]


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, array_ops.gather_nd(dense(grad), op.inputs[0]), None]


# ---------------------------------------------------------------------------- DynamicPartition, Stitch
@RegisterGradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    """Stitches the partitions' gradients back to where their rows came from."""
    data, partitions = op.inputs
    prefix_shape = array_ops.shape(partitions)
    original = array_ops.reshape(array_ops.range(math_ops.reduce_prod(prefix_shape)), prefix_shape)
    positions = array_ops.dynamic_partition(original, partitions, op.get_attr("num_partitions"))
    stitched = array_ops.dynamic_stitch(positions, fill_none(op, grads))
    return [array_ops.reshape(stitched, array_ops.shape(data)), None]


@RegisterGradient("DynamicStitch")
def _dynamic_stitch_grad(op, grad):
    """Gathers the gradient at each input's rows, zero where a later input overwrote the row."""
    n = len(op.inputs) // 2
    indices = [op.inputs[i] if op.inputs[i].dtype.base_dtype == dtypes.int32
               else math_ops.cast(op.inputs[i], dtypes.int32) for i in range(n)]
    if isinstance(grad, IndexedSlices):
        rows = array_ops.shape(op.outputs[0])[0]
        grad = nn_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    # Number every element; stitching the numbers tells which element won each output row.
    ids, offset = [], 0
    for idx in indices:
        count = array_ops.size(idx)
        ids.append(array_ops.reshape(array_ops.range(offset, offset + count), array_ops.shape(idx)))
        offset = offset + count
    winners = array_ops.dynamic_stitch(indices, ids)
    values_grad = []
    for idx, my_ids in zip(indices, ids):
        mask = math_ops.cast(math_ops.equal(my_ids, array_ops.gather(winners, idx)), grad.dtype)
        gathered = array_ops.gather(grad, idx)
        mask_shape = array_ops.concat([array_ops.shape(mask),
                                       array_ops.ones([array_ops.rank(gathered) - array_ops.rank(mask)],
                                                      dtype=dtypes.int32)], axis=0)
        values_grad.append(gathered * array_ops.reshape(mask, mask_shape))
    return [None] * n + values_grad

"""TF1's older variable helpers: ``tf.create_partitioned_variables`` (a list of shard Variables
cut as ``slicing`` says) and ``tf.batch_scatter_update`` (a scatter per batch row).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     parts = tf.create_partitioned_variables([5, 2], [2, 1], tf.ones_initializer(), name="w")
    ...     print([(p.op.name, p.shape.as_list()) for p in parts])
    [('w/part_0', [3, 2]), ('w/part_1', [2, 2])]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.array_fill_ops import range as _range
from sparseflow._src.ops.array_join_ops import stack
from sparseflow._src.ops.array_shape_ops import broadcast_to, reshape
from sparseflow._src.ops.array_shape_ops import shape as _shape
from sparseflow._src.ops.math_cast_select import cast
from sparseflow._src.ops.state_ops import scatter_nd_update
from sparseflow._src.ops.variable_scope import _get_default_variable_store, variable_scope

__all__ = ["create_partitioned_variables", "batch_scatter_update"]


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32, trainable=True,
                                 collections=None, name=None, reuse=None):
    """The shards of a variable of ``shape`` cut into ``slicing[i]`` pieces along axis ``i``
    (at most one count above 1), as a list of Variables ``<name>/part_<k>`` (default name
    ``PartitionedVariable``). ``initializer`` is called per shard with its ``partition_info``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     parts = tf.create_partitioned_variables([3], [2], tf.constant_initializer(1.5))
        ...     sess.run(tf.global_variables_initializer())
        ...     print([v.tolist() for v in sess.run(parts)])
        [[1.5, 1.5], [1.5]]
    """
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the length: "
                         f"shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    fixed = list(slicing)

    def partitioner(**unused_kwargs):
        return fixed

    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        partitioned = _get_default_variable_store().get_variable(
            scope.name, shape=shape, dtype=dtype, initializer=initializer, reuse=scope.reuse,
            trainable=trainable, collections=collections, partitioner=partitioner)
    return list(partitioned)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """``ref[b..., indices[b..., j], ...] = updates[b..., j, ...]``: ``indices`` of rank ``n``
    address axis ``n - 1`` of ``ref`` within each of its first ``n - 1`` (batch) positions.
    Returns the updated ref.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     v = tf.Variable([[1, 2, 3], [4, 5, 6]])
        ...     up = tf.batch_scatter_update(v, [[0, 2], [1, 1]], [[7, 8], [9, 10]])
        ...     sess.run(v.initializer)
        ...     print(sess.run(up).tolist())
        [[7, 2, 8], [4, 10, 6]]
    """
    with name_scope(name, "BatchScatterUpdate", [ref, indices, updates]):
        indices = convert_to_tensor(indices, name="indices")
        updates = convert_to_tensor(updates, name="updates")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_scatter_update: the rank of `indices` must be known when the graph is built.")
        if rank == 0:
            raise ValueError("batch_scatter_update: `indices` must have rank at least 1 (one index per batch "
                             "position); for a single row use tf.scatter_update.")
        indices_shape = _shape(indices, out_type=indices.dtype)
        columns = []
        for axis in range(rank - 1):  # the batch positions, broadcast to the shape of indices
            size_shape = [1] * rank
            size_shape[axis] = -1
            positions = reshape(_range(indices_shape[axis], dtype=indices.dtype), size_shape)
            columns.append(broadcast_to(positions, indices_shape))
        columns.append(cast(indices, indices.dtype))
        nd_indices = stack(columns, axis=-1)
        return scatter_nd_update(ref, nd_indices, updates, use_locking=use_locking)


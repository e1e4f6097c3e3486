"""``tf.PartitionedVariable``: one logical variable stored as shards ``<name>/part_<i>``.

What ``get_variable(..., partitioner=...)`` returns. Iterating gives the shard Variables in
offset order; ``len`` is their number; used as a tensor it is the shards concatenated along the
sharded axis (``<name>/ConcatPartitions/concat``, then Identity ``<name>``). Each shard carries a
``SaveSliceInfo`` (full name, full shape, offset, shard shape), so a Saver writes the variable
as one tensor ``<name>`` of the full shape, restorable into any other partitioning.
``tf.nn.embedding_lookup`` takes it directly and gathers from each shard where the shard lives.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     emb = tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(2),
    ...                           initializer=tf.ones_initializer())
    ...     full = tf.convert_to_tensor(emb)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print([v.op.name for v in emb], len(emb), sess.run(full).shape)
    ['emb/part_0', 'emb/part_1'] 2 (5, 2)
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.tensor_conversion import register_tensor_conversion_function
from sparseflow._src.framework.tensor_shape import as_shape

__all__ = ["PartitionedVariable"]


class PartitionedVariable:
    """A container of the shards (Variables with save slice info) of one partitioned variable."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape_list = as_shape(shape).as_list()
        if len(shape_list) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape_list} vs. {list(partitions)}")
        for v in variable_list:
            info = v._get_save_slice_info()
            if info is None:
                raise ValueError(f"All variables must have a save_slice_info available: "
                                 f"{[x.name for x in variable_list]}")
            if list(info.full_shape) != shape_list:
                raise ValueError(f"All variables' full shapes must match shape: {shape_list}; but full shapes "
                                 f"were: {[list(x._get_save_slice_info().full_shape) for x in variable_list]}")
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    # ------------------------------------------------------------------ the shards
    def __iter__(self):
        """The shard Variables, in offset order."""
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def _partition_axes(self):
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)
    graph = property(lambda self: self._variable_list[0].graph)

    def get_shape(self):
        return self._shape

    # ------------------------------------------------------------------ as one tensor
    def _concat(self):
        """The full value: the shards concatenated (one new read per call, in the current
        control-dependency scope)."""
        from sparseflow._src.ops import array_join_ops, core_ops

        g = get_default_graph()
        if len(self._variable_list) == 1:
            with g.name_scope(None):
                return core_ops.identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: {axes}.  Multi-axis "
                                      f"partition concat is not supported")
        with g.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = array_join_ops.concat(self._variable_list, axes[0])
        with g.name_scope(None):
            return core_ops.identity(concatenated, name=self._name)

    def as_tensor(self):
        """The full value as one tensor, independent of the control dependencies in scope."""
        with get_default_graph().control_dependencies(None):
            return self._concat()

    # ------------------------------------------------------------------ writing
    def _apply_assign_fn(self, assign_fn, value):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one dimension: {axes}.  "
                                      f"Multi-axis partition assign action is not supported ")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Assigning a list of {len(value)} values to the {len(self._variable_list)} "
                                 f"shards of {self._name}: give one value per shard, or the full value.")
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            from sparseflow._src.ops import array_join_ops

            sizes = [v.get_shape().dims[axes[0]].value for v in self._variable_list]
            values = array_join_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(var, values[i]) for i, var in enumerate(self._variable_list)]

    def _assign_with(self, method, value, use_locking, name, read_value):
        out = self._apply_assign_fn(
            lambda var, v: getattr(var, method)(v, use_locking=use_locking, name=name, read_value=read_value), value)
        return out if read_value else [getattr(a, "op", a) for a in out]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns the full ``value`` (split per shard) or a list of per-shard values; returns one
        result per shard."""
        return self._assign_with("assign", value, use_locking, name, read_value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        return self._assign_with("assign_add", value, use_locking, name, read_value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        return self._assign_with("assign_sub", value, use_locking, name, read_value)

    def __repr__(self):
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} "
                f"partitions={self._partitions}>")


def _partitioned_to_tensor(v, dtype=None, name=None, as_ref=False):
    del name
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{v.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor)

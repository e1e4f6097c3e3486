"""Partitioners: how many shards ``get_variable(..., partitioner=...)`` cuts a variable into.

A partitioner is called as ``partitioner(shape=TensorShape, dtype=DType)`` and returns one count
per axis, at most one of them above 1 (the axis that is sharded). The shards of a variable of
``n`` rows cut in ``k`` are ``n // k`` rows each, the first ``n % k`` of them one row longer
(:func:`iter_slices`), named ``<name>/part_<i>``.

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.framework.tensor_shape import TensorShape
    >>> tf.fixed_size_partitioner(3)(shape=TensorShape([10, 4]), dtype=tf.float32)
    [3, 1]
    >>> [s for _, s in iter_slices([10, 4], 3, 0)]
    [[4, 4], [3, 4], [3, 4]]
    >>> tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=64)(
    ...     shape=TensorShape([10, 4]), dtype=tf.float32)
    [3, 1]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape

__all__ = ["fixed_size_partitioner", "min_max_variable_partitioner", "variable_axis_size_partitioner"]


def _element_bytes(dtype, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype).base_dtype
    return bytes_per_string_element if dtype == dtypes.string else dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner that cuts axis ``axis`` into ``num_shards`` shards (fewer when the axis is
    shorter).

    >>> import sparseflow as tf
    >>> from sparseflow._src.framework.tensor_shape import TensorShape
    >>> tf.fixed_size_partitioner(4)(shape=TensorShape([3, 2]), dtype=tf.float32)
    [3, 1]
    """

    def _partitioner(shape, **unused_args):
        shape = as_shape(shape)
        partitions = [1] * shape.ndims
        partitions[axis] = min(num_shards, shape.dims[axis].value)
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """A partitioner that makes shards of at least ``min_slice_size`` bytes, at most
    ``max_partitions`` of them (and at most one per row of ``axis``).

    >>> import sparseflow as tf
    >>> from sparseflow._src.framework.tensor_shape import TensorShape
    >>> p = tf.min_max_variable_partitioner(max_partitions=16)
    >>> p(shape=TensorShape([1024, 1024]), dtype=tf.float32), p(shape=TensorShape([10, 2]), dtype=tf.float32)
    ([16, 1], [1, 1])
    """

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if axis >= shape.ndims:
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        partitions[axis] = max(1, min(shape.dims[axis].value, max_partitions,
                                      int(math.ceil(total_bytes / min_slice_size))))
        return partitions

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """A partitioner that keeps each shard below ``max_shard_bytes`` by cutting axis ``axis`` (one
    row per shard when even that is not enough; at most ``max_shards`` shards when given).

    >>> import sparseflow as tf
    >>> from sparseflow._src.framework.tensor_shape import TensorShape
    >>> tf.variable_axis_size_partitioner(100)(shape=TensorShape([10, 4]), dtype=tf.float32)
    [2, 1]
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
                         f"max_shard_bytes is {max_shard_bytes} and bytes_per_string_element is "
                         f"{bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        rows = shape.dims[axis].value
        bytes_per_slice = shape.num_elements() / rows * _element_bytes(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(rows / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * shape.ndims
        partitions[axis] = shards
        return partitions

    return _partitioner


# ---------------------------------------------------------------------- used by the variable store
class PartitionInfo:
    """Where one shard sits in the full variable: what initializers get as ``partition_info``
    (so that e.g. glorot scales by the full shape and a constant initializer takes its slice)."""

    __slots__ = ("_full_shape", "_var_offset")

    def __init__(self, full_shape, var_offset):
        if not isinstance(full_shape, (list, tuple)):
            raise TypeError(f"`full_shape` must be a sequence (like tuple or list) instead of "
                            f"{type(full_shape).__name__}")
        if not isinstance(var_offset, (list, tuple)):
            raise TypeError(f"`var_offset` must be a sequence (like tuple or list) instead of "
                            f"{type(var_offset).__name__}")
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                             f"full_shape is of length {len(full_shape)}.")
        for offset, size in zip(var_offset, full_shape):
            if offset < 0 or offset >= size:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={offset}, shape={size} for "
                                 f"var_offset={var_offset}, full_shape={full_shape}")
        self._full_shape = list(full_shape)
        self._var_offset = list(var_offset)

    full_shape = property(lambda self: self._full_shape)
    var_offset = property(lambda self: self._var_offset)

    def single_slice_dim(self, shape):
        """The one axis along which a shard of ``shape`` differs from the full shape (None: none)."""
        if not isinstance(shape, (tuple, list)):
            raise TypeError(f"`shape` must be a sequence (like tuple or list) instead of {type(shape).__name__}")
        if len(shape) != len(self._full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length {len(shape)} while "
                             f"self.full_shape={self._full_shape} is of length {len(self._full_shape)}.")
        slice_dim = None
        for i, (offset, size, full) in enumerate(zip(self._var_offset, shape, self._full_shape)):
            if offset + size > full:
                raise ValueError(f"With self.var_offset={self._var_offset}, a partition of shape={shape} would "
                                 f"exceed self.full_shape={self._full_shape} in dimension {i}.")
            if size != full:
                if slice_dim is not None:
                    raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and self.full_shape="
                                     f"{self._full_shape} since slice dim could be either dimension {i} or "
                                     f"{slice_dim}.")
                slice_dim = i
        return slice_dim

    def single_offset(self, shape):
        """The offset of a shard of ``shape`` along its slice axis (0 when not sliced)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self._var_offset[dim]


def call_partitioner(partitioner, shape: TensorShape, dtype, name: str) -> list[int]:
    """``partitioner(shape=, dtype=)`` checked: one count >= 1 per axis, at most one above 1."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape} "
                         f"(variable {name}).")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape} (variable {name}).")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing} (variable {name})")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the Variable's rank: "
                         f"{slicing} vs. {shape} (variable {name})")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing} (variable {name})")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: "
                         f"{slicing} (variable {name})")
    return [int(p) for p in slicing]


def slice_dim_and_count(partitions) -> tuple[int, int]:
    """The sharded axis and its number of shards (axis 0 and 1 shard when nothing is cut)."""
    for dim, count in enumerate(partitions):
        if count > 1:
            return dim, count
    return 0, 1


def iter_slices(full_shape, num_slices: int, slice_dim: int):
    """``(offset, shape)`` of each shard: ``n // k`` rows, the first ``n % k`` shards one more."""
    longer = full_shape[slice_dim] % num_slices
    base = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = base + (1 if i < longer else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]

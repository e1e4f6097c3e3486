"""Indexing by data: GatherV2, GatherNd, ScatterNd, Unique, UniqueWithCounts, ListDiff,
DynamicPartition, DynamicStitch, and the composites ``boolean_mask`` and ``sequence_mask``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 6])
    ...     rows = tf.gather(x, tf.placeholder(tf.int32, [4]))
    ...     cols = tf.gather(x, [5, 0], axis=1)
    ...     y, idx = tf.unique(tf.constant([7, 3, 7]))
    >>> rows.shape.as_list(), cols.shape.as_list(), rows.op.type, y.shape.as_list()
    ([4, 6], [None, 2], 'GatherV2', [None])
"""

from __future__ import annotations

import collections

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.array_util import (
    attrs,
    constant_value,
    constant_value_as_shape,
    debug_shape,
    folder,
    input_values,
    merge_dim,
    scalar_int,
)

__all__ = ["gather", "gather_nd", "scatter_nd", "unique", "unique_with_counts", "setdiff1d",
           "dynamic_partition", "dynamic_stitch", "boolean_mask", "sequence_mask"]

_INDEX_TYPES = "{int16, int32, int64}"


# ---------------------------------------------------------------------------- GatherV2
def _gather_shape(op):
    params = op.inputs[0].shape.with_rank_at_least(1)
    indices = op.inputs[1].shape
    op.inputs[2].shape.with_rank(0)
    axis = scalar_int(op.inputs[2])
    if axis is None:
        batch = op._attrs["batch_dims"]
        if params.ndims is not None and indices.ndims is not None:
            batch = batch + indices.ndims if batch < 0 else batch
            return [unknown_shape(params.ndims + indices.ndims - 1 - batch)]
        return [unknown_shape()]
    params = params.with_rank_at_least(-axis if axis < 0 else axis + 1)
    batch_dims = op._attrs["batch_dims"]
    indices = indices.with_rank_at_least(abs(batch_dims))
    if batch_dims < 0:
        if indices.ndims is None:
            return [unknown_shape()]
        batch_dims += indices.ndims
    params = params.with_rank_at_least(batch_dims + 1)
    if params.ndims is None or indices.ndims is None:
        return [unknown_shape()]
    p, i = params.as_list(), indices.as_list()
    ax = axis + len(p) if axis < 0 else axis
    if batch_dims > ax:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis ({axis})")
    for d in range(batch_dims):
        merge_dim(p[d], i[d], f"params.shape[{d}]={p[d]} and indices.shape[{d}]={i[d]} must match "
                              f"(batch_dims={batch_dims})")
    return [TensorShape(p[:ax] + i[batch_dims:] + p[ax + 1:])]


register_op("GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
            outputs=["output: Tparams"],
            attrs=["batch_dims: int = 0", "Tparams: type", f"Tindices: {_INDEX_TYPES}", "Taxis: "
                                                                                        "{int32, int64}"],
            shape_fn=_gather_shape)


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of ``params`` along ``axis`` at ``indices`` (out-of-range indices are an error).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.gather([[1, 2], [3, 4], [5, 6]], [2, 0])).tolist()
    [[5, 6], [1, 2]]
    """
    del validate_indices
    if axis is None:
        axis = batch_dims
    static_axis = axis if isinstance(axis, (int, np.integer)) else constant_value(convert_to_tensor(axis))
    if static_axis is not None and int(static_axis) == 0 and not isinstance(params, Tensor) and \
            hasattr(params, "sparse_read"):
        try:
            return params.sparse_read(indices, name=name)
        except (AttributeError, NotImplementedError):
            pass
    attrs = {"batch_dims": batch_dims} if batch_dims else {}
    return apply_op("GatherV2", [params, indices, axis], attrs, name=name or "GatherV2").outputs[0]


@folder("GatherV2")
def _fold_gather(op):
    vals = input_values(op)
    if vals is None or op._attrs["batch_dims"]:
        return None
    return np.take(vals[0], vals[1], axis=int(vals[2]))


# ---------------------------------------------------------------------------- GatherNd, ScatterNd
def _gather_nd_shape(op):
    params = op.inputs[0].shape
    indices = op.inputs[1].shape.with_rank_at_least(1)
    if params.ndims is None or indices.ndims is None or indices[-1].value is None:
        return [unknown_shape()]
    r = indices[-1].value
    if r > params.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{debug_shape(indices)} and params shape: {debug_shape(params)}")
    return [TensorShape(indices.as_list()[:-1] + params.as_list()[r:])]


register_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"], outputs=["output: Tparams"],
            attrs=["Tparams: type", f"Tindices: {_INDEX_TYPES}"], shape_fn=_gather_nd_shape)


def gather_nd(params, indices, name=None, batch_dims=0):
    """Slices of ``params`` at the index tuples in the last dimension of ``indices``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]])).tolist()
    [3, 2]
    """
    if batch_dims:
        raise ValueError("gather_nd with batch_dims > 0 is not supported; use tf.gather with batch_dims")
    return apply_op("GatherNd", [params, indices], name=name or "GatherNd").outputs[0]


def _scatter_nd_shape(op):
    indices = op.inputs[0].shape.with_rank_at_least(1)
    updates = op.inputs[1].shape.with_rank_at_least(1)
    out = constant_value_as_shape(op.inputs[2])
    if out.num_elements() == 0 and (indices.num_elements() or updates.num_elements()):
        raise ValueError("Indices and updates specified for empty output shape")
    if indices.ndims is not None and updates.ndims is not None and indices[-1].value is not None:
        outer = indices.ndims - 1
        ix = indices[-1].value
        pi, pu = indices.as_list()[:outer], updates.as_list()[:outer]
        if len(pu) != outer or any(a is not None and b is not None and a != b for a, b in zip(pi, pu)):
            raise ValueError(f"Dimensions [0,{outer}) of indices[shape={debug_shape(indices)}] = "
                             f"{debug_shape(pi)} must match dimensions [0,{outer}) of updates[shape="
                             f"{debug_shape(updates)}] = {debug_shape(pu)}")
        if out.ndims is not None:
            so, su = out.as_list()[ix:], updates.as_list()[outer:]
            if len(so) != len(su) or any(a is not None and b is not None and a != b for a, b in zip(so, su)):
                raise ValueError(f"Dimensions [{ix},{out.ndims}) of input[shape={debug_shape(out)}] = "
                                 f"{debug_shape(so)} must match dimensions [{outer},{updates.ndims}) of "
                                 f"updates[shape={debug_shape(updates)}] = {debug_shape(su)}")
    return [out]


register_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"], outputs=["output: T"],
            attrs=["T: type", f"Tindices: {_INDEX_TYPES}"], shape_fn=_scatter_nd_shape)


def scatter_nd(indices, updates, shape, name=None):
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates are summed).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.scatter_nd([[1], [1]], [5, 6], [3])).tolist()
    [0, 11, 0]
    """
    return apply_op("ScatterNd", [indices, updates, shape], name=name or "ScatterNd").outputs[0]


# ---------------------------------------------------------------------------- Unique, ListDiff
def _unique_shape(op):
    if op.type == "Unique":  # TensorFlow's UniqueWithCounts leaves the rank check to its kernel
        op.inputs[0].shape.with_rank(1)
    n = len(op.outputs)
    return [TensorShape([None]), op.inputs[0].shape] + [TensorShape([None])] * (n - 2)


_UNIQUE_ATTRS = ["T: type", "out_idx: {int32, int64} = DT_INT32"]
register_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"], attrs=_UNIQUE_ATTRS,
            shape_fn=_unique_shape)
register_op("UniqueWithCounts", inputs=["x: T"], outputs=["y: T", "idx: out_idx", "count: out_idx"],
            attrs=_UNIQUE_ATTRS, shape_fn=_unique_shape)

UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of 1-D ``x`` in order of first occurrence, and each element's position in them.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     y, idx = s.run(tf.unique([7, 3, 7, 1]))
    >>> y.tolist(), idx.tolist()
    ([7, 3, 1], [0, 1, 0, 2])
    """
    op = apply_op("Unique", [x], {"out_idx": out_idx}, name=name or "Unique")
    return UniqueOutput(*op.outputs)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """Like ``unique``, plus the number of occurrences of each distinct value."""
    op = apply_op("UniqueWithCounts", [x], {"out_idx": out_idx}, name=name or "UniqueWithCounts")
    return UniqueWithCountsOutput(*op.outputs)


def _list_diff_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(1)
    return [TensorShape([None]), TensorShape([None])]


register_op("ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"], attrs=_UNIQUE_ATTRS,
            shape_fn=_list_diff_shape)


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The values of 1-D ``x`` not in ``y`` (in ``x``'s order) and their positions in ``x``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.setdiff1d([4, 1, 3], [1]).out).tolist()
    [4, 3]
    """
    op = apply_op("ListDiff", [x, y], {"out_idx": index_dtype}, name=name or "ListDiff")
    return ListDiffOutput(*op.outputs)


# ---------------------------------------------------------------------------- DynamicPartition / Stitch
def _prefix_rest(data: TensorShape, prefix: TensorShape, what: str) -> TensorShape:
    """``data`` without its leading ``prefix`` dims (which must be compatible with ``prefix``)."""
    if data.ndims is None or prefix.ndims is None:
        return unknown_shape()
    if data.ndims < prefix.ndims:
        raise ValueError(f"Shape must be at least rank {prefix.ndims} but is rank {data.ndims}")
    d, p = data.as_list(), prefix.as_list()
    for i in range(len(p)):
        merge_dim(d[i], p[i], f"Dimension {i} in both shapes must be equal, but are {d[i]} and {p[i]}. "
                              f"{what}")
    return TensorShape(d[len(p):])


def _partition_shape(op):
    data, parts = op.inputs[0].shape, op.inputs[1].shape
    n = op._attrs["num_partitions"]
    if parts.ndims is None:
        return [unknown_shape()] * n
    rest = _prefix_rest(data, parts, "data.shape must start with partitions.shape")
    return [TensorShape([None]).concatenate(rest)] * n


register_op("DynamicPartition", inputs=["data: T", "partitions: int32"],
            outputs=["outputs: num_partitions * T"],
            attrs=attrs("num_partitions: int >= 1", "T: type"), shape_fn=_partition_shape)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """``data`` split into ``num_partitions`` tensors by the partition id of each slice.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     [p.tolist() for p in s.run(tf.dynamic_partition([10, 20, 30], [1, 0, 1], 2))]
    [[20], [10, 30]]
    """
    return apply_op("DynamicPartition", [data, partitions], {"num_partitions": num_partitions},
                    name=name or "DynamicPartition").outputs


def _stitch_shape(op):
    n = op._attrs["N"]
    indices, data = op.inputs[:n], op.inputs[n:]
    all_const, max_index = True, -1
    extra = unknown_shape()
    for i in range(n):
        value = constant_value(indices[i])
        if value is None:
            all_const = False
        if indices[i].shape.ndims is None:
            continue
        rest = _prefix_rest(data[i].shape, indices[i].shape,
                            f"data[{i}].shape must start with indices[{i}].shape")
        if rest.ndims is not None:
            from sparseflow._src.ops.array_join_ops import _merge_shapes

            extra = _merge_shapes(extra, rest)
        if value is not None and np.size(value):
            max_index = max(max_index, int(np.max(value)))
    return [TensorShape([max_index + 1 if all_const else None]).concatenate(extra)]


register_op("DynamicStitch", inputs=["indices: N * int32", "data: N * T"], outputs=["merged: T"],
            attrs=attrs("N: int >= 1", "T: type"), shape_fn=_stitch_shape)


def dynamic_stitch(indices, data, name=None):
    """Interleaves ``data[i]`` into one tensor at rows ``indices[i]`` (later values win).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.dynamic_stitch([[0, 2], [1]], [[1, 3], [2]])).tolist()
    [1, 2, 3]
    """
    return apply_op("DynamicStitch", [list(indices), list(data)], name=name or "DynamicStitch").outputs[0]


# ---------------------------------------------------------------------------- composites
def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The slices of ``tensor`` (from ``axis``) where the boolean ``mask`` is True, flattened.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.boolean_mask([[1, 2], [3, 4], [5, 6]], [True, False, True])).tolist()
    [[1, 2], [5, 6]]
    """
    from sparseflow._src.ops.array_join_ops import concat
    from sparseflow._src.ops.array_shape_ops import reshape, shape, squeeze

    g = get_default_graph()
    with g.name_scope(name or "boolean_mask"):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask = mask.shape
        ndims_mask = shape_mask.ndims
        shape_tensor = tensor.shape
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are None.  "
                             "E.g. shape=[None] is ok, but shape=None is not.")
        axis = 0 if axis is None else axis
        axis_value = axis if isinstance(axis, (int, np.integer)) else constant_value(convert_to_tensor(axis))
        if axis_value is not None:
            axis = int(axis_value)
            shape_tensor[axis:axis + ndims_mask].assert_is_compatible_with(shape_mask)
        leading_size = apply_op("Prod", [shape(tensor)[axis:axis + ndims_mask], [0]]).outputs[0]
        tensor = reshape(tensor, concat([shape(tensor)[:axis], [leading_size],
                                         shape(tensor)[axis + ndims_mask:]], 0))
        if axis_value is not None and shape_tensor.ndims is not None:
            first = shape_tensor[axis:axis + ndims_mask].num_elements()
            tensor.set_shape(TensorShape(shape_tensor.as_list()[:axis] + [first] +
                                         shape_tensor.as_list()[axis + ndims_mask:]))
        mask = reshape(mask, [-1])
        indices = squeeze(apply_op("Where", [mask]).outputs[0], axis=[1])
        return gather(tensor, indices, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """``mask[..., j] = j < lengths[...]`` for ``j < maxlen`` (default: the largest length).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.sequence_mask([1, 3], maxlen=4)).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    from sparseflow._src.ops.array_shape_ops import expand_dims
    from sparseflow._src.ops.constant_op import constant

    g = get_default_graph()
    with g.name_scope(name or "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            r = lengths.shape.ndims
            axes = constant(np.arange(r, dtype=np.int32)) if r is not None else \
                apply_op("Range", [0, apply_op("Rank", [lengths]).outputs[0], 1]).outputs[0]
            maxlen = apply_op("Max", [lengths, axes]).outputs[0]
            maxlen = apply_op("Maximum", [constant(0, maxlen.dtype), maxlen]).outputs[0]
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError(
                f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {maxlen} "
                f"with shape '{maxlen.shape}' instead")
        row = apply_op("Range", [constant(0, maxlen.dtype), maxlen, constant(1, maxlen.dtype)]).outputs[0]
        matrix = apply_op("Cast", [expand_dims(lengths, -1)], {"DstT": maxlen.dtype}).outputs[0]
        result = apply_op("Less", [row, matrix]).outputs[0]
        if dtype is None or result.dtype.is_compatible_with(dtype):
            return result
        return apply_op("Cast", [result], {"DstT": dtype}).outputs[0]

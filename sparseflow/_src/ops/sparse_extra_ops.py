"""More SparseTensor ops of the TF1 namespace: SparseSoftmax, SparseSparseMaximum/Minimum,
SparseReduceMax(Sparse), SparseSplit, SerializeSparse, SerializeManySparse, DeserializeSparse,
DeserializeManySparse and SparseMatMul, with ``tf.sparse_softmax``, ``tf.sparse_maximum``,
``tf.sparse_minimum``, ``tf.sparse_reduce_max(_sparse)``, ``tf.sparse_split``,
``tf.(de)serialize_(many_)sparse``, ``tf.sparse_matmul`` and the composites ``tf.sparse_merge``,
``tf.sparse_to_indicator``, ``tf.sparse_reset_shape`` and ``tf.sparse_mask``.

A serialized SparseTensor is a string vector of three serialized TensorProtos (indices, values,
dense shape), as TensorFlow writes it; "many" serializes each row of a batch.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 1.0, 5.0], [2, 3])
    ...     print(sess.run(tf.sparse_softmax(sp)).values.tolist(), sess.run(tf.sparse_reduce_max(sp, 1)).tolist())
    [0.5, 0.5, 1.0] [1.0, 5.0]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import IndexedSlices, SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops.array_util import attrs
from sparseflow._src.ops.math_cwise import op_scope
from sparseflow._src.ops.sparse_ops import (
    _reduce_args,
    _reduction_axes,
    _sparse_reduce_shape,
    _sparse_reduce_sparse_shape,
    _SparseTensor,
    _to_sparse,
)

__all__ = ["sparse_softmax", "sparse_maximum", "sparse_minimum", "sparse_reduce_max", "sparse_reduce_max_sparse",
           "sparse_split", "serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse", "sparse_matmul",
           "sparse_merge", "sparse_to_indicator", "sparse_reset_shape", "sparse_mask"]

_REAL = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
_SP = ["indices: int64", "values: T", "shape: int64"]


def _sp(prefix):
    return [f"{prefix}_indices: int64", f"{prefix}_values: T", f"{prefix}_shape: int64"]


register_op("SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"], outputs=["output: T"],
            attrs=["T: {half, float, double}"], shape_fn=lambda op: [op.inputs[1].shape.with_rank(1)])
for _name in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(_name, inputs=_sp("a") + _sp("b"), outputs=["output_indices: int64", "output_values: T"],
                attrs=[f"T: {_REAL}"], shape_fn=lambda op: [TensorShape([None, op.inputs[0].shape.with_rank(2)[1]]),
                                                           TensorShape([None])])
_REDUCE = ["input_indices: int64", "input_values: T", "input_shape: int64", "reduction_axes: int32"]
register_op("SparseReduceMax", inputs=_REDUCE, outputs=["output: T"],
            attrs=["keep_dims: bool = false", f"T: {_REAL}"], shape_fn=_sparse_reduce_shape)
register_op("SparseReduceMaxSparse", inputs=_REDUCE,
            outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
            attrs=["keep_dims: bool = false", f"T: {_REAL}"], shape_fn=_sparse_reduce_sparse_shape)


def _split_shape(op):
    n = op._attrs["num_split"]
    rank = op.inputs[3].shape.with_rank(1)[0].value
    return [TensorShape([None, rank])] * n + [TensorShape([None])] * n + [TensorShape([rank])] * n


register_op("SparseSplit", inputs=["split_dim: int64"] + _SP,
            outputs=["output_indices: num_split * int64", "output_values: num_split * T",
                     "output_shape: num_split * int64"],
            attrs=attrs("num_split: int >= 1", "T: type"), shape_fn=_split_shape)
_SERIAL = ["T: type", "out_type: {string, variant} = DT_STRING"]
register_op("SerializeSparse", inputs=_sp("sparse"), outputs=["serialized_sparse: out_type"], attrs=_SERIAL,
            shape_fn=lambda op: [TensorShape([3])])
register_op("SerializeManySparse", inputs=_sp("sparse"), outputs=["serialized_sparse: out_type"], attrs=_SERIAL,
            shape_fn=lambda op: [TensorShape([None, 3])])


def _deserialize_shape(op):
    s = op.inputs[0].shape
    rank = None if s.ndims is None else s.ndims  # a [..., 3] batch adds its own dimensions minus the 3
    return [TensorShape([None, None if rank is None else None]), TensorShape([None]), TensorShape([None])]


def _deserialize_many_shape(op):
    s = op.inputs[0].shape.with_rank(2)
    if s[1].value is not None and s[1].value != 3:
        raise ValueError(f"Dimension must be 3 but is {s[1].value} for the serialized SparseTensors of '{op.name}' "
                         f"(op: 'DeserializeManySparse')")
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


register_op("DeserializeManySparse", inputs=["serialized_sparse: string"],
            outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"], attrs=["dtype: type"],
            shape_fn=_deserialize_many_shape)
register_op("DeserializeSparse", inputs=["serialized_sparse: Tserialized"],
            outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
            attrs=["dtype: type", "Tserialized: {string, variant} = DT_STRING"], shape_fn=_deserialize_shape)
register_op("SparseMatMul", inputs=["a: Ta", "b: Tb"], outputs=["product: float"],
            attrs=["transpose_a: bool = false", "transpose_b: bool = false", "a_is_sparse: bool = false",
                   "b_is_sparse: bool = false", "Ta: {float, bfloat16} = DT_FLOAT", "Tb: {float, bfloat16} = DT_FLOAT"],
            shape_fn=lambda op: [_matmul_shape(op)])


def _matmul_shape(op):
    a, b = (t.shape.with_rank(2) for t in op.inputs)
    ta, tb = op._attrs["transpose_a"], op._attrs["transpose_b"]
    rows, inner_a = (a[1], a[0]) if ta else (a[0], a[1])
    inner_b, cols = (b[1], b[0]) if tb else (b[0], b[1])
    if not inner_a.is_compatible_with(inner_b):
        raise ValueError(f"Dimensions must be equal, but are {inner_a} and {inner_b} for '{op.name}' (op: "
                         f"'SparseMatMul')")
    return TensorShape([rows, cols])


# ---------------------------------------------------------------- wrappers
def sparse_softmax(sp_input, name=None):
    """Softmax over the present values of each row (last dimension) of a SparseTensor; absent
    entries stay absent (they are not zeros in the softmax).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [0, 2]], [0.0, 0.0], [1, 4])
        ...     print(sess.run(tf.sparse.softmax(sp)).values.tolist())
        [0.5, 0.5]
    """
    sp_input = _to_sparse(sp_input)
    with op_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]):
        out = apply_op("SparseSoftmax", [sp_input.indices, sp_input.values, sp_input.dense_shape]).outputs[0]
        return SparseTensor(sp_input.indices, out, sp_input.dense_shape)


def _sparse_sparse(op_type, sp_a, sp_b, name):
    sp_a, sp_b = _to_sparse(sp_a), _to_sparse(sp_b)
    with op_scope(name, op_type, [sp_a.indices, sp_b.indices]):
        inputs = [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices, sp_b.values, sp_b.dense_shape]
        indices, values = apply_op(op_type, inputs).outputs
        return SparseTensor(indices, values, sp_a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """The element-wise maximum of two SparseTensors of one shape (absent entries count as zeros).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0], [1]], [-1.0, 2.0], [3])
        ...     b = tf.SparseTensor([[1], [2]], [5.0, -3.0], [3])
        ...     print(sess.run(tf.sparse_maximum(a, b)).values.tolist())
        [0.0, 5.0, 0.0]
    """
    return _sparse_sparse("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None):
    """The element-wise minimum of two SparseTensors of one shape (absent entries count as zeros)."""
    return _sparse_sparse("SparseSparseMinimum", sp_a, sp_b, name)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The maximum of a SparseTensor's present values over ``axis`` (all by default), dense;
    a group without values gives 0 (as TensorFlow's does).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [1, 2]], [-3.0, 4.0], [2, 3])
        ...     print(sess.run(tf.sparse.reduce_max(sp, 1)).tolist())
        [-3.0, 4.0]
    """
    axis, keep = _reduce_args(axis, keepdims, reduction_axes, keep_dims)
    sp_input = _to_sparse(sp_input)
    return apply_op("SparseReduceMax", [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                        _reduction_axes(sp_input, axis)], {"keep_dims": keep}).outputs[0]


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """Like ``sparse_reduce_max``, as a SparseTensor of the groups that have values."""
    axis, keep = _reduce_args(axis, keepdims, reduction_axes, keep_dims)
    sp_input = _to_sparse(sp_input)
    op = apply_op("SparseReduceMaxSparse", [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                            _reduction_axes(sp_input, axis)], {"keep_dims": keep})
    return _SparseTensor(*op.outputs)


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None, split_dim=None):
    """``num_split`` SparseTensors splitting ``sp_input`` along ``axis`` (the first pieces one
    larger when the size does not divide evenly). Arguments by keyword, as in TensorFlow.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [0, 3], [1, 1]], [1, 2, 3], [2, 4])
        ...     left, right = tf.sparse_split(sp_input=sp, num_split=2, axis=1)
        ...     print(sess.run(right).indices.tolist())
        [[0, 1]]
    """
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None or num_split is None:
        raise ValueError("sp_input and num_split are required")
    axis = split_dim if axis is None else axis
    if axis is None:
        raise ValueError("axis is required")
    sp_input = _to_sparse(sp_input)
    with op_scope(name, "SparseSplit", [sp_input.indices]):
        outs = apply_op("SparseSplit", [convert_to_tensor(axis, dtype=dtypes.int64), sp_input.indices,
                                        sp_input.values, sp_input.dense_shape], {"num_split": num_split}).outputs
        n = num_split
        return [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]


def serialize_sparse(sp_input, name=None, out_type=dtypes.string):
    """A SparseTensor as a string vector of 3 serialized TensorProtos."""
    sp_input = _to_sparse(sp_input)
    return apply_op("SerializeSparse", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    {"out_type": dtypes.as_dtype(out_type)}, name=name).outputs[0]


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string):
    """Each row (first dimension) of a SparseTensor serialized: a [N, 3] string matrix.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [2, 0]], [7, 8], [3, 2])
        ...     back = tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.int32)
        ...     print(sess.run(back).indices.tolist())
        [[0, 1], [2, 0]]
    """
    sp_input = _to_sparse(sp_input)
    return apply_op("SerializeManySparse", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    {"out_type": dtypes.as_dtype(out_type)}, name=name).outputs[0]


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor whose rows were serialized by ``serialize_many_sparse`` ([N, 3] strings),
    with a dense shape of the largest rows."""
    indices, values, shape = apply_op("DeserializeManySparse", [serialized_sparse],
                                      {"dtype": dtypes.as_dtype(dtype)}, name=name).outputs
    if rank is not None:
        indices.set_shape([None, rank])
        shape.set_shape([rank])
    return SparseTensor(indices, values, shape)


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """``a @ b`` of float32 matrices, with hints that one of them is mostly zeros (SparseMatMul)."""
    return apply_op("SparseMatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b,
                                             "a_is_sparse": a_is_sparse, "b_is_sparse": b_is_sparse},
                    name=name).outputs[0]


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor with the ids of ``sp_ids`` as a new last dimension (of size ``vocab_size``)
    and the values of ``sp_values``: TF1's feature-id/weight merge (one id list only).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 1, 2], tf.int64), [2, 2])
        ...     w = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 1.5, 2.0], [2, 2])
        ...     print(sess.run(tf.sparse.to_dense(tf.sparse_merge(ids, w, 4))).tolist())
        [[0.0, 1.5, 0.0, 0.5], [0.0, 0.0, 2.0, 0.0]]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_cast_select import cast
    from sparseflow._src.ops.sparse_ops import sparse_reorder

    if isinstance(sp_ids, (list, tuple)):
        raise NotImplementedError("sparse_merge of a list of id SparseTensors (crossed features) is not "
                                  "implemented: merge one id tensor at a time")
    sp_ids, sp_values = _to_sparse(sp_ids), _to_sparse(sp_values)
    with op_scope(name, "SparseMerge", [sp_ids.indices, sp_values.values]):
        ids = cast(sp_ids.values, dtypes.int64)
        rank = array_ops.shape(sp_ids.indices)[1:]
        leading = array_ops.slice(sp_ids.indices, [0, 0], array_ops.concat([[-1], rank - 1], 0))
        indices = array_ops.concat([leading, array_ops.expand_dims(ids, 1)], 1)
        shape = array_ops.concat([array_ops.slice(sp_ids.dense_shape, [0], rank - 1),
                                  array_ops.reshape(cast(vocab_size, dtypes.int64), [1])], 0)
        result = SparseTensor(indices, sp_values.values, shape)
        return result if already_sorted else sparse_reorder(result)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor, True at ``[..., id]`` for every id in each row of the int SparseTensor.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 1, 0], tf.int64), [2, 2])
        ...     print(sess.run(tf.sparse_to_indicator(ids, 4)).astype(int).tolist())
        [[0, 1, 0, 1], [1, 0, 0, 0]]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.sparse_ops import sparse_tensor_to_dense

    sp_input = _to_sparse(sp_input)
    with op_scope(name, "SparseToIndicator", [sp_input.indices]):
        trues = array_ops.ones_like(sp_input.values, dtype=dtypes.bool)
        merged = sparse_merge(sp_input, SparseTensor(sp_input.indices, trues, sp_input.dense_shape), vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False)


def sparse_reset_shape(sp_input, new_shape=None):
    """``sp_input`` with dense shape ``new_shape`` (each dimension at least the old one's), or, by
    default, the smallest shape that holds its indices.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [1, 2]], [1, 2], [5, 6])
        ...     print(sess.run(tf.sparse_reset_shape(sp)).dense_shape.tolist())
        [2, 3]
    """
    from sparseflow._src.framework.graph import get_default_graph
    from sparseflow._src.ops.check_ops import assert_less_equal
    from sparseflow._src.ops.core_ops import identity
    from sparseflow._src.ops.math_reduction import reduce_max

    sp_input = _to_sparse(sp_input)
    with op_scope(None, "SparseResetShape", [sp_input.indices]):
        if new_shape is None:
            shape = reduce_max(sp_input.indices, axis=0) + 1
            return SparseTensor(sp_input.indices, sp_input.values, shape)
        new_shape = convert_to_tensor(new_shape, dtype=dtypes.int64, name="new_shape")
        check = assert_less_equal(sp_input.dense_shape, new_shape,
                                  message="new_shape must be at least the old shape in every dimension")
        with get_default_graph().control_dependencies([check]):
            new_shape = identity(new_shape)
        return SparseTensor(sp_input.indices, sp_input.values, new_shape)


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices ``a`` without the slices whose indices are in ``mask_indices``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([4, 6, 9]))
        ...     print(sess.run(tf.sparse_mask(a, [6]).indices).tolist())
        [4, 9]
    """
    from sparseflow._src.ops import array_ops

    with op_scope(name, "sparse_mask", [a.indices, mask_indices]):
        mask_indices = convert_to_tensor(mask_indices, dtype=a.indices.dtype)
        out_indices, to_gather = array_ops.setdiff1d(a.indices, mask_indices)
        return IndexedSlices(array_ops.gather(a.values, to_gather), out_indices, a.dense_shape)

"""Set operations over the last dimension: SetSize, DenseToDenseSetOperation,
DenseToSparseSetOperation and SparseToSparseSetOperation, as ``tf.sets`` (``size``,
``intersection``, ``union``, ``difference`` and their ``set_*`` names) and TF1's ``tf.sets.set_*``.

Each row of the last dimension is a set (repeated values count once; a sparse row holds only its
present values). Results are SparseTensors whose rows hold the result's values in ascending order,
with a dense shape of the inputs' batch shape and the largest result size.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     r = tf.sets.intersection([[1, 2, 3], [4, 5, 6]], [[3, 1, 9], [7, 8, 9]])
    ...     print(sess.run(tf.sparse.to_dense(r)).tolist())
    [[1, 3], [0, 0]]
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops.math_cwise import op_scope

__all__ = ["set_size", "set_intersection", "set_union", "set_difference"]

_SET_T = "T: {int8, int16, int32, int64, uint8, uint16, string}"
_ATTRS = ["set_operation: string", "validate_indices: bool = true", _SET_T]
_OPERATIONS = ("a-b", "b-a", "intersection", "union")


def _result_shape(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _check_operation(op):
    operation = op._attrs["set_operation"]
    operation = operation.decode() if isinstance(operation, bytes) else operation
    if operation not in _OPERATIONS:
        raise ValueError(f"Invalid set_operation {operation!r} for '{op.name}' (op: '{op.type}'): one of "
                         f"{', '.join(_OPERATIONS)}")


def _dense_dense_shape(op):
    _check_operation(op)
    a = op.inputs[0].shape.with_rank_at_least(2)
    b = op.inputs[1].shape.with_rank_at_least(2)
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims or not a[:-1].is_compatible_with(b[:-1]):
            raise ValueError(f"Shapes {a} and {b} of '{op.name}' must have the same rank and the same dimensions "
                             f"but the last")
    rank = a.ndims if a.ndims is not None else b.ndims
    return _result_shape(rank)


def _dense_sparse_shape(op):
    _check_operation(op)
    a = op.inputs[0].shape.with_rank_at_least(2)
    return _result_shape(a.ndims if a.ndims is not None else op.inputs[3].shape.with_rank(1)[0].value)


def _sparse_sparse_shape(op):
    _check_operation(op)
    rank = op.inputs[2].shape.with_rank(1)[0].value
    return _result_shape(rank if rank is not None else op.inputs[5].shape.with_rank(1)[0].value)


def _set_size_shape(op):
    return [TensorShape(None)]


_RESULT = ["result_indices: int64", "result_values: T", "result_shape: int64"]
register_op("SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"], outputs=["size: int32"],
            attrs=["validate_indices: bool = true", _SET_T], shape_fn=_set_size_shape)
register_op("DenseToDenseSetOperation", inputs=["set1: T", "set2: T"], outputs=_RESULT, attrs=_ATTRS,
            shape_fn=_dense_dense_shape)
register_op("DenseToSparseSetOperation", inputs=["set1: T", "set2_indices: int64", "set2_values: T",
                                                 "set2_shape: int64"], outputs=_RESULT, attrs=_ATTRS,
            shape_fn=_dense_sparse_shape)
register_op("SparseToSparseSetOperation", inputs=["set1_indices: int64", "set1_values: T", "set1_shape: int64",
                                                  "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
            outputs=_RESULT, attrs=_ATTRS, shape_fn=_sparse_sparse_shape)


def _as_set(value, name):
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        return value
    return convert_to_tensor(value, name=name)


def set_size(a, validate_indices=True):
    """The number of unique values in each row (last dimension) of the SparseTensor ``a``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [5, 5, 7], [2, 3])
        ...     print(sess.run(tf.sets.size(a)).tolist())
        [1, 1]
    """
    a = _as_set(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}")
    return apply_op("SetSize", [a.indices, a.values, a.dense_shape], {"validate_indices": validate_indices}
                    ).outputs[0]


def _set_operation(a, b, operation, validate_indices):
    a, b = _as_set(a, "a"), _as_set(b, "b")
    attrs = {"set_operation": operation, "validate_indices": validate_indices}
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b = b, a  # DenseToSparse takes the dense set first
        operation = {"a-b": "b-a", "b-a": "a-b"}.get(operation, operation)
        attrs["set_operation"] = operation
    if isinstance(a, SparseTensor):
        inputs = [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
        outs = apply_op("SparseToSparseSetOperation", inputs, attrs).outputs
    elif isinstance(b, SparseTensor):
        outs = apply_op("DenseToSparseSetOperation", [a, b.indices, b.values, b.dense_shape], attrs).outputs
    else:
        outs = apply_op("DenseToDenseSetOperation", [a, b], attrs).outputs
    return SparseTensor(*outs)


def set_intersection(a, b, validate_indices=True):
    """The values in both ``a`` and ``b``, row by row (dense or sparse sets).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sets.intersection([[1, 2]], [[2, 3]])).values.tolist())
        [2]
    """
    with op_scope(None, "set_intersection", []):
        return _set_operation(a, b, "intersection", validate_indices)


def set_union(a, b, validate_indices=True):
    """The values in ``a`` or ``b``, row by row.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sets.union([[1, 2]], [[2, 3]])).values.tolist())
        [1, 2, 3]
    """
    with op_scope(None, "set_union", []):
        return _set_operation(a, b, "union", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """The values of ``a`` not in ``b`` (of ``b`` not in ``a`` if not ``aminusb``), row by row.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sets.difference([[1, 2]], [[2, 3]])).values.tolist())
        [1]
    """
    with op_scope(None, "set_difference", []):
        return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)

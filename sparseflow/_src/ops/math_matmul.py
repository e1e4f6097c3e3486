"""Matrix products: MatMul, BatchMatMul, BatchMatMulV2, BatchMatMulV3, and ``tf.matmul``.

``tf.matmul`` makes MatMul for two matrices and BatchMatMulV2 (broadcast batch dimensions,
transposes turned into adjoints) when either rank is above 2 or unknown, like TensorFlow.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.placeholder(tf.float32, [None, 2, 3])
    ...     p = tf.matmul(a, tf.constant([[1.0, 1.0, 1.0]] * 4), transpose_b=True)
    >>> p.op.type, p.op.get_attr("adj_y"), p.shape.as_list()
    ('BatchMatMulV2', True, [None, 2, 4])
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops.math_cwise import (
    COMPLEX,
    FLOATS,
    SIGNED,
    UNSIGNED,
    apply1,
    broadcast_shapes,
    op_scope,
)

__all__ = ["matmul", "tensordot"]

_MATMUL_T = f"{{{FLOATS}, {SIGNED}, {UNSIGNED}, {COMPLEX}}}"


def _merge_inner(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _matmul_shape(op):
    a = op.inputs[0].shape.with_rank(2)
    b = op.inputs[1].shape.with_rank(2)
    ta, tb = op._attrs["transpose_a"], op._attrs["transpose_b"]
    ad, bd = a.as_list(), b.as_list()
    _merge_inner(ad[0] if ta else ad[1], bd[1] if tb else bd[0])
    return [TensorShape([ad[1] if ta else ad[0], bd[0] if tb else bd[1]])]


def _batch_matmul_shape(broadcast):
    def shape_fn(op):
        a = op.inputs[0].shape.with_rank_at_least(2)
        b = op.inputs[1].shape.with_rank_at_least(2)
        adj_x, adj_y = op._attrs["adj_x"], op._attrs["adj_y"]
        rows = a[-1] if adj_x else a[-2]
        cols = b[-2] if adj_y else b[-1]
        _merge_inner((a[-2] if adj_x else a[-1]).value, (b[-1] if adj_y else b[-2]).value)
        batch_a, batch_b = a[:-2], b[:-2]
        batch = broadcast_shapes(batch_a, batch_b) if broadcast else batch_a.merge_with(batch_b)
        return [batch.concatenate([rows, cols])]

    return shape_fn


_MATMUL_ATTRS = ["transpose_a: bool = false", "transpose_b: bool = false", f"T: {_MATMUL_T}",
                 "grad_a: bool = false", "grad_b: bool = false"]
register_op("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"], attrs=_MATMUL_ATTRS,
            shape_fn=_matmul_shape)
_BATCH_ATTRS = ["adj_x: bool = false", "adj_y: bool = false", "grad_x: bool = false", "grad_y: bool = false"]
register_op("BatchMatMul", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs=[f"T: {_MATMUL_T}"] + _BATCH_ATTRS, shape_fn=_batch_matmul_shape(False))
register_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs=[f"T: {_MATMUL_T}"] + _BATCH_ATTRS, shape_fn=_batch_matmul_shape(True))
register_op("BatchMatMulV3", inputs=["x: Ta", "y: Tb"], outputs=["output: Tout"],
            attrs=[f"Ta: {_MATMUL_T}", f"Tb: {_MATMUL_T}", f"Tout: {_MATMUL_T}"] + _BATCH_ATTRS,
            shape_fn=_batch_matmul_shape(True))


def _shape_tuple(t):
    return t.shape.as_tuple()


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """The matrix product ``a @ b`` of the innermost two dimensions, with optional (conjugate)
    transposes; leading batch dimensions broadcast.

    ``a_is_sparse``/``b_is_sparse`` are accepted as hints and change nothing. ``output_type``
    different from the inputs' type makes a BatchMatMulV3.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        ...     print(sess.run(tf.matmul(a, a, transpose_a=True)))
        [[10. 14.]
         [14. 20.]]
    """
    from sparseflow._src.ops.math_arith import conj

    with op_scope(name, "MatMul", [a, b]) as scope:
        if adjoint_a and transpose_a:
            raise ValueError(f"Only one of `transpose_a` and `adjoint_a` can be True. Received `transpose_a`="
                             f"{transpose_a}, `adjoint_a`={adjoint_a}.")
        if adjoint_b and transpose_b:
            raise ValueError(f"Only one of `transpose_b` and `adjoint_b` can be True. Received `transpose_b`="
                             f"{transpose_b}, `adjoint_b`={adjoint_b}.")
        a = convert_to_tensor(a, name="a")
        if not isinstance(b, Tensor):
            b = convert_to_tensor(b, dtype_hint=a.dtype.base_dtype, name="b")
        a_shape, b_shape = _shape_tuple(a), _shape_tuple(b)
        batched = a_shape is None or len(a_shape) > 2 or b_shape is None or len(b_shape) > 2
        use_v3 = False
        if output_type is not None:
            output_type = dtypes.as_dtype(output_type)
            use_v3 = output_type != a.dtype.base_dtype or output_type != b.dtype.base_dtype
        if batched:
            if transpose_a:
                a, adjoint_a = conj(a), True
            if transpose_b:
                b, adjoint_b = conj(b), True
        else:
            if adjoint_a:
                a, transpose_a = conj(a), True
            if adjoint_b:
                b, transpose_b = conj(b), True
            if not use_v3:
                return apply1("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b,
                                                 "grad_a": grad_a, "grad_b": grad_b}, name=scope)
            adjoint_a, adjoint_b = adjoint_a or transpose_a, adjoint_b or transpose_b
        attrs = {"adj_x": adjoint_a, "adj_y": adjoint_b, "grad_x": grad_a, "grad_y": grad_b}
        if use_v3:
            attrs["Tout"] = output_type
            return apply1("BatchMatMulV3", [a, b], attrs, name=scope)
        return apply1("BatchMatMulV2", [a, b], attrs, name=scope)


def _tensordot_axes(rank, axes):
    """(a_axes, b_axes) as lists of non-negative ints (``rank``: a's rank for the scalar form)."""
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: axes={axes}.")
        if rank is not None and axes > rank:
            raise ValueError(f"`axes` must not be larger than the number of dimensions of tensor {rank}. "
                             f"Received {axes}, vs tensor dimensions {rank}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, Tensor):
        raise NotImplementedError("tensordot with `axes` given as a Tensor is not supported; pass Python "
                                  "ints.")
    if len(axes) != 2:
        raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
    a_axes, b_axes = axes
    a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes `a` and `b`, {len(a_axes)} != {len(b_axes)}.")
    return a_axes, b_axes


def _tensordot_reshape(x, axes, flipped=False):
    """``x`` transposed and reshaped to a matrix [free, contracted] ([contracted, free] if flipped)."""
    from sparseflow._src.ops import array_ops

    rank = x.shape.ndims
    if rank is None:
        raise NotImplementedError("tensordot of a tensor of unknown rank is not supported.")
    axes = [i if i >= 0 else i + rank for i in axes]
    free = [i for i in range(rank) if i not in axes]
    perm = axes + free if flipped else free + axes
    dims = x.shape.as_list()
    free_dims = [dims[i] for i in free]
    if perm != list(range(rank)):
        x = array_ops.transpose(x, perm)
    if all(d is not None for d in dims):
        prod_free = int(np.prod(free_dims, dtype=np.int64))
        prod_axes = int(np.prod([dims[i] for i in axes], dtype=np.int64))
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        return array_ops.reshape(x, new_shape), free_dims, free_dims
    from sparseflow._src.ops.math_reduction import reduce_prod

    shape = array_ops.shape(x)
    n_axes = len(axes)
    cut = n_axes if flipped else rank - n_axes
    lead, tail = shape[:cut], shape[cut:]
    dyn_free = tail if flipped else lead
    new_shape = array_ops.stack([reduce_prod(lead), reduce_prod(tail)])
    return array_ops.reshape(x, new_shape), dyn_free, free_dims


def tensordot(a, b, axes, name=None):
    """Tensor contraction of ``a`` and ``b`` over ``axes`` (like ``numpy.tensordot``), via one MatMul.

    ``axes`` is an int N (last N axes of ``a`` with the first N of ``b``; 0 is the outer product)
    or a pair of axis lists.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        ...     print(sess.run(tf.tensordot(a, a, axes=[[0], [0]])).tolist())
        [[10.0, 14.0], [14.0, 20.0]]
    """
    from sparseflow._src.ops import array_ops

    with op_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a.shape.ndims, axes)
        a_matrix, a_free, a_free_static = _tensordot_reshape(a, a_axes)
        b_matrix, b_free, b_free_static = _tensordot_reshape(b, b_axes, True)
        product = matmul(a_matrix, b_matrix)
        if isinstance(a_free, list) and isinstance(b_free, list) and None not in a_free + b_free:
            return array_ops.reshape(product, a_free + b_free, name=scope)
        parts = [convert_to_tensor(f, dtype=dtypes.int32) if isinstance(f, list) else f
                 for f in (a_free, b_free)]
        dims = array_ops.concat(parts, 0)
        out = array_ops.reshape(product, dims, name=scope)
        out.set_shape(a_free_static + b_free_static)
        return out

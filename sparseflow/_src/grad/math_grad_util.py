"""Small helpers shared by the math gradient modules (``math_grad_*.py``).

Broadcasting is undone by ``grad_util.unbroadcast`` only; this module holds what the math rules
need besides that: densifying an incoming IndexedSlices, conjugating complex operands, and the
"kept dimensions" shape of a reduction (TensorFlow's ``math_ops.reduced_shape``).

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.grad.math_grad_util import kept_dims_shape
    >>> with tf.Graph().as_default():
    ...     s = tf.reduce_sum(tf.zeros([2, 3, 4]), axis=[0, 2])
    ...     print(kept_dims_shape(s.op.inputs[0], s.op.inputs[1]))
    [1, 3, 1]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.grad import grad_util
from sparseflow._src.ops import array_ops, math_ops

__all__: list[str] = []

# Types whose gradients are real numbers (TensorFlow's list in _CastGrad).
FLOAT_TYPES = frozenset([dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.complex64,
                         dtypes.complex128])


def dense(grad):
    """``grad`` as a Tensor (an IndexedSlices is scattered into its dense shape); None stays None."""
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad


def conj(x):
    """The complex conjugate of ``x``; ``x`` itself (no new op) for real dtypes."""
    return math_ops.conj(x) if x.dtype.is_complex else x


def real_valued(grad):
    """The gradient of an output whose values are real but whose dtype is complex (|x - y|^2, a norm,
    singular values): only the real part of ``grad`` moves the loss ``Re(conj(grad) * y)``, so the
    imaginary part is dropped. Real dtypes (and None) pass through.

    Example:
        >>> import sparseflow as tf
        >>> from sparseflow._src.grad.math_grad_util import real_valued
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(real_valued(tf.constant([1 + 2j]))))
        [1.+0.j]
    """
    if grad is None or not grad.dtype.is_complex:
        return grad
    return math_ops.cast(math_ops.real(grad), grad.dtype)


def unbroadcast(grad, x):
    """``grad`` summed down to the shape of ``x`` (None stays None): grad_util's one helper."""
    return None if grad is None else grad_util.unbroadcast(grad, x)


def static_axes(x, axes_tensor):
    """The sorted, non-negative reduction axes when ``x``'s rank and the axes are static, else None."""
    axes = constant_value(axes_tensor)
    rank = x.shape.ndims
    if axes is None or rank is None:
        return None
    flat = np.asarray(axes).reshape(-1).tolist()
    if rank == 0:
        return [] if not flat else None
    return sorted({int(a) % rank for a in flat})


def kept_dims_shape(x, axes_tensor):
    """The shape of ``x`` reduced over ``axes_tensor`` with the reduced dimensions kept as 1.

    A Python list when everything is static, otherwise an int32 tensor: ``shape * (1 - m) + m``
    with a constant mask ``m`` when the rank and axes are known, DynamicStitch otherwise.
    """
    axes = static_axes(x, axes_tensor)
    if axes is not None:
        rank = x.shape.ndims
        if x.shape.is_fully_defined():
            return [1 if i in axes else d for i, d in enumerate(x.shape.as_list())]
        if len(axes) == rank:
            return [1] * rank
        mask = np.array([1 if i in axes else 0 for i in range(rank)], dtype=np.int32)
        return array_ops.shape(x) * (1 - mask) + mask
    input_shape = array_ops.shape(x)
    rank = array_ops.size(input_shape)
    axes = math_ops.floormod(math_ops.cast(axes_tensor, dtypes.int32) + rank, rank)
    return array_ops.dynamic_stitch([array_ops.range(rank), axes],
                                    [input_shape, array_ops.ones_like(axes)])


def reshape_to_kept_dims(op, *tensors):
    """``tensors`` (outputs or gradients of reduction ``op``) reshaped to the kept-dims shape."""
    if op.get_attr("keep_dims"):
        return tensors
    kept = kept_dims_shape(op.inputs[0], op.inputs[1])
    return tuple(array_ops.reshape(t, kept) for t in tensors)


def zeros_scalar(dtype):
    return convert_to_tensor(np.zeros((), dtype=dtype.as_numpy_dtype), dtype=dtype)

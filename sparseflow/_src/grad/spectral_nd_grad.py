"""Gradients of FFTND, IFFTND, RFFTND, IRFFTND (TensorFlow registers none; these follow its convention
for the 1-3-D family, ``spectral_grad.py``), with the crop or zero-pad of each axis undone.

FFTND's input gradient is ``N * IFFTND(g)`` and IFFTND's ``FFTND(g) / N`` (N: the product of
``fft_length``); RFFTND's is ``Re(N * IFFTND(g zero-padded to the full last length))`` and
IRFFTND's ``RFFTND(g) * m / N`` with ``m`` 2 on the last axis' frequencies that have a mirror image.
Each is then cropped or zero-padded back to the input's sizes on ``axes``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     y = tf.real(tf.rfftnd(x, [2, 2], [0, 1]))[0, 0]  # the sum of x
    ...     print(sess.run(tf.gradients(y, x)[0]).tolist())
    [[1.0, 1.0], [1.0, 1.0]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.math_grad_util import dense
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.array_manip_ops import tensor_scatter_nd_update
from sparseflow._src.ops.math_cwise import WRAPPERS

__all__: list[str] = []


def _axes(t, axes):
    """``axes`` as non-negative int32 (column vector for scatters)."""
    rank = array_ops.size(array_ops.shape(t))
    return array_ops.expand_dims(WRAPPERS["floormod"](axes, rank), 1)


def _fit(t, axes, sizes):
    """``t`` cropped or zero-padded on ``axes`` to ``sizes``."""
    shape = array_ops.shape(t)
    target = tensor_scatter_nd_update(shape, _axes(t, axes), sizes)
    kept = WRAPPERS["minimum"](shape, target)
    cropped = array_ops.slice(t, array_ops.zeros_like(shape), kept)
    return array_ops.pad(cropped, array_ops.stack([array_ops.zeros_like(shape), target - kept], axis=1))


def _sizes_on(t, axes):
    return array_ops.gather(array_ops.shape(t), array_ops.reshape(_axes(t, axes), [-1]))


def _n(lengths, dtype):
    return math_ops.cast(math_ops.reduce_prod(lengths), dtype)


def _op(op_type, x, lengths, axes, attrs=None):
    return apply_op(op_type, [x, lengths, axes], attrs or {}).outputs[0]


@RegisterGradient("FFTND")
def _fftnd_grad(op, grad):
    x, lengths, axes = op.inputs
    grad = dense(grad)
    back = _op("IFFTND", grad, lengths, axes) * _n(lengths, grad.dtype)
    return [_fit(back, axes, _sizes_on(x, axes)), None, None]


@RegisterGradient("IFFTND")
def _ifftnd_grad(op, grad):
    x, lengths, axes = op.inputs
    grad = dense(grad)
    back = _op("FFTND", grad, lengths, axes) / _n(lengths, grad.dtype)
    return [_fit(back, axes, _sizes_on(x, axes)), None, None]


@RegisterGradient("RFFTND")
def _rfftnd_grad(op, grad):
    x, lengths, axes = op.inputs
    grad = dense(grad)
    full = _fit(grad, axes, lengths)  # the kept half of the last axis, zero-padded to its full length
    back = math_ops.real(_op("IFFTND", full, lengths, axes) * _n(lengths, grad.dtype))
    return [_fit(back, axes, _sizes_on(x, axes)), None, None]


@RegisterGradient("IRFFTND")
def _irfftnd_grad(op, grad):
    y, lengths, axes = op.inputs
    grad = dense(grad)
    real_dtype = grad.dtype.base_dtype
    complex_dtype = y.dtype.base_dtype
    spectrum = _op("RFFTND", grad, lengths, axes, {"Treal": real_dtype, "Tcomplex": complex_dtype})
    last = lengths[-1]
    odd = WRAPPERS["floormod"](last, 2)
    kept = last // 2 + 1
    mask = array_ops.concat([array_ops.ones([1], real_dtype), 2.0 * array_ops.ones([kept - 2 + odd], real_dtype),
                             array_ops.ones([1 - odd], real_dtype)], 0)[:kept]
    # the mask along the last axis given: shape [1, ..., kept, ..., 1]
    rank = array_ops.size(array_ops.shape(spectrum))
    last_axis = WRAPPERS["floormod"](axes[-1:], rank)
    mask_shape = tensor_scatter_nd_update(array_ops.ones([rank], dtypes.int32), array_ops.expand_dims(last_axis, 1),
                                          array_ops.reshape(kept, [1]))
    scale = math_ops.cast(array_ops.reshape(mask, mask_shape) / _n(lengths, real_dtype), complex_dtype)
    sizes = _sizes_on(y, axes)
    return [_fit(spectrum * scale, axes, sizes), None, None]

"""Gradients of the FFT family, for TensorFlow's convention (the gradient of a complex function is
the conjugate derivative applied to the incoming gradient).

FFT's is ``N * IFFT(g)`` and IFFT's ``FFT(g) / N`` (N: the number of transformed elements). RFFT
keeps half of a spectrum, so its input's gradient is ``Re(N * IFFT(g padded with zeros to the full
length))``; IRFFT's reads each kept frequency once but uses the ones with a mirror image twice, so
its input's gradient is ``RFFT(g) * m / N`` with ``m`` 2 for those and 1 for the DC (and, for even
lengths, Nyquist) terms. Both are cropped or zero-padded back to their input's shape.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1.0, 2.0, 3.0, 4.0])
    ...     y = tf.real(tf.signal.rfft(x))[0]  # the sum of x
    ...     print(sess.run(tf.gradients(y, x)[0]))
    [1. 1. 1. 1.]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.grad.math_grad_util import dense
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.math_cwise import WRAPPERS, apply1

__all__: list[str] = []

_RANK = {"": 1, "2D": 2, "3D": 3}


def _inner_size(t, rank, dtype):
    """The number of elements of the innermost ``rank`` dimensions of ``t``, as ``dtype``."""
    return math_ops.cast(math_ops.reduce_prod(array_ops.shape(t)[-rank:]), dtype)


def _fit(t, target, rank):
    """``t`` cropped or zero-padded in its innermost ``rank`` dimensions to the sizes ``target``."""
    shape = array_ops.shape(t)
    outer, inner = shape[:-rank], shape[-rank:]
    kept = WRAPPERS["minimum"](inner, target)
    cropped = array_ops.slice(t, array_ops.zeros_like(shape), array_ops.concat([outer, kept], 0))
    before = array_ops.zeros_like(shape)
    after = array_ops.concat([array_ops.zeros_like(outer), target - kept], 0)
    return array_ops.pad(cropped, array_ops.stack([before, after], axis=1))


def _complex_grad(inverse_type, rank, scale_up):
    def grad_fn(op, grad):
        grad = dense(grad)
        size = _inner_size(grad, rank, grad.dtype)
        out = apply1(inverse_type, [grad])
        return [out * size if scale_up else out / size]

    return grad_fn


def _rfft_grad(rank, suffix):
    def grad_fn(op, grad):
        x, lengths = op.inputs
        grad = dense(grad)
        last = lengths[-1:]
        half = array_ops.shape(grad)[-1:]
        outer_rank = array_ops.shape(array_ops.shape(grad))[0] - 1
        paddings = array_ops.concat([array_ops.zeros(array_ops.stack([outer_rank, 2]), dtypes.int32),
                                     array_ops.reshape(array_ops.concat([[0], last - half], 0), [1, 2])], 0)
        full = array_ops.pad(grad, paddings)
        size = math_ops.cast(math_ops.reduce_prod(lengths), grad.dtype)
        spatial = math_ops.real(apply1("IFFT" + suffix, [full]) * size)
        return [_fit(spatial, array_ops.shape(x)[-rank:], rank), None]

    return grad_fn


def _irfft_grad(rank, suffix):
    def grad_fn(op, grad):
        y, lengths = op.inputs
        grad = dense(grad)
        real_dtype = grad.dtype.base_dtype
        spectrum = apply_rfft(suffix, grad, lengths, y.dtype.base_dtype, real_dtype)
        last = lengths[-1]
        odd = math_ops.floormod(last, 2)
        kept = last // 2 + 1
        mask = array_ops.concat([array_ops.ones([1], real_dtype), 2.0 * array_ops.ones([kept - 2 + odd], real_dtype),
                                 array_ops.ones([1 - odd], real_dtype)], 0)[:kept]
        size = math_ops.cast(math_ops.reduce_prod(lengths), real_dtype)
        scaled = spectrum * math_ops.cast(mask / size, y.dtype.base_dtype)
        return [_fit(scaled, array_ops.shape(y)[-rank:], rank), None]

    return grad_fn


def apply_rfft(suffix, x, lengths, complex_dtype, real_dtype):
    from sparseflow._src.framework.op_def_library import apply_op

    return apply_op("RFFT" + suffix, [x, lengths], {"Treal": real_dtype, "Tcomplex": complex_dtype}).outputs[0]


for _suffix, _rank in _RANK.items():
    RegisterGradient("FFT" + _suffix)(_complex_grad("IFFT" + _suffix, _rank, True))
    RegisterGradient("IFFT" + _suffix)(_complex_grad("FFT" + _suffix, _rank, False))
    RegisterGradient("RFFT" + _suffix)(_rfft_grad(_rank, _suffix))
    RegisterGradient("IRFFT" + _suffix)(_irfft_grad(_rank, _suffix))

"""Fourier transforms over chosen axes: FFTND, IFFTND (complex) and RFFTND, IRFFTND (real to
half-spectrum and back), TF1's top-level ``tf.fftnd`` ... (raw ops: ``fft_length`` and ``axes``
given, one length per axis). As NumPy's ``fftn``/``rfftn``/``irfftn`` with ``s=fft_length``: each
axis is cropped or zero-padded to its length; RFFTND keeps ``fft_length[-1] // 2 + 1`` frequencies
along the last axis given, and IRFFTND reads as many.

TensorFlow 2.21 has these ops on GPU only; sparseflow runs them on CPU, with gradients.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     y = tf.rfftnd([[1.0, 0.0], [0.0, 0.0]], fft_length=[2, 2], axes=[0, 1])
    ...     print(sess.run(y).tolist())
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value

__all__ = ["fftnd", "ifftnd", "rfftnd", "irfftnd"]

SPECTRAL_ND_OP_TYPES = ("FFTND", "IFFTND", "RFFTND", "IRFFTND")


def _nd_shape(kind):
    def shape_fn(op):
        # Bad fft_length/axes are reported by the kernel, whatever is known when the graph is built.
        x, lengths_t, axes_t = op.inputs
        lengths_t.shape.with_rank(1)
        axes_t.shape.with_rank(1)
        if x.shape.ndims is None:
            return [unknown_shape()]
        rank = x.shape.ndims
        axes, lengths = constant_value(axes_t), constant_value(lengths_t)
        if axes is None:
            return [TensorShape([None] * rank)]
        axes = [int(a) for a in axes.reshape(-1)]
        if any(a < -rank or a >= rank for a in axes) or (lengths is not None and lengths.size != len(axes)):
            return [TensorShape([None] * rank)]
        dims = x.shape.as_list()
        for i, a in enumerate(axes):
            n = None if lengths is None else int(lengths.reshape(-1)[i])
            dims[a] = n if n is None or kind != "rfft" or i != len(axes) - 1 else n // 2 + 1
        return [TensorShape(dims)]

    return shape_fn


_COMPLEX = "Tcomplex: {complex64, complex128} = DT_COMPLEX64"
_REAL = "Treal: {float, double} = DT_FLOAT"
for _name in ("FFTND", "IFFTND"):
    register_op(_name, inputs=["input: Tcomplex", "fft_length: int32", "axes: int32"], outputs=["output: Tcomplex"],
                attrs=[_COMPLEX], shape_fn=_nd_shape("fft"))
register_op("RFFTND", inputs=["input: Treal", "fft_length: int32", "axes: int32"], outputs=["output: Tcomplex"],
            attrs=[_REAL, _COMPLEX], shape_fn=_nd_shape("rfft"))
register_op("IRFFTND", inputs=["input: Tcomplex", "fft_length: int32", "axes: int32"], outputs=["output: Treal"],
            attrs=[_REAL, _COMPLEX], shape_fn=_nd_shape("irfft"))


def _args(input, fft_length, axes, dtype):  # noqa: A002 - TensorFlow's argument name
    x = convert_to_tensor(input, dtype=dtype, name="input")
    return [x, convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length"),
            convert_to_tensor(axes, dtype=dtypes.int32, name="axes")]


def fftnd(input, fft_length, axes, name=None):  # noqa: A002
    """The complex DFT of ``input`` over ``axes``, each cropped or zero-padded to ``fft_length``."""
    x = convert_to_tensor(input, name="input")
    x = x if x.dtype.base_dtype in (dtypes.complex64, dtypes.complex128) else convert_to_tensor(x, dtypes.complex64)
    return apply_op("FFTND", _args(x, fft_length, axes, None), name=name or "FFTND").outputs[0]


def ifftnd(input, fft_length, axes, name=None):  # noqa: A002
    """The inverse complex DFT of ``input`` over ``axes`` (scaled by 1 / the number of elements)."""
    x = convert_to_tensor(input, name="input")
    x = x if x.dtype.base_dtype in (dtypes.complex64, dtypes.complex128) else convert_to_tensor(x, dtypes.complex64)
    return apply_op("IFFTND", _args(x, fft_length, axes, None), name=name or "IFFTND").outputs[0]


def rfftnd(input, fft_length, axes, Tcomplex=dtypes.complex64, name=None):  # noqa: A002, N803
    """The DFT of real ``input`` over ``axes``: the last axis keeps ``fft_length[-1] // 2 + 1`` frequencies."""
    x = convert_to_tensor(input, name="input")
    x = x if x.dtype.base_dtype in (dtypes.float32, dtypes.float64) else convert_to_tensor(x, dtypes.float32)
    return apply_op("RFFTND", _args(x, fft_length, axes, None), {"Tcomplex": dtypes.as_dtype(Tcomplex)},
                    name=name or "RFFTND").outputs[0]


def irfftnd(input, fft_length, axes, Treal=dtypes.float32, name=None):  # noqa: A002, N803
    """The real signal of a half-spectrum ``input`` over ``axes``, of sizes ``fft_length``."""
    x = convert_to_tensor(input, name="input")
    x = x if x.dtype.base_dtype in (dtypes.complex64, dtypes.complex128) else convert_to_tensor(x, dtypes.complex64)
    return apply_op("IRFFTND", _args(x, fft_length, axes, None), {"Treal": dtypes.as_dtype(Treal)},
                    name=name or "IRFFTND").outputs[0]

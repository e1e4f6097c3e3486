"""Discrete Fourier transforms over the innermost 1, 2 or 3 dimensions: FFT, IFFT, FFT2D, IFFT2D,
FFT3D, IFFT3D (complex to complex) and RFFT, IRFFT, RFFT2D, IRFFT2D, RFFT3D, IRFFT3D (real to
half-spectrum and back), as ``tf.signal`` / ``tf.spectral`` and TF1's top-level ``tf.fft``...

The real transforms take ``fft_length`` (one length per transformed dimension): inputs are cropped
or zero-padded to it, RFFT keeps ``fft_length[-1] // 2 + 1`` frequencies of the last dimension, and
IRFFT reads as many (ignoring the imaginary parts that a real signal's spectrum cannot have).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.signal.rfft([1.0, 0.0, 0.0, 0.0])), sess.run(tf.signal.irfft([4.0 + 0j, 0j, 0j])))
    [1.+0.j 1.+0.j 1.+0.j] [1. 1. 1. 1.]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.math_cwise import op_scope

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d", "rfft3d",
           "irfft3d"]

_RANK = {"": 1, "2D": 2, "3D": 3}


def _complex_shape(rank):
    def shape_fn(op):
        return [op.inputs[0].shape.with_rank_at_least(rank)]

    return shape_fn


def _real_shape(rank, forward):
    def shape_fn(op):
        s = op.inputs[0].shape.with_rank_at_least(rank)
        n = op.inputs[1].shape.with_rank(1)[0].value
        if n is not None and n != rank:
            raise ValueError(f"Dimension must be {rank} but is {n} for the fft_length of '{op.name}' (op: "
                             f"'{op.type}')")
        lengths = constant_value(op.inputs[1])
        if s.ndims is None:
            return [unknown_shape()]
        if lengths is None:
            return [s[:-rank].concatenate([None] * rank)]
        lengths = [int(v) for v in lengths.reshape(-1)]
        if len(lengths) != rank:
            raise ValueError(f"fft_length of '{op.name}' (op: '{op.type}') must have {rank} elements, got {lengths}")
        inner = lengths[:-1] + [lengths[-1] // 2 + 1 if forward else lengths[-1]]
        return [s[:-rank].concatenate(inner)]

    return shape_fn


for _suffix, _rank in _RANK.items():
    for _name in ("FFT", "IFFT"):
        register_op(_name + _suffix, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                    attrs=["Tcomplex: {complex64, complex128} = DT_COMPLEX64"], shape_fn=_complex_shape(_rank))
    _pair = ["Treal: {float, double} = DT_FLOAT", "Tcomplex: {complex64, complex128} = DT_COMPLEX64"]
    register_op("RFFT" + _suffix, inputs=["input: Treal", "fft_length: int32"], outputs=["output: Tcomplex"],
                attrs=_pair, shape_fn=_real_shape(_rank, True))
    register_op("IRFFT" + _suffix, inputs=["input: Tcomplex", "fft_length: int32"], outputs=["output: Treal"],
                attrs=_pair, shape_fn=_real_shape(_rank, False))

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _complex_op(op_type, default_name):
    def transform(input, name=None):  # noqa: A002 - TensorFlow's argument name
        with op_scope(name, default_name, [input]) as scope:
            x = convert_to_tensor(input, name="input")
            if x.dtype.base_dtype not in _REAL_OF:
                x = convert_to_tensor(x, dtype=dtypes.complex64)
            return apply_op(op_type, [x], name=scope).outputs[0]

    transform.__name__ = default_name
    transform.__doc__ = (f"The {op_type} of the innermost {_RANK[op_type.lstrip('IFT') or '']} dimension(s) of a "
                         f"complex tensor (op ``{op_type}``).")
    return transform


def _fft_length(x, rank, forward):
    """The transform lengths: the input's innermost sizes (for IRFFT, 2 * (last - 1) in the last)."""
    from sparseflow._src.ops import array_ops

    static = x.shape[-rank:] if x.shape.ndims is not None else None
    if static is not None and static.is_fully_defined():
        lengths = static.as_list()
        if not forward:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        return convert_to_tensor(lengths, dtype=dtypes.int32)
    lengths = array_ops.shape(x)[-rank:]
    if forward:
        return lengths
    last = 2 * (lengths[-1:] - 1)
    return array_ops.concat([lengths[:-1], last], 0) if rank > 1 else last


def _pad_to(x, lengths, rank, forward):
    """``x`` zero-padded in its innermost dimensions up to what ``fft_length`` reads (the ops crop)."""
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_cwise import WRAPPERS

    static = constant_value(lengths)
    inner = x.shape[-rank:] if x.shape.ndims is not None else None
    if static is not None and inner is not None and inner.is_fully_defined():
        need = [int(v) for v in static.reshape(-1)]
        if len(need) != rank:
            return x  # the op reports it
        if not forward:
            need[-1] = need[-1] // 2 + 1
        extra = [max(0, n - d) for n, d in zip(need, inner.as_list())]
        if not any(extra):
            return x
        return array_ops.pad(x, [[0, 0]] * (x.shape.ndims - rank) + [[0, e] for e in extra])
    needed = lengths if forward else array_ops.concat([lengths[:-1], lengths[-1:] // 2 + 1], 0)
    shape = array_ops.shape(x)
    extra = WRAPPERS["maximum"](needed - shape[-rank:], 0)
    after = array_ops.concat([array_ops.zeros_like(shape[:-rank]), extra], 0)
    return array_ops.pad(x, array_ops.stack([array_ops.zeros_like(shape), after], axis=1))


def _real_op(op_type, default_name, rank, forward):
    def transform(input_tensor, fft_length=None, name=None):
        with op_scope(name, default_name, [input_tensor]) as scope:
            x = convert_to_tensor(input_tensor, name="input_tensor")
            if forward:
                real = x.dtype.base_dtype if x.dtype.base_dtype in _COMPLEX_OF else dtypes.float32
                x = convert_to_tensor(x, dtype=real)
                attrs = {"Treal": real, "Tcomplex": _COMPLEX_OF[real]}
            else:
                cplx = x.dtype.base_dtype if x.dtype.base_dtype in _REAL_OF else dtypes.complex64
                x = convert_to_tensor(x, dtype=cplx)
                attrs = {"Treal": _REAL_OF[cplx], "Tcomplex": cplx}
            if fft_length is None:
                lengths = _fft_length(x, rank, forward)
            else:
                lengths = convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
                x = _pad_to(x, lengths, rank, forward)
            return apply_op(op_type, [x, lengths], attrs, name=scope).outputs[0]

    transform.__name__ = default_name
    transform.__doc__ = (f"The {op_type} of the innermost {rank} dimension(s), of length ``fft_length`` (default: "
                         f"the input's) (op ``{op_type}``).")
    return transform


fft = _complex_op("FFT", "fft")
ifft = _complex_op("IFFT", "ifft")
fft2d = _complex_op("FFT2D", "fft2d")
ifft2d = _complex_op("IFFT2D", "ifft2d")
fft3d = _complex_op("FFT3D", "fft3d")
ifft3d = _complex_op("IFFT3D", "ifft3d")
rfft = _real_op("RFFT", "rfft", 1, True)
irfft = _real_op("IRFFT", "irfft", 1, False)
rfft2d = _real_op("RFFT2D", "rfft2d", 2, True)
irfft2d = _real_op("IRFFT2D", "irfft2d", 2, False)
rfft3d = _real_op("RFFT3D", "rfft3d", 3, True)
irfft3d = _real_op("IRFFT3D", "irfft3d", 3, False)

"""FFTND, IFFTND, RFFTND, IRFFTND (``tf.fftnd`` ...): transforms over chosen axes, with lengths that
crop and that zero-pad, negative axes, odd last lengths, empty inputs and zero lengths, and bad
``axes`` (out of range, repeated, a count other than fft_length's). TensorFlow 2.21 has no CPU kernel
for these ops (GPU only), so every sample is checked against NumPy's ``numpy.fft`` and the gradients
(float64/complex128) by finite differences.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular

_NOT_TF = "TensorFlow 2.21 registers FFTND/IFFTND/RFFTND/IRFFTND kernels for GPU only"
_NUMPY = {"FFTND": np.fft.fftn, "IFFTND": np.fft.ifftn, "RFFTND": np.fft.rfftn, "IRFFTND": np.fft.irfftn}


def _check(op_type):
    def check(inputs, attrs, outs):
        x = np.asarray(inputs["input"])
        lengths = [int(v) for v in np.asarray(inputs["fft_length"]).reshape(-1)]
        axes = [int(v) for v in np.asarray(inputs["axes"]).reshape(-1)]
        valid = len(lengths) == len(axes) and all(-x.ndim <= a < x.ndim for a in axes) and \
            len({a % x.ndim for a in axes}) == len(axes)
        if outs is None:
            return "" if not valid else "raised on valid fft_length and axes"
        if not valid:
            return f"returned a value for fft_length {lengths} and axes {axes} on shape {list(x.shape)}"
        got = np.asarray(outs[0])
        if 0 in lengths or x.size == 0:
            want_shape = list(x.shape)
            for i, (a, n) in enumerate(zip(axes, lengths)):
                want_shape[a] = n // 2 + 1 if op_type == "RFFTND" and i == len(axes) - 1 else n
            return "" if list(got.shape) == want_shape and not got.any() else f"got {got!r} for an empty transform"
        want = _NUMPY[op_type](x, s=lengths, axes=axes)
        tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-10
        if got.shape != want.shape or not np.allclose(got, want, rtol=tol, atol=tol * 10):
            return f"got shape {list(got.shape)}, NumPy's is {list(want.shape)} (max error {np.abs(got - want).max()})"
        return ""

    return check


def _build(op_type):
    def build(tf, input, fft_length, axes):  # noqa: A002 - TensorFlow's argument name
        fn = {"FFTND": tf.fftnd, "IFFTND": tf.ifftnd}.get(op_type)
        if fn is not None:
            return fn(input, fft_length, axes)
        if op_type == "RFFTND":
            return tf.rfftnd(input, fft_length, axes, Tcomplex=tf.complex64 if input.dtype == tf.float32
                             else tf.complex128)
        return tf.irfftnd(input, fft_length, axes, Treal=tf.float32 if input.dtype == tf.complex64 else tf.float64)

    return build


def _samples(op_type, real_in):
    check = _check(op_type)
    half = op_type == "IRFFTND"
    last = 3 if half else 4  # an IRFFTND input holds n // 2 + 1 frequencies of a last length 4 or 5
    s = [
        Sample("all_axes", {"input": regular(2, 3, last), "fft_length": i32([2, 3, 4]), "axes": i32([0, 1, 2])},
               check=check, fd=True),
        Sample("inner_two", {"input": regular(2, 3, last), "fft_length": i32([3, 4]), "axes": i32([-2, -1])},
               check=check, fd=True),
        Sample("outer_axis_last", {"input": regular(3, 2, last), "fft_length": i32([4, 3]), "axes": i32([2, 0])},
               check=check, fd=True),
        Sample("padded", {"input": regular(2, last), "fft_length": i32([4, 6]), "axes": i32([0, 1])},
               check=check, fd=True),
        Sample("cropped", {"input": regular(3, last), "fft_length": i32([2, 3]), "axes": i32([0, 1])},
               check=check, fd=True),
        Sample("odd_last", {"input": regular(2, last), "fft_length": i32([2, 5]), "axes": i32([0, 1])},
               check=check, fd=True),
        Sample("one_axis", {"input": regular(2, last), "fft_length": i32([4]), "axes": i32([1])}, check=check,
               fd=True),
        Sample("empty_batch", {"input": empty(0, last), "fft_length": i32([4]), "axes": i32([1])}, check=check),
        Sample("zero_length", {"input": regular(2, last), "fft_length": i32([0]), "axes": i32([1])}, check=check,
               grad=False),
        Sample("axis_out_of_range", {"input": regular(2, last), "fft_length": i32([4]), "axes": i32([2])},
               check=check),
        Sample("repeated_axis", {"input": regular(2, last), "fft_length": i32([2, 2]), "axes": i32([1, -1])},
               check=check),
        Sample("count_mismatch", {"input": regular(2, last), "fft_length": i32([2, 4]), "axes": i32([1])},
               check=check),
    ]
    return s


_COMPLEX, _REAL = ("complex64", "complex128"), ("float32", "float64")
ENTRIES = [
    OpEntry("FFTND", _samples("FFTND", False), build=_build("FFTND"), dtypes=_COMPLEX, type_attr="Tcomplex",
            tf=_NOT_TF),
    OpEntry("IFFTND", _samples("IFFTND", False), build=_build("IFFTND"), dtypes=_COMPLEX, type_attr="Tcomplex",
            tf=_NOT_TF),
    OpEntry("RFFTND", _samples("RFFTND", True), build=_build("RFFTND"), dtypes=_REAL, type_attr="Treal",
            tf=_NOT_TF),
    OpEntry("IRFFTND", _samples("IRFFTND", False), build=_build("IRFFTND"), dtypes=_COMPLEX, type_attr="Tcomplex",
            tf=_NOT_TF),
]

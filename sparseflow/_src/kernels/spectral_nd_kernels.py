"""CPU kernels of FFTND, IFFTND, RFFTND, IRFFTND on ``numpy.fft`` (``fftn``/``rfftn``/``irfftn`` with
``s=fft_length``), in the output's precision.

Example:
    >>> import numpy as np
    >>> _checked(np.zeros((2, 3)), [4], [-1], "FFTND")
    ([4], [1])
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _checked(x, fft_length, axes, op_type):
    """``(lengths, axes >= 0)``, refusing counts that differ, axes out of range or repeated, negative lengths."""
    lengths = [int(v) for v in np.asarray(fft_length).reshape(-1)]
    raw = [int(v) for v in np.asarray(axes).reshape(-1)]
    if np.ndim(fft_length) != 1 or np.ndim(axes) != 1 or len(lengths) != len(raw):
        raise invalid(f"{op_type}: fft_length and axes must be vectors of the same size, got "
                      f"{np.asarray(fft_length).tolist()} and {np.asarray(axes).tolist()}")
    if any(a < -x.ndim or a >= x.ndim for a in raw):
        raise invalid(f"{op_type}: axes {raw} are out of range for an input of shape {dbg(x.shape)}")
    norm = [a % x.ndim for a in raw]
    if len(set(norm)) != len(norm):
        raise invalid(f"{op_type}: axes {raw} repeat an axis")
    if any(n < 0 for n in lengths):
        raise invalid(f"{op_type}: fft_length must be non-negative, got {lengths}")
    return lengths, norm


def _factory(op_type, kind):
    def factory(node):
        out_attr = "Treal" if kind == "irfft" else "Tcomplex"
        out = np.dtype(node.attrs[out_attr].as_numpy_dtype)

        def compute(x, fft_length, axes):
            x = np.asarray(x)
            lengths, axes = _checked(x, fft_length, axes, op_type)
            shape = list(x.shape)
            for i, (a, n) in enumerate(zip(axes, lengths)):
                shape[a] = n // 2 + 1 if kind == "rfft" and i == len(axes) - 1 else n
            if not axes:
                return x.astype(out)
            if 0 in lengths or 0 in x.shape or (kind == "irfft" and x.shape[axes[-1]] == 0):
                return np.zeros(shape, out)
            fn = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn, "irfft": np.fft.irfftn}[kind]
            return np.asarray(fn(x, s=lengths, axes=axes)).astype(out, copy=False)

        return compute

    return factory


for _op, _kind in (("FFTND", "fft"), ("IFFTND", "ifft"), ("RFFTND", "rfft"), ("IRFFTND", "irfft")):
    register_kernel(_op)(_factory(_op, _kind))

"""CPU kernels of the FFT family on NumPy's ``numpy.fft`` (pocketfft), computing in the output's
precision: complex transforms of the innermost 1-3 dimensions, and real ones that crop their input
to ``fft_length`` (an input shorter than it fails, as in TensorFlow: ``tf.signal`` pads first).

Example:
    >>> import numpy as np
    >>> np.round(_transform(np.fft.fftn, 1)(np.array([1, 1j, -1, -1j])), 6).tolist()
    [0j, (4+0j), 0j, 0j]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel

_RANK = {"": 1, "2D": 2, "3D": 3}


def _check_rank(x, rank, op_type):
    if x.ndim < rank:
        raise invalid(f"{op_type}: input must have rank at least {rank}, got shape {dbg(x.shape)}")


def _transform(fn, rank):
    axes = tuple(range(-rank, 0))

    def run(x):
        return x.copy() if x.size == 0 else fn(x, axes=axes)

    return run


def _complex_factory(op_type, fn, rank):
    run = _transform(fn, rank)

    def factory(node):
        out = np.dtype(node.attrs["Tcomplex"].as_numpy_dtype)

        def compute(x):
            x = np.asarray(x)
            _check_rank(x, rank, op_type)
            return np.asarray(run(x)).astype(out, copy=False)

        return compute

    return factory


def _lengths(fft_length, rank, op_type):
    lengths = [int(v) for v in np.asarray(fft_length).reshape(-1)]
    if np.ndim(fft_length) != 1 or len(lengths) != rank:
        raise invalid(f"{op_type}: fft_length must be a vector of {rank} elements, got {np.asarray(fft_length)!r}")
    if any(n < 0 for n in lengths):
        raise invalid(f"{op_type}: fft_length must be non-negative, got {lengths}")
    return lengths


def _real_factory(op_type, rank, forward):
    axes = tuple(range(-rank, 0))

    def factory(node):
        out = np.dtype((node.attrs["Tcomplex"] if forward else node.attrs["Treal"]).as_numpy_dtype)

        def compute(x, fft_length):
            x = np.asarray(x)
            _check_rank(x, rank, op_type)
            lengths = _lengths(fft_length, rank, op_type)
            inner = lengths[:-1] + [lengths[-1] // 2 + 1 if forward else lengths[-1]]
            needed = lengths if forward else lengths[:-1] + [lengths[-1] // 2 + 1]
            for axis, (have, need) in enumerate(zip(x.shape[-rank:], needed), start=x.ndim - rank):
                if have < need:  # the op crops; tf.signal's functions pad before it, as TensorFlow's do
                    raise invalid(f"Input dimension {axis} must have length of at least {need} but got: {have}")
            shape = x.shape[:-rank] + tuple(inner)
            if 0 in lengths or 0 in x.shape:
                return np.zeros(shape, out)
            if forward:
                return np.fft.rfftn(x, s=lengths, axes=axes).astype(out, copy=False)
            return np.fft.irfftn(x, s=lengths, axes=axes).astype(out, copy=False)

        return compute

    return factory


for _suffix, _rank in _RANK.items():
    register_kernel("FFT" + _suffix)(_complex_factory("FFT" + _suffix, np.fft.fftn, _rank))
    register_kernel("IFFT" + _suffix)(_complex_factory("IFFT" + _suffix, np.fft.ifftn, _rank))
    register_kernel("RFFT" + _suffix)(_real_factory("RFFT" + _suffix, _rank, True))
    register_kernel("IRFFT" + _suffix)(_real_factory("IRFFT" + _suffix, _rank, False))

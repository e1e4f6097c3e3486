"""CPU kernels of LeftShift, RightShift, HistogramFixedWidth, Cross, Fingerprint, Timestamp and
EditDistance.

Example:
    >>> from sparseflow._src.kernels.math_misc_kernels import levenshtein
    >>> levenshtein([b"k", b"i", b"t"], [b"s", b"i", b"t", b"s"])
    2
"""

from __future__ import annotations

import time

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import farmhash
from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


# ---------------------------------------------------------------- shifts
def _shift_factory(left: bool):
    def factory(node):
        dt = np.dtype(node.attrs["T"].as_numpy_dtype)
        bits = dt.itemsize * 8
        unsigned = np.dtype(f"u{dt.itemsize}")

        def compute(x, y):
            x, y = np.asarray(x, dt), np.asarray(y, dt)
            try:
                np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                raise invalid(f"Incompatible shapes: {dbg(x.shape)} vs. {dbg(y.shape)}") from None
            # Shifts outside [0, bits) are clamped, as TensorFlow does (C++ leaves them undefined).
            amount = np.clip(y.astype(np.int64), 0, bits - 1).astype(unsigned)
            if left:
                return as_output(np.left_shift(x.astype(unsigned), amount).astype(dt))
            return as_output(np.right_shift(x, amount.astype(dt)))

        return compute

    return factory


register_kernel("LeftShift")(_shift_factory(True))
register_kernel("RightShift")(_shift_factory(False))


# ---------------------------------------------------------------- HistogramFixedWidth
@register_kernel("HistogramFixedWidth")
def _histogram_fixed_width(node):
    out = np.dtype(node.attrs["dtype"].as_numpy_dtype)

    def compute(values, value_range, nbins):
        values, value_range = np.asarray(values), np.asarray(value_range)
        nbins = int(nbins)
        if nbins <= 0:
            raise invalid(f"nbins should be a positive number, but got '{nbins}'")
        if value_range.shape != (2,):
            raise invalid(f"value_range should be a vector of 2 elements, got shape {dbg(value_range.shape)}")
        lo, hi = value_range[0], value_range[1]
        if not lo < hi:
            raise invalid(f"value_range should satisfy value_range[0] < value_range[1], but got '[{lo}, {hi}]'")
        step = (float(hi) - float(lo)) / nbins
        with np.errstate(invalid="ignore", over="ignore"):
            offset = (np.maximum(values, lo) - lo).astype(np.float64)
            bins = np.minimum(offset / step, nbins - 1).astype(np.int64)
        return np.bincount(bins.reshape(-1), minlength=nbins).astype(out)

    return compute


# ---------------------------------------------------------------- Cross
@register_kernel("Cross")
def _cross(node):
    def compute(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            raise invalid(f"Both inputs must be of same shape: {dbg(a.shape)} vs. {dbg(b.shape)}")
        if a.ndim < 1:
            raise invalid("Input must be at least 1D")
        if a.shape[-1] != 3:
            raise errors.FailedPreconditionError(None, None, f"Trailing dimension must be of size 3: {dbg(a.shape)}")
        with np.errstate(over="ignore"):
            return np.cross(a, b).astype(a.dtype, copy=False)

    return compute


# ---------------------------------------------------------------- Fingerprint, Timestamp
def _le_bytes(fingerprints: np.ndarray) -> np.ndarray:
    """uint64 fingerprints [n] as their 8 little-endian bytes [n, 8]."""
    return np.ascontiguousarray(fingerprints, dtype="<u8").view(np.uint8).reshape(-1, 8)


@register_kernel("Fingerprint")
def _fingerprint(node):
    def compute(data, method):
        method = np.asarray(method, dtype=object).reshape(-1)[0] if np.size(method) == 1 else method
        method = method.decode() if isinstance(method, bytes) else str(method)
        if method != "farmhash64":
            raise invalid(f"Unsupported fingerprint method: {method}")
        data = np.asarray(data)
        if data.ndim < 1:
            raise invalid(f"`data` should have at least one dimension: {dbg(data.shape)}")
        rows = data.shape[0]
        per_row = int(np.prod(data.shape[1:], dtype=np.int64))
        if data.dtype == object:
            strings = farmhash.fingerprint64_strings(data.reshape(-1))
            if per_row == 1:
                return _le_bytes(strings).reshape(rows, 8)
            row_bytes = _le_bytes(strings).reshape(rows, per_row * 8)
        else:
            row_bytes = np.ascontiguousarray(data).reshape(-1).view(np.uint8).reshape(rows, per_row * data.itemsize)
        packed = np.empty(rows, dtype=object)
        packed[:] = [r.tobytes() for r in row_bytes]
        return _le_bytes(farmhash.fingerprint64_strings(packed))

    return compute


register_kernel("Timestamp")(lambda node: lambda: np.float64(time.time()))


# ---------------------------------------------------------------- EditDistance
def levenshtein(a, b) -> int:
    """The edit distance (insertions, deletions, substitutions) between two sequences."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def _groups(indices, values, shape, what):
    """{prefix index tuple: [values in order]} of one sparse operand, its indices checked."""
    if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1:
        raise invalid(f"{what}_indices should be a matrix, {what}_values a vector and {what}_shape a vector, "
                      f"got shapes {dbg(indices.shape)}, {dbg(values.shape)}, {dbg(shape.shape)}")
    if indices.shape[0] != values.shape[0] or indices.shape[1] != shape.shape[0]:
        raise invalid(f"{what}_indices {dbg(indices.shape)}, {what}_values {dbg(values.shape)} and {what}_shape "
                      f"{dbg(shape.shape)} do not describe one SparseTensor")
    prefix = indices[:, :-1]  # (the last dimension only orders a sequence, as in TensorFlow)
    if ((prefix < 0) | (prefix >= shape[:-1])).any():
        raise invalid(f"{what}_indices has an index outside {what}_shape {shape.tolist()}")
    out: dict = {}
    for idx, v in zip(indices[:, :-1].tolist(), values.tolist()):
        out.setdefault(tuple(idx), []).append(v)
    return out


@register_kernel("EditDistance")
def _edit_distance(node):
    normalize = bool(node.attrs.get("normalize", True))

    def compute(h_indices, h_values, h_shape, t_indices, t_values, t_shape):
        h_shape, t_shape = np.asarray(h_shape), np.asarray(t_shape)
        if h_shape.size != t_shape.size:
            raise invalid(f"hypothesis_shape and truth_shape must have the same rank, got {h_shape.tolist()} and "
                          f"{t_shape.tolist()}")
        if h_shape.size < 1:
            raise invalid("The SparseTensors must have rank at least 1")
        hyp = _groups(np.asarray(h_indices), np.asarray(h_values), h_shape, "hypothesis")
        truth = _groups(np.asarray(t_indices), np.asarray(t_values), t_shape, "truth")
        out = np.zeros(np.maximum(h_shape[:-1], t_shape[:-1]), dtype=np.float32)
        for key in hyp.keys() | truth.keys():
            h, t = hyp.get(key, []), truth.get(key, [])
            if not t:
                d = float(len(h))
                out[key] = np.inf if normalize and d else d
            elif not h:
                out[key] = 1.0 if normalize else float(len(t))
            else:
                d = float(levenshtein(h, t))
                out[key] = d / len(t) if normalize else d
        return as_output(out)

    return compute

"""CPU kernels of reductions (Sum, Mean, Prod, Max, Min, EuclideanNorm, All, Any), ArgMax/ArgMin and
scans (Cumsum, Cumprod, CumulativeLogsumexp).

Results keep the op's dtype: integer sums wrap around like TensorFlow's, integer means sum in
64 bits and divide with truncation, empty reductions give the reduction's identity (0, 1,
-inf/lowest, NaN for a float mean), repeated axes are an error. ArgMax/ArgMin never pick a NaN
and keep index 0 unless a value beats the type's lowest (highest) value, as TensorFlow's do.

Example:
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.kernels.registry import KernelNode, get_kernel
    >>> node = KernelNode("m", "Mean", {"T": dtypes.int32, "keep_dims": False}, [], [dtypes.int32], "")
    >>> get_kernel("Mean").factory(node)(np.array([[-1, -2], [3, 4]], np.int32), np.int32(1))
    array([-1,  3], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _shape(v) -> str:
    return "[" + ",".join(str(d) for d in np.shape(v)) + "]"


def reduction_axes(indices, rank: int) -> tuple:
    """Normalized, sorted axes; an out-of-range or repeated axis is an InvalidArgumentError."""
    out = []
    for a in np.asarray(indices).reshape(-1).tolist():
        if a < -rank or a >= rank:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid reduction dimension ({a} for input with {rank} dimension(s)")
        a = a + rank if a < 0 else a
        if a in out:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        out.append(a)
    return tuple(sorted(out))


def _accumulator(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _sum(x, axes, keep, out):
    return np.sum(x, axis=axes, keepdims=keep, dtype=_accumulator(out))


def _mean(x, axes, keep, out):
    wide = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64)}.get(out.kind)  # no overflow below 64 bits
    total = np.sum(x, axis=axes, keepdims=keep, dtype=wide or _accumulator(out))
    count = int(np.prod([np.shape(x)[a] for a in axes], dtype=np.int64))
    if wide is not None:
        if count == 0:
            return np.zeros_like(total)
        q = np.floor_divide(total, count)  # C++ integer division truncates toward zero
        return np.where((q < 0) & (q * count != total), q + 1, q)
    if out.kind == "c":  # parts divided by the real count; the mean of nothing is 0 (TensorFlow's)
        mean = np.zeros_like(total)
        if count:
            mean.real, mean.imag = total.real / count, total.imag / count
        return mean
    with np.errstate(all="ignore"):
        return total / count if count else total * np.nan


def _prod(x, axes, keep, out):
    return np.prod(x, axis=axes, keepdims=keep, dtype=_accumulator(out))


def _extreme(fn, pick):
    def reduce(x, axes, keep, out):
        if out.kind == "f":
            initial = pick(-np.inf, np.inf)
        elif out.kind in "iu":
            info = np.iinfo(out)
            initial = pick(info.min, info.max)
        else:
            initial = pick(False, True)
        return fn(x, axis=axes, keepdims=keep, initial=initial)

    return reduce


def _euclidean_norm(x, axes, keep, out):
    if out.kind == "c":
        return np.sqrt(np.sum(x * np.conj(x), axis=axes, keepdims=keep))
    if out.kind in "iu":  # squares and their sum wrap around in the type, like TensorFlow's
        total = np.sum(np.square(x), axis=axes, keepdims=keep, dtype=out)
        return np.sqrt(total.astype(np.float64))
    x = np.asarray(x, dtype=_accumulator(out))
    return np.sqrt(np.sum(np.square(x), axis=axes, keepdims=keep))


REDUCTION_KERNELS = [
    ("Sum", _sum),
    ("Mean", _mean),
    ("Prod", _prod),
    ("Max", _extreme(np.max, lambda lo, hi: lo)),
    ("Min", _extreme(np.min, lambda lo, hi: hi)),
    ("EuclideanNorm", _euclidean_norm),
    ("All", lambda x, axes, keep, out: np.all(x, axis=axes, keepdims=keep)),
    ("Any", lambda x, axes, keep, out: np.any(x, axis=axes, keepdims=keep)),
]


# Reductions whose value over no axis is the input itself (a gradient's Sum over broadcast axes
# that turn out to be none): a copy, without the floating-point error state (a few microseconds).
_IDENTITY_WHEN_NO_AXES = frozenset({"Sum", "Mean", "Prod", "Max", "Min"})


def _reduction_factory(fn):
    def factory(node):
        keep = bool(node.attrs.get("keep_dims", False))
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
        same_when_no_axes = node.op_type in _IDENTITY_WHEN_NO_AXES

        def compute(x, indices):
            axes = reduction_axes(indices, np.ndim(x))
            if not axes and same_when_no_axes and type(x) is np.ndarray and x.dtype == out:
                return x.copy()
            with np.errstate(all="ignore"):
                r = fn(x, axes, keep, out)
            return r if r.dtype == out else r.astype(out)

        return compute

    return factory


for _op, _fn in REDUCTION_KERNELS:
    register_kernel(_op)(_reduction_factory(_fn))


def _arg_factory(fn):
    def factory(node):
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

        def compute(x, dimension):
            rank = np.ndim(x)
            dim = int(dimension)
            if dim < -rank or dim >= rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Expected dimension in the range [{-rank}, {rank}), but got {dim}")
            axis = dim + rank if dim < 0 else dim
            if np.shape(x)[axis] == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Reduction axis {dim} is empty in shape {_shape(x)}")
            return fn(x, axis=axis).astype(out)

        return compute

    return factory


def _arg_extreme(fn, is_max: bool):
    """np.argmax/argmin the way TensorFlow scans: start at index 0 holding the type's lowest (highest)
    value and move only to a strictly better value, so NaN and values not beyond it never win."""

    def arg(x, axis):
        x = np.asarray(x)
        if x.dtype.kind in "fiu":
            info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
            start = x.dtype.type(info.min if is_max else info.max)
            with np.errstate(invalid="ignore"):
                stuck = (x <= start) if is_max else (x >= start)
            if x.dtype.kind == "f":
                stuck |= np.isnan(x)
            x = np.where(stuck, start, x)
        return fn(x, axis=axis)

    return arg


register_kernel("ArgMax")(_arg_factory(_arg_extreme(np.argmax, True)))
register_kernel("ArgMin")(_arg_factory(_arg_extreme(np.argmin, False)))


def _scan_factory(accumulate, identity):
    def factory(node):
        exclusive = bool(node.attrs.get("exclusive", False))
        reverse = bool(node.attrs.get("reverse", False))
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

        def compute(x, axis):
            x = np.asarray(x)
            rank = x.ndim
            if np.ndim(axis) != 0:
                raise errors.InvalidArgumentError(None, None,
                                                  f"ScanOp: axis must be a scalar, not {_shape(axis)}")
            a = int(axis)
            if a < -rank or a >= rank:
                raise errors.InvalidArgumentError(
                    None, None, f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), but got {a}")
            a = a + rank if a < 0 else a
            if reverse:
                x = np.flip(x, a)
            with np.errstate(all="ignore"):
                r = accumulate(x, a, _accumulator(out))
            if exclusive and r.shape[a]:
                shifted = np.empty_like(r)
                lead = [slice(None)] * rank
                lead[a] = slice(0, 1)
                shifted[tuple(lead)] = identity
                lead[a] = slice(1, None)
                rest = [slice(None)] * rank
                rest[a] = slice(0, -1)
                shifted[tuple(lead)] = r[tuple(rest)]
                r = shifted
            if reverse:
                r = np.flip(r, a)
            return np.ascontiguousarray(r, dtype=out)

        return compute

    return factory


register_kernel("Cumsum")(_scan_factory(lambda x, a, dt: np.cumsum(x, axis=a, dtype=dt), 0))
register_kernel("Cumprod")(_scan_factory(lambda x, a, dt: np.cumprod(x, axis=a, dtype=dt), 1))
register_kernel("CumulativeLogsumexp")(
    _scan_factory(lambda x, a, dt: np.logaddexp.accumulate(x.astype(dt, copy=False), axis=a), -np.inf))

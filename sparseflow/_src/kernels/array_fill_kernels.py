"""CPU kernels of Fill, ZerosLike, OnesLike, Range, LinSpace and OneHot."""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, int_list, invalid
from sparseflow._src.kernels.registry import register_kernel


@register_kernel("Fill")
def _fill(node):
    t = node.output_dtypes[0].as_numpy_dtype

    def compute(dims, value):
        if np.ndim(dims) != 1:
            raise invalid(f"dims must be a vector, got shape {dbg(np.shape(dims))}")
        if np.ndim(value) != 0:
            raise invalid(f"value must be a scalar, got shape {dbg(np.shape(value))}")
        shape = int_list(dims)
        for d in shape:
            if d < 0:
                raise invalid(f"Dimension {d} must be >= 0")
        v = value[()] if isinstance(value, np.ndarray) else value
        return as_output(np.full(shape, v, dtype=t))

    return compute


@register_kernel("ZerosLike")
def _zeros_like(node):
    t = node.output_dtypes[0].as_numpy_dtype
    is_string = node.output_dtypes[0].name == "string"

    def compute(x):
        out = np.zeros(np.shape(x), dtype=t)
        if is_string:
            out[...] = b""
        return as_output(out)

    return compute


@register_kernel("OnesLike")
def _ones_like(node):
    t = node.output_dtypes[0].as_numpy_dtype
    return lambda x: as_output(np.ones(np.shape(x), dtype=t))


def _scalar(v, what):
    if np.ndim(v) != 0:
        raise invalid(f"{what} must be a scalar, not shape {dbg(np.shape(v))}")
    return v[()] if isinstance(v, np.ndarray) else v


def _scalar_or_one(v, what):
    """A scalar, or the element of a one-element vector (TensorFlow's Range kernel takes both)."""
    if np.shape(v) == (1,):
        return np.asarray(v).reshape(())[()]
    return _scalar(v, what)


@register_kernel("Range")
def _range(node):
    t = node.output_dtypes[0].as_numpy_dtype

    def compute(start, limit, delta):
        start, limit, delta = (t(_scalar_or_one(v, w))
                               for v, w in ((start, "start"), (limit, "limit"), (delta, "delta")))
        if start > limit and delta > 0:
            raise invalid(f"Requires start <= limit when delta > 0: {start}/{limit}")
        if start < limit and delta < 0:
            raise invalid(f"Requires start >= limit when delta < 0: {start}/{limit}")
        if delta == 0:
            raise invalid(f"Requires delta != 0: {delta}")
        if np.issubdtype(t, np.integer):
            n = (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
        else:
            n = int(np.ceil(np.abs((limit - start) / delta)))
        return (np.arange(n).astype(t) * delta + start).astype(t, copy=False)

    return compute


@register_kernel("LinSpace")
def _lin_space(node):
    t = node.output_dtypes[0].as_numpy_dtype

    def compute(start, stop, num):
        start, stop = t(_scalar(start, "start")), t(_scalar(stop, "stop"))
        n = int(_scalar(num, "num"))
        if n <= 0:
            raise invalid(f"Requires num > 0: {n}")
        if n == 1:
            return np.array([start], dtype=t)
        step = t((stop - start) / t(n - 1))
        out = np.empty(n, dtype=t)
        out[:-1] = start + step * np.arange(n - 1).astype(t)
        out[-1] = stop
        return out

    return compute


@register_kernel("OneHot")
def _one_hot(node):
    axis = int(node.attrs.get("axis", -1))
    t = node.output_dtypes[0].as_numpy_dtype

    def compute(indices, depth, on_value, off_value):
        indices = np.asarray(indices)
        d = int(_scalar(depth, "depth"))
        if d < 0:
            raise invalid(f"depth must be non-negative, got: {d}")
        on, off = _scalar(on_value, "on_value"), _scalar(off_value, "off_value")
        r = indices.ndim
        if axis < -1 or axis > r:
            raise invalid(f"Expected axis to be -1 or between [0, {r}).  But received: {axis}")
        hot = indices[..., None].astype(np.int64) == np.arange(d, dtype=np.int64)
        out = np.where(hot, np.asarray(on, dtype=t), np.asarray(off, dtype=t)).astype(t, copy=False)
        if axis != -1:
            out = np.moveaxis(out, -1, axis)
        return as_output(out)

    return compute

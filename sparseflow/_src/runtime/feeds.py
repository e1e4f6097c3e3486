"""Conversion and checking of fed values: dtype, static shape, no Tensors as values.

A value of another dtype is converted only when every element fits: integers out of the target's
range (2**40 into int32, -1 or 300 into uint8), floats that are not integers (or not finite) into
an integer type, numbers other than 0 and 1 into bool, and finite numbers beyond a float type's
range are refused with a TypeError naming the tensor, never wrapped, truncated or made infinite.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     conv = FeedConverter(tf.placeholder(tf.float32, [None, 2], name="x"))
    >>> conv([[1, 2]]).dtype
    dtype('float32')
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_util import to_ndarray


class FeedConverter:
    """Turns a fed value into an array of the tensor's dtype, checked against its static shape."""

    __slots__ = ("tensor", "np_dtype", "dims", "is_string", "exact")

    def __init__(self, tensor: Tensor):
        self.tensor = tensor
        d = tensor.dtype.base_dtype
        self.is_string = d == dtypes.string
        self.np_dtype = np.dtype(d.as_numpy_dtype) if d.is_numpy_compatible else None
        self.dims = tensor.shape.as_tuple()
        self.exact = self.dims if tensor.shape.is_fully_defined() else False  # a shape tuple or no match

    def __call__(self, value):
        if isinstance(value, Tensor):
            raise TypeError(f"The value of a feed cannot be a tf.Tensor object ({value.name}). Acceptable feed "
                            f"values include Python scalars, strings, lists, numpy ndarrays, or TensorHandles.")
        if type(value) is np.ndarray and value.dtype == self.np_dtype and value.shape == self.exact:
            return value  # the common case: an array of the right dtype and the fully known shape
        if self.is_string:
            arr = to_ndarray(value, dtypes.string)
        elif self.np_dtype is None:
            return value
        elif type(value) is np.ndarray and value.dtype == self.np_dtype:
            arr = value
        else:
            arr = self._converted(value)
        dims = self.dims
        if dims is not None:
            shape = arr.shape
            if len(shape) != len(dims) or any(d is not None and d != s for d, s in zip(dims, shape)):
                shown = "(" + ", ".join("?" if d is None else str(d) for d in dims) + \
                        ("," if len(dims) == 1 else "") + ")"
                raise errors.FeedError(None, None, f"Cannot feed value of shape {shape} for Tensor "
                                                   f"{self.tensor.name!r}, which has shape '{shown}'")
        return arr

    def _converted(self, value) -> np.ndarray:
        target = self.np_dtype
        try:
            src = value if isinstance(value, np.ndarray) else np.asarray(value)
            if src.dtype.kind in "iufb":
                why = _does_not_fit(src, target)
                if why:
                    raise TypeError(why)
            with np.errstate(over="ignore", invalid="ignore"):
                return np.asarray(src, dtype=target)
        except (TypeError, ValueError, OverflowError) as e:
            raise TypeError(f"Cannot feed value {value!r:.60} to Tensor {self.tensor.name!r} of type "
                            f"{self.tensor.dtype.base_dtype.name}: {e}") from None


def _does_not_fit(src: np.ndarray, target: np.dtype) -> str | None:
    """Why the values of ``src`` (a numeric array) change when cast to ``target``, or None."""
    if src.size == 0 or src.dtype == target:
        return None
    kind = target.kind
    if kind in "iu":
        info = np.iinfo(target)
        if src.dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                bad = ~np.isfinite(src) | (np.floor(src) != src)
            if bad.any():
                return f"the value {src[bad].flat[0].item()!r} is not an integer (feeding it would lose precision)"
            lo, hi = src.min(), src.max()
            if lo < info.min or hi >= float(info.max) + 1:
                return f"the value {(lo if lo < info.min else hi).item()!r} is out of the range of {target.name}"
            return None
        if src.dtype.kind in "iu":
            lo, hi = src.min(), src.max()
            if int(lo) < info.min or int(hi) > info.max:
                return f"the value {int(lo) if int(lo) < info.min else int(hi)} is out of the range of {target.name} " \
                       f"[{info.min}, {info.max}]"
        return None
    if kind == "b":
        if src.dtype.kind != "b" and not np.isin(src, (0, 1)).all():
            return f"the value {src[~np.isin(src, (0, 1))].flat[0].item()!r} is not 0 or 1"
        return None
    if kind == "f" and src.dtype.kind in "iuf":
        top = float(np.finfo(target).max)
        with np.errstate(invalid="ignore", over="ignore"):
            big = np.isfinite(src) & (np.abs(src.astype(np.float64)) > top)
        if big.any():
            return f"the value {src[big].flat[0].item()!r} is beyond the range of {target.name} (it would become inf)"
    return None

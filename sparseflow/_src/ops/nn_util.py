"""Shared pieces of the nn op family: TF's type sets, argument normalisers and window arithmetic.

Example:
    >>> get_sequence(2, 2, 3, "strides"), get_sequence([2, 3], 2, 1, "strides")
    ([1, 2, 2, 1], [1, 1, 2, 3])
    >>> windowed_output_size(7, 3, 1, 2, "SAME"), windowed_output_size(7, 3, 1, 2, "VALID")
    (4, 3)
"""

from __future__ import annotations

import numbers

import numpy as np

from sparseflow._src.framework.tensor_shape import Dimension

FLOAT_T = "{half, bfloat16, float, double}"
REAL_T = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64}"
NUMBER_T = ("{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
            "complex64, complex128}")
INDEX_T = "{int32, int64}"


def dim(shape, i):
    """``shape[i]`` as an int or None (None also when the rank is unknown)."""
    if shape.ndims is None:
        return None
    return shape.dims[i].value


def get_sequence(value, n, channel_index, name):
    """TF's ``_get_sequence``: an int or a list of 1, n or n+2 ints as a full n+2 list."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, numbers.Integral):
        value = [int(value)]
    elif not isinstance(value, (list, tuple, np.ndarray)):
        raise TypeError(f"{name} should be an int or a list of ints, got {value!r}")
    value = [int(v) for v in value]
    length = len(value)
    if length == n + 2:
        return value
    if length == 1:
        value = value * n
    elif length != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} of "
                         f"length {length}")
    if channel_index == 1:
        return [1, 1] + value
    return [1] + value + [1]


def convert_padding(padding, expected_length=4):
    """``(padding string, explicit_paddings list)`` from a string or a list of [before, after] pairs."""
    explicit = []
    if isinstance(padding, (list, tuple)):
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"When padding is a list, each element of padding must be a list/tuple of "
                                 f"size 2. Received: padding={padding} with element at index {i} of size "
                                 f"{len(pair) if isinstance(pair, (list, tuple)) else 1}")
            explicit.extend(int(p) for p in pair)
        if len(padding) != expected_length:
            raise ValueError(f"When padding is a list, it must be of size {expected_length}. Received: "
                             f"padding={padding} of size {len(padding)}")
        padding = "EXPLICIT"
    elif isinstance(padding, bytes):
        padding = padding.decode()
    return padding, explicit


def windowed_output_size(in_size, ksize, dilation, stride, padding, pad_before=0, pad_after=0):
    """Output length of a sliding window, as TF computes it (None when ``in_size`` is unknown)."""
    if stride <= 0:
        raise ValueError(f"Stride must be > 0, but got {stride}")
    if dilation < 1:
        raise ValueError(f"Dilation rate must be >= 1, but got {dilation}")
    if in_size is None:
        return None
    eff = (ksize - 1) * dilation + 1
    if padding == "SAME":
        return (in_size + stride - 1) // stride
    if padding == "VALID" and in_size < eff:
        raise ValueError(f"Negative dimension size caused by subtracting {eff} from {in_size} (the output "
                         f"size would be negative: a VALID window larger than its input)")
    num = in_size - eff + stride if padding == "VALID" else in_size + pad_before + pad_after - eff + stride
    out = num // stride if num >= 0 else -((-num) // stride)  # C++ division truncates toward zero
    if out < 0:
        raise ValueError(f"Computed output size would be negative: {out} [input_size: {in_size}, "
                         f"effective_filter_size: {eff}, stride: {stride}]")
    return out


def same_padding(in_size, ksize, dilation, stride):
    """(pad_before, pad_after) of TF's SAME padding for one spatial dimension."""
    eff = (ksize - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return total // 2, total - total // 2


def format_dims(data_format, rank=4):
    """(batch, channel, spatial dims) axes for ``NHWC``-like or ``NCHW``-like formats."""
    if data_format.startswith("NC"):
        return 0, 1, list(range(2, rank))
    return 0, rank - 1, list(range(1, rank - 1))


def as_dim(value):
    return Dimension(value).value


_PROVIDERS = ("math_ops", "array_ops", "core_ops", "random_ops", "control_flow_ops", "sparse_ops",
              "state_ops")


def tf_fn(name):
    """The wrapper ``name`` from the family module that defines it (math, array, random, ...).

    nn composites call other families' wrappers through this, at call time, so they do not depend
    on which module a wrapper lives in or on import order.
    """
    import importlib
    import sys

    for mod in _PROVIDERS:
        m = importlib.import_module(f"sparseflow._src.ops.{mod}")
        fn = getattr(m, name, None)
        if fn is not None:
            return fn
    for key, m in list(sys.modules.items()):  # any other family module already loaded (data_flow_ops, ...)
        if key.startswith("sparseflow._src.ops.") and name in getattr(m, "__all__", ()):
            return getattr(m, name)
    raise NotImplementedError(f"The nn composites need `tf.{name}`, which is not implemented yet.")


def broadcast_static_shape(a, b):
    """The broadcast of two static shapes (unknown dims stay unknown); ValueError if incompatible."""
    if a.ndims is None or b.ndims is None:
        from sparseflow._src.framework.tensor_shape import unknown_shape

        return unknown_shape()
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da, db = [1] * (n - len(da)) + da, [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    from sparseflow._src.framework.tensor_shape import TensorShape

    return TensorShape(out)

"""CPU kernels of the fake quantization ops, in float32 as TensorFlow's.

Example:
    >>> [round(v, 4) for v in nudge(-6.0, 6.0, 4, False)]
    [-6.4, 5.6, 0.8]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel

_F = np.float32


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _check_attrs(node, min_value=None, max_value=None):
    bits = int(node.attrs.get("num_bits", 8))
    if not 2 <= bits <= 16:
        raise _invalid(f"{node.op_type}: num_bits must be between 2 and 16, inclusive; got {bits}")
    if min_value is not None and not min_value < max_value:
        raise _invalid(f"{node.op_type}: min has to be smaller than max, was: min = {min_value}, max = {max_value}")
    return bits, bool(node.attrs.get("narrow_range", False))


def nudge(min_value, max_value, num_bits, narrow_range):
    """``(nudged_min, nudged_max, scale)``: the range moved so that 0 is one of the levels exactly."""
    quant_min = _F(1 if narrow_range else 0)
    quant_max = _F((1 << num_bits) - 1)
    lo, hi = _F(min_value), _F(max_value)
    scale = (hi - lo) / (quant_max - quant_min)
    zero_from_min = quant_min - lo / scale
    if zero_from_min < quant_min:
        zero = quant_min
    elif zero_from_min > quant_max:
        zero = quant_max
    else:
        zero = _F(np.floor(zero_from_min + _F(0.5)))  # rounds half up, as TensorFlow's std::round here
    return float((quant_min - zero) * scale), float((quant_max - zero) * scale), float(scale)


def _quantize(x, lo, hi, scale):
    x = np.asarray(x, _F)
    lo, hi, scale = _F(lo), _F(hi), _F(scale)
    clamped = np.maximum(np.minimum(x, hi), lo)  # in this order, as TensorFlow (min > max: all lo)
    return (np.floor((clamped - lo) * (_F(1) / scale) + _F(0.5)) * scale + lo).astype(_F)


def _inside(x, lo, hi):
    x = np.asarray(x, _F)
    return (x >= _F(lo)) & (x <= _F(hi))


@register_kernel("FakeQuantWithMinMaxArgs")
def _fake_quant_args(node):
    lo_attr, hi_attr = float(node.attrs.get("min", -6.0)), float(node.attrs.get("max", 6.0))
    lo, hi, scale = nudge(lo_attr, hi_attr, *_check_attrs(node, lo_attr, hi_attr))
    return lambda x: _quantize(x, lo, hi, scale)


@register_kernel("FakeQuantWithMinMaxArgsGradient")
def _fake_quant_args_grad(node):
    lo_attr, hi_attr = float(node.attrs.get("min", -6.0)), float(node.attrs.get("max", 6.0))
    lo, hi, _ = nudge(lo_attr, hi_attr, *_check_attrs(node, lo_attr, hi_attr))

    def compute(dy, x):
        dy, x = np.asarray(dy, _F), np.asarray(x, _F)
        if dy.shape != x.shape:
            raise _invalid(f"gradients and inputs must be the same size, got {list(dy.shape)} and {list(x.shape)}")
        return np.where(_inside(x, lo, hi), dy, _F(0))

    return compute


def _range(node, min_value, max_value):
    lo_in, hi_in = np.asarray(min_value), np.asarray(max_value)
    if lo_in.ndim or hi_in.ndim:
        raise _invalid(f"{node.op_type}: min and max must be scalars, got shapes {list(lo_in.shape)} and "
                       f"{list(hi_in.shape)}")
    bits, narrow = _check_attrs(node)
    return nudge(float(lo_in), float(hi_in), bits, narrow)  # TensorFlow's CPU kernel checks no order here


@register_kernel("FakeQuantWithMinMaxVars")
def _fake_quant_vars(node):
    _check_attrs(node)

    def compute(x, min_value, max_value):
        lo, hi, scale = _range(node, min_value, max_value)
        return _quantize(x, lo, hi, scale)

    return compute


@register_kernel("FakeQuantWithMinMaxVarsGradient")
def _fake_quant_vars_grad(node):
    _check_attrs(node)

    def compute(dy, x, min_value, max_value):
        dy, x = np.asarray(dy, _F), np.asarray(x, _F)
        if dy.shape != x.shape:
            raise _invalid(f"gradients and inputs must be the same size, got {list(dy.shape)} and {list(x.shape)}")
        lo, hi, _ = _range(node, min_value, max_value)
        inside = _inside(x, lo, hi)
        below, above = x < _F(lo), x > _F(hi)
        return (np.where(inside, dy, _F(0)), _F(dy[below].sum(dtype=_F)), _F(dy[above].sum(dtype=_F)))

    return compute


def _channel_ranges(node, x, min_value, max_value):
    lo_in, hi_in = np.asarray(min_value, _F), np.asarray(max_value, _F)
    if x.ndim < 1:
        raise _invalid(f"{node.op_type}: inputs must have rank at least 1, got a scalar")
    d = x.shape[-1]
    if lo_in.shape != (d,) or hi_in.shape != (d,):
        raise _invalid(f"{node.op_type}: min and max must have shape [{d}] (one value per channel of the last "
                       f"dimension), got {list(lo_in.shape)} and {list(hi_in.shape)}")
    bits, narrow = _check_attrs(node)
    ranges = [nudge(float(lo), float(hi), bits, narrow) for lo, hi in zip(lo_in.tolist(), hi_in.tolist())]
    lo, hi, scale = (np.array([r[i] for r in ranges], _F) for i in range(3))
    return lo, hi, scale


@register_kernel("FakeQuantWithMinMaxVarsPerChannel")
def _fake_quant_per_channel(node):
    _check_attrs(node)

    def compute(x, min_value, max_value):
        x = np.asarray(x, _F)
        lo, hi, scale = _channel_ranges(node, x, min_value, max_value)
        clamped = np.maximum(np.minimum(x, hi), lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.floor((clamped - lo) * (_F(1) / scale) + _F(0.5)) * scale + lo).astype(_F)

    return compute


@register_kernel("FakeQuantWithMinMaxVarsPerChannelGradient")
def _fake_quant_per_channel_grad(node):
    _check_attrs(node)

    def compute(dy, x, min_value, max_value):
        dy, x = np.asarray(dy, _F), np.asarray(x, _F)
        if dy.shape != x.shape:
            raise _invalid(f"gradients and inputs must be the same size, got {list(dy.shape)} and {list(x.shape)}")
        lo, hi, _ = _channel_ranges(node, x, min_value, max_value)
        inside = (x >= lo) & (x <= hi)
        flat_dy = dy.reshape(-1, x.shape[-1]) if x.size else np.zeros((0, x.shape[-1]), _F)
        below = (x < lo).reshape(flat_dy.shape)
        above = (x > hi).reshape(flat_dy.shape)
        return (np.where(inside, dy, _F(0)), np.where(below, flat_dy, _F(0)).sum(axis=0, dtype=_F),
                np.where(above, flat_dy, _F(0)).sum(axis=0, dtype=_F))

    return compute

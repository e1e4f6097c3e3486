"""Fake quantization: FakeQuantWithMinMaxArgs/Vars and their gradient ops. Values inside, below and
above the range, ranges whose zero point is nudged (all positive, all negative), 4 and 8 bits,
narrow_range, empty inputs, bad ranges and bit counts; per channel (last dimension) ranges.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty

_X = T([-7.0, -6.0, -1.3, -0.05, 0.0, 0.04, 0.5, 1.26, 3.3, 5.9, 6.0, 9.0])
_DY = T(np.linspace(-1.0, 1.0, 12))
_F32 = ("float32",)


def _args_samples(with_dy):
    def s(name, x, attrs):
        args = {"inputs": x}
        if with_dy:
            args = {"gradients": _DY if x is _X else empty(0), **args}
        return Sample(name, args, attrs)

    return [
        s("default", _X, {}),
        s("four_bits", _X, {"min": -6.0, "max": 6.0, "num_bits": 4}),
        s("narrow", _X, {"min": -1.0, "max": 3.0, "narrow_range": True}),
        s("positive_range", _X, {"min": 0.5, "max": 4.0}),
        s("negative_range", _X, {"min": -5.0, "max": -1.0, "num_bits": 3}),
        s("empty", empty(0), {}),
        s("min_not_below_max", _X, {"min": 2.0, "max": 2.0}),
        s("one_bit", _X, {"num_bits": 1}),
    ]


def _vars_samples(with_dy):
    def s(name, x, lo, hi, attrs=None):
        args = {"inputs": x, "min": T(lo), "max": T(hi)}
        if with_dy:
            args = {"gradients": _DY if x is _X else empty(0), **args}
        return Sample(name, args, attrs or {})

    return [
        s("default", _X, -6.0, 6.0),
        s("four_bits", _X, -6.0, 6.0, {"num_bits": 4}),
        s("narrow", _X, -1.0, 3.0, {"narrow_range": True}),
        s("positive_range", _X, 0.5, 4.0),
        s("negative_range", _X, -5.0, -1.0, {"num_bits": 3}),
        s("empty", empty(0), -1.0, 1.0),
        s("min_above_max", _X, 3.0, 1.0),
    ]


ENTRIES = [
    OpEntry("FakeQuantWithMinMaxArgs", _args_samples(False), dtypes=_F32),
    OpEntry("FakeQuantWithMinMaxArgsGradient", _args_samples(True), dtypes=_F32),
    OpEntry("FakeQuantWithMinMaxVars", _vars_samples(False), dtypes=_F32),
    OpEntry("FakeQuantWithMinMaxVarsGradient", _vars_samples(True), dtypes=_F32),
]


_XC = T(np.linspace(-7.0, 7.0, 12).reshape(4, 3))
_DYC = T(np.linspace(1.0, -1.0, 12).reshape(4, 3))


def _channel_samples(with_dy):
    def s(name, x, lo, hi, attrs=None):
        args = {"inputs": x, "min": T(lo), "max": T(hi)}
        if with_dy:
            args = {"gradients": _DYC if x is _XC else empty(0, 3), **args}
        return Sample(name, args, attrs or {})

    return [
        s("channels", _XC, [-6.0, 0.5, -5.0], [6.0, 4.0, -1.0]),
        s("four_bits_narrow", _XC, [-1.0, -2.0, -3.0], [3.0, 2.0, 1.0], {"num_bits": 4, "narrow_range": True}),
        s("empty", empty(0, 3), [-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]),
        s("wrong_channels", _XC, [-1.0, -1.0], [1.0, 1.0]),
    ]


ENTRIES += [
    OpEntry("FakeQuantWithMinMaxVarsPerChannel", _channel_samples(False), dtypes=_F32),
    OpEntry("FakeQuantWithMinMaxVarsPerChannelGradient", _channel_samples(True), dtypes=_F32),
]

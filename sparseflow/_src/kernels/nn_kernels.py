"""CPU kernels of the nn family: activations and their gradients, BiasAdd(Grad), L2Loss.

The other nn kernels live in ``nn_*_kernels.py`` modules imported (and so registered) here.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import (  # noqa: F401 - imported to register kernels
    nn_conv_kernels,
    nn_fused_kernels,
    nn_misc_kernels,
    nn_pool_kernels,
    nn_segment_kernels,
    nn_softmax_kernels,
)
from sparseflow._src.kernels.registry import register_kernel

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def shape_str(shape) -> str:
    """A shape as TensorFlow prints it in error messages: ``[2,3]``."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def elementwise(fn):
    """Wraps ``fn(*arrays)`` so half inputs are computed in float32 and the result keeps the dtype."""

    def compute(*xs):
        dt = np.asarray(xs[0]).dtype
        if dt == np.float16:
            xs = [np.asarray(x, np.float32) for x in xs]
        out = fn(*xs)
        return np.asarray(out).astype(dt, copy=False) if np.ndim(out) else dt.type(out)

    return compute


def _softplus(x):
    x = np.asarray(x)
    threshold = np.log(np.finfo(x.dtype).eps) + 2.0
    with np.errstate(over="ignore"):
        e = np.exp(x)
        return np.where(x > -threshold, x, np.where(x < threshold, e, np.log(e + 1)))


def _selu(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x < 0, (SELU_SCALE * SELU_ALPHA) * np.expm1(np.minimum(x, 0)), SELU_SCALE * x)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


_ACTIVATIONS = {
    "Relu": lambda x: np.maximum(x, 0),
    "Relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "Elu": lambda x: np.where(x < 0, np.expm1(np.minimum(x, 0)), x),
    "Selu": _selu,
    "Softplus": _softplus,
    "Softsign": lambda x: x / (1 + np.abs(x)),
}
for _type, _fn in _ACTIVATIONS.items():
    register_kernel(_type)(lambda node, _fn=_fn: elementwise(_fn))


@register_kernel("LeakyRelu")
def _leaky_relu(node):
    alpha = node.attrs.get("alpha", 0.2)
    return elementwise(lambda x: np.where(x > 0, x, x * x.dtype.type(alpha)))


_ACTIVATION_GRADS = {
    "ReluGrad": lambda g, f: g * (f > 0),  # TF's formula: NaN/inf gradients propagate
    "Relu6Grad": lambda g, f: g * ((f > 0) & (f < 6)),
    "EluGrad": lambda g, y: np.where(y < 0, g * (y + 1), g),
    "SeluGrad": lambda g, y: np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE),
    "SoftplusGrad": lambda g, f: g * _sigmoid(f),
    "SoftsignGrad": lambda g, f: g / np.square(1 + np.abs(f)),
}
for _type, _fn in _ACTIVATION_GRADS.items():
    register_kernel(_type)(lambda node, _fn=_fn: elementwise(_fn))


@register_kernel("LeakyReluGrad")
def _leaky_relu_grad(node):
    alpha = node.attrs.get("alpha", 0.2)
    return elementwise(lambda g, f: np.where(f > 0, g, g * np.asarray(g).dtype.type(alpha)))


def _channel_axis(data_format, ndim):
    return 1 if data_format == "NCHW" else ndim - 1


@register_kernel("BiasAddV1")
@register_kernel("BiasAdd")
def _bias_add(node):
    fmt = node.attrs.get("data_format", "NHWC")

    def compute(value, bias):
        value, bias = np.asarray(value), np.asarray(bias)
        if value.ndim < 2:
            raise errors.InvalidArgumentError(None, None, f"Input tensor must be at least 2D: "
                                                          f"{shape_str(value.shape)}")
        if bias.ndim != 1:
            raise errors.InvalidArgumentError(None, None, f"Biases must be 1D: {shape_str(bias.shape)}")
        axis = _channel_axis(fmt, value.ndim)
        if bias.shape[0] != value.shape[axis]:
            which = "channel" if fmt == "NCHW" else "last"
            raise errors.InvalidArgumentError(
                None, None, f"Must provide as many biases as the {which} dimension of the input tensor: "
                            f"{shape_str(bias.shape)} vs. {shape_str(value.shape)}")
        b = bias.reshape([-1] + [1] * (value.ndim - 1 - axis))
        return (value + b).astype(value.dtype, copy=False)

    return compute


@register_kernel("BiasAddGrad")
def _bias_add_grad(node):
    fmt = node.attrs.get("data_format", "NHWC")

    def compute(g):
        g = np.asarray(g)
        if g.ndim < 2:
            raise errors.InvalidArgumentError(None, None,
                                              f"Input tensor must be at least 2D: {shape_str(g.shape)}")
        axis = _channel_axis(fmt, g.ndim)
        acc = np.float32 if g.dtype == np.float16 else None
        others = tuple(i for i in range(g.ndim) if i != axis)
        return g.sum(axis=others, dtype=acc).astype(g.dtype, copy=False)

    return compute


@register_kernel("L2Loss")
def _l2_loss(node):
    def compute(t):
        t = np.asarray(t)
        acc = np.float32 if t.dtype == np.float16 else t.dtype
        return t.dtype.type(np.sum(np.square(t, dtype=acc)) * 0.5)

    return compute

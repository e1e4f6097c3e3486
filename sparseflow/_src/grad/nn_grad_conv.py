"""Gradient functions of convolutions, pooling and normalisation (Conv2D, DepthwiseConv2dNative and
their backprop ops, MaxPool / AvgPool and their grad ops, FusedBatchNormV3(+Grad), LRN).

Each convolution's gradient is a pair of backprop ops, and each backprop op's gradient is again a
convolution or backprop op, as in TensorFlow; so second derivatives of a CNN work.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.ones([1, 3, 3, 1])
    ...     y = tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="VALID")
    ...     print(sess.run(tf.gradients(tf.reduce_sum(y), x)[0])[0, :, :, 0])
    [[1. 2. 1.]
     [2. 4. 2.]
     [1. 2. 1.]]
"""

from __future__ import annotations

from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import array_ops, core_ops, math_ops

__all__: list[str] = []


def op_attrs(op, names):
    """``{name: value}`` of the forward op's attrs (strings decoded), to pass on to another op."""
    out = {}
    for n in names:
        v = op.get_attr(n)
        out[n] = v.decode() if isinstance(v, bytes) else v
    return out


def _apply(op_type, inputs, attrs):
    return apply_op(op_type, inputs, attrs).outputs[0]


# ---------------------------------------------------------------- convolutions

_CONV_ATTRS = ["strides", "padding", "explicit_paddings", "use_cudnn_on_gpu", "data_format", "dilations"]
_DEPTHWISE_ATTRS = ["strides", "padding", "explicit_paddings", "data_format", "dilations"]


def _conv_grad(kind, attr_names):
    """Gradient of ``kind`` (Conv2D or DepthwiseConv2dNative): its two backprop ops."""

    def grad_fn(op, grad):
        attrs = op_attrs(op, attr_names)
        x, f = op.inputs
        shape_x, shape_f = array_ops.shape_n([x, f])
        return [_apply(f"{kind}BackpropInput", [shape_x, f, grad], attrs),
                _apply(f"{kind}BackpropFilter", [x, shape_f, grad], attrs)]

    return grad_fn


def _backprop_input_grad(kind, attr_names):
    """BackpropInput(sizes, f, dy) is linear in f and dy: d/df is BackpropFilter, d/d dy the convolution."""

    def grad_fn(op, grad):
        attrs = op_attrs(op, attr_names)
        _, f, dy = op.inputs
        return [None,
                _apply(f"{kind}BackpropFilter", [grad, array_ops.shape(f), dy], attrs),
                _apply(kind, [grad, f], attrs)]

    return grad_fn


def _backprop_filter_grad(kind, attr_names):
    """BackpropFilter(x, sizes, dy) is linear in x and dy: d/dx is BackpropInput, d/d dy the convolution."""

    def grad_fn(op, grad):
        attrs = op_attrs(op, attr_names)
        x, _, dy = op.inputs
        return [_apply(f"{kind}BackpropInput", [array_ops.shape(x), grad, dy], attrs),
                None,
                _apply(kind, [x, grad], attrs)]

    return grad_fn


for _kind, _names in (("Conv2D", _CONV_ATTRS), ("DepthwiseConv2dNative", _DEPTHWISE_ATTRS)):
    RegisterGradient(_kind)(_conv_grad(_kind, _names))
    RegisterGradient(f"{_kind}BackpropInput")(_backprop_input_grad(_kind, _names))
    RegisterGradient(f"{_kind}BackpropFilter")(_backprop_filter_grad(_kind, _names))
# The V2 ops take the tensor whose shape the V1 ops take: the same gradients, none for that tensor.
RegisterGradient("Conv2DBackpropInputV2")(_backprop_input_grad("Conv2D", _CONV_ATTRS))
RegisterGradient("Conv2DBackpropFilterV2")(_backprop_filter_grad("Conv2D", _CONV_ATTRS))


# ---------------------------------------------------------------- pooling

_POOL_ATTRS = ["ksize", "strides", "padding", "data_format"]


@RegisterGradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [_apply("AvgPoolGrad", [array_ops.shape(op.inputs[0]), grad], op_attrs(op, _POOL_ATTRS))]


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    # AvgPoolGrad is linear in its gradient input; its adjoint is AvgPool itself.
    return [None, _apply("AvgPool", [grad], op_attrs(op, _POOL_ATTRS))]


@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    attrs = op_attrs(op, _POOL_ATTRS + ["explicit_paddings"])
    if attrs["data_format"] == "NCHW_VECT_C":
        raise ValueError(f"The gradient of {op.name} (MaxPool) does not support data_format NCHW_VECT_C.")
    return [_apply("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], attrs)]


def _grad_grad_attrs(op):
    attrs = op_attrs(op, _POOL_ATTRS)
    if attrs["padding"] == "EXPLICIT":
        raise ValueError(f"The gradient of {op.name} ({op.type}) needs MaxPoolGradGrad, which supports only "
                         f"'SAME' and 'VALID' padding (like TensorFlow's), not explicit padding.")
    return attrs


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    # The argmax positions are piecewise constant in the pooled input: only ``grad`` gets a gradient.
    x, y = op.inputs[0], op.inputs[1]
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            _apply("MaxPoolGradGrad", [x, y, grad], _grad_grad_attrs(op))]


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            _apply("MaxPoolGrad", [x, y, grad], op_attrs(op, _POOL_ATTRS))]


# ---------------------------------------------------------------- FusedBatchNorm


@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op, grad_y, *_unused_stat_grads):
    """Gradients of x, scale and offset; like TensorFlow, none flows through the batch statistics."""
    if grad_y is None:
        return [None] * 5
    x, scale = op.inputs[0], op.inputs[1]
    attrs = op_attrs(op, ["epsilon", "data_format", "is_training"])
    if attrs["is_training"]:
        stats = [op.outputs[3], op.outputs[4]]
    else:
        stats = [op.inputs[3], op.inputs[4]]
    bn_grad = apply_op("FusedBatchNormGradV3", [grad_y, x, scale] + stats + [op.outputs[5]], attrs)
    dx, dscale, doffset = bn_grad.outputs[:3]
    return [dx, dscale, doffset, None, None]


def _channel_layout(data_format, rank):
    """(reduction axes, shape that broadcasts a per-channel vector) for a data format."""
    if data_format.startswith("NC"):
        return [0] + list(range(2, rank)), [1, -1] + [1] * (rank - 2)
    return list(range(rank - 1)), None


def _batch_norm_grad(grad_y, x, scale, pop_mean, pop_var, epsilon, data_format, is_training):
    """FusedBatchNormGradV3 written with differentiable ops: ``(dx, dscale, doffset)``."""
    x_dtype = x.dtype.base_dtype
    if x_dtype != scale.dtype.base_dtype:  # half inputs: the math runs in float32, as in the kernel
        x = math_ops.cast(x, scale.dtype.base_dtype)
        grad_y = math_ops.cast(grad_y, scale.dtype.base_dtype)
    rank = x.shape.ndims if x.shape.ndims is not None else (5 if "D" in data_format else 4)
    axes, vec_shape = _channel_layout(data_format, rank)

    def per_channel(v):
        return v if vec_shape is None else array_ops.reshape(v, vec_shape)

    scale_b = per_channel(scale)
    grad_offset = math_ops.reduce_sum(grad_y, axes)
    if is_training:
        mean_grad_y = math_ops.reduce_mean(grad_y, axes, keepdims=True)
        mean_x = math_ops.reduce_mean(x, axes, keepdims=True)
        var_x = math_ops.reduce_mean(math_ops.squared_difference(x, core_ops.stop_gradient(mean_x)), axes,
                                     keepdims=True)
        x_offset = x - mean_x
        mean = math_ops.reduce_mean(grad_y * x_offset, axes, keepdims=True)
        inv_std = math_ops.rsqrt(var_x + epsilon)
        grad_x = scale_b * inv_std * (grad_y - mean_grad_y - math_ops.reciprocal(var_x + epsilon) * mean * x_offset)
        grad_scale = math_ops.reduce_sum(inv_std * grad_y * x_offset, axes)
    else:
        mean_b, var_b = per_channel(pop_mean), per_channel(pop_var)
        inv_std = math_ops.rsqrt(var_b + epsilon)
        grad_scale = math_ops.reduce_sum(grad_y * (x - mean_b) * inv_std, axes)
        grad_x = grad_y * scale_b * inv_std
    return math_ops.cast(grad_x, x_dtype), grad_scale, grad_offset


@RegisterGradient("FusedBatchNormGradV3")
def _fused_batch_norm_grad_grad(op, *grads):
    """Differentiates the composite form of FusedBatchNormGradV3 (TensorFlow does the same)."""
    from sparseflow._src.grad.gradients_impl import gradients

    grad_y, x, scale, pop_mean, pop_var = op.inputs[:5]
    attrs = op_attrs(op, ["epsilon", "data_format", "is_training"])
    outs = _batch_norm_grad(grad_y, x, scale, pop_mean, pop_var, attrs["epsilon"], attrs["data_format"],
                            attrs["is_training"])
    pairs = [(o, g) for o, g in zip(outs, grads[:3]) if g is not None]
    if not pairs:
        return [None] * 6
    ys, grad_ys = zip(*pairs)
    d_grad_y, dx, dscale = gradients(list(ys), [grad_y, x, scale], grad_ys=list(grad_ys))
    return [d_grad_y, dx, dscale, None, None, None]


# ---------------------------------------------------------------- LRN


@RegisterGradient("LRN")
def _lrn_grad(op, grad):
    """LRN's gradient, written with differentiable ops (so it has a second derivative).

    With ``n = bias + alpha * window_sum(x^2)`` over the ``2r + 1`` neighbouring channels and
    ``y = x * n^-beta``: ``dx = g * n^-beta - 2 alpha beta x * window_sum(g * y / n)``
    (the window is symmetric, so the same band matrix gathers both sums).
    """
    x, y = op.inputs[0], op.outputs[0]
    attrs = op_attrs(op, ["depth_radius", "bias", "alpha", "beta"])
    radius, beta = attrs["depth_radius"], attrs["beta"]
    dtype = x.dtype.base_dtype
    shape = array_ops.shape(x)
    depth = shape[-1]
    channels = array_ops.range(depth)
    distance = math_ops.abs(array_ops.expand_dims(channels, 0) - array_ops.expand_dims(channels, 1))
    band = math_ops.cast(distance <= radius, dtype)

    def window_sum(t):
        flat = array_ops.reshape(t, array_ops.stack([-1, depth]))
        return array_ops.reshape(math_ops.matmul(flat, band), shape)

    norm = attrs["bias"] + attrs["alpha"] * window_sum(math_ops.square(x))
    scaled = grad * math_ops.pow(norm, -beta)
    return [scaled - (2.0 * attrs["alpha"] * beta) * x * window_sum(grad * y / norm)]


# ---------------------------------------------------------------- 3-D convolutions
_CONV3D_ATTRS = ["strides", "padding", "data_format", "dilations"]


@RegisterGradient("Conv3D")
def _conv3d_grad(op, grad):
    attrs = op_attrs(op, _CONV3D_ATTRS)
    x, f = op.inputs
    shape_x, shape_f = array_ops.shape_n([x, f])
    return [_apply("Conv3DBackpropInputV2", [shape_x, f, grad], attrs),
            _apply("Conv3DBackpropFilterV2", [x, shape_f, grad], attrs)]


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    attrs = op_attrs(op, _CONV3D_ATTRS)
    _, f, dy = op.inputs
    return [None, _apply("Conv3DBackpropFilterV2", [grad, array_ops.shape(f), dy], attrs),
            _apply("Conv3D", [grad, f], attrs)]


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    attrs = op_attrs(op, _CONV3D_ATTRS)
    x, _, dy = op.inputs
    return [_apply("Conv3DBackpropInputV2", [array_ops.shape(x), grad, dy], attrs), None,
            _apply("Conv3D", [x, grad], attrs)]

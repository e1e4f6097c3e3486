"""Normalisation: FusedBatchNormV3 (+ its grad op), ``tf.nn.fused_batch_norm``, ``moments``,
``batch_normalization`` and ``l2_normalize``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     mean, var = tf.nn.moments(tf.constant([[1.0, 2.0], [3.0, 6.0]]), axes=[0])
    ...     with tf.Session() as sess:
    ...         print(sess.run([mean, var]))
    [array([2., 4.], dtype=float32), array([1., 4.], dtype=float32)]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from sparseflow._src.ops.nn_util import tf_fn

__all__ = ["fused_batch_norm", "moments", "batch_normalization", "l2_normalize", "sufficient_statistics",
           "normalize_moments", "weighted_moments", "local_response_normalization", "lrn"]

_FORMATS = "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'"
_BN_ATTRS = ["T: {half, bfloat16, float}", "U: {bfloat16, float}", "epsilon: float = 0.0001",
             "exponential_avg_factor: float = 1.0", _FORMATS, "is_training: bool = true"]


def _channel_dim(op, x):
    fmt = op._attrs.get("data_format", "NHWC")
    rank = 5 if "D" in fmt else 4
    x = x.with_rank(rank)
    axis = 1 if fmt.startswith("NC") else rank - 1
    return x, axis


def _merge_vectors(depth, shapes):
    for s in shapes:
        s = s.with_rank(1)
        if not depth.is_compatible_with(s.dims[0]):
            raise ValueError(f"Dimensions must be equal, but are {depth} and {s.dims[0]}")
        depth = depth.merge_with(s.dims[0])
    return depth


def _fused_bn_shape(op):
    x, axis = _channel_dim(op, op.inputs[0].shape)
    depth = x.dims[axis] if x.ndims is not None else Dimension(None)
    vectors = [op.inputs[1].shape, op.inputs[2].shape]
    if not op._attrs.get("is_training", True) or op._attrs.get("exponential_avg_factor", 1.0) != 1.0:
        vectors += [op.inputs[3].shape, op.inputs[4].shape]
    depth = _merge_vectors(depth, vectors)
    y = unknown_shape() if x.ndims is None else TensorShape(
        [depth if i == axis else d for i, d in enumerate(x.dims)])
    vec = TensorShape([depth])
    return [y, vec, vec, vec, vec, unknown_shape()]


def _fused_bn_grad_shape(op):
    dy, axis = _channel_dim(op, op.inputs[0].shape)
    x, _ = _channel_dim(op, op.inputs[1].shape)
    merged = dy.merge_with(x)
    depth = merged.dims[axis] if merged.ndims is not None else Dimension(None)
    depth = _merge_vectors(depth, [op.inputs[2].shape, op.inputs[3].shape, op.inputs[4].shape])
    if merged.ndims is not None:
        merged = TensorShape([depth if i == axis else d for i, d in enumerate(merged.dims)])
    vec = TensorShape([depth])
    # reserve_space_4/5 are unused scalars (TensorFlow's shape function says [0], its kernel returns scalars)
    return [merged, vec, vec, TensorShape([]), TensorShape([])]


register_op("FusedBatchNormV3", inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
            outputs=["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U", "reserve_space_2: U",
                     "reserve_space_3: U"], attrs=_BN_ATTRS, shape_fn=_fused_bn_shape)
register_op("FusedBatchNormGradV3",
            inputs=["y_backprop: T", "x: T", "scale: float", "reserve_space_1: U", "reserve_space_2: U",
                    "reserve_space_3: U"],
            outputs=["x_backprop: T", "scale_backprop: U", "offset_backprop: U", "reserve_space_4: U",
                     "reserve_space_5: U"],
            attrs=["T: {half, bfloat16, float}", "U: {float}", "epsilon: float = 0.0001", _FORMATS,
                   "is_training: bool = true"], shape_fn=_fused_bn_grad_shape)


def _lrn_shape(op):
    return [op.inputs[0].shape.with_rank(4)]


register_op("LRN", inputs=["input: T"], outputs=["output: T"],
            attrs=["depth_radius: int = 5", "bias: float = 1", "alpha: float = 1", "beta: float = 0.5",
                   "T: {half, bfloat16, float} = DT_FLOAT"], shape_fn=_lrn_shape)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """``input / (bias + alpha * sqr_sum) ** beta`` where ``sqr_sum`` sums squares over the
    ``2 * depth_radius + 1`` neighbouring channels of a 4-D NHWC ``input``."""
    attrs = {"depth_radius": depth_radius, "bias": bias, "alpha": alpha, "beta": beta}
    return apply_op("LRN", [input], attrs, name=name).outputs[0]


lrn = local_response_normalization


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """Batch normalisation of a 4-D (or 5-D) ``x`` over all but the channel axis, in one op.

    Returns ``(y, mean, variance)``: the batch statistics (unbiased variance) when training, else the
    given ``mean`` / ``variance``.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(f"Both `mean` and `variance` must be a 1D tensor when is_training is False or "
                         f"exponential_avg_factor != 1.0. Received: mean {mean!r} and variance {variance!r}")
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    from sparseflow._src.ops.constant_op import constant

    if mean is None:
        mean = constant([])
    if variance is None:
        variance = constant([])
    epsilon = max(epsilon, 1.001e-5)  # cuDNN's minimum, which TensorFlow applies everywhere
    op = apply_op("FusedBatchNormV3", [x, scale, offset, mean, variance],
                  {"epsilon": epsilon, "exponential_avg_factor": exponential_avg_factor,
                   "data_format": data_format, "is_training": is_training}, name=name)
    y, running_mean, running_var = op.outputs[:3]
    return y, running_mean, running_var


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and (biased) variance of ``x`` over ``axes``."""
    keep = _keep_dims_arg(keep_dims, keepdims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        is_half = x.dtype.base_dtype == dtypes.float16
        y = tf_fn("cast")(x, dtypes.float32) if is_half else x
        reduce_mean = tf_fn("reduce_mean")
        mean = reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduce_mean(tf_fn("squared_difference")(y, tf_fn("stop_gradient")(mean)), axes,
                               keepdims=True, name="variance")
        if not keep:
            squeeze = tf_fn("squeeze")
            mean = squeeze(mean, axes)
            variance = squeeze(variance, axes)
        if is_half:
            cast = tf_fn("cast")
            return cast(mean, dtypes.float16), cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`` (offset/scale may be None)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        cast = tf_fn("cast")
        inv = tf_fn("rsqrt")(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        x = convert_to_tensor(x)
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * _cast_to(cast, inv, x.dtype) + _cast_to(cast, shift, x.dtype)


def _cast_to(cast, t, dtype):
    t = convert_to_tensor(t)
    return t if t.dtype.base_dtype == dtype.base_dtype else cast(t, dtype)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = tf_fn("reduce_sum")(tf_fn("square")(x), axis, keepdims=True)
        x_inv_norm = tf_fn("rsqrt")(tf_fn("maximum")(square_sum, epsilon))
        return tf_fn("multiply")(x, x_inv_norm, name=scope)


def _keep_dims_arg(keep_dims, keepdims):
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    return bool(keepdims if keepdims is not None else keep_dims)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over ``axes``."""
    from sparseflow._src.ops.constant_op import constant

    axes = sorted(set(axes))
    keep = _keep_dims_arg(keep_dims, keepdims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        shape = x.shape
        if shape.ndims is not None and all(shape.dims[d].value is not None for d in axes):
            counts = 1
            for d in axes:
                counts *= shape.dims[d].value
            counts = constant(counts, dtype=x.dtype)
        else:
            rank = tf_fn("rank")(x)
            positive = [a + rank if a < 0 else a for a in axes]
            dims = tf_fn("gather")(tf_fn("cast")(tf_fn("shape")(x), x.dtype), tf_fn("stack")(positive))
            counts = tf_fn("reduce_prod")(dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss, v_ss = x - shift, tf_fn("squared_difference")(x, shift)
        else:
            m_ss, v_ss = x, tf_fn("square")(x)
        reduce_sum = tf_fn("reduce_sum")
        m_ss = reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from ``sufficient_statistics``."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = tf_fn("reciprocal")(counts, name="divisor")
        multiply = tf_fn("multiply")
        if shift is not None:
            shifted_mean = multiply(mean_ss, divisor, name="shifted_mean")
            mean = tf_fn("add")(shifted_mean, shift, name="mean")
        else:
            shifted_mean = multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = tf_fn("subtract")(multiply(variance_ss, divisor), tf_fn("square")(shifted_mean),
                                     name="variance")
    return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """Mean and variance of ``x`` over ``axes`` with each element counted ``frequency_weights`` times."""
    keep = _keep_dims_arg(keep_dims, keepdims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        w = convert_to_tensor(frequency_weights, name="frequency_weights")
        cast, reduce_sum, div = tf_fn("cast"), tf_fn("reduce_sum"), tf_fn("div_no_nan")
        needs_cast = x.dtype.base_dtype == dtypes.float16
        if needs_cast:
            x = cast(x, dtypes.float32)
        if w.dtype.base_dtype != x.dtype.base_dtype:
            w = cast(w, x.dtype.base_dtype)
        weighted_sum = reduce_sum(w * x, axes, name="weighted_input_sum", keepdims=True)
        sum_of_weights = reduce_sum(w + tf_fn("zeros_like")(x), axes, name="sum_of_weights", keepdims=True)
        mean = div(weighted_sum, sum_of_weights)
        distsq = reduce_sum(w * tf_fn("squared_difference")(x, mean), axes, name="weighted_distsq",
                            keepdims=True)
        variance = div(distsq, sum_of_weights)
        if not keep:
            squeeze = tf_fn("squeeze")
            mean, variance = squeeze(mean, axis=axes), squeeze(variance, axis=axes)
        if needs_cast:
            mean, variance = cast(mean, dtypes.float16), cast(variance, dtypes.float16)
        return mean, variance

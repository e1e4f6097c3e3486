"""``tf.image`` color and intensity: ``convert_image_dtype``, ``per_image_standardization``, the
``adjust_*`` / ``random_*`` distortions (brightness, contrast, saturation, hue, gamma) and color space
conversions (grayscale, HSV, YUV, YIQ), with the RGBToHSV, HSVToRGB, AdjustContrastv2,
AdjustSaturation and AdjustHue ops.

Integer images hold values in [0, MAX] of their type, float images in [0, 1]; the adjustments work on
float32 and convert back to the input's type, as TensorFlow's do. The random distortions draw their
factor with ``random_uniform`` (seeded as every TF1 random op), so they draw what TensorFlow draws.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     img = tf.constant([[[0, 128, 255]]], tf.uint8)
    ...     print(sess.run(tf.image.convert_image_dtype(img, tf.float32)))
    ...     print(sess.run(tf.image.adjust_brightness(img, 0.1)))
    [[[0.        0.5019608 1.       ]]]
    [[[ 25 153 255]]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops import array_ops, core_ops, math_ops, random_ops
from sparseflow._src.ops.image_checks import assert_at_least_3d, assert_grayscale, assert_that, with_dependencies

__all__ = ["convert_image_dtype", "per_image_standardization", "adjust_brightness", "adjust_contrast",
           "adjust_gamma", "adjust_hue", "adjust_saturation", "random_brightness", "random_contrast", "random_hue",
           "random_saturation", "rgb_to_grayscale", "grayscale_to_rgb", "rgb_to_hsv", "hsv_to_rgb", "rgb_to_yuv",
           "yuv_to_rgb", "rgb_to_yiq", "yiq_to_rgb"]


def _rgb_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(1)
    if shape.ndims is None:
        return [shape]
    if shape.dims[-1].value not in (None, 3):
        raise ValueError(f"{op.type}: the last dimension must be size 3, got shape {shape}")
    return [TensorShape(shape.as_list()[:-1] + [3])]


def _adjust_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(3)
    op.inputs[1].shape.with_rank(0)
    return [shape]


for _name in ("RGBToHSV", "HSVToRGB"):
    register_op(_name, inputs=["images: T"], outputs=["output: T"],
                attrs=["T: {half, bfloat16, float, double} = DT_FLOAT"], shape_fn=_rgb_shape)
register_op("AdjustContrastv2", inputs=["images: T", "contrast_factor: float"], outputs=["output: T"],
            attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)
register_op("AdjustSaturation", inputs=["images: T", "scale: float"], outputs=["output: T"],
            attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)
register_op("AdjustHue", inputs=["images: T", "delta: float"], outputs=["output: T"],
            attrs=["T: {half, float} = DT_FLOAT"], shape_fn=_adjust_shape)


# ---------------------------------------------------------------- dtype conversion and standardization
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``image`` converted to ``dtype``, rescaling values: integers span [0, MAX], floats [0, 1)."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not image.dtype.is_floating and not image.dtype.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype.base_dtype:
        return core_ops.identity(image, name=name)
    cast = math_ops.saturate_cast if saturate else math_ops.cast
    with name_scope(name, "convert_image", [image]) as scope:
        src = image.dtype.base_dtype
        if src.is_integer and dtype.is_integer:
            scale_in, scale_out = src.max, dtype.max
            if scale_in > scale_out:
                scale = (scale_in + 1) // (scale_out + 1)
                return cast(math_ops.floordiv(image, scale), dtype, name=scope)
            scale = (scale_out + 1) // (scale_in + 1)
            return math_ops.multiply(cast(image, dtype), scale, name=scope)
        if src.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if src.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / src.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast(scaled, dtype, name=scope)


def per_image_standardization(image):
    """Each image scaled to mean 0 and variance 1: ``(x - mean) / max(stddev, 1/sqrt(N))`` (float32)."""
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        image = assert_at_least_3d(image)
        image = math_ops.cast(image, dtype=dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = math_ops.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, dtypes.float32))
        adjusted_stddev = math_ops.maximum(stddev, min_stddev)
        image -= mean
        return math_ops.divide(image, adjusted_stddev, name=scope)


# ---------------------------------------------------------------- adjustments
def _as_float(image):
    """(float image, original dtype): float16/float32 stay, everything else goes to float32."""
    orig = image.dtype.base_dtype
    return (image if orig in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)), orig


def adjust_brightness(image, delta):
    """``delta`` added to every value (in the float [0, 1] scale), converted back with saturation."""
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        flt, orig = _as_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, orig, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Each channel of each image moved away from (or toward) its mean: ``(x - mean) * factor + mean``."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        flt, orig = _as_float(images)
        factor = convert_to_tensor(contrast_factor, dtype=dtypes.float32)
        adjusted = apply_op("AdjustContrastv2", [flt, factor], name=scope).outputs[0]
        return convert_image_dtype(adjusted, orig, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction ``gain * image ** gamma`` (``gamma`` >= 0)."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt, orig = _as_float(image)
        checks = assert_that(gamma >= 0, ValueError, "Gamma should be a non-negative real number.")
        if checks:
            gamma = with_dependencies(checks, gamma)
        adjusted = gain * flt ** gamma
        return convert_image_dtype(adjusted, orig, saturate=True)


def adjust_hue(image, delta, name=None):
    """The hue of RGB ``image`` rotated by ``delta`` (a fraction of the color wheel, in [-1, 1])."""
    with name_scope(name, "adjust_hue", [image]):
        image = convert_to_tensor(image, name="image")
        flt, orig = _as_float(image)
        delta = convert_to_tensor(delta, dtype=dtypes.float32)
        rgb = apply_op("AdjustHue", [flt, delta]).outputs[0]
        return convert_image_dtype(rgb, orig)


def adjust_saturation(image, saturation_factor, name=None):
    """The saturation of RGB ``image`` multiplied by ``saturation_factor`` (clipped to [0, 1])."""
    with name_scope(name, "adjust_saturation", [image]):
        image = convert_to_tensor(image, name="image")
        flt, orig = _as_float(image)
        factor = convert_to_tensor(saturation_factor, dtype=dtypes.float32)
        adjusted = apply_op("AdjustSaturation", [flt, factor]).outputs[0]
        return convert_image_dtype(adjusted, orig)


def _check_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_brightness(image, max_delta, seed=None):
    """``adjust_brightness`` by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """``adjust_contrast`` by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def random_hue(image, max_delta, seed=None):
    """``adjust_hue`` by a delta drawn uniformly from [-max_delta, max_delta) (``max_delta`` <= 0.5)."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """``adjust_saturation`` by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, factor)


# ---------------------------------------------------------------- color spaces
def rgb_to_grayscale(images, name=None):
    """Luma ``0.2989 R + 0.5870 G + 0.1140 B`` of RGB ``images`` (last dimension 3 -> 1)."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        orig = images.dtype.base_dtype
        flt = convert_image_dtype(images, dtypes.float32)
        gray = array_ops.expand_dims(_dot_last_axis(flt, [0.2989, 0.5870, 0.1140]), -1)
        return convert_image_dtype(gray, orig, name=scope)


def grayscale_to_rgb(images, name=None):
    """Grayscale ``images`` (last dimension 1) repeated into three channels."""
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        images = assert_grayscale(images)
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([array_ops.ones(rank_1, dtype=dtypes.int32), array_ops.expand_dims(3, 0)], 0)
        rgb = array_ops.tile(images, multiples, name=scope)
        if images.shape.ndims is not None:
            rgb.set_shape(images.shape[:-1].concatenate([3]))
        return rgb


def rgb_to_hsv(images, name=None):
    """RGB ``images`` (floats in [0, 1]) as hue, saturation and value, each in [0, 1]."""
    return apply_op("RGBToHSV", [images], name=name).outputs[0]


def hsv_to_rgb(images, name=None):
    """HSV ``images`` (each in [0, 1]) as RGB."""
    return apply_op("HSVToRGB", [images], name=name).outputs[0]


_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _dot_last_axis(x, weights):
    """``x`` contracted with ``weights`` over its last axis: ``tensordot`` as TensorFlow builds it, or
    (at unknown rank) a MatMul between dynamic reshapes."""
    if x.shape.ndims is not None:
        return math_ops.tensordot(x, weights, [-1, -1])
    w = convert_to_tensor(weights, dtype=x.dtype)
    flat = math_ops.matmul(array_ops.reshape(x, [-1, 3]), array_ops.reshape(w, [3, 1]))
    return array_ops.reshape(flat, array_ops.shape(x)[:-1])


def _color_matrix(images, matrix):
    images = convert_to_tensor(images, name="images")
    kernel = convert_to_tensor(matrix, dtype=images.dtype, name="kernel")
    ndims = images.shape.ndims
    if ndims is None:
        raise TypeError("images must have a known rank (the color axis is the last one)")
    return math_ops.tensordot(images, kernel, axes=[[ndims - 1], [0]])


def rgb_to_yuv(images):
    """RGB ``images`` (floats in [0, 1]) as YUV (Y in [0, 1], U and V in [-0.5, 0.5])."""
    return _color_matrix(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV ``images`` as RGB."""
    return _color_matrix(images, _YUV_TO_RGB)


def rgb_to_yiq(images):
    """RGB ``images`` (floats in [0, 1]) as YIQ."""
    return _color_matrix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ ``images`` as RGB."""
    return _color_matrix(images, _YIQ_TO_RGB)

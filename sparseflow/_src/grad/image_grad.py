"""Gradient functions of the image and space/depth/batch ops.

Resizes are linear in the image: ResizeBilinear, ResizeBicubic and ResizeNearestNeighbor take the
gradient ops TensorFlow uses, and those gradient ops' own gradient is the forward resize again.
SpaceToDepth / DepthToSpace and SpaceToBatchND / BatchToSpaceND are each other's gradients. Patch
extraction scatters each patch value back onto the pixel it came from: the patches of an image of
pixel numbers say which, and ``unsorted_segment_sum`` adds them up. RGBToHSV and HSVToRGB are
differentiated piecewise (TensorFlow has no gradient for HSVToRGB); AdjustContrastv2 is linear.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.ones([1, 2, 2, 1])
    ...     y = tf.image.resize_bilinear(x, [4, 4], half_pixel_centers=True)
    ...     print(sess.run(tf.gradients(tf.reduce_sum(y), x)[0])[0, :, :, 0])
    [[4. 4.]
     [4. 4.]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops, nn_ops

__all__: list[str] = []


def _attr(op, name):
    v = op.get_attr(name)
    return v.decode() if isinstance(v, bytes) else v


def _resize_attrs(op):
    return {"align_corners": op.get_attr("align_corners"), "half_pixel_centers": op.get_attr("half_pixel_centers")}


# ---------------------------------------------------------------- resizing
@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    return [apply_op("ResizeBilinearGrad", [grad, op.inputs[0]], _resize_attrs(op)).outputs[0], None]


@RegisterGradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    image = op.inputs[0]
    if image.dtype.base_dtype not in (dtypes.float32, dtypes.float64):
        return [None, None]
    return [apply_op("ResizeBicubicGrad", [grad, image], _resize_attrs(op)).outputs[0], None]


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    image = op.inputs[0]
    shape = image.shape
    if shape.ndims is not None and shape[1:3].is_fully_defined():
        size = shape[1:3].as_list()
    else:
        size = array_ops.shape(image)[1:3]
    return [apply_op("ResizeNearestNeighborGrad", [grad, size], _resize_attrs(op)).outputs[0], None]


def _resize_back(op_type):
    """The gradient of a resize's gradient op with respect to its incoming gradient: the resize itself."""

    def grad_fn(op, grad):
        size = array_ops.shape(op.inputs[0])[1:3]
        resized = apply_op(op_type, [grad, size], _resize_attrs(op)).outputs[0]
        return [math_ops.cast(resized, op.inputs[0].dtype.base_dtype), None]

    return grad_fn


RegisterGradient("ResizeBilinearGrad")(_resize_back("ResizeBilinear"))
RegisterGradient("ResizeBicubicGrad")(_resize_back("ResizeBicubic"))


@RegisterGradient("ResizeNearestNeighborGrad")
def _resize_nearest_grad_grad(op, grad):
    size = array_ops.shape(op.inputs[0])[1:3]
    return [apply_op("ResizeNearestNeighbor", [grad, size], _resize_attrs(op)).outputs[0], None]


NotDifferentiable("ResizeArea")  # TensorFlow has no gradient for it either


# ---------------------------------------------------------------- space, depth and batch
@RegisterGradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    attrs = {"block_size": op.get_attr("block_size"), "data_format": _attr(op, "data_format")}
    return [apply_op("DepthToSpace", [grad], attrs).outputs[0]]


@RegisterGradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    attrs = {"block_size": op.get_attr("block_size"), "data_format": _attr(op, "data_format")}
    return [apply_op("SpaceToDepth", [grad], attrs).outputs[0]]


@RegisterGradient("SpaceToBatchND")
def _space_to_batch_nd_grad(op, grad):
    return [apply_op("BatchToSpaceND", [grad, op.inputs[1], op.inputs[2]]).outputs[0], None, None]


@RegisterGradient("BatchToSpaceND")
def _batch_to_space_nd_grad(op, grad):
    return [apply_op("SpaceToBatchND", [grad, op.inputs[1], op.inputs[2]]).outputs[0], None, None]


@RegisterGradient("SpaceToBatch")
def _space_to_batch_grad(op, grad):
    return [apply_op("BatchToSpace", [grad, op.inputs[1]], {"block_size": op.get_attr("block_size")}).outputs[0],
            None]


@RegisterGradient("BatchToSpace")
def _batch_to_space_grad(op, grad):
    return [apply_op("SpaceToBatch", [grad, op.inputs[1]], {"block_size": op.get_attr("block_size")}).outputs[0],
            None]


def _patches_grad(op, grad, attr_names):
    """Scatter-adds each patch value of ``grad`` onto its source pixel."""
    x = op.inputs[0]
    shape = array_ops.shape(x, out_type=dtypes.int64)
    rank = x.shape.ndims if x.shape.ndims is not None else len(op.get_attr("ksizes"))
    spatial = shape[1:rank - 1]
    batch, depth = shape[0], shape[rank - 1]
    num_pixels = math_ops.reduce_prod(spatial)
    numbers = array_ops.range(1, num_pixels + 1, dtype=dtypes.int64)  # 0 marks padding
    index_image = array_ops.reshape(numbers, array_ops.concat([[1], spatial, [1]], 0))
    attrs = {n: list(op.get_attr(n)) for n in attr_names}
    attrs["padding"] = _attr(op, "padding")
    index_patches = apply_op(op.type, [index_image], attrs).outputs[0]  # [1, *out, taps]
    segments = array_ops.reshape(index_patches, [-1])
    values = array_ops.reshape(grad, array_ops.stack([batch, -1, depth]))  # [batch, out * taps, depth]
    values = array_ops.transpose(values, [1, 0, 2])
    summed = nn_ops.unsorted_segment_sum(values, segments, num_pixels + 1)[1:]  # [pixels, batch, depth]
    summed = array_ops.reshape(summed, array_ops.concat([spatial, [batch, depth]], 0))
    perm = [rank - 2] + list(range(rank - 2)) + [rank - 1]
    return [array_ops.transpose(summed, perm)]


@RegisterGradient("ExtractImagePatches")
def _extract_image_patches_grad(op, grad):
    return _patches_grad(op, grad, ("ksizes", "strides", "rates"))


@RegisterGradient("ExtractVolumePatches")
def _extract_volume_patches_grad(op, grad):
    return _patches_grad(op, grad, ("ksizes", "strides"))


# ---------------------------------------------------------------- color
@RegisterGradient("AdjustContrastv2")
def _adjust_contrast_grad(op, grad):
    """y = (x - m) * f + m with m the per-channel spatial mean: dx = f g + (1 - f) mean(g), df = sum(g (x - m))."""
    x, factor = op.inputs
    f = math_ops.cast(factor, grad.dtype)
    mean_g = math_ops.reduce_mean(grad, axis=[-3, -2], keepdims=True)
    mean_x = math_ops.reduce_mean(x, axis=[-3, -2], keepdims=True)
    dx = f * grad + (1 - f) * mean_g
    dfactor = math_ops.cast(math_ops.reduce_sum(grad * (x - mean_x)), dtypes.float32)
    return [dx, dfactor]


NotDifferentiable("AdjustSaturation")
NotDifferentiable("AdjustHue")


@RegisterGradient("RGBToHSV")
def _rgb_to_hsv_grad(op, grad):
    """Piecewise derivatives of hue (by which channel is largest), saturation range/max and value max."""
    rgb = op.inputs[0]
    r, g, b = (rgb[..., i] for i in range(3))
    dh, ds, dv = (grad[..., i] for i in range(3))
    dtype = rgb.dtype.base_dtype
    vmax = math_ops.maximum(math_ops.maximum(r, g), b)
    vmin = math_ops.minimum(math_ops.minimum(r, g), b)
    rng = vmax - vmin
    zero = array_ops.zeros_like(r)
    r_max = math_ops.cast(math_ops.equal(r, vmax), dtype)
    g_max = math_ops.cast(math_ops.equal(g, vmax), dtype) * (1 - r_max)
    b_max = (1 - r_max) * (1 - g_max)
    r_min = math_ops.cast(math_ops.equal(r, vmin), dtype)
    g_min = math_ops.cast(math_ops.equal(g, vmin), dtype) * (1 - r_min)
    b_min = (1 - r_min) * (1 - g_min)
    d_max = [r_max, g_max, b_max]
    d_min = [r_min, g_min, b_min]
    # value = max
    grads = [dv * d_max[i] for i in range(3)]
    # saturation = range / max (0 where max is 0)
    safe_max = math_ops.where(vmax > 0, vmax, array_ops.ones_like(vmax))
    for i in range(3):
        ds_dc = ((d_max[i] - d_min[i]) * safe_max - rng * d_max[i]) / (safe_max * safe_max)
        grads[i] += ds * math_ops.where(vmax > 0, ds_dc, zero)
    # hue = numerator / (6 range), numerator (g - b), (b - r) or (r - g) by the largest channel
    safe_rng = math_ops.where(rng > 0, rng, array_ops.ones_like(rng))
    num = r_max * (g - b) + g_max * (b - r) + b_max * (r - g)
    d_num = [b_max - g_max, r_max - b_max, g_max - r_max]
    for i in range(3):
        d_rng = d_max[i] - d_min[i]
        dh_dc = (d_num[i] * safe_rng - num * d_rng) / (6 * safe_rng * safe_rng)
        grads[i] += dh * math_ops.where(rng > 0, dh_dc, zero)
    return [array_ops.stack(grads, axis=-1)]


@RegisterGradient("HSVToRGB")
def _hsv_to_rgb_grad(op, grad):
    """c = (1 - s + s * d_c(h)) * v with d_c piecewise linear in 6h."""
    hsv = op.inputs[0]
    h, s, v = (hsv[..., i] for i in range(3))
    dtype = hsv.dtype.base_dtype
    dh6 = h * 6
    gr, gg, gb = (grad[..., i] for i in range(3))
    pieces = []  # (d, dd/d(6h)) per channel, TensorFlow's clamp(|6h - a| ...) forms
    for raw, sign in ((math_ops.abs(dh6 - 3) - 1, 1), (-math_ops.abs(dh6 - 2) + 2, -1),
                      (-math_ops.abs(dh6 - 4) + 2, -1)):
        pieces.append((math_ops.minimum(math_ops.maximum(raw, 0), 1), raw, sign))
    centers = [3.0, 2.0, 4.0]
    dh = array_ops.zeros_like(h)
    ds = array_ops.zeros_like(s)
    dv = array_ops.zeros_like(v)
    for (d, raw, sign), center, gc in zip(pieces, centers, (gr, gg, gb)):
        inside = math_ops.cast(math_ops.logical_and(raw > 0, raw < 1), dtype)
        slope = sign * math_ops.sign(dh6 - center) * inside * 6
        dh += gc * s * v * slope
        ds += gc * (d - 1) * v
        dv += gc * (1 - s + s * d)
    return [array_ops.stack([dh, ds, dv], axis=-1)]


@RegisterGradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    """The image gradient (float images only) and the boxes' gradient (bilinear sampling's)."""
    image = op.inputs[0]
    if image.shape.is_fully_defined():
        image_shape = image.shape.as_list()
    else:
        image_shape = array_ops.shape(image)
    grad_image = None
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        grad_image = apply_op("CropAndResizeGradImage", [grad, op.inputs[1], op.inputs[2], image_shape],
                              {"T": image.dtype.base_dtype, "method": _attr(op, "method")}).outputs[0]
    grad_boxes = apply_op("CropAndResizeGradBoxes", [grad, image, op.inputs[1], op.inputs[2]]).outputs[0]
    return [grad_image, grad_boxes, None, None]


for _op_type in ("CropAndResizeGradImage", "CropAndResizeGradBoxes", "NonMaxSuppression", "NonMaxSuppressionV2",
                 "NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
                 "NonMaxSuppressionWithOverlaps", "DrawBoundingBoxes", "DrawBoundingBoxesV2",
                 "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2", "ExtractGlimpse", "ExtractGlimpseV2",
                 "DecodePng", "DecodeJpeg", "DecodeAndCropJpeg", "DecodeBmp", "DecodeGif", "DecodeImage", "EncodePng",
                 "EncodeJpeg", "EncodeJpegVariableQuality", "ExtractJpegShape"):
    NotDifferentiable(_op_type)

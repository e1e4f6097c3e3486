"""Image resizing: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea (and the gradient
ops of the first three), with ``tf.image``'s TF1 wrappers ``resize_images`` / ``resize`` and
``resize_bilinear`` / ``resize_nearest_neighbor`` / ``resize_bicubic`` / ``resize_area``.

``align_corners`` maps the corner pixels of input and output onto each other; ``half_pixel_centers``
(TensorFlow 2's sampling, off by default in the TF1 API) samples at pixel centers. Bilinear, bicubic
and area resizing return float32; nearest neighbor keeps the input's type.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     img = tf.constant([[[[0.0], [1.0]], [[2.0], [3.0]]]])
    ...     print(sess.run(tf.image.resize_images(img, [3, 3], align_corners=True))[0, :, :, 0])
    [[0.  0.5 1. ]
     [1.  1.5 2. ]
     [2.  2.5 3. ]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.framework.tensor_util import constant_value_as_shape
from sparseflow._src.ops import array_ops, math_ops

__all__ = ["ResizeMethod", "resize_images", "resize", "resize_bilinear", "resize_nearest_neighbor",
           "resize_bicubic", "resize_area"]

_RESIZE_T = "{int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}"
_ALIGN = ["align_corners: bool = false"]
_HALF = ["half_pixel_centers: bool = false"]


def _resize_shape(op):
    images = op.inputs[0].shape.with_rank(4)
    size_shape = op.inputs[1].shape.with_rank(1)
    if size_shape.dims[0].value not in (None, 2):
        raise ValueError(f"{op.type}: size must have 2 elements, got shape {size_shape}")
    size = constant_value_as_shape(op.inputs[1])
    if size.ndims is None:
        size = TensorShape([None, None])
    dims = images.as_list() if images.ndims is not None else [None] * 4
    return [TensorShape([dims[0], size.dims[0].value, size.dims[1].value, dims[3]])]


def _grad_like_original(op):
    """ResizeBilinearGrad / ResizeBicubicGrad: the original image's shape."""
    op.inputs[0].shape.with_rank(4)
    return [op.inputs[1].shape.with_rank(4)]


for _name, _out in (("ResizeBilinear", "float"), ("ResizeBicubic", "float"), ("ResizeNearestNeighbor", "T")):
    register_op(_name, inputs=["images: T", "size: int32"], outputs=[f"resized_images: {_out}"],
                attrs=[f"T: {_RESIZE_T}"] + _ALIGN + _HALF, shape_fn=_resize_shape)
register_op("ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
            attrs=[f"T: {_RESIZE_T}"] + _ALIGN, shape_fn=_resize_shape)
register_op("ResizeBilinearGrad", inputs=["grads: float", "original_image: T"], outputs=["output: T"],
            attrs=["T: {float, bfloat16, half, double}"] + _ALIGN + _HALF, shape_fn=_grad_like_original)
register_op("ResizeBicubicGrad", inputs=["grads: float", "original_image: T"], outputs=["output: T"],
            attrs=["T: {float, double}"] + _ALIGN + _HALF, shape_fn=_grad_like_original)
register_op("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
            attrs=["T: {uint8, int8, int32, half, float, double, bfloat16}"] + _ALIGN + _HALF,
            shape_fn=_resize_shape)


class ResizeMethod:
    """``tf.compat.v1.image.ResizeMethod``: the resize methods by number."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_OPS = {ResizeMethod.BILINEAR: "ResizeBilinear", "bilinear": "ResizeBilinear",
               ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor", "nearest": "ResizeNearestNeighbor",
               ResizeMethod.BICUBIC: "ResizeBicubic", "bicubic": "ResizeBicubic",
               ResizeMethod.AREA: "ResizeArea", "area": "ResizeArea"}


def _resize_op(op_type, images, size, align_corners, half_pixel_centers, name):
    attrs = {"align_corners": bool(align_corners)}
    if op_type != "ResizeArea":
        attrs["half_pixel_centers"] = bool(half_pixel_centers)
    return apply_op(op_type, [images, size], attrs, name=name).outputs[0]


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bilinear interpolation of 4-D ``images`` to ``size`` = [new_height, new_width] (float32 result)."""
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Nearest-neighbor resizing of 4-D ``images``; the result keeps their type."""
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bicubic interpolation (Keys' cubic, a=-0.75; -0.5 with ``half_pixel_centers``), float32 result."""
    return _resize_op("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    """Area-weighted resizing: each output pixel averages the input area it covers (float32 result)."""
    return _resize_op("ResizeArea", images, size, align_corners, False, name)


def _round_scaled(size_dim, current, scale):
    return math_ops.cast(math_ops.round(scale * math_ops.cast(current, dtypes.float32)), dtypes.int32)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """``images`` (3-D or 4-D) resized to ``size`` = [new_height, new_width] by ``method``.

    Bilinear, bicubic and area results are float32 (unless the size is unchanged, when the images
    come back as they are); nearest neighbor keeps the type. ``preserve_aspect_ratio`` fits the image
    inside ``size`` instead."""
    if method not in _METHOD_OPS:
        raise ValueError(f"Resize method is not implemented: {method}")
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_ops.expand_dims(images, 0)
        elif images.shape.ndims != 4:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError) as e:
            raise ValueError("'size' must be a 1-D int32 Tensor") from e
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            dynamic = array_ops.unstack(array_ops.shape(images), 4)
            cur_h = height if height is not None else dynamic[1]
            cur_w = width if width is not None else dynamic[2]
            scale_h = math_ops.cast(size[0], dtypes.float32) / math_ops.cast(cur_h, dtypes.float32)
            scale_w = math_ops.cast(size[1], dtypes.float32) / math_ops.cast(cur_w, dtypes.float32)
            scale = math_ops.minimum(scale_h, scale_w)
            size = convert_to_tensor([_round_scaled(size[0], cur_h, scale), _round_scaled(size[1], cur_w, scale)],
                                     dtypes.int32, name="size")
        known = constant_value_as_shape(size)
        new_h, new_w = (None, None) if known.ndims is None else (known.dims[0].value, known.dims[1].value)
        if None not in (new_h, new_w, height, width) and (new_h, new_w) == (height, width):
            return images if is_batch else array_ops.squeeze(images, axis=[0])
        op_type = _METHOD_OPS[method]
        images = _resize_op(op_type, images, size, align_corners, False, None)
        images.set_shape([None, new_h, new_w, None])
        return images if is_batch else array_ops.squeeze(images, axis=[0])


resize = resize_images

"""Image codecs: DecodePng, DecodeJpeg, DecodeGif, DecodeBmp, DecodeImage, DecodeAndCropJpeg,
EncodePng, EncodeJpeg, EncodeJpegVariableQuality and ExtractJpegShape, with the ``tf.image`` /
``tf.io`` wrappers ``decode_*``, ``encode_*``, ``is_jpeg``, ``extract_jpeg_shape`` and the JPEG
quality distortions ``adjust_jpeg_quality`` / ``random_jpeg_quality``.

As in TensorFlow 2, the decode ops recognize the format from the data (a ``decode_png`` of JPEG
bytes decodes the JPEG; BMPs only by ``decode_bmp`` and ``decode_image``). JPEGs are decoded by
simplejpeg (libjpeg-turbo, with TensorFlow's DCT and upsampling choices, so the pixels are
TensorFlow's), PNGs and GIFs decoded and JPEGs encoded by Pillow: ``pip install "sparseflow[image]"``.
PNG encoding and BMP decoding are sparseflow's own. Without those packages the ops still build, and
running one says what to install.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     png = tf.image.encode_png(tf.constant([[[0], [255]]], tf.uint8))
    ...     print(sess.run(tf.image.decode_png(png))[:, :, 0])
    [[  0 255]]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops import math_ops, random_ops, string_ops
from sparseflow._src.ops.image_checks import is_tensor
from sparseflow._src.ops.image_color_ops import convert_image_dtype

__all__ = ["decode_png", "decode_jpeg", "decode_gif", "decode_bmp", "decode_image", "decode_and_crop_jpeg",
           "encode_png", "encode_jpeg", "is_jpeg", "extract_jpeg_shape", "adjust_jpeg_quality",
           "random_jpeg_quality"]


def _scalar_contents(op):
    op.inputs[0].shape.with_rank(0)


def _decoded_shape(op):
    """[height, width, channels] (channels known when the attr is not 0)."""
    _scalar_contents(op)
    channels = op.get_attr("channels")
    return [TensorShape([None, None, channels or None])]


def _decode_image_shape(op):
    _scalar_contents(op)
    if op.get_attr("expand_animations"):
        return [unknown_shape()]
    return [TensorShape([None, None, op.get_attr("channels") or None])]


def _crop_jpeg_shape(op):
    _scalar_contents(op)
    window = op.inputs[1].shape.with_rank(1)
    if window.dims[0].value not in (None, 4):
        raise ValueError(f"crop_window must be a vector of 4 elements, got shape {window}")
    value = constant_value(op.inputs[1])
    h, w = (None, None) if value is None else (int(value[2]), int(value[3]))
    return [TensorShape([h, w, op.get_attr("channels") or None])]


def _encode_shape(op):
    op.inputs[0].shape.with_rank(3)
    return [TensorShape([])]


_JPEG_ATTRS = ["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true",
               "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0", "dct_method: string = ''"]
register_op("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16} = DT_UINT8"], shape_fn=_decoded_shape)
register_op("DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"], attrs=_JPEG_ATTRS,
            shape_fn=_decoded_shape)
register_op("DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"], outputs=["image: uint8"],
            attrs=_JPEG_ATTRS, shape_fn=_crop_jpeg_shape)
register_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"], attrs=["channels: int = 0"],
            shape_fn=_decoded_shape)
register_op("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"],
            shape_fn=lambda op: (_scalar_contents(op), [TensorShape([None, None, None, 3])])[1])
register_op("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
            attrs=["channels: int = 0", "dtype: {uint8, uint16, float} = DT_UINT8", "expand_animations: bool = true"],
            shape_fn=_decode_image_shape)
register_op("EncodePng", inputs=["image: T"], outputs=["contents: string"],
            attrs=["compression: int = -1", "T: {uint8, uint16} = DT_UINT8"], shape_fn=_encode_shape)
register_op("EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
            attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95", "progressive: bool = false",
                   "optimize_size: bool = false", "chroma_downsampling: bool = true",
                   "density_unit: {'in', 'cm'} = 'in'", "x_density: int = 300", "y_density: int = 300",
                   "xmp_metadata: string = ''"], shape_fn=_encode_shape)
register_op("EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"], outputs=["contents: string"],
            shape_fn=_encode_shape)
register_op("ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
            attrs=["output_type: {int32, int64} = DT_INT32"],
            shape_fn=lambda op: (_scalar_contents(op), [TensorShape([3])])[1])


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A PNG (or any supported format) as a [height, width, channels] uint8 or uint16 tensor.

    ``channels``: 0 as stored, 1 grayscale, 3 RGB, 4 RGBA."""
    return apply_op("DecodePng", [contents], {"channels": int(channels), "dtype": dtypes.as_dtype(dtype)},
                    name=name).outputs[0]


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG as a [height / ratio, width / ratio, channels] uint8 tensor (``ratio`` 1, 2, 4 or 8).

    The decoder is libjpeg's (through Pillow) with its accurate integer DCT and fancy upsampling;
    ``dct_method`` and ``fancy_upscaling`` are hints, as in TensorFlow."""
    attrs = {"channels": int(channels), "ratio": int(ratio), "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated), "acceptable_fraction": float(acceptable_fraction),
             "dct_method": dct_method}
    return apply_op("DecodeJpeg", [contents], attrs, name=name).outputs[0]


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """``decode_jpeg`` of the ``crop_window`` = [y, x, height, width] part of the image."""
    attrs = {"channels": int(channels), "ratio": int(ratio), "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated), "acceptable_fraction": float(acceptable_fraction),
             "dct_method": dct_method}
    return apply_op("DecodeAndCropJpeg", [contents, crop_window], attrs, name=name).outputs[0]


def decode_bmp(contents, channels=0, name=None):
    """A BMP as a [height, width, channels] uint8 tensor (``channels`` 0, 3 or 4)."""
    return apply_op("DecodeBmp", [contents], {"channels": int(channels)}, name=name).outputs[0]


def decode_gif(contents, name=None):
    """The frames of a GIF as a [num_frames, height, width, 3] uint8 tensor."""
    return apply_op("DecodeGif", [contents], name=name).outputs[0]


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """A BMP, GIF, JPEG or PNG image: 3-D, or 4-D for an animated GIF (with ``expand_animations``).

    ``dtype`` float32 scales to [0, 1); other types convert as ``convert_image_dtype`` does."""
    with name_scope(name, "decode_image"):
        channels = 0 if channels is None else channels
        dtype = dtypes.as_dtype(dtype)
        decode_dtype = dtype if dtype in (dtypes.float32, dtypes.uint8, dtypes.uint16) else dtypes.uint16
        image = apply_op("DecodeImage", [contents], {"channels": int(channels), "dtype": decode_dtype,
                                                     "expand_animations": bool(expand_animations)}).outputs[0]
        if decode_dtype != dtype:
            image = convert_image_dtype(image, dtype)
        if not expand_animations:
            image.set_shape([None, None, channels or None])
        return image


def encode_png(image, compression=-1, name=None):
    """A [height, width, channels] uint8/uint16 image as PNG bytes (``compression`` -1 or 0-9)."""
    return apply_op("EncodePng", [convert_to_tensor(image)], {"compression": int(compression)}, name=name).outputs[0]


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 - TF's name
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """A [height, width, 1 or 3] uint8 image as JPEG bytes (``quality`` 0-100)."""
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size), "chroma_downsampling": bool(chroma_downsampling),
             "density_unit": density_unit, "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    return apply_op("EncodeJpeg", [image], attrs, name=name).outputs[0]


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """[height, width, channels] of a JPEG, read from its header without decoding it."""
    return apply_op("ExtractJpegShape", [contents], {"output_type": dtypes.as_dtype(output_type)},
                    name=name).outputs[0]


def is_jpeg(contents, name=None):
    """Whether ``contents`` starts as a JPEG does (``\\xff\\xd8\\xff``)."""
    with name_scope(name, "is_jpeg"):
        prefix = string_ops.substr(contents, 0, 3)
        return math_ops.equal(prefix, b"\xff\xd8\xff", name=name)


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """``image`` encoded as a JPEG of ``jpeg_quality`` and decoded again (JPEG artifacts as augmentation)."""
    with name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.ndims else None
        orig = image.dtype.base_dtype
        image = convert_image_dtype(image, dtypes.uint8, saturate=True)
        if not is_tensor(jpeg_quality):
            jpeg_quality = convert_to_tensor(jpeg_quality, dtype=dtypes.int32)
        encoded = apply_op("EncodeJpegVariableQuality", [image, jpeg_quality]).outputs[0]
        decoded = decode_jpeg(encoded, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(decoded, orig, saturate=True)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """``adjust_jpeg_quality`` with a quality drawn uniformly from [min_jpeg_quality, max_jpeg_quality)."""
    if min(min_jpeg_quality, max_jpeg_quality) < 0 or max(min_jpeg_quality, max_jpeg_quality) > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_ops.random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)

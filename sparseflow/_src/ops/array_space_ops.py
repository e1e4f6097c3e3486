"""Moving data between space, depth and batch: SpaceToDepth, DepthToSpace, SpaceToBatchND,
BatchToSpaceND, SpaceToBatch, BatchToSpace, and patch extraction (ExtractImagePatches,
ExtractVolumePatches), with TF1's wrappers and ``required_space_to_batch_paddings``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(16), [1, 4, 4, 1])
    ...     y = tf.space_to_depth(x, 2)
    ...     print(y.shape.as_list(), sess.run(y)[0, 0, 0])
    [1, 2, 2, 4] [0 1 4 5]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops import array_ops

__all__ = ["space_to_depth", "depth_to_space", "space_to_batch", "space_to_batch_nd", "batch_to_space",
           "batch_to_space_nd", "extract_image_patches", "extract_volume_patches",
           "required_space_to_batch_paddings"]  # and tf.image.extract_patches, exported by sparseflow.image

_PATCH_T = ("{bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, "
            "complex128, bool}")
_VOLUME_T = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"


# ---------------------------------------------------------------- space <-> depth
def _depth_shape(op):
    x = op.inputs[0].shape.with_rank(4)
    bs = op.get_attr("block_size")
    fmt = op.get_attr("data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if x.ndims is None:
        return [unknown_shape(4)]
    n, *rest = x.as_list()
    if fmt == "NCHW":
        c, h, w = rest
    else:
        h, w, c = rest
    if op.type == "SpaceToDepth":
        for d in (h, w):
            if d is not None and d % bs:
                raise ValueError(f"Dimension size must be evenly divisible by {bs} but is {d}")
        h, w = (None if h is None else h // bs), (None if w is None else w // bs)
        c = None if c is None else c * bs * bs
    else:
        if c is not None and c % (bs * bs):
            raise ValueError(f"Dimension size must be evenly divisible by {bs * bs} but is {c}")
        h, w = (None if h is None else h * bs), (None if w is None else w * bs)
        c = None if c is None else c // (bs * bs)
    return [TensorShape([n, c, h, w] if fmt == "NCHW" else [n, h, w, c])]


for _name in ("SpaceToDepth", "DepthToSpace"):
    register_op(_name, inputs=["input: T"], outputs=["output: T"],
                attrs=["T: type", "block_size: int >= 2", "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"],
                shape_fn=_depth_shape)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002 - TF's argument name
    """Moves ``block_size`` x ``block_size`` spatial blocks into the depth dimension."""
    return apply_op("SpaceToDepth", [input], {"block_size": int(block_size), "data_format": data_format},
                    name=name).outputs[0]


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of ``space_to_depth``: depth values become ``block_size`` x ``block_size`` blocks."""
    return apply_op("DepthToSpace", [input], {"block_size": int(block_size), "data_format": data_format},
                    name=name).outputs[0]


# ---------------------------------------------------------------- space <-> batch
def _batch_space_shape(op):
    """SpaceToBatchND / BatchToSpaceND (and the 4-D SpaceToBatch / BatchToSpace)."""
    x = op.inputs[0].shape
    to_batch = op.type.startswith("SpaceTo")
    if op.type in ("SpaceToBatch", "BatchToSpace"):
        x = x.with_rank(4)
        bs = op.get_attr("block_size")
        block, m = np.array([bs, bs], np.int64), 2
        amounts_t = op.inputs[1]
    else:
        block_t, amounts_t = op.inputs[1], op.inputs[2]
        bshape = block_t.shape.with_rank(1)
        m = bshape.dims[0].value
        if m is None:
            raise ValueError(f"{op.type}: block_shape must have a known number of elements (a vector of known "
                             f"size)")
        block = constant_value(block_t)
    amounts_t.shape.with_rank(2)
    if x.ndims is not None and x.ndims < m + 1:
        raise ValueError(f"{op.type}: input rank should be >= {m + 1} instead of {x.ndims}")
    if block is not None and np.any(block < 1):
        raise ValueError(f"{op.type}: block_shape must be positive, got {block.tolist()}")
    if x.ndims is None:
        return [unknown_shape()]
    dims = x.as_list()
    out = [None] * (m + 1) + dims[m + 1:]
    if block is None:
        return [TensorShape(out)]
    prod = int(np.prod(block))
    if to_batch:
        out[0] = None if dims[0] is None else dims[0] * prod
    else:
        if dims[0] is not None and dims[0] % prod:
            raise ValueError(f"{op.type}: batch size {dims[0]} is not divisible by the product of the block "
                             f"sizes {prod}")
        out[0] = None if dims[0] is None else dims[0] // prod
    amounts = constant_value(amounts_t)
    for i in range(m):
        d = dims[i + 1]
        if amounts is None or d is None:
            continue
        lo, hi = int(amounts[i][0]), int(amounts[i][1])
        if lo < 0 or hi < 0:
            raise ValueError(f"{op.type}: {'paddings' if to_batch else 'crops'} must be non-negative")
        if to_batch:
            padded = d + lo + hi
            if padded % int(block[i]):
                raise ValueError(f"{op.type}: padded shape dimension {i + 1} ({padded}) must be divisible by "
                                 f"block_shape[{i}] ({int(block[i])})")
            out[i + 1] = padded // int(block[i])
        else:
            cropped = d * int(block[i]) - lo - hi
            if cropped < 0:
                raise ValueError(f"{op.type}: cropped shape dimension {i + 1} must be non-negative")
            out[i + 1] = cropped
    return [TensorShape(out)]


_INDEX = "{int32, int64} = DT_INT32"
register_op("SpaceToBatchND", inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
            outputs=["output: T"], attrs=["T: type", f"Tblock_shape: {_INDEX}", f"Tpaddings: {_INDEX}"],
            shape_fn=_batch_space_shape)
register_op("BatchToSpaceND", inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
            outputs=["output: T"], attrs=["T: type", f"Tblock_shape: {_INDEX}", f"Tcrops: {_INDEX}"],
            shape_fn=_batch_space_shape)
register_op("SpaceToBatch", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=["T: type", f"Tpaddings: {_INDEX}", "block_size: int >= 2"], shape_fn=_batch_space_shape)
register_op("BatchToSpace", inputs=["input: T", "crops: Tidx"], outputs=["output: T"],
            attrs=["T: type", "block_size: int >= 2", f"Tidx: {_INDEX}"], shape_fn=_batch_space_shape)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Zero-pads the M spatial dimensions after the batch by ``paddings`` ([M, 2]) and moves
    ``block_shape`` blocks of them into the batch dimension."""
    return apply_op("SpaceToBatchND", [input, block_shape, paddings], name=name).outputs[0]


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of ``space_to_batch_nd``: batch blocks back into space, then ``crops`` removed."""
    return apply_op("BatchToSpaceND", [input, block_shape, crops], name=name).outputs[0]


def _block_size(block_size, block_shape):
    if block_size is not None and block_shape is not None:
        raise ValueError("Cannot specify both 'block_shape' and 'block_size'")
    return block_shape if block_size is None else block_size


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D ``space_to_batch``: ``space_to_batch_nd`` with a square ``block_size``."""
    size = _block_size(block_size, block_shape)
    result = space_to_batch_nd(input, np.array([size, size], dtype=np.int64), paddings, name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """TF1's 4-D ``batch_to_space``: ``batch_to_space_nd`` with a square ``block_size``."""
    size = _block_size(block_size, block_shape)
    result = batch_to_space_nd(input, np.array([size, size], dtype=np.int64), crops, name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) that make ``input_shape`` (plus ``base_paddings``) divisible by ``block_shape``."""
    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if not block_shape.shape.is_fully_defined() or block_shape.shape.ndims != 1:
            raise ValueError(f"block_shape must be a fully defined vector, got shape {block_shape.shape}")
        m = block_shape.shape.dims[0].value
        if m == 0:
            return array_ops.zeros([0, 2], dtypes.int32), array_ops.zeros([0, 2], dtypes.int32)
        if not input_shape.shape.is_compatible_with([m]):
            raise ValueError(f"input_shape {input_shape.shape} is not compatible with [{m}]")
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
            if not base_paddings.shape.is_compatible_with([m, 2]):
                raise ValueError(f"base_paddings {base_paddings.shape} is not compatible with [{m}, 2]")
        else:
            base_paddings = array_ops.zeros([m, 2], dtypes.int32)
        consts = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(c is not None for c in consts):
            block_shape, input_shape, base_paddings = consts
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        paddings = array_ops.stack([[pad_start[i], pad_end[i]] for i in range(m)], name="paddings")
        crops = array_ops.stack([[0, pad_end_extra[i]] for i in range(m)], name="crops")
        return paddings, crops


# ---------------------------------------------------------------- patches
def _patches_shape(op):
    volume = op.type == "ExtractVolumePatches"
    rank = 5 if volume else 4
    ksizes, strides = list(op.get_attr("ksizes")), list(op.get_attr("strides"))
    rates = [1] * rank if volume else list(op.get_attr("rates"))
    for what, v in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        if len(v) != rank:
            raise ValueError(f"{op.type} requires the {what} attribute to contain {rank} values, but got: {len(v)}")
    padding = op.get_attr("padding")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    x = op.inputs[0].shape.with_rank(rank)
    dims = x.as_list() if x.ndims is not None else [None] * rank
    out = [dims[0]]
    for i in range(1, rank - 1):
        size, k, s, r = dims[i], ksizes[i], strides[i], rates[i]
        if s < 1 or r < 1:
            raise ValueError(f"{op.type}: strides and rates must be positive, got {strides} and {rates}")
        if size is None:
            out.append(None)
        elif padding == "SAME":
            out.append((size + s - 1) // s)
        else:
            out.append(max((size - ((k - 1) * r + 1) + s) // s, 0))
    taps = int(np.prod(ksizes[1:-1]))
    out.append(None if dims[-1] is None else dims[-1] * taps)
    return [TensorShape(out)]


register_op("ExtractImagePatches", inputs=["images: T"], outputs=["patches: T"],
            attrs=["ksizes: list(int) >= 4", "strides: list(int) >= 4", "rates: list(int) >= 4", f"T: {_PATCH_T}",
                   "padding: {'SAME', 'VALID'}"], shape_fn=_patches_shape)
register_op("ExtractVolumePatches", inputs=["input: T"], outputs=["patches: T"],
            attrs=["ksizes: list(int) >= 5", "strides: list(int) >= 5", f"T: {_VOLUME_T}",
                   "padding: {'SAME', 'VALID'}"], shape_fn=_patches_shape)


def _int_list(value, name):
    if value is None:
        raise ValueError(f"{name} must be given")
    return [int(v) for v in (value if isinstance(value, (list, tuple, np.ndarray)) else [value])]


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None, name=None, sizes=None):
    """Patches of ``ksizes`` [1, rows, cols, 1] from 4-D ``images``, every ``strides``, sampled every
    ``rates`` pixels, flattened into the depth dimension ([batch, out_rows, out_cols, rows*cols*depth])."""
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'sizes' and 'ksizes'")
    ksizes = sizes if ksizes is None else ksizes
    attrs = {"ksizes": _int_list(ksizes, "sizes"), "strides": _int_list(strides, "strides"),
             "rates": _int_list(rates, "rates"), "padding": padding}
    return apply_op("ExtractImagePatches", [images], attrs, name=name).outputs[0]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """``tf.image.extract_patches``: ``extract_image_patches`` with TensorFlow 2's argument names."""
    return extract_image_patches(images, sizes, strides, rates, padding, name=name)


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """3-D patches of a 5-D ``input`` ([batch, planes, rows, cols, depth]), flattened into depth."""
    attrs = {"ksizes": _int_list(ksizes, "ksizes"), "strides": _int_list(strides, "strides"), "padding": padding}
    return apply_op("ExtractVolumePatches", [input], attrs, name=name).outputs[0]

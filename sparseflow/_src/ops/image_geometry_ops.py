"""``tf.image`` geometry: flips, rotations, transposes, crops and pads, random crops and flips.

These are compositions of array ops (ReverseV2, Transpose, Slice, Pad, cond), built as TensorFlow
builds them, so a seeded ``random_flip_left_right`` or ``random_crop`` draws what TensorFlow draws.
Images are 3-D ([height, width, channels]) or 4-D batches.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     img = tf.reshape(tf.range(6), [2, 3, 1])
    ...     print(sess.run(tf.image.flip_left_right(img))[:, :, 0])
    ...     print(sess.run(tf.image.crop_to_bounding_box(img, 0, 1, 2, 2))[:, :, 0])
    [[2 1 0]
     [5 4 3]]
    [[1 2]
     [4 5]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops import array_ops, control_flow_ops, math_ops, random_ops
from sparseflow._src.ops.image_checks import (
    assert_at_least_3d,
    assert_that,
    batched,
    check_at_least_3d,
    image_dimensions,
    is_tensor,
    unbatched,
    with_dependencies,
)
from sparseflow._src.ops.image_resize_ops import ResizeMethod, resize_images

__all__ = ["flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down", "rot90",
           "transpose", "transpose_image", "central_crop", "crop_to_bounding_box", "pad_to_bounding_box",
           "resize_image_with_crop_or_pad", "resize_with_crop_or_pad", "resize_image_with_pad", "random_crop"]


def _fix_flip_shape(image, result):
    result.set_shape([None, None, None] if image.shape.ndims is None else image.shape)
    return result


def _by_rank(image, f_rank3, f_rank4):
    """``f_rank3()`` or ``f_rank4()`` by the static rank, or a cond on the runtime rank."""
    ndims = image.shape.ndims
    if ndims is None:
        return control_flow_ops.cond(math_ops.equal(array_ops.rank(image), 3), f_rank3, f_rank4)
    if ndims == 3:
        return f_rank3()
    if ndims == 4:
        return f_rank4()
    raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")


def _flip(image, axis, scope_name):
    with name_scope(None, scope_name, [image]):
        image = convert_to_tensor(image, name="image")
        image = assert_at_least_3d(image)
        return _by_rank(image, lambda: _fix_flip_shape(image, array_ops.reverse(image, [axis])),
                        lambda: array_ops.reverse(image, [axis + 1]))


def flip_left_right(image):
    """``image`` mirrored horizontally (each row reversed)."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """``image`` mirrored vertically (rows in reverse order)."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis, seed, scope_name):
    with name_scope(None, scope_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        image = assert_at_least_3d(image)

        def f_rank3():
            uniform = random_ops.random_uniform([], 0, 1.0, seed=seed)
            result = control_flow_ops.cond(math_ops.less(uniform, 0.5), lambda: array_ops.reverse(image, [axis]),
                                           lambda: image, name=scope)
            return _fix_flip_shape(image, result)

        def f_rank4():
            batch_size = array_ops.shape(image)[0]
            uniform = random_ops.random_uniform([batch_size], 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(uniform, [batch_size, 1, 1, 1])), image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image

        return _by_rank(image, f_rank3, f_rank4)


def random_flip_left_right(image, seed=None):
    """``image`` mirrored horizontally with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """``image`` mirrored vertically with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def _rot90_cases(image, k, scope, spatial):
    h, w = spatial
    perm = list(range(w + 2))
    perm[h], perm[w] = perm[w], perm[h]
    cases = [(math_ops.equal(k, 1), lambda: array_ops.transpose(array_ops.reverse_v2(image, [w]), perm)),
             (math_ops.equal(k, 2), lambda: array_ops.reverse_v2(image, [h, w])),
             (math_ops.equal(k, 3), lambda: array_ops.reverse_v2(array_ops.transpose(image, perm), [w]))]
    return control_flow_ops.case(cases, default=lambda: image, exclusive=True, name=scope)


def rot90(image, k=1, name=None):
    """``image`` rotated counter-clockwise by ``k`` quarter turns."""
    with name_scope(name, "rot90", [image, k]) as scope:
        image = convert_to_tensor(image, name="image")
        image = assert_at_least_3d(image)
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.mod(k, 4)

        def f_rank3():
            result = _rot90_cases(image, k, scope, (0, 1))
            result.set_shape([None, None, image.shape[2] if image.shape.ndims else None])
            return result

        def f_rank4():
            result = _rot90_cases(image, k, scope, (1, 2))
            shape = result.shape
            result.set_shape([shape[0], None, None, shape[3]] if shape.ndims else [None] * 4)
            return result

        return _by_rank(image, f_rank3, f_rank4)


def transpose(image, name=None):
    """``image`` with its height and width swapped."""
    with name_scope(name, "transpose", [image]):
        image = convert_to_tensor(image, name="image")
        image = assert_at_least_3d(image)
        return _by_rank(image, lambda: array_ops.transpose(image, [1, 0, 2], name=name),
                        lambda: array_ops.transpose(image, [0, 2, 1, 3], name=name))


transpose_image = transpose


def central_crop(image, central_fraction):
    """The central ``central_fraction`` (in (0, 1]) of each side of ``image`` (3-D or 4-D)."""
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction_static = constant_value(central_fraction) if is_tensor(central_fraction) else central_fraction
        if fraction_static is not None:
            fraction_static = float(fraction_static)
            if fraction_static <= 0.0 or fraction_static > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction_static == 1.0:
                return image
        else:
            checks = assert_that(math_ops.logical_or(central_fraction > 0.0, central_fraction <= 1.0), ValueError,
                                 "central_fraction must be within (0, 1]")
            image = with_dependencies(checks, image)
        check_at_least_3d(image, require_static=False)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
        first = 0 if rank == 3 else 1

        def get_dim(idx):
            d = image.shape.dims[idx].value
            return (d, False) if d is not None else (array_ops.shape(image)[idx], True)

        img_h, dynamic_h = get_dim(first)
        img_w, dynamic_w = get_dim(first + 1)
        dynamic_h = dynamic_h or fraction_static is None
        dynamic_w = dynamic_w or fraction_static is None

        def start(size, dynamic):
            if dynamic:
                sized = math_ops.cast(size, dtypes.float64)
                return math_ops.cast((sized - sized * math_ops.cast(central_fraction, dtypes.float64)) / 2,
                                     dtypes.int32)
            return int((float(size) - float(size) * fraction_static) / 2)

        h_start, w_start = start(img_h, dynamic_h), start(img_w, dynamic_w)
        h_size, w_size = img_h - h_start * 2, img_w - w_start * 2
        if rank == 3:
            begin, size = array_ops.stack([h_start, w_start, 0]), array_ops.stack([h_size, w_size, -1])
        else:
            begin, size = array_ops.stack([0, h_start, w_start, 0]), array_ops.stack([-1, h_size, w_size, -1])
        depth = image.shape.dims[-1].value
        image = array_ops.slice(image, begin, size)
        spatial = [None if dynamic_h else h_size, None if dynamic_w else w_size]
        image.set_shape(spatial + [depth] if rank == 3 else [image.shape.dims[0].value] + spatial + [depth])
        return image


def _pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width, check_dims=True):
    with name_scope(None, "pad_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = batched(image)
        batch, height, width, depth = image_dimensions(image, 4)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        if check_dims:
            checks = check_at_least_3d(image, require_static=False)
            checks += assert_that(offset_height >= 0, ValueError, "offset_height must be >= 0")
            checks += assert_that(offset_width >= 0, ValueError, "offset_width must be >= 0")
            checks += assert_that(after_w >= 0, ValueError, "width must be <= target - offset")
            checks += assert_that(after_h >= 0, ValueError, "height must be <= target - offset")
            image = with_dependencies(checks, image)
        paddings = array_ops.reshape(array_ops.stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]),
                                     [4, 2])
        padded = array_ops.pad(image, paddings)
        padded.set_shape([None if is_tensor(i) else i for i in (batch, target_height, target_width, depth)])
        return unbatched(padded, is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``image`` zero-padded to ``target_height`` x ``target_width`` with its top-left corner at
    (``offset_height``, ``offset_width``)."""
    return _pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height`` x ``target_width`` window of ``image`` at (``offset_height``, ``offset_width``)."""
    with name_scope(None, "crop_to_bounding_box", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = batched(image)
        checks = check_at_least_3d(image, require_static=False)
        batch, height, width, depth = image_dimensions(image, 4)
        checks += assert_that(offset_width >= 0, ValueError, "offset_width must be >= 0.")
        checks += assert_that(offset_height >= 0, ValueError, "offset_height must be >= 0.")
        checks += assert_that(target_width > 0, ValueError, "target_width must be > 0.")
        checks += assert_that(target_height > 0, ValueError, "target_height must be > 0.")
        checks += assert_that(width >= target_width + offset_width, ValueError, "width must be >= target + offset.")
        checks += assert_that(height >= target_height + offset_height, ValueError,
                              "height must be >= target + offset.")
        image = with_dependencies(checks, image)
        cropped = array_ops.slice(image, array_ops.stack([0, offset_height, offset_width, 0]),
                                  array_ops.stack([array_ops.shape(image)[0], target_height, target_width,
                                                   array_ops.shape(image)[3]]))
        cropped.set_shape([None if is_tensor(i) else i for i in (batch, target_height, target_width, depth)])
        return unbatched(cropped, is_batch)


def _max(x, y):
    return math_ops.maximum(x, y) if is_tensor(x) or is_tensor(y) else max(x, y)


def _min(x, y):
    return math_ops.minimum(x, y) if is_tensor(x) or is_tensor(y) else min(x, y)


def _equal(x, y):
    return math_ops.equal(x, y) if is_tensor(x) or is_tensor(y) else x == y


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """``image`` centrally cropped and/or zero-padded to ``target_height`` x ``target_width``."""
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = batched(image)
        checks = check_at_least_3d(image, require_static=False)
        checks += assert_that(target_width > 0, ValueError, "target_width must be > 0.")
        checks += assert_that(target_height > 0, ValueError, "target_height must be > 0.")
        image = with_dependencies(checks, image)
        if is_tensor(target_height):
            target_height = with_dependencies(checks, target_height)
        if is_tensor(target_width):
            target_width = with_dependencies(checks, target_width)
        _, height, width, _ = image_dimensions(image, 4)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0), _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0), _max(width_diff // 2, 0),
                                      target_height, target_width)
        if resized.shape.ndims is None:
            raise ValueError("resized contains no shape.")
        _, resized_height, resized_width, _ = image_dimensions(resized, 4)
        checks = assert_that(_equal(resized_height, target_height), ValueError, "resized height is not correct.")
        checks += assert_that(_equal(resized_width, target_width), ValueError, "resized width is not correct.")
        return unbatched(with_dependencies(checks, resized), is_batch)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, align_corners=False):
    """``image`` resized to fit ``target_height`` x ``target_width`` keeping its aspect ratio, then
    zero-padded to that size."""
    with name_scope(None, "resize_image_with_pad", [image]):
        image = convert_to_tensor(image, name="image")
        image, is_batch = batched(image)
        checks = check_at_least_3d(image, require_static=False)
        checks += assert_that(target_width > 0, ValueError, "target_width must be > 0.")
        checks += assert_that(target_height > 0, ValueError, "target_height must be > 0.")
        image = with_dependencies(checks, image)
        _, height, width, _ = image_dimensions(image, 4)
        f_height = math_ops.cast(height, dtype=dtypes.float32)
        f_width = math_ops.cast(width, dtype=dtypes.float32)
        f_target_height = math_ops.cast(target_height, dtype=dtypes.float32)
        f_target_width = math_ops.cast(target_width, dtype=dtypes.float32)
        ratio = _max(f_width / f_target_width, f_height / f_target_height)
        resized_height_float = f_height / ratio
        resized_width_float = f_width / ratio
        resized_height = math_ops.cast(math_ops.floor(resized_height_float), dtype=dtypes.int32)
        resized_width = math_ops.cast(math_ops.floor(resized_width_float), dtype=dtypes.int32)
        padding_height = (f_target_height - resized_height_float) / 2
        padding_width = (f_target_width - resized_width_float) / 2
        p_height = _max(0, math_ops.cast(math_ops.floor(padding_height), dtype=dtypes.int32))
        p_width = _max(0, math_ops.cast(math_ops.floor(padding_width), dtype=dtypes.int32))
        resized = resize_images(image, [resized_height, resized_width], method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, p_height, p_width, target_height, target_width)
        if padded.shape.ndims is None:
            raise ValueError("padded contains no shape.")
        image_dimensions(padded, 4)
        return unbatched(padded, is_batch)


def random_crop(value, size, seed=None, name=None):
    """A ``size`` slice of ``value`` at a uniformly random offset (any rank; ``size`` <= the shape)."""
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = control_flow_ops.Assert(math_ops.reduce_all(shape >= size),
                                        ["Need value.shape >= size, got ", shape, size], summarize=1000)
        shape = with_dependencies([check], shape)
        limit = shape - size + 1
        offset = random_ops.random_uniform(array_ops.shape(shape), dtype=size.dtype,
                                           maxval=int(np.iinfo(np.int32).max), seed=seed) % limit
        return array_ops.slice(value, offset, size, name=scope)

"""``tf.image`` measures built from other ops, as TensorFlow builds them: ``image_gradients``,
``sobel_edges``, ``total_variation``, ``psnr``, ``ssim`` and ``ssim_multiscale``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[[[0.0], [0.5]], [[1.0], [0.5]]]])
    ...     print(sess.run(tf.image.total_variation(a)))
    ...     print(round(float(sess.run(tf.image.psnr(a, a * 0.9, max_val=1.0))[0]), 3))
    [2.]
    24.26
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops import array_ops, constant_op, control_flow_ops, core_ops, math_ops
from sparseflow._src.ops.control_flow_ops import Assert
from sparseflow._src.ops.image_color_ops import convert_image_dtype
from sparseflow._src.ops.nn_activation_ops import relu
from sparseflow._src.ops.nn_conv_ops import depthwise_conv2d
from sparseflow._src.ops.nn_pool_ops import avg_pool
from sparseflow._src.ops.nn_softmax_ops import softmax

__all__ = ["image_gradients", "sobel_edges", "total_variation", "psnr", "ssim", "ssim_multiscale"]

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def image_gradients(image):
    """(dy, dx): forward differences of a 4-D ``image`` along height and width, zero in the last row/column."""
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    image_shape = array_ops.shape(image)
    batch_size, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch_size, 1, width, depth]), image.dtype)], 1)
    dy = array_ops.reshape(dy, image_shape)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch_size, height, 1, depth]), image.dtype)], 2)
    dx = array_ops.reshape(dx, image_shape)
    return dy, dx


def sobel_edges(image):
    """Sobel edge maps of a 4-D ``image``: [batch, h, w, d, 2] (vertical, horizontal), reflect-padded."""
    static_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)
    kernels_t = constant_op.constant(kernels, dtype=image.dtype)
    kernels_t = array_ops.tile(kernels_t, [1, 1, image_shape[-1], 1], name="sobel_filters")
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv2d(padded, kernels_t, [1, 1, 1, 1], "VALID")
    output = array_ops.reshape(output, array_ops.concat([image_shape, [2]], 0))
    if static_shape.ndims is not None:
        output.set_shape(static_shape.concatenate([2]))
    return output


def total_variation(images, name=None):
    """The sum of absolute differences between neighboring pixels: a scalar for a 3-D image, one value
    per image for a 4-D batch."""
    with name_scope(name, "total_variation"):
        ndims = images.shape.ndims
        if ndims == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) +
                math_ops.reduce_sum(math_ops.abs(dif2), axis=axis))


def _verify_compatible_image_shapes(img1, img2):
    shape1 = img1.shape.with_rank_at_least(3)
    shape2 = img2.shape.with_rank_at_least(3)
    if not shape1[-3:].is_compatible_with(shape2[-3:]):
        raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    if shape1.ndims is not None and shape2.ndims is not None:
        for d1, d2 in zip(reversed(shape1.dims[:-3]), reversed(shape2.dims[:-3])):
            if not (d1.value == 1 or d2.value == 1 or d1.is_compatible_with(d2)):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    s1, s2 = array_ops.shape_n([img1, img2])
    checks = [Assert(math_ops.greater_equal(array_ops.size(s1), 3), [s1, s2], summarize=10),
              Assert(math_ops.reduce_all(math_ops.equal(s1[-3:], s2[-3:])), [s1, s2], summarize=10)]
    return s1, s2, checks


def _after(checks, tensor):
    with get_default_graph().control_dependencies(checks):
        return core_ops.identity(tensor)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio of each image pair (last three dimensions): ``20 log10(max) - 10 log10(mse)``."""
    with name_scope(name, "PSNR", [a, b]):
        max_val = convert_image_dtype(math_ops.cast(max_val, a.dtype), dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                  np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")
        _, _, checks = _verify_compatible_image_shapes(a, b)
        return _after(checks, value)


def _ssim_helper(x, y, reducer, max_val, compensation=1.0, k1=0.01, k2=0.03):
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0 = reducer(x)
    mean1 = reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math_ops.square(x) + math_ops.square(y))
    c2 *= compensation
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _fspecial_gauss(size, sigma):
    size = convert_to_tensor(size, dtypes.int32)
    sigma = convert_to_tensor(sigma)
    coords = math_ops.cast(array_ops.range(size), sigma.dtype)
    coords -= math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, shape=[1, -1]) + array_ops.reshape(g, shape=[-1, 1])
    g = softmax(array_ops.reshape(g, shape=[1, -1]))
    return array_ops.reshape(g, shape=[size, size, 1, 1])


def _ssim_per_channel(img1, img2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
                      return_index_map=False):
    filter_size = constant_op.constant(filter_size, dtype=dtypes.int32)
    filter_sigma = constant_op.constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = array_ops.shape_n([img1, img2])
    checks = [Assert(math_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], filter_size)), [shape1, filter_size],
                     summarize=8),
              Assert(math_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], filter_size)), [shape2, filter_size],
                     summarize=8)]
    img1 = _after(checks, img1)
    kernel = array_ops.tile(_fspecial_gauss(filter_size, filter_sigma), multiples=[1, 1, shape1[-1], 1])

    def reducer(x):
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, shape=array_ops.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    luminance, cs = _ssim_helper(img1, img2, reducer, max_val, 1.0, k1, k2)
    if return_index_map:
        return luminance * cs, cs
    axes = constant_op.constant([-3, -2], dtype=dtypes.int32)
    return math_ops.reduce_mean(luminance * cs, axes), math_ops.reduce_mean(cs, axes)


def _prepare(img1, img2, max_val):
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _verify_compatible_image_shapes(img1, img2)
    img1 = _after(checks, img1)
    max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
    return convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32), max_val, shape1, shape2


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity of each image pair (an 11 x 11 Gaussian window, mean over channels)."""
    with name_scope(None, "SSIM", [img1, img2]):
        img1, img2, max_val, _, _ = _prepare(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map)
        return math_ops.reduce_mean(per_channel, [-1])


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """Multi-scale SSIM: contrast-structure terms at ``len(power_factors)`` scales (each halving the
    image by 2 x 2 average pooling), combined by a weighted geometric mean."""
    with name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2, max_val, shape1, shape2 = _prepare(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant_op.constant(divisor[1:], dtype=dtypes.int32)

        def do_pad(images, remainder):
            padding = array_ops.pad(array_ops.expand_dims(remainder, -1), [[1, 0], [1, 0]])
            return [array_ops.pad(x, padding, mode="SYMMETRIC") for x in images]

        mcs = []
        per_channel = None
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
                    remainder = tails[0] % divisor_tensor
                    need_padding = math_ops.reduce_any(math_ops.not_equal(remainder, 0))
                    padded = control_flow_ops.cond(need_padding, lambda f=flat, r=remainder: do_pad(f, r),
                                                   lambda f=flat: f)
                    downscaled = [avg_pool(x, ksize=divisor, strides=divisor, padding="VALID") for x in padded]
                    tails = [x[1:] for x in array_ops.shape_n(downscaled)]
                    imgs = [array_ops.reshape(x, array_ops.concat([h, t], 0))
                            for x, h, t in zip(downscaled, heads, tails)]
                per_channel, cs = _ssim_per_channel(*imgs, max_val=max_val, filter_size=filter_size,
                                                    filter_sigma=filter_sigma, k1=k1, k2=k2)
                mcs.append(relu(cs))
        mcs.pop()
        stacked = array_ops.stack(mcs + [relu(per_channel)], axis=-1)
        ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, power_factors), [-1])
        return math_ops.reduce_mean(ms_ssim, [-1])

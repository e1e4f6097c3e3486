"""The ``tf.image`` API: TF1's names are there, static checks fail at build time, kernels name what is
wrong, codecs say which package to install, and seeded distortions repeat across sessions.

Values are compared with TensorFlow's by the op database (tests/opdb/families/image_*.py)."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import errors

# dir(tf.compat.v1.image) of TensorFlow 2.21, less what is not implemented yet (NOT_YET).
TF1_IMAGE_NAMES = """ResizeMethod adjust_brightness adjust_contrast adjust_gamma adjust_hue adjust_jpeg_quality
adjust_saturation central_crop combined_non_max_suppression convert_image_dtype crop_and_resize crop_to_bounding_box
decode_and_crop_jpeg decode_bmp decode_gif decode_image decode_jpeg decode_jxl decode_png decode_webp
draw_bounding_boxes encode_jpeg encode_png extract_glimpse extract_image_patches extract_jpeg_shape extract_patches
flip_left_right flip_up_down generate_bounding_box_proposals grayscale_to_rgb hsv_to_rgb image_gradients is_jpeg
non_max_suppression non_max_suppression_overlaps non_max_suppression_padded non_max_suppression_with_scores
pad_to_bounding_box per_image_standardization psnr random_brightness random_contrast random_crop
random_flip_left_right random_flip_up_down random_hue random_jpeg_quality random_saturation resize resize_area
resize_bicubic resize_bilinear resize_image_with_crop_or_pad resize_image_with_pad resize_images
resize_nearest_neighbor resize_with_crop_or_pad rgb_to_grayscale rgb_to_hsv rgb_to_yiq rgb_to_yuv rot90
sample_distorted_bounding_box sobel_edges ssim ssim_multiscale total_variation transpose transpose_image yiq_to_rgb
yuv_to_rgb""".split()
NOT_YET = {"combined_non_max_suppression", "non_max_suppression_padded", "generate_bounding_box_proposals",
           "decode_jxl", "decode_webp"}
TOP_LEVEL = ["space_to_depth", "depth_to_space", "space_to_batch", "space_to_batch_nd", "batch_to_space",
             "batch_to_space_nd", "extract_image_patches", "extract_volume_patches", "random_crop",
             "required_space_to_batch_paddings"]


def test_tf1_image_names_are_there():
    missing = [n for n in TF1_IMAGE_NAMES if n not in NOT_YET and not hasattr(tf.image, n)]
    assert not missing
    assert tf.compat.v1.image is tf.image
    assert [n for n in TOP_LEVEL if not hasattr(tf, n)] == []
    assert all(hasattr(tf.nn, n) for n in ("space_to_depth", "depth_to_space", "space_to_batch"))
    assert tf.image.ResizeMethod.AREA == 3 and tf.image.random_crop is tf.random_crop
    assert all(hasattr(tf.io, n) for n in ("decode_png", "encode_jpeg", "decode_image", "is_jpeg"))


def test_static_shapes_and_build_time_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6, 8, 3])
        assert tf.image.resize_images(x, [3, 4]).shape.as_list() == [None, 3, 4, 3]
        assert tf.image.crop_to_bounding_box(x, 1, 2, 4, 5).shape.as_list() == [None, 4, 5, 3]
        assert tf.space_to_depth(x, 2).shape.as_list() == [None, 3, 4, 12]
        assert tf.image.decode_png(tf.constant(b""), channels=3).shape.as_list() == [None, None, 3]
        with pytest.raises(ValueError, match="must be at least three-dimensional"):
            tf.image.flip_left_right(tf.zeros([3, 3]))
        with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
            tf.image.crop_to_bounding_box(x, 0, 5, 2, 4)
        with pytest.raises(ValueError, match="evenly divisible by 4"):
            tf.depth_to_space(tf.zeros([1, 2, 2, 6]), 2)
        with pytest.raises(ValueError, match="upper must be > lower"):
            tf.image.random_contrast(x, 1.0, 0.5)


def test_kernel_errors_name_the_op_and_the_problem():
    with tf.Graph().as_default(), tf.Session() as sess:
        size = tf.placeholder(tf.int32, [2])
        resized = tf.image.resize_bilinear(tf.zeros([1, 2, 2, 1]), size, name="my_resize")
        with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive") as info:
            sess.run(resized, {size: [0, 3]})
        assert "my_resize" in str(info.value)
        with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
            sess.run(tf.image.decode_image(tf.constant(b"not an image")))


def test_codecs_say_what_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    with tf.Graph().as_default(), tf.Session() as sess:
        png = tf.image.encode_png(tf.zeros([2, 2, 3], tf.uint8))  # sparseflow's own encoder: no Pillow needed
        data = sess.run(png)
        with pytest.raises(errors.UnimplementedError, match=r'sparseflow\[image\]'):
            sess.run(tf.image.decode_png(data))


def test_seeded_distortions_repeat_in_a_new_session_and_differ_by_seed():
    image = np.linspace(0, 1, 4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)

    def run(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            out = tf.image.random_hue(tf.image.random_flip_left_right(tf.constant(image)), 0.3)
            out = tf.image.random_crop(out, [3, 3, 3])
            with tf.Session() as sess:
                return [sess.run(out) for _ in range(3)]

    first, again, other = run(1), run(1), run(2)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_encode_decode_roundtrips():
    rng = np.random.default_rng(0)
    rgba16 = rng.integers(0, 65535, (5, 4, 1), dtype=np.uint16)
    rgb = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)
    with tf.Graph().as_default(), tf.Session() as sess:
        png16 = sess.run(tf.image.encode_png(rgba16, compression=9))
        back16 = sess.run(tf.image.decode_png(png16, dtype=tf.uint16))
        jpeg = tf.image.encode_jpeg(rgb, quality=100, chroma_downsampling=False)
        back = sess.run(tf.image.decode_jpeg(jpeg, dct_method="INTEGER_ACCURATE"))
        shape = sess.run(tf.image.extract_jpeg_shape(jpeg))
    np.testing.assert_array_equal(back16, rgba16)
    assert np.abs(back.astype(int) - rgb).max() <= 3
    assert shape.tolist() == [16, 16, 3]

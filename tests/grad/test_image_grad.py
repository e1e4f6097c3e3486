"""Gradients of the image ops whose outputs (or incoming gradients) are float32 by TensorFlow's OpDef,
so the op database's float64 finite-difference check cannot reach them.

The resizes are linear in the image: a gradient op is their adjoint exactly when
``<u, R(x)> == <R^T(u), x>`` for random ``x`` and ``u`` (computed in float64 from float32 values), and
the gradient of a gradient op is then the resize again. AdjustContrastv2 is checked by central
differences in float32 with a wide step, and so are CropAndResize's box gradients (its image gradient
is checked as an adjoint, CropAndResize being linear in the image).
"""

from __future__ import annotations

import numpy as np
import pytest

import sparseflow as tf

_RESIZES = [("ResizeBilinear", {}), ("ResizeBilinear", {"align_corners": True}),
            ("ResizeBilinear", {"half_pixel_centers": True}), ("ResizeBicubic", {}),
            ("ResizeBicubic", {"align_corners": True}), ("ResizeBicubic", {"half_pixel_centers": True})]


@pytest.mark.parametrize("op_type,attrs", _RESIZES)
@pytest.mark.parametrize("in_size,out_size", [((3, 4), (5, 7)), ((6, 5), (4, 2)), ((1, 1), (3, 2))])
def test_resize_gradient_is_the_adjoint_of_the_resize(op_type, attrs, in_size, out_size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, *in_size, 3)).astype(np.float32)
    u = rng.standard_normal((2, *out_size, 3)).astype(np.float32)
    fn = getattr(tf.raw_ops, op_type)
    with tf.Graph().as_default(), tf.Session() as sess:
        xt = tf.constant(x)
        y = fn(images=xt, size=list(out_size), **attrs)
        (dx,) = tf.gradients(y, xt, grad_ys=tf.constant(u))
        # the gradient op's own gradient (with respect to its incoming gradient) is the forward resize
        ut = tf.constant(u)
        back = getattr(tf.raw_ops, op_type + "Grad")(grads=ut, original_image=xt, **attrs)
        (du,) = tf.gradients(back, ut, grad_ys=tf.constant(x))
        y_v, dx_v, back_v, du_v = sess.run([y, dx, back, du])
    lhs = np.sum(u.astype(np.float64) * y_v)
    assert np.isclose(lhs, np.sum(dx_v.astype(np.float64) * x), rtol=1e-5)
    np.testing.assert_allclose(back_v, dx_v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(du_v, y_v, rtol=1e-6, atol=1e-6)


def test_adjust_contrast_gradient_by_central_differences():
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.1, 0.9, (2, 3, 4, 3)).astype(np.float32)
    u = rng.standard_normal(x0.shape).astype(np.float32)
    v = rng.standard_normal(x0.shape).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, x0.shape)
        f = tf.placeholder(tf.float32, [])
        y = tf.raw_ops.AdjustContrastv2(images=x, contrast_factor=f)
        dx, df = tf.gradients(y, [x, f], grad_ys=tf.constant(u))
        dx_v, df_v = sess.run([dx, df], {x: x0, f: 1.7})
        h = 1e-2
        plus, minus = (sess.run(y, {x: x0 + s * h * v, f: 1.7}) for s in (1, -1))
        numeric_x = np.sum(u * (plus - minus)) / (2 * h)
        plus, minus = (sess.run(y, {x: x0, f: 1.7 + s * h}) for s in (1, -1))
        numeric_f = np.sum(u * (plus - minus)) / (2 * h)
    assert np.isclose(np.sum(dx_v * v), numeric_x, rtol=1e-3)
    assert np.isclose(df_v, numeric_f, rtol=1e-3)


def test_extract_image_patches_gradient_counts_each_pixel_once_per_patch():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.ones([1, 3, 3, 1])
        p = tf.extract_image_patches(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        g = sess.run(tf.gradients(tf.reduce_sum(p), x)[0])[0, :, :, 0]
    np.testing.assert_array_equal(g, [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


def test_crop_and_resize_gradients():
    rng = np.random.default_rng(2)
    image0 = rng.standard_normal((2, 6, 7, 2)).astype(np.float32)
    boxes0 = np.array([[0.13, 0.21, 0.77, 0.88], [0.31, 0.05, 0.62, 0.52]], np.float32)
    u = rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        image = tf.placeholder(tf.float32, image0.shape)
        boxes = tf.placeholder(tf.float32, boxes0.shape)
        crops = tf.image.crop_and_resize(image, boxes, [1, 0], [4, 3])
        d_image, d_boxes = tf.gradients(crops, [image, boxes], grad_ys=tf.constant(u))
        feed = {image: image0, boxes: boxes0}
        crops_v, d_image_v, d_boxes_v = sess.run([crops, d_image, d_boxes], feed)
        assert np.isclose(np.sum(u.astype(np.float64) * crops_v), np.sum(d_image_v.astype(np.float64) * image0),
                          rtol=1e-5)
        v = rng.standard_normal(boxes0.shape).astype(np.float32)
        h = 1e-3  # small enough to stay inside every pixel cell the boxes sample
        plus = sess.run(crops, {image: image0, boxes: boxes0 + h * v})
        minus = sess.run(crops, {image: image0, boxes: boxes0 - h * v})
    numeric = np.sum(u.astype(np.float64) * (plus.astype(np.float64) - minus)) / (2 * h)
    assert np.isclose(np.sum(d_boxes_v * v), numeric, rtol=2e-3)

"""Image resizing ops and their gradient ops, and the ``tf.image`` resize wrappers.

Up- and downsampling, align_corners, half-pixel centers (and both, an error), one-pixel images, an
empty batch, sizes that are zero, of the wrong length, or of a rank-3 input; the TF1 wrappers
(``resize_images`` of 3-D images, by each method, keeping the aspect ratio, unchanged sizes;
``resize_image_with_pad``).
"""

from __future__ import annotations

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular

_NO_CHECK = "TensorFlow does not check that the gradient's batch and channels are the original image's (it " \
            "reads past them); sparseflow raises InvalidArgumentError naming both shapes"


def _resize_samples(half=True, fd=False):
    out = [
        Sample("up", {"images": regular(1, 3, 4, 2), "size": i32([5, 7])}, fd=fd),
        Sample("down", {"images": regular(2, 5, 6, 1, seed=1), "size": i32([2, 4])}, fd=fd),
        Sample("align_corners", {"images": regular(1, 3, 4, 2), "size": i32([5, 7])}, {"align_corners": True},
               fd=fd),
        Sample("align_corners_down", {"images": regular(1, 5, 6, 1, seed=2), "size": i32([3, 2])},
               {"align_corners": True}),
        Sample("same_size", {"images": regular(1, 2, 3, 1), "size": i32([2, 3])}),
        Sample("one_pixel", {"images": regular(1, 1, 1, 3), "size": i32([3, 2])}),
        Sample("to_one_pixel", {"images": regular(1, 3, 3, 1), "size": i32([1, 1])}, {"align_corners": True}),
        Sample("empty_batch", {"images": empty(0, 2, 2, 1), "size": i32([3, 3])}),
        Sample("zero_size", {"images": regular(1, 2, 2, 1), "size": i32([0, 3])}, grad=False),
        Sample("size_of_three", {"images": regular(1, 2, 2, 1), "size": i32([2, 2, 2])}, grad=False),
        Sample("rank3", {"images": regular(2, 2, 1), "size": i32([3, 3])}, grad=False),
        Sample("empty_image", {"images": empty(1, 0, 2, 1), "size": i32([3, 3])}, grad=False),
    ]
    if half:
        out += [
            Sample("half_pixel_up", {"images": regular(1, 3, 4, 2), "size": i32([5, 7])},
                   {"half_pixel_centers": True}, fd=fd),
            Sample("half_pixel_down", {"images": regular(1, 6, 5, 1, seed=3), "size": i32([4, 2])},
                   {"half_pixel_centers": True}),
            Sample("both_flags", {"images": regular(1, 2, 2, 1), "size": i32([3, 3])},
                   {"align_corners": True, "half_pixel_centers": True}, grad=False),
        ]
    return out


def _grad_samples(forward_input_dtype_grads):
    """Samples of ResizeBilinearGrad / ResizeBicubicGrad: (grads float32, original_image T)."""
    g = forward_input_dtype_grads
    return [
        Sample("up", {"grads": g(1, 5, 7, 2), "original_image": regular(1, 3, 4, 2)}),
        Sample("down", {"grads": g(2, 2, 4, 1), "original_image": regular(2, 5, 6, 1)}),
        Sample("align_corners", {"grads": g(1, 5, 7, 2), "original_image": regular(1, 3, 4, 2)},
               {"align_corners": True}),
        Sample("half_pixel", {"grads": g(1, 4, 2, 1), "original_image": regular(1, 6, 5, 1)},
               {"half_pixel_centers": True}),
        Sample("empty_batch", {"grads": g(0, 3, 3, 1), "original_image": empty(0, 2, 2, 1)}),
        Sample("batch_mismatch", {"grads": g(2, 3, 3, 1), "original_image": regular(1, 2, 2, 1)}, grad=False),
    ]


def _f32(*shape):
    import numpy as np

    n = int(np.prod(shape))
    return ((np.arange(n) % 9 - 4) * 0.375).astype(np.float32).reshape(shape)


def _resize_images(tf, images, size, **kw):
    return tf.image.resize_images(images, size, **kw)


def _resize_with_pad(tf, image, **kw):
    return tf.image.resize_image_with_pad(image, **kw)


ENTRIES = [
    OpEntry("ResizeBilinear", _resize_samples()),
    OpEntry("ResizeNearestNeighbor", _resize_samples(fd=True)),
    OpEntry("ResizeBicubic", _resize_samples(), rtol={"float16": 1e-2, "float32": 1e-5, "float64": 1e-5},
            grad_rtol=1e-5),
    OpEntry("ResizeArea", _resize_samples(half=False), rtol={"float16": 1e-2, "float32": 1e-5, "float64": 1e-5}),
    OpEntry("ResizeBilinearGrad", _grad_samples(_f32), rtol={"float16": 1e-2, "float32": 1e-5}, differs={
        "*:grad": "TensorFlow declares ResizeBilinearGrad not differentiable (None); sparseflow's gradient is the "
                  "forward resize of the incoming gradient (checked in tests/grad/test_image_grad.py)",
        "batch_mismatch": _NO_CHECK}),
    OpEntry("ResizeBicubicGrad", _grad_samples(_f32), rtol={"float32": 1e-5, "float64": 1e-5},
            differs={"batch_mismatch": _NO_CHECK}),
    OpEntry("ResizeNearestNeighborGrad", [
        Sample("up", {"grads": regular(1, 5, 7, 2), "size": i32([3, 4])}, fd=True),
        Sample("down", {"grads": regular(2, 2, 4, 1), "size": i32([5, 6])}),
        Sample("align_corners", {"grads": regular(1, 5, 7, 2), "size": i32([3, 4])}, {"align_corners": True}),
        Sample("half_pixel", {"grads": regular(1, 4, 2, 1), "size": i32([6, 5])}, {"half_pixel_centers": True}),
        Sample("empty_batch", {"grads": empty(0, 3, 3, 1), "size": i32([2, 2])}),
        Sample("zero_size", {"grads": regular(1, 3, 3, 1), "size": i32([0, 2])}, grad=False),
    ]),
    OpEntry("ResizeBilinear", [
        Sample("rank3_bilinear", {"images": regular(3, 4, 2), "size": i32([5, 6])}),
        Sample("nearest", {"images": regular(2, 3, 4, 1), "size": i32([5, 2])}, {"method": 1}),
        Sample("bicubic_aligned", {"images": regular(3, 4, 1), "size": i32([6, 6])}, {"method": 2,
                                                                                        "align_corners": True}),
        Sample("area", {"images": regular(1, 6, 6, 1), "size": i32([4, 3])}, {"method": 3}),
        Sample("aspect_ratio", {"images": regular(1, 4, 8, 1), "size": i32([6, 6])}, {"preserve_aspect_ratio": True}),
        Sample("unchanged", {"images": regular(1, 3, 4, 1), "size": i32([3, 4])}),
    ], name="resize_images", build=_resize_images, dtypes=("uint8", "int32", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-5},
        differs={"aspect_ratio|*|const": "TensorFlow evaluates the constant subgraph of the new size (Cast, Round, "
                                         "Mul) for the static shape; sparseflow's static height and width stay "
                                         "unknown (the values agree in every other mode)"}),
    OpEntry("ResizeBilinear", [
        Sample("wide", {"image": regular(2, 6, 1)}, {"target_height": 4, "target_width": 4}),
        Sample("tall_batch", {"image": regular(2, 6, 2, 3)}, {"target_height": 5, "target_width": 5}),
        Sample("nearest", {"image": regular(3, 3, 1)}, {"target_height": 6, "target_width": 4, "method": 1}),
    ], name="resize_image_with_pad", build=_resize_with_pad, dtypes=("uint8", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-5}),
]

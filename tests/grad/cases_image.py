"""Finite-difference cases for the gradients of the image and space/depth/batch ops
(sparseflow/_src/grad/image_grad.py).

ResizeBilinear, ResizeBicubic, their gradient ops, AdjustContrastv2 and CropAndResize exist only
for float32 outputs or incoming gradients (TensorFlow's OpDefs): their cases cast the float64 points
to float32 and use a larger step and tolerance. Points avoid the kinks of the piecewise ops (ties
between RGB channels, pixel-cell boundaries of the crop boxes).
"""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from tests.grad.cases_nn import F32, as_f32, op
from tests.grad.grad_case import GradCase, positive, rand

_ORIGINAL = np.zeros((2, 3, 4, 2), np.float32)


def _rgb(n, seed):
    """RGB triples in [0.1, 0.9] whose channels differ by at least 0.1 (no ties for max or min)."""
    rng = np.random.default_rng(seed)
    base = np.stack([rng.permutation([0.15, 0.5, 0.85]) for _ in range(n)])
    return base + rng.uniform(-0.04, 0.04, base.shape)


_BOXES = np.array([[0.13, 0.21, 0.77, 0.88], [0.31, 0.05, 0.62, 0.52]])

CASES = [
    GradCase("ResizeBilinear", as_f32(lambda x: tf.image.resize_bilinear(x, [5, 7])), [rand(2, 3, 4, 2)], **F32),
    GradCase("ResizeBilinear", as_f32(lambda x: tf.image.resize_bilinear(x, [2, 3], half_pixel_centers=True)),
             [rand(1, 5, 6, 1)], name="ResizeBilinear_half_pixel", **F32),
    GradCase("ResizeBicubic", as_f32(lambda x: tf.image.resize_bicubic(x, [5, 7], align_corners=True)),
             [rand(2, 3, 4, 2)], **F32),
    GradCase("ResizeNearestNeighbor", lambda x: tf.image.resize_nearest_neighbor(x, [5, 7]), [rand(2, 3, 4, 2)]),
    GradCase("ResizeBilinearGrad", as_f32(lambda g: op("ResizeBilinearGrad", [g, tf.constant(_ORIGINAL)])),
             [rand(2, 5, 7, 2)], **F32),
    GradCase("ResizeBicubicGrad", as_f32(lambda g: op("ResizeBicubicGrad", [g, tf.constant(_ORIGINAL)])),
             [rand(2, 5, 7, 2)], **F32),
    GradCase("ResizeNearestNeighborGrad", lambda g: op("ResizeNearestNeighborGrad", [g, tf.constant([3, 4])]),
             [rand(2, 5, 7, 2)]),
    GradCase("SpaceToDepth", lambda x: tf.space_to_depth(x, 2), [rand(2, 4, 6, 3)]),
    GradCase("DepthToSpace", lambda x: tf.depth_to_space(x, 2), [rand(2, 2, 3, 8)]),
    GradCase("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x, [2, 3], [[1, 0], [0, 1]]), [rand(2, 3, 5, 2)]),
    GradCase("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [2, 3], [[1, 0], [0, 2]]), [rand(12, 2, 2, 2)]),
    GradCase("SpaceToBatch", lambda x: op("SpaceToBatch", [x, tf.constant([[0, 0], [1, 1]])], {"block_size": 2}),
             [rand(1, 4, 6, 1)]),
    GradCase("BatchToSpace", lambda x: op("BatchToSpace", [x, tf.constant([[0, 0], [1, 1]])], {"block_size": 2}),
             [rand(4, 2, 3, 1)]),
    GradCase("ExtractImagePatches",
             lambda x: tf.extract_image_patches(x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME"),
             [rand(2, 5, 6, 2)]),
    GradCase("ExtractVolumePatches",
             lambda x: tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"), [rand(1, 3, 4, 3, 2)]),
    GradCase("RGBToHSV", tf.image.rgb_to_hsv, [_rgb(6, 0).reshape(2, 3, 3)]),
    GradCase("HSVToRGB", tf.image.hsv_to_rgb,
             [np.stack([np.array([0.07, 0.24, 0.41, 0.58, 0.74, 0.91]), rand(6, low=0.2, high=0.9),
                        positive(6) * 0.4], -1)]),
    GradCase("AdjustContrastv2", as_f32(lambda x, f: op("AdjustContrastv2", [x, f])),
             [rand(2, 3, 4, 3), np.float64(1.7)], **F32),
    GradCase("CropAndResize",
             as_f32(lambda image, boxes: tf.image.crop_and_resize(image, boxes, [1, 0], [4, 3])),
             [rand(2, 6, 7, 2), _BOXES], **F32),
]

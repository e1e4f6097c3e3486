"""Boxes on images (CropAndResize and its gradient ops, NMS V1-V5 and WithOverlaps, DrawBoundingBoxes,
SampleDistortedBoundingBox with TensorFlow's seeded draws, ExtractGlimpse) and the measures built from
other ops (image_gradients, sobel_edges, total_variation, psnr, ssim, ssim_multiscale).

Boxes inside, across and outside the image, one-pixel crops, flipped corners, empty box lists,
score ties and thresholds, Soft-NMS, padded outputs, bad indices and shapes.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, regular

_F = ("float32", "float64")


def f32(v):
    return np.asarray(v, np.float32)


def i32(v):
    return np.asarray(v, np.int32)


_BOXES = f32([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.5, 0.6, 1.3], [0.7, 0.6, 0.2, 0.1]])
_CROP = [
    Sample("bilinear", {"image": regular(2, 5, 6, 2), "boxes": _BOXES, "box_ind": i32([0, 1, 1, 0]),
                        "crop_size": i32([3, 4])}),
    Sample("nearest", {"image": regular(2, 5, 6, 1), "boxes": _BOXES, "box_ind": i32([1, 0, 1, 0]),
                       "crop_size": i32([4, 3])}, {"method": "nearest"}),
    Sample("one_pixel_crop", {"image": regular(1, 4, 4, 1), "boxes": _BOXES[:2], "box_ind": i32([0, 0]),
                              "crop_size": i32([1, 1])}),
    Sample("extrapolation", {"image": regular(1, 3, 3, 1), "boxes": f32([[-0.5, -0.5, 1.5, 1.5]]),
                             "box_ind": i32([0]), "crop_size": i32([5, 5])}, {"extrapolation_value": -1.0}),
    Sample("no_boxes", {"image": regular(1, 3, 3, 2), "boxes": np.zeros((0, 4), np.float32),
                        "box_ind": np.zeros(0, np.int32), "crop_size": i32([2, 2])}),
    Sample("bad_index", {"image": regular(1, 3, 3, 1), "boxes": _BOXES[:1], "box_ind": i32([1]),
                         "crop_size": i32([2, 2])}, grad=False),
    Sample("zero_crop", {"image": regular(1, 3, 3, 1), "boxes": _BOXES[:1], "box_ind": i32([0]),
                         "crop_size": i32([0, 2])}, grad=False),
]


def _grads(*shape):
    n = int(np.prod(shape))
    return ((np.arange(n) % 7 - 3) * 0.25 + 0.125).astype(np.float32).reshape(shape)


_NMS_BOXES = f32([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                  [1, 1, 0, 0], [0, 100, 1, 101]])
_NMS_SCORES = f32([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.9])


def _nms(name, max_out=5, iou=0.5, score=float("-inf"), sigma=None, boxes=_NMS_BOXES, scores=_NMS_SCORES, **attrs):
    args = {"boxes": T(boxes), "scores": T(scores), "max_output_size": i32(max_out),
            "iou_threshold": T(np.float32(iou)), "score_threshold": T(np.float32(score))}
    if sigma is not None:
        args["soft_nms_sigma"] = T(np.float32(sigma))
    return Sample(name, args, attrs)


def _nms_samples(v5=False):
    sigma = {"sigma": 0.0} if v5 else {}
    return [_nms("default", **sigma), _nms("max_two", max_out=2, **sigma), _nms("score_threshold", score=0.55, **sigma),
            _nms("loose", iou=0.95, **sigma), _nms("ties", scores=np.ones(7, np.float32), **sigma),
            _nms("no_boxes", boxes=np.zeros((0, 4), np.float32), scores=np.zeros(0, np.float32), **sigma),
            _nms("bad_threshold", iou=1.5, **sigma)]


def _drop(samples, *keys):
    return [Sample(s.name, {k: v for k, v in s.args.items() if k not in keys}, s.attrs) for s in samples]


def _v1_samples():
    """V1 takes the IoU threshold as an attr."""
    return [Sample(s.name, {k: s.args[k] for k in ("boxes", "scores", "max_output_size")},
                   {"iou_threshold": float(np.asarray(s.args["iou_threshold"].value))}) for s in _nms_samples()]


_DRAW_BOXES = f32([[[0.0, 0.0, 1.0, 1.0], [0.2, 0.25, 0.6, 0.75], [-0.5, 0.5, 0.5, 1.5], [0.8, 0.8, 0.2, 0.2],
                    [1.5, 1.5, 2.0, 2.0]]])


def _api(fn_name):
    def build(tf, **kw):
        out = getattr(tf.image, fn_name)(**kw)
        return list(out) if isinstance(out, tuple) else out

    return build


def _distorted(seed, seed2, **attrs):
    return {"seed": seed, "seed2": seed2, **attrs}


_BBOX = f32([[[0.1, 0.2, 0.5, 0.6], [0.3, 0.3, 0.9, 0.8]]])
ENTRIES = [
    OpEntry("CropAndResize", _CROP, dtypes=("uint8", "int32", "float16", "float32", "float64"),
            rtol={"float16": 1e-2, "float32": 1e-5, "float64": 1e-5}, grad_rtol=1e-5),
    OpEntry("CropAndResizeGradBoxes", [
        Sample("bilinear", {"grads": _grads(4, 3, 4, 2), "image": regular(2, 5, 6, 2), "boxes": _BOXES,
                            "box_ind": i32([0, 1, 1, 0])}),
        Sample("one_pixel_crop", {"grads": _grads(2, 1, 1, 1), "image": regular(1, 4, 4, 1), "boxes": _BOXES[:2],
                                  "box_ind": i32([0, 0])}),
    ], dtypes=("uint8", "float32", "float64"), rtol=1e-5),
    *[OpEntry("CropAndResizeGradImage", [
        Sample("bilinear", {"grads": _grads(4, 3, 4, 2), "boxes": _BOXES, "box_ind": i32([0, 1, 1, 0]),
                            "image_size": i32([2, 5, 6, 2])}, {"T": t}),
        Sample("nearest", {"grads": _grads(4, 4, 3, 1), "boxes": _BOXES, "box_ind": i32([1, 0, 1, 0]),
                           "image_size": i32([2, 5, 6, 1])}, {"method": "nearest", "T": t}),
        Sample("no_boxes", {"grads": np.zeros((0, 2, 2, 1), np.float32), "boxes": np.zeros((0, 4), np.float32),
                            "box_ind": np.zeros(0, np.int32), "image_size": i32([1, 3, 3, 1])}, {"T": t}),
    ], name=f"CropAndResizeGradImage_{t}", dtypes=(None,), rtol={"float16": 1e-2, "float32": 1e-5}.get(t))
      for t in ("float16", "float32", "float64")],
    OpEntry("NonMaxSuppression", _v1_samples(), dtypes=("float32",)),
    OpEntry("NonMaxSuppressionV2", _drop(_nms_samples(), "score_threshold"), dtypes=("float16", "float32")),
    OpEntry("NonMaxSuppressionV3", _nms_samples(), dtypes=("float16", "float32")),
    OpEntry("NonMaxSuppressionV4", _nms_samples() + [
        Sample("padded", _nms("p").args, {"pad_to_max_output_size": True})], dtypes=("float16", "float32")),
    OpEntry("NonMaxSuppressionV5", _nms_samples(v5=True) + [
        _nms("soft", sigma=0.5), _nms("soft_threshold", sigma=0.3, score=0.4, iou=0.6),
        Sample("soft_padded", _nms("p", sigma=0.5, max_out=9).args, {"pad_to_max_output_size": True})],
            dtypes=("float16", "float32"), rtol={"float16": 1e-3, "float32": 1e-6}),
    OpEntry("NonMaxSuppressionWithOverlaps", [
        Sample("default", {"overlaps": f32([[1, 0.7, 0.2], [0.7, 1, 0.4], [0.2, 0.4, 1]]),
                           "scores": f32([0.5, 0.9, 0.7]), "max_output_size": i32(3),
                           "overlap_threshold": f32(0.5), "score_threshold": f32(-1.0)}),
        Sample("threshold", {"overlaps": f32([[1, 0.7, 0.2], [0.7, 1, 0.4], [0.2, 0.4, 1]]),
                             "scores": f32([0.5, 0.9, 0.7]), "max_output_size": i32(3),
                             "overlap_threshold": f32(0.3), "score_threshold": f32(0.6)}),
        Sample("not_square", {"overlaps": f32(np.ones((2, 3))), "scores": f32([0.5, 0.9]),
                              "max_output_size": i32(3), "overlap_threshold": f32(0.3),
                              "score_threshold": f32(0.6)}),
    ], dtypes=(None,)),
    OpEntry("DrawBoundingBoxes", [
        Sample("rgb", {"images": regular(1, 5, 6, 3), "boxes": _DRAW_BOXES}),
        Sample("gray", {"images": regular(1, 4, 4, 1), "boxes": _DRAW_BOXES[:, :2]}),
        Sample("rgba_batch", {"images": regular(2, 3, 3, 4), "boxes": np.concatenate([_DRAW_BOXES[:, :2]] * 2)}),
        Sample("two_channels", {"images": regular(1, 3, 3, 2), "boxes": _DRAW_BOXES[:, :1]}),
    ], dtypes=("float16", "float32")),
    OpEntry("DrawBoundingBoxesV2", [
        Sample("colors", {"images": regular(1, 5, 6, 3), "boxes": _DRAW_BOXES,
                          "colors": f32([[0.1, 0.2, 0.3, 1.0], [0.9, 0.8, 0.7, 1.0]])}),
        Sample("gray", {"images": regular(1, 4, 4, 1), "boxes": _DRAW_BOXES[:, :2], "colors": f32([[0.3, 0, 0, 1]])}),
    ], dtypes=("float16", "float32")),
    OpEntry("SampleDistortedBoundingBox", [
        Sample("boxes", {"image_size": T([40, 60, 3]), "bounding_boxes": _BBOX}, _distorted(1, 2)),
        Sample("covered", {"image_size": T([50, 50, 1]), "bounding_boxes": _BBOX},
               _distorted(3, 4, min_object_covered=0.7, aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.9])),
        Sample("no_boxes", {"image_size": T([20, 30, 3]), "bounding_boxes": np.zeros((1, 0, 4), np.float32)},
               _distorted(5, 6, use_image_if_no_bounding_boxes=True)),
        Sample("impossible", {"image_size": T([20, 30, 3]), "bounding_boxes": _BBOX},
               _distorted(7, 8, min_object_covered=1.0, area_range=[0.05, 0.1], max_attempts=5)),
        Sample("no_boxes_error", {"image_size": T([20, 30, 3]), "bounding_boxes": np.zeros((1, 0, 4), np.float32)},
               _distorted(5, 6)),
        Sample("box_outside", {"image_size": T([20, 30, 3]), "bounding_boxes": f32([[[0.1, 0.1, 1.2, 0.5]]])},
               _distorted(5, 6)),
    ], dtypes=("uint8", "int32", "int64"), stateful=True),
    OpEntry("SampleDistortedBoundingBoxV2", [
        Sample("boxes", {"image_size": T([40, 60, 3]), "bounding_boxes": _BBOX, "min_object_covered": f32(0.3)},
               _distorted(11, 12)),
        Sample("no_seed2", {"image_size": T([64, 48, 3]), "bounding_boxes": _BBOX, "min_object_covered": f32(0.1)},
               _distorted(9, 0, area_range=[0.3, 1.0])),
    ], dtypes=("int32", "int64"), stateful=True),
    OpEntry("ExtractGlimpse", [
        Sample("centered", {"input": regular(2, 6, 7, 2), "size": i32([3, 2]), "offsets": f32([[0, 0], [0.3, -0.4]])},
               {"uniform_noise": False}),
        Sample("pixels", {"input": regular(1, 6, 7, 1), "size": i32([2, 3]), "offsets": f32([[1.0, 2.5]])},
               {"centered": False, "normalized": False, "uniform_noise": False}),
        Sample("zero_noise_outside", {"input": regular(1, 4, 4, 1), "size": i32([3, 3]), "offsets": f32([[-0.9, 0.9]])},
               {"uniform_noise": False, "noise": "zero"}),
    ], dtypes=("float32",)),
    OpEntry("ExtractGlimpseV2", [
        Sample("centered", {"input": regular(2, 6, 7, 2), "size": i32([3, 2]), "offsets": f32([[0, 0], [0.3, -0.4]])},
               {"noise": "zero", "uniform_noise": False}),
        Sample("pixels", {"input": regular(1, 6, 7, 1), "size": i32([2, 3]), "offsets": f32([[1.0, 2.5]])},
               {"centered": False, "normalized": False, "noise": "zero", "uniform_noise": False}),
        Sample("negative_corner", {"input": regular(1, 4, 4, 1), "size": i32([3, 3]),
                                   "offsets": f32([[-0.9, 0.9]])}, {"noise": "zero", "uniform_noise": False}),
    ], dtypes=("float32",)),
    # ---------------------------------------------------------------- measures
    OpEntry("ConcatV2", [Sample("batch", {"image": regular(2, 3, 4, 2)}, fd=True),
                         Sample("empty_batch", {"image": empty(0, 2, 2, 1)})],
            name="image_gradients", build=_api("image_gradients"), dtypes=_F),
    OpEntry("DepthwiseConv2dNative", [Sample("batch", {"image": regular(2, 4, 5, 2)})],
            name="sobel_edges", build=_api("sobel_edges"), dtypes=_F),
    OpEntry("Sum", [Sample("rank3", {"images": regular(3, 4, 2)}), Sample("batch", {"images": regular(2, 3, 3, 1)}),
                    Sample("rank2", {"images": regular(3, 4)})],
            name="total_variation", build=_api("total_variation"), dtypes=_F),
    OpEntry("SquaredDifference", [
        Sample("batch", {"a": regular(2, 4, 4, 3, lo=0, hi=1), "b": regular(2, 4, 4, 3, lo=0, hi=1, seed=1)},
               {"max_val": 1.0}),
        Sample("uint8", {"a": T(np.arange(48).reshape(4, 4, 3) * 5), "b": T(np.arange(48).reshape(4, 4, 3) * 5 + 3)},
               {"max_val": 255}, kinds=frozenset({"uint"}))],
            name="psnr", build=_api("psnr"), dtypes=("uint8", "float32", "float64"), rtol={"float32": 1e-5},
            grad_rtol=1e-6),
    OpEntry("DepthwiseConv2dNative", [
        Sample("batch", {"img1": regular(2, 6, 7, 2, lo=0, hi=1), "img2": regular(2, 6, 7, 2, lo=0, hi=1, seed=1)},
               {"max_val": 1.0, "filter_size": 3}),
        Sample("index_map", {"img1": regular(1, 5, 5, 1, lo=0, hi=1), "img2": regular(1, 5, 5, 1, lo=0, hi=1, seed=1)},
               {"max_val": 1.0, "filter_size": 3, "return_index_map": True}),
        Sample("too_small", {"img1": regular(1, 2, 2, 1, lo=0, hi=1), "img2": regular(1, 2, 2, 1, lo=0, hi=1)},
               {"max_val": 1.0})],
            name="ssim", build=_api("ssim"), dtypes=_F, rtol={"float32": 1e-4, "float64": 1e-5}, grad_rtol=1e-4),
    OpEntry("AvgPool", [
        Sample("three_scales", {"img1": regular(1, 13, 12, 2, lo=0, hi=1),
                                "img2": regular(1, 13, 12, 2, lo=0, hi=1, seed=1)},
               {"max_val": 1.0, "filter_size": 3, "power_factors": (0.3, 0.3, 0.4)})],
            name="ssim_multiscale", build=_api("ssim_multiscale"), dtypes=_F, rtol={"float32": 1e-4, "float64": 1e-5},
            grad_rtol=1e-4),
]

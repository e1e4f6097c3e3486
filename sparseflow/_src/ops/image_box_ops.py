"""Boxes on images: CropAndResize (and its gradient ops), NonMaxSuppression (V1 to V5 and
WithOverlaps), DrawBoundingBoxes(V2), SampleDistortedBoundingBox(V2) and ExtractGlimpse(V2), with
their ``tf.image`` wrappers.

Boxes are ``[y_min, x_min, y_max, x_max]`` in coordinates normalized to [0, 1] of the image's
height and width (NMS takes any corner order and any units).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     boxes = tf.constant([[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, 2.0, 1.0, 3.0]])
    ...     print(sess.run(tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], max_output_size=3)))
    [0 2]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value

__all__ = ["crop_and_resize", "non_max_suppression", "non_max_suppression_with_scores",
           "non_max_suppression_overlaps", "draw_bounding_boxes", "sample_distorted_bounding_box", "extract_glimpse"]


def _dim(shape, i):
    return None if shape.ndims is None else shape.dims[i].value


def _crop_and_resize_shape(op):
    image = op.inputs[0].shape.with_rank(4)
    boxes = op.inputs[1].shape.with_rank(2)
    op.inputs[2].shape.with_rank(1)
    op.inputs[3].shape.with_rank(1)
    if _dim(boxes, 1) not in (None, 4):
        raise ValueError(f"CropAndResize: boxes must have 4 columns, got shape {boxes}")
    size = constant_value(op.inputs[3])
    h, w = (None, None) if size is None or size.shape != (2,) else (int(size[0]), int(size[1]))
    if (h is not None and h <= 0) or (w is not None and w <= 0):
        h = w = None  # the kernel says what is wrong, at run time (as TensorFlow's)
    return [TensorShape([_dim(boxes, 0), h, w, _dim(image, 3)])]


def _grad_image_shape(op):
    op.inputs[0].shape.with_rank(4)
    size = constant_value(op.inputs[3])
    return [unknown_shape(4) if size is None else TensorShape([int(d) for d in size])]


def _grad_boxes_shape(op):
    op.inputs[0].shape.with_rank(4)
    return [op.inputs[2].shape.with_rank(2)]


_CROP_T = "{uint8, uint16, int8, int16, int32, int64, half, float, double}"
register_op("CropAndResize", inputs=["image: T", "boxes: float", "box_ind: int32", "crop_size: int32"],
            outputs=["crops: float"], attrs=[f"T: {_CROP_T}", "method: {'bilinear', 'nearest'} = 'bilinear'",
                                             "extrapolation_value: float = 0"], shape_fn=_crop_and_resize_shape)
register_op("CropAndResizeGradImage", inputs=["grads: float", "boxes: float", "box_ind: int32", "image_size: int32"],
            outputs=["output: T"], attrs=["T: {float, half, double}", "method: {'bilinear', 'nearest'} = 'bilinear'"],
            shape_fn=_grad_image_shape)
register_op("CropAndResizeGradBoxes", inputs=["grads: float", "image: T", "boxes: float", "box_ind: int32"],
            outputs=["output: float"], attrs=[f"T: {_CROP_T}", "method: {'bilinear'} = 'bilinear'"],
            shape_fn=_grad_boxes_shape)


def _nms_shape(op):
    boxes = op.inputs[0].shape.with_rank(2)
    op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(0)
    for t in op.inputs[3:]:
        t.shape.with_rank(0)
    if op.type == "NonMaxSuppressionWithOverlaps":
        n0, n1 = _dim(boxes, 0), _dim(boxes, 1)
        if n0 is not None and n1 is not None and n0 != n1:
            raise ValueError(f"{op.type}: overlaps must be square, got shape {boxes}")
    elif _dim(boxes, 1) not in (None, 4):
        raise ValueError(f"{op.type}: boxes must have 4 columns, got shape {boxes}")
    pad = op.type in ("NonMaxSuppressionV4", "NonMaxSuppressionV5") and op.get_attr("pad_to_max_output_size")
    size = constant_value(op.inputs[2]) if pad else None
    indices = TensorShape([None if size is None else int(size)])
    if op.type == "NonMaxSuppressionV4":
        return [indices, TensorShape([])]
    if op.type == "NonMaxSuppressionV5":
        return [indices, indices, TensorShape([])]
    return [indices]


_NMS_T = "{half, float} = DT_FLOAT"
register_op("NonMaxSuppression", inputs=["boxes: float", "scores: float", "max_output_size: int32"],
            outputs=["selected_indices: int32"], attrs=["iou_threshold: float = 0.5"], shape_fn=_nms_shape)
register_op("NonMaxSuppressionV2", inputs=["boxes: T", "scores: T", "max_output_size: int32",
                                           "iou_threshold: T_threshold"], outputs=["selected_indices: int32"],
            attrs=[f"T: {_NMS_T}", f"T_threshold: {_NMS_T}"], shape_fn=_nms_shape)
register_op("NonMaxSuppressionV3", inputs=["boxes: T", "scores: T", "max_output_size: int32",
                                           "iou_threshold: T_threshold", "score_threshold: T_threshold"],
            outputs=["selected_indices: int32"], attrs=[f"T: {_NMS_T}", f"T_threshold: {_NMS_T}"],
            shape_fn=_nms_shape)
register_op("NonMaxSuppressionV4", inputs=["boxes: T", "scores: T", "max_output_size: int32",
                                           "iou_threshold: T_threshold", "score_threshold: T_threshold"],
            outputs=["selected_indices: int32", "valid_outputs: int32"],
            attrs=[f"T: {_NMS_T}", f"T_threshold: {_NMS_T}", "pad_to_max_output_size: bool = false"],
            shape_fn=_nms_shape)
register_op("NonMaxSuppressionV5", inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T",
                                           "score_threshold: T", "soft_nms_sigma: T"],
            outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
            attrs=[f"T: {_NMS_T}", "pad_to_max_output_size: bool = false"], shape_fn=_nms_shape)
register_op("NonMaxSuppressionWithOverlaps", inputs=["overlaps: float", "scores: float", "max_output_size: int32",
                                                     "overlap_threshold: float", "score_threshold: float"],
            outputs=["selected_indices: int32"], shape_fn=_nms_shape)


def _draw_shape(op):
    images = op.inputs[0].shape.with_rank(4)
    op.inputs[1].shape.with_rank(3)
    if _dim(images, 3) not in (None, 1, 3, 4):
        raise ValueError(f"{op.type}: the images' depth must be 1 (gray), 3 (RGB) or 4 (RGBA), got shape {images}")
    return [images]


register_op("DrawBoundingBoxes", inputs=["images: T", "boxes: float"], outputs=["output: T"],
            attrs=["T: {float, half} = DT_FLOAT"], shape_fn=_draw_shape)
register_op("DrawBoundingBoxesV2", inputs=["images: T", "boxes: float", "colors: float"], outputs=["output: T"],
            attrs=["T: {float, half} = DT_FLOAT"], shape_fn=_draw_shape)


def _distorted_box_shape(op):
    size = op.inputs[0].shape.with_rank(1)
    if _dim(size, 0) not in (None, 3):
        raise ValueError(f"{op.type}: image_size must have 3 elements, got shape {size}")
    op.inputs[1].shape.with_rank(3)
    if len(op.inputs) > 2:
        op.inputs[2].shape.with_rank(0)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


_DISTORT_ATTRS = ["T: {uint8, int8, int16, int32, int64}", "seed: int = 0", "seed2: int = 0",
                  "aspect_ratio_range: list(float) = [0.75, 1.33]", "area_range: list(float) = [0.05, 1.0]",
                  "max_attempts: int = 100", "use_image_if_no_bounding_boxes: bool = false"]
register_op("SampleDistortedBoundingBox", inputs=["image_size: T", "bounding_boxes: float"],
            outputs=["begin: T", "size: T", "bboxes: float"],
            attrs=_DISTORT_ATTRS + ["min_object_covered: float = 0.1"], shape_fn=_distorted_box_shape,
            is_stateful=True)
register_op("SampleDistortedBoundingBoxV2", inputs=["image_size: T", "bounding_boxes: float",
                                                    "min_object_covered: float"],
            outputs=["begin: T", "size: T", "bboxes: float"], attrs=_DISTORT_ATTRS, shape_fn=_distorted_box_shape,
            is_stateful=True)


def _glimpse_shape(op):
    x = op.inputs[0].shape.with_rank(4)
    op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(2)
    size = constant_value(op.inputs[1])
    h, w = (None, None) if size is None or size.shape != (2,) else (int(size[0]), int(size[1]))
    return [TensorShape([_dim(x, 0), h, w, _dim(x, 3)])]


for _name in ("ExtractGlimpse", "ExtractGlimpseV2"):
    register_op(_name, inputs=["input: float", "size: int32", "offsets: float"], outputs=["glimpse: float"],
                attrs=["centered: bool = true", "normalized: bool = true", "uniform_noise: bool = true",
                       "noise: string = 'uniform'"], shape_fn=_glimpse_shape)


# ---------------------------------------------------------------- wrappers
def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear", extrapolation_value=0,
                    name=None, box_indices=None):
    """Crops of ``image`` [batch, h, w, d] at ``boxes`` [n, 4] (of images ``box_ind``), each resized to
    ``crop_size`` = [crop_height, crop_width] by bilinear or nearest sampling: [n, ch, cw, d] float32."""
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'")
    box_ind = box_indices if box_ind is None else box_ind
    return apply_op("CropAndResize", [image, boxes, box_ind, crop_size],
                    {"method": method, "extrapolation_value": float(extrapolation_value)}, name=name).outputs[0]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"), name=None):
    """Indices of at most ``max_output_size`` boxes by decreasing score, each overlapping every earlier
    one by at most ``iou_threshold`` (intersection over union), all scoring above ``score_threshold``."""
    with name_scope(name, "non_max_suppression"):
        iou_threshold = convert_to_tensor(iou_threshold, name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, name="score_threshold")
        return apply_op("NonMaxSuppressionV3", [boxes, scores, max_output_size, iou_threshold,
                                                score_threshold]).outputs[0]


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """(indices, scores) of ``non_max_suppression``; with ``soft_nms_sigma`` > 0 (Soft-NMS) overlapping
    boxes have their scores decayed by ``exp(-iou^2 / (2 sigma))`` instead of being dropped."""
    with name_scope(name, "non_max_suppression_with_scores"):
        iou_threshold = convert_to_tensor(iou_threshold, name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, name="score_threshold")
        soft_nms_sigma = convert_to_tensor(soft_nms_sigma, name="soft_nms_sigma")
        op = apply_op("NonMaxSuppressionV5", [boxes, scores, max_output_size, iou_threshold, score_threshold,
                                              soft_nms_sigma], {"pad_to_max_output_size": False})
        return op.outputs[0], op.outputs[1]


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """``non_max_suppression`` with a given [n, n] ``overlaps`` matrix in place of IoU."""
    with name_scope(name, "non_max_suppression_overlaps"):
        overlap_threshold = convert_to_tensor(overlap_threshold, name="overlap_threshold")
        return apply_op("NonMaxSuppressionWithOverlaps", [overlaps, scores, max_output_size, overlap_threshold,
                                                          score_threshold]).outputs[0]


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """``images`` [batch, h, w, depth] float with the outlines of ``boxes`` [batch, n, 4] drawn in
    ``colors`` ([k, 4] RGBA, cycled; TensorFlow's table by default)."""
    if colors is None:
        return apply_op("DrawBoundingBoxes", [images, boxes], name=name).outputs[0]
    return apply_op("DrawBoundingBoxesV2", [images, boxes, colors], name=name).outputs[0]


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): a random crop of an image of ``image_size`` [h, w, c] that covers at least
    ``min_object_covered`` of one of ``bounding_boxes`` [batch, n, 4], for ``tf.slice`` (the seeds are
    the op's own, as TF1's)."""
    attrs = {"seed": int(seed or 0), "seed2": int(seed2 or 0)}
    for key, value in (("aspect_ratio_range", aspect_ratio_range), ("area_range", area_range),
                       ("max_attempts", max_attempts),
                       ("use_image_if_no_bounding_boxes", use_image_if_no_bounding_boxes)):
        if value is not None:
            attrs[key] = list(value) if isinstance(value, (list, tuple)) else value
    with name_scope(name, "sample_distorted_bounding_box"):
        covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")
        op = apply_op("SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, covered], attrs, name=name)
        return op.outputs[0], op.outputs[1], op.outputs[2]


def extract_glimpse(input, size, offsets, centered=True, normalized=True, uniform_noise=True,  # noqa: A002
                    name=None):
    """Windows of ``size`` [h, w] from ``input`` [batch, height, width, channels], centered at ``offsets``
    [batch, 2] (y, x); parts outside the image are filled with noise (uniform by default)."""
    attrs = {"centered": bool(centered), "normalized": bool(normalized), "uniform_noise": bool(uniform_noise)}
    return apply_op("ExtractGlimpse", [input, size, offsets], attrs, name=name).outputs[0]



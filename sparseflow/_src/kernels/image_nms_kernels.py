"""CPU kernels of NonMaxSuppression (V1 to V5, WithOverlaps) and SampleDistortedBoundingBox(V2).

NMS is TensorFlow's greedy selection: candidates above the score threshold by decreasing score (ties:
lower index first), each compared with the boxes selected since it was last looked at, hard
suppression above the IoU threshold, and with Soft-NMS (V5, ``soft_nms_sigma`` > 0) scores decayed by
``exp(-iou^2 / (2 sigma))`` and the candidate put back while it stays above the threshold.

SampleDistortedBoundingBox draws from the op's Philox stream as TensorFlow's kernel does (4 samples
reserved per attempt; aspect ratio, height and position per attempt), so seeded crops are TensorFlow's.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import philox
from sparseflow._src.kernels.candidate_sampler_kernels import _Stream as SimplePhilox
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _iou_matrix(boxes):
    """[n, n] intersection over union of boxes given by any two opposite corners (0 where an area is 0)."""
    b = boxes.astype(np.float32)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    iy = np.maximum(np.minimum(ymax[:, None], ymax[None, :]) - np.maximum(ymin[:, None], ymin[None, :]), 0)
    ix = np.maximum(np.minimum(xmax[:, None], xmax[None, :]) - np.maximum(xmin[:, None], xmin[None, :]), 0)
    inter = iy * ix
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None, :] - inter)
    return np.where((area[:, None] <= 0) | (area[None, :] <= 0), np.float32(0), iou).astype(np.float32)


def select(similarity, scores, max_output, threshold, score_threshold, soft_sigma=0.0):
    """(selected indices, their final scores) of TensorFlow's greedy (soft) NMS."""
    f32 = np.float32
    scale = f32(-0.5) / f32(soft_sigma) if soft_sigma > 0 else f32(0.0)
    heap = [(-float(s), i, f32(s), 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected, selected_scores = [], []
    while len(selected) < max_output and heap:
        _, index, score, begin = heapq.heappop(heap)
        original = score
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = similarity[index, selected[j]]
            score = f32(score * (f32(np.exp(scale * sim * sim)) if soft_sigma > 0 or sim <= threshold else f32(0.0)))
            if soft_sigma <= 0 and sim > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-float(score), index, score, len(selected)))
    return np.asarray(selected, np.int32), selected_scores


def _scalar(value, what):
    if np.ndim(value) != 0:
        raise _invalid(f"{what} must be 0-D, got shape {_dims(np.shape(value))}")
    return np.asarray(value).item()


def _nms_inputs(node, boxes, scores, max_output_size, iou_threshold):
    boxes, scores = np.asarray(boxes), np.asarray(scores)
    overlaps = node.op_type == "NonMaxSuppressionWithOverlaps"
    if overlaps:
        if boxes.ndim != 2 or boxes.shape[0] != boxes.shape[1]:
            raise _invalid(f"overlaps must be 2-D and square: {_dims(boxes.shape)}")
    elif boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"boxes must be 2-D with 4 columns: {_dims(boxes.shape)}")
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise _invalid(f"scores has incompatible shape: {_dims(scores.shape)} for {boxes.shape[0]} boxes")
    max_output = int(_scalar(max_output_size, "max_output_size"))
    threshold = float(_scalar(iou_threshold, "iou_threshold"))
    if not overlaps and not 0 <= threshold <= 1:
        raise _invalid("iou_threshold must be in [0, 1]")
    if max_output < 0:
        raise _invalid("max_output_size must be non-negative")
    similarity = boxes.astype(np.float32) if overlaps else _iou_matrix(boxes)
    return similarity, scores.astype(np.float32), max_output, threshold


def _nms_factory(node):
    op = node.op_type
    pad = bool(node.attrs.get("pad_to_max_output_size", False))
    score_dtype = node.output_dtypes[1].as_numpy_dtype if op == "NonMaxSuppressionV5" else np.float32

    def compute(boxes, scores, max_output_size, iou_threshold=None, score_threshold=None, soft_nms_sigma=None):
        if op == "NonMaxSuppression":
            iou_threshold = node.attrs.get("iou_threshold", 0.5)
        similarity, scores_f, max_output, threshold = _nms_inputs(node, boxes, scores, max_output_size, iou_threshold)
        score_min = -math.inf if score_threshold is None else float(_scalar(score_threshold, "score_threshold"))
        sigma = 0.0 if soft_nms_sigma is None else float(_scalar(soft_nms_sigma, "soft_nms_sigma"))
        if sigma < 0:
            raise _invalid("soft_nms_sigma must be non-negative")
        indices, kept = select(similarity, scores_f, max_output, threshold, score_min, sigma)
        valid = np.int32(len(indices))
        if pad:
            indices = np.concatenate([indices, np.zeros(max_output - len(indices), np.int32)])
            kept = kept + [0.0] * (max_output - len(kept))
        if op == "NonMaxSuppressionV4":
            return indices, valid
        if op == "NonMaxSuppressionV5":
            return indices, np.asarray(kept, np.float32).astype(score_dtype), valid
        return indices

    return compute


for _op in ("NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
            "NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps"):
    register_kernel(_op)(_nms_factory)


# ---------------------------------------------------------------- SampleDistortedBoundingBox
def _lrintf(x) -> int:
    """C's lrintf: nearest integer, halves to even (float32 argument)."""
    return int(np.rint(np.float32(x)))


def _random_crop(width, height, min_area_frac, max_area_frac, aspect, rng):
    """TensorFlow's GenerateRandomCrop: (x, y, w, h) or None."""
    if max_area_frac <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_area_frac > max_area_frac:
        return None
    f32 = np.float32
    min_area = f32(min_area_frac) * f32(width) * f32(height)
    max_area = f32(max_area_frac) * f32(width) * f32(height)
    h = _lrintf(np.sqrt(f32(min_area / f32(aspect))))
    max_h = _lrintf(np.sqrt(f32(max_area / f32(aspect))))
    if _lrintf(f32(max_h) * f32(aspect)) > width:
        max_h = int((width + 0.5 - 0.0000001) / float(f32(aspect)))
    max_h = min(max_h, height)
    if h >= max_h:
        h = max_h
    if h < max_h:
        h += rng.uniform(max_h - h + 1)
    w = _lrintf(f32(h) * f32(aspect))
    area = f32(w * h)
    if area < min_area:
        h += 1
        w = _lrintf(f32(h) * f32(aspect))
        area = f32(w * h)
    if area > max_area:
        h -= 1
        w = _lrintf(f32(h) * f32(aspect))
        area = f32(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = rng.uniform(height - h) if h < height else 0
    x = rng.uniform(width - w) if w < width else 0
    return x, y, w, h


def _covers(crop, boxes, min_covered):
    x, y, w, h = crop
    if w * h < 1:
        return False
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area < 1:
            continue
        ix0, iy0, ix1, iy1 = max(x, bx0), max(y, by0), min(x + w, bx1), min(y + h, by1)
        inter = 0 if ix0 > ix1 or iy0 > iy1 else (ix1 - ix0) * (iy1 - iy0)
        if np.float32(inter) / np.float32(area) >= np.float32(min_covered):
            return True
    return False


def _sample_distorted_factory(node):
    a = node.attrs
    gen = philox.GuardedPhiloxRandom(a.get("seed", 0), a.get("seed2", 0))
    aspect_range = [float(v) for v in a.get("aspect_ratio_range", [0.75, 1.33])]
    area_range = [float(v) for v in a.get("area_range", [0.05, 1.0])]
    max_attempts = int(a.get("max_attempts", 100))
    use_image = bool(a.get("use_image_if_no_bounding_boxes", False))
    out_dtype = node.attrs["T"].as_numpy_dtype

    def compute(image_size, bounding_boxes, min_object_covered=None):
        covered = a.get("min_object_covered", 0.1) if min_object_covered is None else \
            float(_scalar(min_object_covered, "min_object_covered"))
        size, boxes = np.asarray(image_size), np.asarray(bounding_boxes, np.float32)
        if size.shape != (3,):
            raise _invalid(f"image_size must be 1-dimensional with 3 elements: {_dims(size.shape)}")
        height, width = int(size[0]), int(size[1])
        if height <= 0 or width <= 0:
            raise _invalid(f"image height and width must be positive, got {height} x {width}")
        if boxes.ndim != 3 or boxes.shape[-1] != 4:
            raise _invalid(f"input boxes must be 3-dimensional [batch, num_boxes, coords]: {_dims(boxes.shape)}")
        if covered < 0:
            raise _invalid(f"min_object_covered must be non-negative: {covered}")
        if len(aspect_range) != 2 or min(aspect_range) <= 0:
            raise _invalid("aspect_ratio_range must have 2 positive values")
        if len(area_range) != 2 or min(area_range) <= 0 or max(area_range) > 1:
            raise _invalid("area_range must have 2 values in (0, 1]")
        if max_attempts <= 0:
            raise _invalid(f"max_attempts must be positive: {max_attempts}")
        flat = boxes.reshape(-1, 4)
        if flat.size and (flat.min() < 0 or flat.max() > 1):
            raise _invalid("All bounding box coordinates must be in [0.0, 1.0]")
        if flat.size and (np.any(flat[:, 0] > flat[:, 2]) or np.any(flat[:, 1] > flat[:, 3])):
            raise _invalid("Bounding boxes must have ymin <= ymax and xmin <= xmax")
        rects = [(int(np.float32(b[1]) * np.float32(width)), int(np.float32(b[0]) * np.float32(height)),
                  int(np.float32(b[3]) * np.float32(width)), int(np.float32(b[2]) * np.float32(height))) for b in flat]
        if not rects:
            if not use_image:
                raise _invalid("No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes "
                               "if you wish to not provide any bounding boxes.")
            rects = [(0, 0, width, height)]
        rng = SimplePhilox(gen.reserve_samples32(4 * max_attempts))
        lo, hi = np.float32(aspect_range[0]), np.float32(aspect_range[1])
        crop = None
        for _ in range(max_attempts):
            aspect = np.float32(rng.rand_float()) * (hi - lo) + lo
            candidate = _random_crop(width, height, area_range[0], area_range[1], aspect, rng)
            if candidate is not None and _covers(candidate, rects, covered):
                crop = candidate
                break
        x, y, w, h = crop if crop is not None else (0, 0, width, height)
        begin = np.array([y, x, 0], np.int64).astype(out_dtype)
        size_out = np.array([h, w, -1], np.int64).astype(out_dtype)  # -1 wraps in unsigned types, as in TensorFlow
        f32 = np.float32
        bbox = np.array([[[f32(y) / f32(height), f32(x) / f32(width), f32(y + h) / f32(height),
                           f32(x + w) / f32(width)]]], np.float32)
        return begin, size_out, bbox

    return compute


register_kernel("SampleDistortedBoundingBox", stateful=True)(_sample_distorted_factory)
register_kernel("SampleDistortedBoundingBoxV2", stateful=True)(_sample_distorted_factory)

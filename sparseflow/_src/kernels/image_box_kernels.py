"""CPU kernels of CropAndResize and its gradient ops, DrawBoundingBoxes(V2) and ExtractGlimpse(V2).

Sampling positions are computed in float32 as TensorFlow's kernels compute them; each box is one
set of whole-array gathers (bilinear: four taps with float32 lerps) or scatter-adds (gradients).
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel

_F32 = np.float32


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _check_boxes(boxes, box_ind, batch):
    boxes, box_ind = np.asarray(boxes, _F32), np.asarray(box_ind)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"boxes must be 2-D [num_boxes, 4]: {_dims(boxes.shape)}")
    if box_ind.ndim != 1 or box_ind.shape[0] != boxes.shape[0]:
        raise _invalid(f"box_index has incompatible shape: {_dims(box_ind.shape)} for {boxes.shape[0]} boxes")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= batch):
        raise errors.OutOfRangeError(None, None, f"box_index has values outside [0, batch_size): batch_size is "
                                                 f"{batch}, box_index {box_ind.tolist()}")
    return boxes, box_ind


def _axis_positions(lo, hi, image_size, crop_size):
    """Float32 source coordinates along one axis of a box: TensorFlow's ``in_y`` / ``in_x``."""
    last = _F32(image_size - 1)
    if crop_size > 1:
        scale = (hi - lo) * last / _F32(crop_size - 1)
        return (lo * last + np.arange(crop_size, dtype=_F32) * scale).astype(_F32)
    return np.full(1, _F32(0.5) * (lo + hi) * last, _F32)


def _taps(pos, size):
    """(valid, lower, upper, lerp) of float32 positions along an axis of ``size`` pixels."""
    valid = (pos >= 0) & (pos <= size - 1)
    safe = np.where(valid, pos, _F32(0))
    lower = np.floor(safe).astype(np.int64)
    upper = np.ceil(safe).astype(np.int64)
    return valid, lower, upper, (safe - lower.astype(_F32)).astype(_F32)


def _nearest(pos):
    """C's roundf: halves away from zero."""
    return (np.sign(pos) * np.floor(np.abs(pos) + _F32(0.5))).astype(np.int64)


@register_kernel("CropAndResize")
def _crop_and_resize(node):
    method = node.attrs.get("method", "bilinear")
    method = method.decode() if isinstance(method, bytes) else method
    extrapolation = _F32(node.attrs.get("extrapolation_value", 0.0))

    def compute(image, boxes, box_ind, crop_size):
        image, crop_size = np.asarray(image), np.asarray(crop_size)
        if image.ndim != 4:
            raise _invalid(f"input image must be 4-D{_dims(image.shape)}")
        b, h, w, d = image.shape
        if h <= 0 or w <= 0:
            raise _invalid("image dimensions must be positive")
        boxes, box_ind = _check_boxes(boxes, box_ind, b)
        if crop_size.shape != (2,):
            raise _invalid(f"crop_size must be 1-D with 2 elements, got {_dims(crop_size.shape)}")
        ch, cw = int(crop_size[0]), int(crop_size[1])
        if ch <= 0 or cw <= 0:
            raise _invalid("crop dimensions must be positive")
        out = np.empty((boxes.shape[0], ch, cw, d), _F32)
        for n, (y1, x1, y2, x2) in enumerate(boxes):
            src = image[box_ind[n]].astype(_F32)
            ys, xs = _axis_positions(y1, y2, h, ch), _axis_positions(x1, x2, w, cw)
            vy, ylo, yhi, yl = _taps(ys, h)
            vx, xlo, xhi, xl = _taps(xs, w)
            if method == "bilinear":
                top, bottom = src[ylo], src[yhi]
                xlc = xl[None, :, None]
                top = top[:, xlo] + (top[:, xhi] - top[:, xlo]) * xlc
                bottom = bottom[:, xlo] + (bottom[:, xhi] - bottom[:, xlo]) * xlc
                crop = top + (bottom - top) * yl[:, None, None]
            else:
                crop = src[np.clip(_nearest(np.where(vy, ys, 0)), 0, h - 1)][:, np.clip(
                    _nearest(np.where(vx, xs, 0)), 0, w - 1)]
            out[n] = np.where(vy[:, None, None] & vx[None, :, None], crop, extrapolation)
        return out

    return compute


def _check_grads(grads, boxes):
    grads = np.asarray(grads, _F32)
    if grads.ndim != 4:
        raise _invalid(f"grads image must be 4-D{_dims(grads.shape)}")
    if grads.shape[0] != np.shape(boxes)[0]:
        raise _invalid(f"boxes and grads have incompatible shape: {np.shape(boxes)[0]} boxes, {grads.shape[0]} crops")
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        raise _invalid("grads dimensions must be positive")
    return grads


@register_kernel("CropAndResizeGradImage")
def _crop_and_resize_grad_image(node):
    method = node.attrs.get("method", "bilinear")
    method = method.decode() if isinstance(method, bytes) else method
    out_dtype = node.attrs["T"].as_numpy_dtype

    def compute(grads, boxes, box_ind, image_size):
        image_size = np.asarray(image_size)
        if image_size.shape != (4,):
            raise _invalid(f"image_size must be 1-D with 4 elements, got {_dims(image_size.shape)}")
        b, h, w, d = (int(v) for v in image_size)
        if h <= 0 or w <= 0:
            raise _invalid("image dimensions must be positive")
        grads = _check_grads(grads, boxes)
        if grads.shape[3] != d:
            raise _invalid(f"image_size and grads are incompatible: depth {d}, grads {_dims(grads.shape)}")
        boxes, box_ind = _check_boxes(boxes, box_ind, b)
        _, ch, cw, _ = grads.shape
        acc = np.zeros((b, h, w, d), np.float64)
        for n, (y1, x1, y2, x2) in enumerate(boxes):
            ys, xs = _axis_positions(y1, y2, h, ch), _axis_positions(x1, x2, w, cw)
            vy, ylo, yhi, yl = _taps(ys, h)
            vx, xlo, xhi, xl = _taps(xs, w)
            g = grads[n] * (vy[:, None, None] & vx[None, :, None])
            target = acc[box_ind[n]]
            if method == "bilinear":
                dtop = (_F32(1) - yl)[:, None, None] * g
                dbottom = yl[:, None, None] * g
                for rows, part in ((ylo, dtop), (yhi, dbottom)):
                    for cols, weight in ((xlo, _F32(1) - xl), (xhi, xl)):
                        contrib = (weight[None, :, None] * part).astype(out_dtype).astype(np.float64)
                        np.add.at(target, (rows[:, None], cols[None, :]), contrib)
            else:
                rows = np.clip(_nearest(np.where(vy, ys, 0)), 0, h - 1)
                cols = np.clip(_nearest(np.where(vx, xs, 0)), 0, w - 1)
                np.add.at(target, (rows[:, None], cols[None, :]), g.astype(out_dtype).astype(np.float64))
        return acc.astype(out_dtype)

    return compute


@register_kernel("CropAndResizeGradBoxes")
def _crop_and_resize_grad_boxes(node):
    def compute(grads, image, boxes, box_ind):
        image = np.asarray(image)
        if image.ndim != 4:
            raise _invalid(f"input image must be 4-D{_dims(image.shape)}")
        b, h, w, d = image.shape
        if h <= 0 or w <= 0:
            raise _invalid("image dimensions must be positive")
        grads = _check_grads(grads, boxes)
        boxes, box_ind = _check_boxes(boxes, box_ind, b)
        _, ch, cw, _ = grads.shape
        out = np.zeros((boxes.shape[0], 4), _F32)
        h_ratio = _F32(h - 1) / _F32(ch - 1) if ch > 1 else _F32(0)
        w_ratio = _F32(w - 1) / _F32(cw - 1) if cw > 1 else _F32(0)
        for n, (y1, x1, y2, x2) in enumerate(boxes):
            src = image[box_ind[n]].astype(_F32)
            ys, xs = _axis_positions(y1, y2, h, ch), _axis_positions(x1, x2, w, cw)
            vy, ylo, yhi, yl = _taps(ys, h)
            vx, xlo, xhi, xl = _taps(xs, w)
            tl, tr = src[ylo][:, xlo], src[ylo][:, xhi]
            bl, br = src[yhi][:, xlo], src[yhi][:, xhi]
            xlc, ylc = xl[None, :, None], yl[:, None, None]
            grad_y = (_F32(1) - xlc) * (bl - tl) + xlc * (br - tr)
            grad_x = (_F32(1) - ylc) * (tr - tl) + ylc * (br - bl)
            mask = vy[:, None, None] & vx[None, :, None]
            gy = np.where(mask, grad_y * grads[n], _F32(0)).astype(np.float64)
            gx = np.where(mask, grad_x * grads[n], _F32(0)).astype(np.float64)
            rows = np.arange(ch, dtype=_F32)[:, None, None]
            cols = np.arange(cw, dtype=_F32)[None, :, None]
            if ch > 1:
                out[n, 0] = np.sum(gy * (_F32(h - 1) - rows * h_ratio))
                out[n, 2] = np.sum(gy * (rows * h_ratio))
            else:
                out[n, 0] = out[n, 2] = np.sum(gy * (0.5 * (h - 1)))
            if cw > 1:
                out[n, 1] = np.sum(gx * (_F32(w - 1) - cols * w_ratio))
                out[n, 3] = np.sum(gx * (cols * w_ratio))
            else:
                out[n, 1] = out[n, 3] = np.sum(gx * (0.5 * (w - 1)))
        return out

    return compute


# ---------------------------------------------------------------- drawing
_COLOR_TABLE = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                         [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def draw_boxes(images, boxes, colors):
    images, boxes = np.asarray(images), np.asarray(boxes, _F32)
    if images.ndim != 4:
        raise _invalid(f"The rank of the images should be 4{_dims(images.shape)}")
    b, h, w, depth = images.shape
    if depth not in (1, 3, 4):
        raise _invalid("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if boxes.ndim != 3 or boxes.shape[0] != b or boxes.shape[2] != 4:
        raise _invalid(f"boxes must be [batch, num_boxes, 4] for a batch of {b}: {_dims(boxes.shape)}")
    given = colors is not None and np.size(colors) > 0
    table = np.array(colors if given else _COLOR_TABLE, np.float32)
    if table.ndim != 2 or table.shape[1] < depth:
        raise _invalid(f"colors must be a 2-D matrix with at least {depth} columns: {_dims(table.shape)}")
    table = table.copy()
    if depth == 1 and not given:  # the default colors draw white boxes on gray images
        table[:, 0] = 1
    canvas = images.copy()
    for i in range(b):
        for k, (y1, x1, y2, x2) in enumerate(boxes[i]):
            color = table[k % len(table), :depth].astype(images.dtype)
            top, bottom = int(_F32(y1) * _F32(h - 1)), int(_F32(y2) * _F32(h - 1))
            left, right = int(_F32(x1) * _F32(w - 1)), int(_F32(x2) * _F32(w - 1))
            if top > bottom or left > right:
                continue  # an inverted box is not drawn
            if top >= h or bottom < 0 or left >= w or right < 0:
                continue  # a box completely outside the image is not drawn
            r0, r1, c0, c1 = max(top, 0), min(bottom, h - 1), max(left, 0), min(right, w - 1)
            if top >= 0:
                canvas[i, top, c0:c1 + 1] = color
            if bottom < h:
                canvas[i, bottom, c0:c1 + 1] = color
            if left >= 0:
                canvas[i, r0:r1 + 1, left] = color
            if right < w:
                canvas[i, r0:r1 + 1, right] = color
    return canvas


register_kernel("DrawBoundingBoxes")(lambda node: lambda images, boxes: draw_boxes(images, boxes, None))
register_kernel("DrawBoundingBoxesV2")(lambda node: draw_boxes)


# ---------------------------------------------------------------- glimpses
@register_kernel("ExtractGlimpse")
@register_kernel("ExtractGlimpseV2")
def _extract_glimpse(node):
    a = node.attrs
    centered, normalized = bool(a.get("centered", True)), bool(a.get("normalized", True))
    noise = a.get("noise", "uniform")
    noise = noise.decode() if isinstance(noise, bytes) else noise
    if not a.get("uniform_noise", True) and noise == "uniform":
        noise = "zero"
    v1 = node.op_type == "ExtractGlimpse"
    rng = np.random.default_rng()

    def compute(images, size, offsets):
        images, size, offsets = np.asarray(images, _F32), np.asarray(size), np.asarray(offsets, _F32)
        if images.ndim != 4:
            raise _invalid(f"input must be a 4-D tensor{_dims(images.shape)}")
        if size.shape != (2,):
            raise _invalid(f"size must be a 1-D tensor of 2 elements: {_dims(size.shape)}")
        b, h, w, c = images.shape
        if offsets.shape != (b, 2):
            raise _invalid(f"offsets must be [batch, 2]: {_dims(offsets.shape)}")
        if noise not in ("uniform", "gaussian", "zero"):
            raise _invalid(f"noise must be 'uniform', 'gaussian' or 'zero', got '{noise}'")
        gh, gw = int(size[0]), int(size[1])
        if gh <= 0 or gw <= 0:
            raise _invalid("glimpse size must be positive")
        out = np.zeros((b, gh, gw, c), _F32)
        for i in range(b):
            y, x = offsets[i]
            if v1 or normalized:
                if normalized:
                    x, y = x * _F32(w), y * _F32(h)
                if centered:
                    x, y = x / _F32(2) + _F32(w / 2.0), y / _F32(2) + _F32(h / 2.0)
                if v1 or centered:  # the offset is the window's center
                    x, y = x - _F32(gw / 2.0), y - _F32(gh / 2.0)
            elif centered:  # V2, pixel offsets from the image's center to the window's corner
                x, y = x + _F32(w / 2.0), y + _F32(h / 2.0)
            ox, oy = int(x), int(y)  # toward zero
            img = images[i]
            if noise == "uniform" and img.size:
                lo, hi = img.min(), img.max()
                out[i] = rng.uniform(lo, hi, (gh, gw, c)).astype(_F32) if hi > lo else lo
            elif noise == "gaussian" and img.size:
                out[i] = rng.normal(img.mean(), img.std(), (gh, gw, c)).astype(_F32)
            rows = np.arange(oy, oy + gh)
            cols = np.arange(ox, ox + gw)
            ry, rx = (rows >= 0) & (rows < h), (cols >= 0) & (cols < w)
            if ry.any() and rx.any():
                out[i][np.ix_(ry, rx)] = img[np.ix_(rows[ry], cols[rx])]
        return out

    return compute

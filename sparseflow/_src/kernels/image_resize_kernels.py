"""CPU kernels of the resize family: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea and
the gradient ops of the first three.

Sampling positions and weights are computed in float32 exactly as TensorFlow's kernels compute them
(its scale ``in / out``, or ``(in - 1) / (out - 1)`` with ``align_corners``; half-pixel centers), so
the forward results are TensorFlow's; the pixels are gathered with NumPy fancy indexing, one array
loop per output pixel (numba), with TensorFlow's float32 arithmetic in its order. The gradients add each
incoming value, times its tap weights, onto the tap's input pixel.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.registry import register_kernel

_F32 = np.float32


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """TensorFlow's ``CalculateResizeScale`` in float32."""
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _check_images(images, size, align_corners, half_pixel_centers):
    """(batch, in_h, in_w, channels, out_h, out_w) after TensorFlow's ``ImageResizerState`` checks."""
    images = np.asarray(images)
    size = np.asarray(size)
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if images.ndim != 4:
        raise _invalid(f"input must be 4-dimensional{_dims(images.shape)}")
    if size.ndim != 1:
        raise _invalid(f"shape_t must be 1-dimensional{_dims(size.shape)}")
    if size.shape[0] != 2:
        raise _invalid(f"shape_t must have two elements{_dims(size.shape)}")
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise _invalid("output dimensions must be positive")
    b, h, w, c = images.shape
    if h <= 0 or w <= 0:
        raise _invalid("input image must be of non-zero size")
    return b, h, w, c, out_h, out_w


# ---------------------------------------------------------------- sampling positions
def _positions(out_size, scale, half_pixel, offset):
    """Float32 source coordinates of each output index (``offset`` -0.5 for bilinear/bicubic, 0 for
    nearest neighbor)."""
    x = np.arange(out_size, dtype=_F32)
    if half_pixel:
        return (x + _F32(0.5)) * scale + _F32(offset)
    return x * scale


def _linear_taps(in_size, out_size, align_corners, half_pixel):
    """(lower, upper, lerp) of each output index: TensorFlow's ``compute_interpolation_weights``."""
    pos = _positions(out_size, resize_scale(in_size, out_size, align_corners), half_pixel, -0.5)
    floor = np.floor(pos)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return lower, upper, (pos - floor).astype(_F32)


def _nearest_index(in_size, out_size, align_corners, half_pixel):
    scale = resize_scale(in_size, out_size, align_corners)
    pos = _positions(out_size, scale, half_pixel, 0.0)
    if align_corners:  # roundf: halves away from zero
        idx = np.sign(pos) * np.floor(np.abs(pos) + _F32(0.5))
    else:
        idx = np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel else idx


_TABLE_SIZE = 1024


def _cubic_table(a: float) -> np.ndarray:
    """TensorFlow's bicubic coefficient table: ``[i, 0]`` the weight at distance ``i/1024``, ``[i, 1]``
    at ``1 + i/1024`` (float32)."""
    x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(_F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = (x.astype(_F32) + _F32(1.0)).astype(np.float64)
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return np.stack([near, far], axis=1).astype(_F32)


_TABLES = {False: _cubic_table(-0.75), True: _cubic_table(-0.5)}


def _cubic_taps(in_size, out_size, align_corners, half_pixel):
    """(indices [out, 4], weights [out, 4] float32) of TensorFlow's ``GetWeightsAndIndices``."""
    scale = resize_scale(in_size, out_size, align_corners)
    pos = _positions(out_size, scale, half_pixel, -0.5)
    loc = np.floor(pos).astype(np.int64)
    delta = (pos - loc.astype(_F32)).astype(_F32)
    offset = np.rint(delta * _F32(_TABLE_SIZE)).astype(np.int64)
    table = _TABLES[half_pixel]
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]], axis=1)
    wanted = loc[:, None] + np.arange(-1, 3)[None, :]
    index = np.clip(wanted, 0, in_size - 1)
    if half_pixel:  # samples outside the image get no weight; the rest are renormalized
        weights = np.where(index == wanted, weights, _F32(0))
        total = weights[:, 0] + weights[:, 1] + weights[:, 2] + weights[:, 3]
        ok = np.abs(total) >= _F32(1000.0) * np.finfo(_F32).tiny
        weights = np.where(ok[:, None], weights * (_F32(1.0) / np.where(ok, total, _F32(1)))[:, None], weights)
    return index, weights.astype(_F32)


def _area_cells(in_size, out_size, align_corners):
    """(indices [out, K], float32 weights [out, K], scale): the input cells each output cell covers and
    the part of each it covers (TensorFlow's ``start_scale`` / 1 / ``end_minus_one_scale``), padded
    with weight 0."""
    scale = resize_scale(in_size, out_size, align_corners)
    spans = []
    for o in range(out_size):
        start, end = _F32(o) * scale, _F32(o + 1) * scale
        cells = []
        for i in range(int(np.floor(start)), int(np.ceil(end))):
            lo, hi = _F32(i), _F32(i + 1)
            if i < start:
                w = scale if hi > end else hi - start
            else:
                w = end - lo if hi > end else _F32(1.0)
            cells.append((min(max(i, 0), in_size - 1), _F32(w)))
        spans.append(cells)
    k = max(len(c) for c in spans)
    index = np.zeros((out_size, k), np.int64)
    weight = np.zeros((out_size, k), _F32)
    for o, cells in enumerate(spans):
        for j, (i, w) in enumerate(cells):
            index[o, j], weight[o, j] = i, w
    return index, weight, scale


@cached_njit(nogil=True)
def _area_loop(x, yi, yw, xi, xw, scale, out):  # pragma: no cover - compiled
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                for c in range(out.shape[3]):
                    total = np.float32(0.0)
                    for k in range(yi.shape[1]):
                        across = np.float32(0.0)
                        for m in range(xi.shape[1]):
                            across += x[b, yi[i, k], xi[j, m], c] * xw[j, m]
                        total += across * yw[i, k]
                    out[b, i, j, c] = total * scale


def _linear_pairs(in_size, out_size, align_corners, half_pixel):
    """(indices [out, 2], float32 weights [out, 2]) of the two bilinear taps of each output index."""
    lower, upper, lerp = _linear_taps(in_size, out_size, align_corners, half_pixel)
    return np.stack([lower, upper], axis=1), np.stack([_F32(1.0) - lerp, lerp], axis=1).astype(_F32)


def scatter_taps(grads, rows, cols, in_h, in_w, out_dtype, product_dtype):
    """The gradient of a separable resize: each incoming value times its row and column tap weights (in
    ``product_dtype``, as TensorFlow's kernels multiply), added onto the tap's input pixel."""
    (yi, yw), (xi, xw) = rows, cols
    g = np.ascontiguousarray(np.asarray(grads), dtype=product_dtype)
    yw, xw = yw.astype(product_dtype), xw.astype(product_dtype)
    b, _, _, c = g.shape
    acc = np.zeros((b, in_h, in_w, c), np.float64)
    _scatter_loop(g, np.ascontiguousarray(yi), yw, np.ascontiguousarray(xi), xw, acc)
    return acc.astype(out_dtype)


@cached_njit(nogil=True)
def _bilinear_loop(x, ylo, yhi, yl, xlo, xhi, xl, out):  # pragma: no cover - compiled
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            t, d, ly = ylo[i], yhi[i], yl[i]
            for j in range(out.shape[2]):
                left, right, lx = xlo[j], xhi[j], xl[j]
                for c in range(out.shape[3]):
                    tl, tr = x[b, t, left, c], x[b, t, right, c]
                    bl, br = x[b, d, left, c], x[b, d, right, c]
                    top = tl + (tr - tl) * lx
                    bottom = bl + (br - bl) * lx
                    out[b, i, j, c] = top + (bottom - top) * ly


@cached_njit(nogil=True)
def _cubic_loop(x, yi, yw, xi, xw, out):  # pragma: no cover - compiled
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                for c in range(out.shape[3]):
                    total = np.float32(0.0)
                    for k in range(4):
                        row = yi[i, k]
                        across = np.float32(0.0)
                        for m in range(4):
                            across += x[b, row, xi[j, m], c] * xw[j, m]
                        total += across * yw[i, k]
                    out[b, i, j, c] = total


@cached_njit(nogil=True)
def _scatter_loop(g, yi, yw, xi, xw, acc):  # pragma: no cover - compiled
    for b in range(g.shape[0]):
        for i in range(g.shape[1]):
            for j in range(g.shape[2]):
                for c in range(g.shape[3]):
                    gv = g[b, i, j, c]
                    for k in range(yi.shape[1]):
                        gy = gv * yw[i, k]
                        for m in range(xi.shape[1]):
                            acc[b, yi[i, k], xi[j, m], c] += np.float64(gy * xw[j, m])


# ---------------------------------------------------------------- forward kernels
def _attrs(node):
    return bool(node.attrs.get("align_corners", False)), bool(node.attrs.get("half_pixel_centers", False))


@register_kernel("ResizeBilinear")
def _resize_bilinear(node):
    align, half = _attrs(node)

    def compute(images, size):
        b, h, w, c, oh, ow = _check_images(images, size, align, half)
        x = np.ascontiguousarray(np.asarray(images), dtype=_F32)
        ylo, yhi, ylerp = _linear_taps(h, oh, align, half)
        xlo, xhi, xlerp = _linear_taps(w, ow, align, half)
        out = np.empty((b, oh, ow, c), _F32)
        _bilinear_loop(x, ylo, yhi, ylerp, xlo, xhi, xlerp, out)
        return out

    return compute


@register_kernel("ResizeNearestNeighbor")
def _resize_nearest(node):
    align, half = _attrs(node)

    def compute(images, size):
        b, h, w, c, oh, ow = _check_images(images, size, align, half)
        images = np.asarray(images)
        return images[:, _nearest_index(h, oh, align, half)][:, :, _nearest_index(w, ow, align, half)]

    return compute


@register_kernel("ResizeBicubic")
def _resize_bicubic(node):
    align, half = _attrs(node)

    def compute(images, size):
        b, h, w, c, oh, ow = _check_images(images, size, align, half)
        x = np.ascontiguousarray(np.asarray(images), dtype=_F32)
        yi, yw = _cubic_taps(h, oh, align, half)
        xi, xw = _cubic_taps(w, ow, align, half)
        out = np.empty((b, oh, ow, c), _F32)
        _cubic_loop(x, yi, yw, xi, xw, out)
        return out

    return compute


@register_kernel("ResizeArea")
def _resize_area(node):
    align = bool(node.attrs.get("align_corners", False))

    def compute(images, size):
        b, h, w, c, oh, ow = _check_images(images, size, align, False)
        yi, yw, sy = _area_cells(h, oh, align)
        xi, xw, sx = _area_cells(w, ow, align)
        out = np.empty((b, oh, ow, c), _F32)
        _area_loop(np.ascontiguousarray(np.asarray(images), dtype=_F32), yi, yw, xi, xw, _F32(1.0) / (sy * sx), out)
        return out

    return compute


# ---------------------------------------------------------------- gradient kernels
def _check_grad(grads, original, align, half, what):
    grads = np.asarray(grads)
    if half and align:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if grads.ndim != 4:
        raise _invalid(f"input_grad must be 4-dimensional{_dims(grads.shape)}")
    if original.ndim != 4:
        raise _invalid(f"original_image must be 4-dimensional{_dims(original.shape)}")
    if original.shape[1] <= 0 or original.shape[2] <= 0:
        raise _invalid("original image must be of non-zero size")
    if grads.shape[0] != original.shape[0] or grads.shape[3] != original.shape[3]:
        raise _invalid(f"{what}: the gradient's batch and channels {_dims(grads.shape)} must match the "
                       f"original image's {_dims(original.shape)}")
    return grads


def _separable_grad(taps_fn, products_in_float32):
    def factory(node):
        align, half = _attrs(node)
        out_dtype = node.output_dtypes[0].as_numpy_dtype
        product_dtype = _F32 if products_in_float32 else out_dtype

        def compute(grads, original_image):
            original = np.asarray(original_image)
            grads = _check_grad(grads, original, align, half, node.op_type)
            _, h, w, _ = original.shape
            rows = taps_fn(h, grads.shape[1], align, half)
            cols = taps_fn(w, grads.shape[2], align, half)
            return scatter_taps(grads, rows, cols, h, w, out_dtype, product_dtype)

        return compute

    return factory


# TensorFlow multiplies a bilinear gradient's weights in float32, a bicubic one's in the output type.
register_kernel("ResizeBilinearGrad")(_separable_grad(_linear_pairs, products_in_float32=True))
register_kernel("ResizeBicubicGrad")(_separable_grad(_cubic_taps, products_in_float32=False))


@register_kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(node):
    align, half = _attrs(node)

    def compute(grads, size):
        grads, size = np.asarray(grads), np.asarray(size)
        if half and align:
            raise _invalid("If half_pixel_centers is True, align_corners must be False.")
        if grads.ndim != 4:
            raise _invalid(f"input must be 4-dimensional{_dims(grads.shape)}")
        if size.ndim != 1 or size.shape[0] != 2:
            raise _invalid(f"shape_t must be 1-dimensional and have two elements{_dims(size.shape)}")
        out_h, out_w = int(size[0]), int(size[1])
        if out_h <= 0 or out_w <= 0:
            raise _invalid("output dimensions must be positive")
        b, h, w, c = grads.shape
        out = np.zeros((b, out_h, out_w, c), grads.dtype)
        if grads.size == 0:
            return out
        ys = _nearest_index(out_h, h, align, half)
        xs = _nearest_index(out_w, w, align, half)
        acc = np.zeros((b, out_h, out_w, c), np.float64 if grads.dtype.kind == "f" else np.int64)
        np.add.at(acc, (slice(None), ys[:, None], xs[None, :]), grads.astype(acc.dtype))
        return acc.astype(grads.dtype)

    return compute

"""CPU kernels of MaxPool, AvgPool, MaxPoolGrad, MaxPoolGradGrad and AvgPoolGrad.

Each kernel loops over the (few) kernel taps and combines strided views of the padded input, so the
work is a handful of whole-array NumPy operations.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.nn_conv_kernels import (
    Window,
    from_nhwc,
    invalid,
    nhwc_attr,
    shape_str,
    to_nhwc,
    work_dtype,
)
from sparseflow._src.kernels.registry import register_kernel


def _lowest(dt):
    return -np.inf if np.issubdtype(dt, np.floating) else np.iinfo(dt).min


def _pool_setup(node, avg):
    fmt = node.attrs.get("data_format", "NHWC")
    ksize = nhwc_attr(node.attrs["ksize"], fmt)
    strides = nhwc_attr(node.attrs["strides"], fmt)
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(None, None, "Pooling is not yet supported on the batch dimension.")
    if ksize[3] != 1 or strides[3] != 1:
        if avg:
            raise errors.UnimplementedError(None, None, "Pooling is not yet supported on the depth dimension.")
        if ksize[1] != 1 or ksize[2] != 1 or strides[1] != 1 or strides[2] != 1:
            raise invalid("MaxPooling supports exactly one of pooling across depth or pooling across "
                          "width/height.")
        if ksize[3] != strides[3]:
            raise invalid("Depthwise max pooling requires the depth window to equal the depth stride.")
    return fmt, ksize


def _input4(x):
    x = np.asarray(x)
    if x.ndim != 4:
        raise invalid(f"input must be 4-dimensional{shape_str(x.shape)}")
    return x


def _window_counts(win):
    """How many real (unpadded) cells each output window covers: ``[out_h, out_w, 1]``."""
    ones = win.pad(np.ones((1, win.in_h, win.in_w, 1), np.float64))
    counts = np.zeros((1, win.out_h, win.out_w, 1))
    for i in range(win.kh):
        for j in range(win.kw):
            counts += win.tap(ones, i, j)
    return counts[0]


@register_kernel("MaxPool")
def _max_pool(node):
    fmt, ksize = _pool_setup(node, avg=False)

    def compute(x):
        x = _input4(x)
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        if ksize[3] != 1:
            if c % ksize[3]:
                raise invalid(f"Depth of input ({c}) is not a multiple of the depth window ({ksize[3]})")
            out = xh.reshape(n, h, w, c // ksize[3], ksize[3]).max(axis=-1)
            return from_nhwc(out, fmt)
        win = Window(node, h, w, ksize[1], ksize[2])
        low = _lowest(x.dtype)
        xp = win.pad(xh, low)
        out = np.full((n, win.out_h, win.out_w, c), low, x.dtype)
        for i in range(win.kh):
            for j in range(win.kw):
                np.maximum(out, win.tap(xp, i, j), out=out)
        return from_nhwc(out, fmt)

    return compute


@register_kernel("AvgPool")
def _avg_pool(node):
    fmt, ksize = _pool_setup(node, avg=True)

    def compute(x):
        x = _input4(x)
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        win = Window(node, h, w, ksize[1], ksize[2])
        wt = work_dtype(x.dtype)
        xp = win.pad(xh.astype(wt, copy=False))
        total = np.zeros((n, win.out_h, win.out_w, c), wt)
        for i in range(win.kh):
            for j in range(win.kw):
                total += win.tap(xp, i, j)
        out = total / _window_counts(win).astype(wt)
        return from_nhwc(out.astype(x.dtype, copy=False), fmt)

    return compute


def _max_pool_argmax(win, x):
    """For every output window of NHWC ``x``: the flat index ``row * pad_w + col`` of its maximum
    in the padded plane (TF's scan order: the first maximum in the window wins)."""
    n, h, w, c = x.shape
    xp = win.pad(x, _lowest(x.dtype))
    rows = np.arange(win.out_h)[:, None] * win.sh
    cols = np.arange(win.out_w)[None, :] * win.sw
    shape = (n, win.out_h, win.out_w, c)
    best = np.full(shape, _lowest(x.dtype), x.dtype)
    arg = np.full(shape, -1, np.int64)
    for i in range(win.kh):
        for j in range(win.kw):
            r, cc = rows + i * win.dh, cols + j * win.dw
            real = ((r >= win.top) & (r < win.top + h) & (cc >= win.left) & (cc < win.left + w))
            v = win.tap(xp, i, j)
            better = (v > best) | ((arg < 0) & real[None, :, :, None])
            best = np.where(better, v, best)
            arg = np.where(better, (r * win.pad_w + cc)[None, :, :, None], arg)
    return arg


def _flat_positions(win, arg, n, c):
    """Indices into the flattened padded input ``[n, pad_h, pad_w, c]`` of each window's maximum."""
    plane = win.pad_h * win.pad_w
    return (np.arange(n)[:, None, None, None] * plane + arg) * c + np.arange(c)


@register_kernel("MaxPoolGrad")
def _max_pool_grad(node):
    fmt, ksize = _pool_setup(node, avg=False)
    if ksize[3] != 1:
        raise invalid("MaxPoolGrad does not support depthwise pooling.")

    def compute(orig_input, orig_output, grad):
        x = to_nhwc(_input4(orig_input), fmt)
        g = to_nhwc(np.asarray(grad), fmt)
        n, h, w, c = x.shape
        win = Window(node, h, w, ksize[1], ksize[2])
        if g.shape != (n, win.out_h, win.out_w, c):
            raise invalid(f"Expected grad shape to be {shape_str((n, win.out_h, win.out_w, c))}, but got "
                          f"{shape_str(g.shape)}")
        flat = _flat_positions(win, _max_pool_argmax(win, x), n, c).ravel()
        plane = win.pad_h * win.pad_w
        dx = np.bincount(flat, weights=g.astype(np.float64).ravel(), minlength=n * plane * c)
        dxp = dx.reshape(n, win.pad_h, win.pad_w, c)
        return from_nhwc(np.ascontiguousarray(win.crop(dxp)).astype(x.dtype), fmt)

    return compute


@register_kernel("MaxPoolGradGrad")
def _max_pool_grad_grad(node):
    fmt, ksize = _pool_setup(node, avg=False)
    if ksize[3] != 1:
        raise invalid("MaxPoolGradGrad does not support depthwise pooling.")

    def compute(orig_input, orig_output, grad):
        x = to_nhwc(_input4(orig_input), fmt)
        g = to_nhwc(_input4(grad), fmt)
        if g.shape != x.shape:
            raise invalid(f"grad must have the shape of orig_input {shape_str(x.shape)}, got "
                          f"{shape_str(g.shape)}")
        n, h, w, c = x.shape
        win = Window(node, h, w, ksize[1], ksize[2])
        arg = _max_pool_argmax(win, x)
        gp = win.pad(g).reshape(-1)
        out = np.where(arg >= 0, gp[_flat_positions(win, np.maximum(arg, 0), n, c)], 0)
        return from_nhwc(np.ascontiguousarray(out).astype(g.dtype, copy=False), fmt)

    return compute


@register_kernel("AvgPoolGrad")
def _avg_pool_grad(node):
    fmt, ksize = _pool_setup(node, avg=True)

    def compute(orig_input_shape, grad):
        dims = [int(d) for d in np.asarray(orig_input_shape).reshape(-1)]
        if len(dims) != 4:
            raise invalid(f"orig_input_shape must be a 4-element vector, got {dims}")
        n, h, w, c = nhwc_attr(dims, fmt)
        g = to_nhwc(np.asarray(grad), fmt)
        win = Window(node, h, w, ksize[1], ksize[2])
        if g.shape != (n, win.out_h, win.out_w, c):
            raise invalid(f"Expected grad shape to be {shape_str((n, win.out_h, win.out_w, c))}, but got "
                          f"{shape_str(g.shape)}")
        wt = work_dtype(g.dtype)
        share = g.astype(wt) / _window_counts(win).astype(wt)
        dxp = np.zeros((n, win.pad_h, win.pad_w, c), wt)
        for i in range(win.kh):
            for j in range(win.kw):
                win.tap(dxp, i, j)[...] += share
        return from_nhwc(np.ascontiguousarray(win.crop(dxp)).astype(g.dtype, copy=False), fmt)

    return compute

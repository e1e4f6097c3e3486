"""CPU kernels of Conv2D and DepthwiseConv2dNative and their BackpropInput / BackpropFilter ops.

Convolutions run as im2col + one matrix multiply: a strided (copy-free) view of the padded input
holds every window, ``[batch, out_rows, out_cols, k_rows, k_cols, depth]``, which is reshaped to
rows of patches and multiplied by the filter. Work happens in NHWC; NCHW is transposed around it.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from sparseflow._src.framework import errors
from sparseflow._src.kernels import parallel_gemm
from sparseflow._src.kernels.registry import register_kernel


def _gemm(a, b):
    """``a @ b`` of 2-D arrays; float32/float64 products of one dtype on the intra-op pool."""
    if a.dtype == b.dtype and a.dtype in (np.float32, np.float64) and a.ndim == b.ndim == 2:
        return parallel_gemm.matmul(a, b)
    return a @ b


def invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def shape_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def to_nhwc(x, fmt):
    return x.transpose(0, 2, 3, 1) if fmt == "NCHW" else x


def from_nhwc(y, fmt):
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2)) if fmt == "NCHW" else y


def nhwc_attr(values, fmt):
    """A 4-element attr (strides, ksize, dilations) reordered to NHWC."""
    v = list(values)
    return [v[0], v[2], v[3], v[1]] if fmt == "NCHW" else v


def work_dtype(dt):
    return np.dtype(np.float32) if dt == np.float16 else dt


class Window:
    """The geometry of a 2-D sliding window over an NHWC input: padding and output size."""

    def __init__(self, node, in_h, in_w, k_h, k_w, window_attr="strides"):
        attrs = node.attrs
        fmt = attrs.get("data_format", "NHWC")
        strides = nhwc_attr(attrs["strides"], fmt)
        dil = nhwc_attr(attrs.get("dilations") or [1, 1, 1, 1], fmt)
        self.sh, self.sw = strides[1], strides[2]
        self.dh, self.dw = dil[1], dil[2]
        self.kh, self.kw = k_h, k_w
        if self.sh <= 0 or self.sw <= 0:
            raise invalid(f"Stride must be > 0, but got {strides}")
        eff_h, eff_w = (k_h - 1) * self.dh + 1, (k_w - 1) * self.dw + 1
        padding = attrs["padding"]
        if padding == "VALID":
            self.top = self.bottom = self.left = self.right = 0
        elif padding == "SAME":
            self.top, self.bottom = _same(in_h, eff_h, self.sh)
            self.left, self.right = _same(in_w, eff_w, self.sw)
        else:
            ex = list(attrs.get("explicit_paddings") or [])
            h_ax, w_ax = (2, 3) if fmt == "NCHW" else (1, 2)
            self.top, self.bottom = ex[2 * h_ax], ex[2 * h_ax + 1]
            self.left, self.right = ex[2 * w_ax], ex[2 * w_ax + 1]
        self.in_h, self.in_w = in_h, in_w
        self.pad_h, self.pad_w = in_h + self.top + self.bottom, in_w + self.left + self.right
        self.out_h = _out_size(in_h, self.pad_h, eff_h, self.sh)
        self.out_w = _out_size(in_w, self.pad_w, eff_w, self.sw)

    def pad(self, x, value=0):
        if not (self.top or self.bottom or self.left or self.right):
            return x
        return np.pad(x, ((0, 0), (self.top, self.bottom), (self.left, self.right), (0, 0)),
                      constant_values=value)

    def tap(self, xp, i, j):
        """The input cells that kernel tap ``(i, j)`` sees, for every output position."""
        if self.out_h == 0 or self.out_w == 0:
            return xp[:, :0, :0]
        r0, c0 = i * self.dh, j * self.dw
        r1, c1 = r0 + (self.out_h - 1) * self.sh + 1, c0 + (self.out_w - 1) * self.sw + 1
        return xp[:, r0:r1:self.sh, c0:c1:self.sw]

    def patches(self, xp):
        """A read-only view ``[n, out_h, out_w, k_h, k_w, c]`` of every window of padded ``xp``."""
        n, _, _, c = xp.shape
        s = xp.strides
        return as_strided(xp, (n, self.out_h, self.out_w, self.kh, self.kw, c),
                          (s[0], s[1] * self.sh, s[2] * self.sw, s[1] * self.dh, s[2] * self.dw, s[3]),
                          writeable=False)

    def crop(self, xp):
        return xp[:, self.top:self.top + self.in_h, self.left:self.left + self.in_w]


def _out_size(in_size, padded, eff, stride):
    num = padded - eff + stride
    out = num // stride if num >= 0 else -((-num) // stride)  # C++ division truncates toward zero
    if out < 0:
        raise invalid(f"Computed output size would be negative: {out} [input_size: {in_size}, "
                      f"effective_filter_size: {eff}, stride: {stride}]")
    return out


def _same(in_size, eff, stride):
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return total // 2, total - total // 2


def check_batch_depth_strides(node, names=("strides", "dilations")):
    fmt = node.attrs.get("data_format", "NHWC")
    for n in names:
        v = node.attrs.get(n)
        if v is None:
            continue
        v = nhwc_attr(v, fmt)
        if v[0] != 1 or v[3] != 1:
            what = "strides" if n == "strides" else "dilations"
            raise invalid(f"Current implementation does not yet support {what} in the batch and depth "
                          f"dimensions.")


def _check4(x, what):
    if x.ndim != 4:
        raise invalid(f"{what} must be 4-dimensional{shape_str(x.shape)}")


def _groups(in_depth, filter_depth):
    if filter_depth == 0 or in_depth % filter_depth:
        raise invalid(f"input depth must be evenly divisible by filter depth: {in_depth} vs {filter_depth}")
    return in_depth // filter_depth


def _group_slices(groups, in_per_group, out_depth):
    out_per_group = out_depth // groups
    for g in range(groups):
        yield (slice(g * in_per_group, (g + 1) * in_per_group),
               slice(g * out_per_group, (g + 1) * out_per_group))


@register_kernel("Conv2D")
def _conv2d(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(x, f):
        x, f = np.asarray(x), np.asarray(f)
        _check4(x, "input")
        _check4(f, "filter")
        dt = x.dtype
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        kh, kw, fin, cout = f.shape
        groups = _groups(c, fin)
        if groups > 1 and cout % groups:
            raise invalid(f"output depth {cout} must be evenly divisible by the number of groups {groups}")
        win = Window(node, h, w, kh, kw)
        wt = work_dtype(dt)
        out = np.zeros((n, win.out_h, win.out_w, cout), wt)
        if out.size and kh * kw * fin:
            pt = win.patches(win.pad(xh.astype(wt, copy=False)))
            rows = n * win.out_h * win.out_w
            fw = f.astype(wt, copy=False)
            if groups == 1:
                out = _gemm(pt.reshape(rows, kh * kw * c), fw.reshape(kh * kw * c, cout)).reshape(out.shape)
            else:
                for gi, go in _group_slices(groups, fin, cout):
                    cols = pt[..., gi].reshape(rows, kh * kw * fin)
                    out[..., go] = (cols @ fw[..., go].reshape(kh * kw * fin, -1)).reshape(
                        n, win.out_h, win.out_w, -1)
        return from_nhwc(out.astype(dt, copy=False), fmt)

    return compute


def _sizes(sizes, fmt, what):
    sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    if len(sizes) != 4:
        raise invalid(f"{what} must be a 4-element vector, got {sizes}")
    return nhwc_attr(sizes, fmt)


@register_kernel("Conv2DBackpropInput")
def _conv2d_backprop_input(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(input_sizes, f, dy):
        f, dy = np.asarray(f), np.asarray(dy)
        n, h, w, c = _sizes(input_sizes, fmt, "input_sizes")
        dt = dy.dtype
        wt = work_dtype(dt)
        kh, kw, fin, cout = f.shape
        groups = _groups(c, fin)
        win = Window(node, h, w, kh, kw)
        dyh = to_nhwc(dy, fmt).astype(wt, copy=False)
        if dyh.shape != (n, win.out_h, win.out_w, cout):
            raise invalid(f"Conv2DBackpropInput: out_backprop has shape {shape_str(dy.shape)}, expected the "
                          f"output shape of the forward convolution")
        rows = n * win.out_h * win.out_w
        if not rows or not c:  # an empty batch or output: nothing flows back
            return from_nhwc(np.zeros((n, h, w, c), dt), fmt)
        cols = np.zeros((rows, kh, kw, c), wt)
        fw = f.astype(wt, copy=False)
        for gi, go in _group_slices(groups, fin, cout):
            part = _gemm(dyh[..., go].reshape(rows, -1), fw[..., go].reshape(kh * kw * fin, -1).T)
            cols[..., gi] = part.reshape(rows, kh, kw, fin)
        cols = cols.reshape(n, win.out_h, win.out_w, kh, kw, c)
        dxp = np.zeros((n, win.pad_h, win.pad_w, c), wt)
        for i in range(kh):
            for j in range(kw):
                win.tap(dxp, i, j)[...] += cols[:, :, :, i, j, :]
        return from_nhwc(np.ascontiguousarray(win.crop(dxp)).astype(dt, copy=False), fmt)

    return compute


@register_kernel("Conv2DBackpropFilter")
def _conv2d_backprop_filter(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(x, filter_sizes, dy):
        x, dy = np.asarray(x), np.asarray(dy)
        kh, kw, fin, cout = [int(s) for s in np.asarray(filter_sizes).reshape(-1)]
        dt = x.dtype
        wt = work_dtype(dt)
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        groups = _groups(c, fin)
        win = Window(node, h, w, kh, kw)
        dyh = to_nhwc(dy, fmt).astype(wt, copy=False)
        rows = n * win.out_h * win.out_w
        df = np.zeros((kh, kw, fin, cout), wt)
        if rows and df.size:
            pt = win.patches(win.pad(xh.astype(wt, copy=False)))
            for gi, go in _group_slices(groups, fin, cout):
                cols = pt[..., gi].reshape(rows, kh * kw * fin)
                df[..., go] = _gemm(cols.T, dyh[..., go].reshape(rows, -1)).reshape(kh, kw, fin, -1)
        return df.astype(dt, copy=False)

    return compute


@register_kernel("Conv2DBackpropInputV2")
def _conv2d_backprop_input_v2(node):
    inner = _conv2d_backprop_input(node)
    return lambda x, f, dy: inner(np.asarray(np.shape(x), np.int32), f, dy)


@register_kernel("Conv2DBackpropFilterV2")
def _conv2d_backprop_filter_v2(node):
    inner = _conv2d_backprop_filter(node)
    return lambda x, f, dy: inner(x, np.asarray(np.shape(f), np.int32), dy)


@register_kernel("DepthwiseConv2dNative")
def _depthwise_conv2d(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(x, f):
        x, f = np.asarray(x), np.asarray(f)
        _check4(x, "input")
        _check4(f, "filter")
        dt = x.dtype
        wt = work_dtype(dt)
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        kh, kw, fc, mult = f.shape
        if fc != c:
            raise invalid(f"input and filter must have the same depth: {c} vs {fc}")
        win = Window(node, h, w, kh, kw)
        xp = win.pad(xh.astype(wt, copy=False))
        fw = f.astype(wt, copy=False)
        out = np.zeros((n, win.out_h, win.out_w, c, mult), wt)
        if out.size:
            for i in range(kh):
                for j in range(kw):
                    out += win.tap(xp, i, j)[..., None] * fw[i, j]
        return from_nhwc(out.reshape(n, win.out_h, win.out_w, c * mult).astype(dt, copy=False), fmt)

    return compute


def _depthwise_dims(f_shape, c):
    kh, kw, fc, mult = f_shape
    if fc != c:
        raise invalid(f"input and filter must have the same depth: {c} vs {fc}")
    return kh, kw, mult


def _depthwise_out_backprop(dy, fmt, win, n, c, mult, wt):
    dyh = to_nhwc(np.asarray(dy), fmt)
    if dyh.shape != (n, win.out_h, win.out_w, c * mult):
        raise invalid(f"out_backprop has shape {shape_str(np.shape(dy))}, expected the output shape of the "
                      f"forward depthwise convolution")
    return dyh.astype(wt, copy=False).reshape(n, win.out_h, win.out_w, c, mult)


@register_kernel("DepthwiseConv2dNativeBackpropInput")
def _depthwise_conv2d_backprop_input(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(input_sizes, f, dy):
        f = np.asarray(f)
        dt = np.asarray(dy).dtype
        wt = work_dtype(dt)
        n, h, w, c = _sizes(input_sizes, fmt, "input_sizes")
        kh, kw, mult = _depthwise_dims(f.shape, c)
        win = Window(node, h, w, kh, kw)
        dyh = _depthwise_out_backprop(dy, fmt, win, n, c, mult, wt)
        fw = f.astype(wt, copy=False)
        dxp = np.zeros((n, win.pad_h, win.pad_w, c), wt)
        if dyh.size:
            for i in range(kh):
                for j in range(kw):
                    win.tap(dxp, i, j)[...] += (dyh * fw[i, j]).sum(axis=-1)
        return from_nhwc(np.ascontiguousarray(win.crop(dxp)).astype(dt, copy=False), fmt)

    return compute


@register_kernel("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_conv2d_backprop_filter(node):
    fmt = node.attrs.get("data_format", "NHWC")
    check_batch_depth_strides(node)

    def compute(x, filter_sizes, dy):
        x = np.asarray(x)
        _check4(x, "input")
        dt = x.dtype
        wt = work_dtype(dt)
        xh = to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        sizes = [int(s) for s in np.asarray(filter_sizes).reshape(-1)]
        if len(sizes) != 4:
            raise invalid(f"filter_sizes must be a 4-element vector, got {sizes}")
        kh, kw, mult = _depthwise_dims(sizes, c)
        win = Window(node, h, w, kh, kw)
        dyh = _depthwise_out_backprop(dy, fmt, win, n, c, mult, wt)
        xp = win.pad(xh.astype(wt, copy=False))
        df = np.zeros((kh, kw, c, mult), wt)
        if dyh.size:
            for i in range(kh):
                for j in range(kw):
                    df[i, j] = np.einsum("nhwc,nhwcm->cm", win.tap(xp, i, j), dyh)
        return df.astype(dt, copy=False)

    return compute

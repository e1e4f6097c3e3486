"""CPU kernels of SpaceToDepth, DepthToSpace, SpaceToBatchND, BatchToSpaceND, SpaceToBatch, BatchToSpace,
ExtractImagePatches and ExtractVolumePatches: reshapes and transposes (and one strided view per patch
tap), so each is a few whole-array NumPy operations.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _fmt(node):
    fmt = node.attrs.get("data_format", "NHWC")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt == "NCHW_VECT_C":
        raise errors.UnimplementedError(None, None, f"{node.op_type}: data_format NCHW_VECT_C is not supported "
                                                    f"on CPU; use NHWC")
    return fmt


def _to_nhwc(x, fmt):
    return x.transpose(0, 2, 3, 1) if fmt == "NCHW" else x


def _from_nhwc(x, fmt):
    return x.transpose(0, 3, 1, 2) if fmt == "NCHW" else x


@register_kernel("SpaceToDepth")
def _space_to_depth(node):
    bs, fmt = int(node.attrs["block_size"]), _fmt(node)

    def compute(x):
        x = np.asarray(x)
        if x.ndim != 4:
            raise _invalid(f"Input rank should be: 4 instead of: {x.ndim}")
        xh = _to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        if h % bs or w % bs:
            raise _invalid(f"Image width {w} and height {h} should be divisible by block_size: {bs}")
        y = xh.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // bs, w // bs,
                                                                                            bs * bs * c)
        return np.ascontiguousarray(_from_nhwc(y, fmt))

    return compute


@register_kernel("DepthToSpace")
def _depth_to_space(node):
    bs, fmt = int(node.attrs["block_size"]), _fmt(node)

    def compute(x):
        x = np.asarray(x)
        if x.ndim != 4:
            raise _invalid(f"Input rank should be: 4 instead of: {x.ndim}")
        xh = _to_nhwc(x, fmt)
        n, h, w, c = xh.shape
        if c % (bs * bs):
            raise _invalid(f"Input depth dimension {c} should be divisible by: {bs * bs}")
        d = c // (bs * bs)
        y = xh.reshape(n, h, w, bs, bs, d).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * bs, w * bs, d)
        return np.ascontiguousarray(_from_nhwc(y, fmt))

    return compute


def _block_and_amounts(x, block, amounts, what):
    block, amounts = np.asarray(block), np.asarray(amounts)
    if block.ndim != 1:
        raise _invalid(f"block_shape must be one-dimensional, but got shape {_dims(block.shape)}")
    m = block.shape[0]
    if amounts.ndim != 2 or amounts.shape != (m, 2):
        raise _invalid(f"{what} should have shape [{m}, 2] instead of {_dims(amounts.shape)}")
    if x.ndim < m + 1:
        raise _invalid(f"input rank should be >= {m + 1} instead of {x.ndim}")
    if np.any(block < 1):
        raise _invalid(f"block_shape must be positive, got {block.tolist()}")
    if np.any(amounts < 0):
        raise _invalid(f"{what} must be non-negative, got {amounts.tolist()}")
    return [int(b) for b in block], [(int(a), int(b)) for a, b in amounts]


def space_to_batch(x, block, paddings):
    x = np.asarray(x)
    block, paddings = _block_and_amounts(x, block, paddings, "paddings")
    m = len(block)
    padded = np.pad(x, [(0, 0)] + paddings + [(0, 0)] * (x.ndim - 1 - m))
    for i, b in enumerate(block):
        if padded.shape[i + 1] % b:
            raise _invalid(f"padded_shape[{i}]={padded.shape[i + 1]} is not divisible by block_shape[{i}]={b}")
    n, rest = padded.shape[0], padded.shape[m + 1:]
    split = [n]
    for i, b in enumerate(block):
        split += [padded.shape[i + 1] // b, b]
    y = padded.reshape(split + list(rest))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, y.ndim))
    out_shape = [n * int(np.prod(block))] + [padded.shape[i + 1] // b for i, b in enumerate(block)] + list(rest)
    return np.ascontiguousarray(y.transpose(perm)).reshape(out_shape)


def batch_to_space(x, block, crops):
    x = np.asarray(x)
    block, crops = _block_and_amounts(x, block, crops, "crops")
    m = len(block)
    prod = int(np.prod(block))
    if x.shape[0] % prod:
        raise _invalid(f"Input batch dimension ({x.shape[0]}) is not divisible by product of block sizes ({prod})")
    n, spatial, rest = x.shape[0] // prod, list(x.shape[1:m + 1]), list(x.shape[m + 1:])
    y = x.reshape(block + [n] + spatial + rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    full = [s * b for s, b in zip(spatial, block)]
    y = np.ascontiguousarray(y.transpose(perm)).reshape([n] + full + rest)
    index = [slice(None)]
    for i, (lo, hi) in enumerate(crops):
        if lo + hi > full[i]:
            raise _invalid(f"Crop amounts {lo} and {hi} exceed the size {full[i]} of dimension {i + 1}")
        index.append(slice(lo, full[i] - hi))
    return np.ascontiguousarray(y[tuple(index)])


register_kernel("SpaceToBatchND")(lambda node: space_to_batch)
register_kernel("BatchToSpaceND")(lambda node: batch_to_space)


def _square(node, fn):
    bs = int(node.attrs["block_size"])

    def compute(x, amounts):
        x = np.asarray(x)
        if x.ndim != 4:
            raise _invalid(f"input must be 4-dimensional{_dims(x.shape)}")
        return fn(x, np.array([bs, bs], np.int64), amounts)

    return compute


register_kernel("SpaceToBatch")(lambda node: _square(node, space_to_batch))
register_kernel("BatchToSpace")(lambda node: _square(node, batch_to_space))


def same_padding(size, k, rate, stride):
    """(before, after) of SAME padding along one axis for a window of ``k`` taps ``rate`` apart."""
    total = max(((size + stride - 1) // stride - 1) * stride + (k - 1) * rate + 1 - size, 0)
    return total // 2, total - total // 2


def extract_patches(x, ksizes, strides, rates, padding):
    """Patches over the spatial axes of ``x`` ([batch, *spatial, depth]): [batch, *out, taps * depth]."""
    spatial = x.shape[1:-1]
    pads, outs = [], []
    for size, k, s, r in zip(spatial, ksizes, strides, rates):
        eff = (k - 1) * r + 1
        if padding == "SAME":
            pads.append(same_padding(size, k, r, s))
            outs.append((size + s - 1) // s)
        else:
            pads.append((0, 0))
            outs.append(max((size - eff + s) // s, 0))
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    taps = []
    for tap in np.ndindex(*ksizes):
        index = [slice(None)]
        for t, s, r, o in zip(tap, strides, rates, outs):
            start = t * r
            index.append(slice(start, start + (o - 1) * s + 1 if o else start, s))
        taps.append(xp[tuple(index) + (slice(None),)])
    return np.concatenate(taps, axis=-1) if taps else np.zeros(x.shape[:1] + tuple(outs) + (0,), x.dtype)


def _patch_attrs(node, rank, names):
    out = []
    for name in names:
        v = [int(a) for a in node.attrs[name]] if name in node.attrs else [1] * rank
        if v[0] != 1 or v[-1] != 1:
            raise errors.UnimplementedError(None, None, f"Only support {name} across space: {name}[0] and "
                                                        f"{name}[{rank - 1}] must be 1, got {v}")
        out.append(v[1:-1])
    padding = node.attrs["padding"]
    return out, padding.decode() if isinstance(padding, bytes) else padding


@register_kernel("ExtractImagePatches")
def _extract_image_patches(node):
    (ksizes, strides, rates), padding = _patch_attrs(node, 4, ("ksizes", "strides", "rates"))

    def compute(images):
        images = np.asarray(images)
        if images.ndim != 4:
            raise _invalid(f"input must be 4-dimensional{_dims(images.shape)}")
        return extract_patches(images, ksizes, strides, rates, padding)

    return compute


@register_kernel("ExtractVolumePatches")
def _extract_volume_patches(node):
    (ksizes, strides), padding = _patch_attrs(node, 5, ("ksizes", "strides"))

    def compute(x):
        x = np.asarray(x)
        if x.ndim != 5:
            raise _invalid(f"input must be 5-dimensional{_dims(x.shape)}")
        return extract_patches(x, ksizes, strides, [1, 1, 1], padding)

    return compute

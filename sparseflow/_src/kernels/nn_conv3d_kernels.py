"""CPU kernels of Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2.

Work happens in NDHWC on the padded input: one matrix multiply per filter tap, over the strided
(copy-free) slice of the input that the tap sees. NCDHW is transposed around it.
"""

from __future__ import annotations

import itertools

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


class _Geometry:
    """Padding, strides, dilations and output sizes of a 3-D window over an NDHWC input."""

    def __init__(self, node, in_spatial, k_spatial):
        attrs = node.attrs
        self.channels_first = attrs.get("data_format", "NDHWC") == "NCDHW"
        axes = [2, 3, 4] if self.channels_first else [1, 2, 3]
        self.strides = [attrs["strides"][a] for a in axes]
        self.dilations = [(attrs.get("dilations") or [1] * 5)[a] for a in axes]
        if any(s <= 0 for s in self.strides):
            raise _invalid(f"Stride must be > 0, but got {attrs['strides']}")
        self.k = list(k_spatial)
        self.pads, self.out = [], []
        for n, k, s, d in zip(in_spatial, self.k, self.strides, self.dilations):
            eff = (k - 1) * d + 1
            if attrs["padding"] == "SAME":
                out = (n + s - 1) // s
                total = max((out - 1) * s + eff - n, 0)
                self.pads.append((total // 2, total - total // 2))
            else:
                # C's truncating division, as TensorFlow's: a window up to a stride larger than the input
                # gives an empty output, not an error.
                out = int((n - eff + s) / s)
                if out < 0:
                    raise _invalid(f"Computed output size would be negative: {n - eff + 1} [input_size: {n}, "
                                   f"effective_filter_size: {eff}, stride: {s}]")
                self.pads.append((0, 0))
            self.out.append(out)

    def to_last(self, x):
        return np.transpose(x, (0, 2, 3, 4, 1)) if self.channels_first else x

    def from_last(self, y):
        return np.ascontiguousarray(np.transpose(y, (0, 4, 1, 2, 3))) if self.channels_first else y

    def taps(self):
        """For each filter tap: its index and the slices of the padded input it reads."""
        for tap in itertools.product(*(range(k) for k in self.k)):
            yield tap, tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                             for t, d, o, s in zip(tap, self.dilations, self.out, self.strides))


def _spatial(x, channels_first):
    return list(x.shape[2:5]) if channels_first else list(x.shape[1:4])


def _check(name, arr, rank=5):
    if arr.ndim != rank:
        raise _invalid(f"{name} must be {rank}-dimensional, got shape [{','.join(map(str, arr.shape))}]")


@register_kernel("Conv3D")
def _conv3d(node):
    def compute(x, f):
        x, f = np.asarray(x), np.asarray(f)
        _check("input", x)
        _check("filter", f)
        channels_first = node.attrs.get("data_format", "NDHWC") == "NCDHW"
        geo = _Geometry(node, _spatial(x, channels_first), f.shape[:3])
        xl = geo.to_last(x)
        if xl.shape[4] != f.shape[3]:
            raise _invalid(f"Input depth must be evenly divisible by filter depth: {xl.shape[4]} vs {f.shape[3]}")
        xp = np.pad(xl, [(0, 0)] + geo.pads + [(0, 0)])
        batch = xl.shape[0]
        out = np.zeros([batch] + geo.out + [f.shape[4]], dtype=np.result_type(x.dtype, np.float32)
                       if x.dtype == np.float16 else x.dtype)
        for tap, sl in geo.taps():
            window = xp[(slice(None),) + sl]
            out += np.tensordot(window, f[tap], axes=([4], [0]))
        return geo.from_last(out.astype(x.dtype))

    return compute


@register_kernel("Conv3DBackpropInputV2")
def _conv3d_backprop_input(node):
    def compute(sizes, f, dy):
        f, dy = np.asarray(f), np.asarray(dy)
        sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if len(sizes) != 5:
            raise _invalid(f"input_sizes must have 5 elements, got {len(sizes)}")
        channels_first = node.attrs.get("data_format", "NDHWC") == "NCDHW"
        shape_last = [sizes[0], sizes[2], sizes[3], sizes[4], sizes[1]] if channels_first else sizes
        geo = _Geometry(node, shape_last[1:4], f.shape[:3])
        dyl = geo.to_last(dy)
        if list(dyl.shape[1:4]) != geo.out:
            raise _invalid(f"Conv3DBackpropInputV2: out_backprop has spatial shape {list(dyl.shape[1:4])}, "
                           f"expected {geo.out} for input {sizes}")
        padded = [n + a + b for n, (a, b) in zip(shape_last[1:4], geo.pads)]
        dxp = np.zeros([shape_last[0]] + padded + [shape_last[4]], dtype=dy.dtype)
        for tap, sl in geo.taps():
            dxp[(slice(None),) + sl] += np.tensordot(dyl, f[tap], axes=([4], [1]))
        crop = tuple(slice(a, a + n) for n, (a, _) in zip(shape_last[1:4], geo.pads))
        return geo.from_last(np.ascontiguousarray(dxp[(slice(None),) + crop]))

    return compute


@register_kernel("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter(node):
    def compute(x, sizes, dy):
        x, dy = np.asarray(x), np.asarray(dy)
        sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if len(sizes) != 5:
            raise _invalid(f"filter_sizes must have 5 elements, got {len(sizes)}")
        channels_first = node.attrs.get("data_format", "NDHWC") == "NCDHW"
        geo = _Geometry(node, _spatial(x, channels_first), sizes[:3])
        xl, dyl = geo.to_last(x), geo.to_last(dy)
        xp = np.pad(xl, [(0, 0)] + geo.pads + [(0, 0)])
        df = np.zeros(sizes, dtype=x.dtype)
        for tap, sl in geo.taps():
            window = xp[(slice(None),) + sl]
            df[tap] = np.tensordot(window, dyl, axes=([0, 1, 2, 3], [0, 1, 2, 3]))
        return df

    return compute

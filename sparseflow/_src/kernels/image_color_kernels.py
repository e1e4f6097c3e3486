"""CPU kernels of RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation and AdjustHue: whole-array NumPy
on the last (RGB) axis, in float32 for half inputs (float64 stays float64), with TensorFlow's formulas.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _work(x):
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _check_rgb(x):
    if x.ndim < 1:
        raise _invalid(f"input must be at least 1D{_dims(x.shape)}")
    if x.shape[-1] != 3:
        raise errors.FailedPreconditionError(None, None, f"input must have 3 channels but input only has "
                                                         f"{x.shape[-1]} channels.")


def rgb_to_hsv(rgb):
    """Hue, saturation, value in [0, 1] of float RGB values on the last axis (TensorFlow's RGBToHSV)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    rng = v - np.minimum(np.minimum(r, g), b)
    one = rgb.dtype.type(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, rng / v, rgb.dtype.type(0))
        norm = (one / rng) * (one / rgb.dtype.type(6))
        two, four = rgb.dtype.type(2.0 / 6.0), rgb.dtype.type(4.0 / 6.0)
        h = np.where(r == v, norm * (g - b), np.where(g == v, norm * (b - r) + two, norm * (r - g) + four))
    h = np.where(rng > 0, h, rgb.dtype.type(0))
    h = np.where(h < 0, h + one, h)
    return np.stack([h, s, v], axis=-1).astype(rgb.dtype)


def hsv_to_rgb(hsv):
    """RGB of hue, saturation, value on the last axis (TensorFlow's HSVToRGB)."""
    t = hsv.dtype.type
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    dh = h * t(6)
    dr = np.clip(np.abs(dh - t(3)) - t(1), t(0), t(1))
    dg = np.clip(-np.abs(dh - t(2)) + t(2), t(0), t(1))
    db = np.clip(-np.abs(dh - t(4)) + t(2), t(0), t(1))
    one_minus_s = t(1) - s
    return np.stack([(one_minus_s + s * dr) * v, (one_minus_s + s * dg) * v, (one_minus_s + s * db) * v],
                    axis=-1).astype(hsv.dtype)


def _colorspace(fn):
    def factory(node):
        def compute(images):
            x = np.asarray(images)
            _check_rgb(x)
            return fn(_work(x)).astype(x.dtype)

        return compute

    return factory


register_kernel("RGBToHSV")(_colorspace(rgb_to_hsv))
register_kernel("HSVToRGB")(_colorspace(hsv_to_rgb))


def _check_adjust(images, factor, what, rgb):
    images = np.asarray(images)
    if images.ndim < 3:
        raise _invalid(f"input must be at least 3-D, got shape{_dims(images.shape)}")
    if np.ndim(factor) != 0:
        raise _invalid(f"{what} must be scalar: {_dims(np.shape(factor))}")
    if rgb and images.shape[-1] != 3:
        raise _invalid(f"input must have 3 channels but instead has {images.shape[-1]} channels.")
    return images


@register_kernel("AdjustContrastv2")
def _adjust_contrast(node):
    def compute(images, contrast_factor):
        images = _check_adjust(images, contrast_factor, "contrast_factor", rgb=False)
        x = images.astype(np.float32)
        if x.size == 0:
            return images.copy()
        mean = x.mean(axis=(-3, -2), keepdims=True, dtype=np.float64).astype(np.float32)
        factor = np.float32(contrast_factor)
        return ((x - mean) * factor + mean).astype(images.dtype)

    return compute


def _hue_value_range(rgb):
    """(hue in [0, 6), min, max) of each RGB triple: TensorFlow's AdjustHue decomposition."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    vmin = np.minimum(np.minimum(r, g), b)
    vmax = np.maximum(np.maximum(r, g), b)
    rng = vmax - vmin
    safe = np.where(rng > 0, rng, np.float32(1))
    h = np.where(r == vmax, (g - b) / safe, np.where(g == vmax, np.float32(2) + (b - r) / safe,
                                                     np.float32(4) + (r - g) / safe))
    h = np.where(rng > 0, h, np.float32(0))
    return np.where(h < 0, h + np.float32(6), h).astype(np.float32), vmin, vmax


def _from_hue_value_range(h, vmin, vmax):
    category = np.floor(h).astype(np.int64)
    ratio = h - category.astype(np.float32)
    ratio = np.where(category % 2 == 0, ratio, np.float32(1) - ratio)
    vmid = vmin + ratio * (vmax - vmin)
    table = {0: (vmax, vmid, vmin), 1: (vmid, vmax, vmin), 2: (vmin, vmax, vmid), 3: (vmin, vmid, vmax),
             4: (vmid, vmin, vmax), 5: (vmax, vmin, vmid)}
    out = []
    for ch in range(3):
        value = np.zeros_like(h)
        for k, channels in table.items():
            value = np.where(category == k, channels[ch], value)
        out.append(value)
    return np.stack(out, axis=-1)


@register_kernel("AdjustHue")
def _adjust_hue(node):
    def compute(images, delta):
        images = _check_adjust(images, delta, "delta", rgb=True)
        x = images.astype(np.float32)
        h, vmin, vmax = _hue_value_range(x)
        h = np.mod(h + np.float32(delta) * np.float32(6), np.float32(6)).astype(np.float32)
        h = np.where(h >= 6, np.float32(0), h)
        return _from_hue_value_range(h, vmin, vmax).astype(images.dtype)

    return compute


@register_kernel("AdjustSaturation")
def _adjust_saturation(node):
    def compute(images, scale):
        images = _check_adjust(images, scale, "scale", rgb=True)
        x = images.astype(np.float32)
        h, vmin, vmax = _hue_value_range(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(vmax > 0, (vmax - vmin) / vmax, np.float32(0))
        s = np.clip(s * np.float32(scale), np.float32(0), np.float32(1))
        vmin = vmax - s * vmax  # value stays; the new saturation sets the new minimum
        return _from_hue_value_range(h, vmin.astype(np.float32), vmax).astype(images.dtype)

    return compute

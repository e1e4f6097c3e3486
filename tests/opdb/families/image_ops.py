"""``tf.image`` color ops (RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation, AdjustHue) and the
TF1 composites built on array ops: flips, rotations, transposes, crops and pads, seeded random flips
and crops (TensorFlow's draws, exactly), dtype conversion, standardization, the adjust_* / random_*
distortions and color space conversions.

3-D and 4-D images, integer and float images, unknown shapes (the composites' Assert paths), empty
batches, gray and out-of-range pixels, bad offsets and fractions.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, regular

_F = ("float32", "float64")
_IMG_TYPES = ("uint8", "int32", "float32", "float64")
_SEED = 3
_ROT_UNKNOWN_RANK = "TensorFlow fails (InvalidArgumentError) rotating a 3-D image of unknown rank by an odd k; " \
                    "sparseflow rotates it"


def pixels(*shape, seed=0):
    """Distinct values in [0, 1) for floats and [0, MAX] for integers, no two channels of a pixel equal."""

    def make(dtype):
        n = int(np.prod(shape))
        u = np.mod((np.arange(n) + 1 + 7 * seed) * 0.6180339887498949, 1.0).reshape(shape)
        if dtype in ("float16", "float32", "float64"):
            return (0.05 + 0.9 * u).astype(dtype)
        top = 255 if dtype == "uint8" else 2 ** 31 - 1
        return np.round(u * top).astype(dtype)

    return T(make)


def _api(fn_name, **fixed):
    def build(tf, **kw):
        return getattr(tf.image, fn_name)(**kw, **fixed)

    return build


def _one(name, fn_name, op_type, samples, dtypes=_F, **entry_kw):
    return OpEntry(op_type, samples, name=name, build=_api(fn_name), dtypes=dtypes, **entry_kw)


def _img(name, x, **attrs):
    return Sample(name, {"image": x}, attrs)


_HSV = [
    Sample("pixels", {"images": pixels(2, 3, 3)}, fd=True),
    Sample("gray_and_black", {"images": T([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, 0.2, 0.2]])}, grad=False),
    Sample("empty", {"images": empty(0, 3)}),
    Sample("two_channels", {"images": regular(2, 2)}, grad=False),
]

ENTRIES = [
    OpEntry("RGBToHSV", _HSV, dtypes=("float16", "float32", "float64"), rtol={"float32": 1e-5, "float64": 1e-12}),
    OpEntry("HSVToRGB", _HSV[:1] + [Sample("hue_edges", {"images": T([[0.0, 1.0, 1.0], [1.0, 0.5, 0.5],
                                                                       [0.999, 0.3, 0.7]])})] + _HSV[2:],
            dtypes=("float16", "float32", "float64"), differs={
                "*:grad": "TensorFlow declares HSVToRGB not differentiable (None); sparseflow differentiates it "
                          "piecewise (checked by finite differences here)"}),
    OpEntry("AdjustContrastv2", [
        Sample("batch", {"images": pixels(2, 3, 4, 3), "contrast_factor": np.float32(1.7)}),
        Sample("rank3", {"images": pixels(3, 2, 2), "contrast_factor": np.float32(0.25)}),
        Sample("empty", {"images": empty(0, 2, 2, 3), "contrast_factor": np.float32(2.0)}),
        Sample("rank2", {"images": pixels(3, 2), "contrast_factor": np.float32(2.0)}, grad=False),
        Sample("factor_vector", {"images": pixels(2, 2, 1), "contrast_factor": np.float32([1, 2])}, grad=False),
    ], dtypes=("float16", "float32"), rtol={"float16": 1e-2, "float32": 1e-5}),
    OpEntry("AdjustSaturation", [
        Sample("batch", {"images": pixels(2, 3, 4, 3), "scale": np.float32(1.6)}),
        Sample("desaturate", {"images": pixels(2, 2, 3), "scale": np.float32(0.3)}),
        Sample("gray", {"images": T(np.full((2, 2, 3), 0.4)), "scale": np.float32(2.0)}),
        Sample("empty", {"images": empty(0, 2, 3), "scale": np.float32(2.0)}),
        Sample("not_rgb", {"images": pixels(2, 2, 2), "scale": np.float32(2.0)}),
    ], dtypes=("float16", "float32"), rtol={"float16": 1e-2, "float32": 1e-5}),
    OpEntry("AdjustHue", [
        Sample("batch", {"images": pixels(2, 3, 4, 3), "delta": np.float32(0.2)}),
        Sample("negative", {"images": pixels(2, 2, 3), "delta": np.float32(-0.45)}),
        Sample("full_turn", {"images": pixels(2, 2, 3), "delta": np.float32(1.0)}),
        Sample("gray", {"images": T(np.full((2, 2, 3), 0.4)), "delta": np.float32(0.3)}),
        Sample("empty", {"images": empty(0, 2, 3), "delta": np.float32(0.1)}),
    ], dtypes=("float16", "float32"), rtol={"float16": 1e-2, "float32": 1e-5}),
    # ---------------------------------------------------------------- geometry
    _one("flip_left_right", "flip_left_right", "ReverseV2", [
        _img("rank3", regular(2, 3, 2)), _img("batch", regular(2, 2, 3, 1)), _img("empty_batch", empty(0, 2, 2, 1))],
         dtypes=_IMG_TYPES),
    _one("flip_up_down", "flip_up_down", "ReverseV2", [
        _img("rank3", regular(2, 3, 2)), _img("batch", regular(2, 2, 3, 1)), _img("rank2", regular(2, 2))],
         dtypes=_IMG_TYPES),
    _one("rot90", "rot90", "If", [
        _img("k1", regular(2, 3, 1)), _img("k2_batch", regular(2, 2, 3, 1), k=2), _img("k3", regular(3, 2, 2), k=3),
        _img("k_negative", regular(2, 3, 1), k=-1), _img("k4", regular(2, 3, 1), k=4)], dtypes=_IMG_TYPES,
         differs={f"{k}|*|rank": _ROT_UNKNOWN_RANK for k in ("k1", "k3", "k_negative")}),
    _one("transpose", "transpose", "Transpose", [
        _img("rank3", regular(2, 3, 2)), _img("batch", regular(2, 2, 3, 1))], dtypes=_IMG_TYPES, differs={
            "rank3|*|rank": "TensorFlow fails (InvalidArgumentError) transposing a 3-D image of unknown rank; "
                            "sparseflow transposes it"}),
    _one("central_crop", "central_crop", "Slice", [
        _img("half", regular(4, 6, 1), central_fraction=0.5), _img("batch", regular(2, 5, 5, 2), central_fraction=0.5),
        _img("small", regular(3, 3, 1), central_fraction=0.1)], dtypes=_IMG_TYPES),
    _one("crop_to_bounding_box", "crop_to_bounding_box", "Slice", [
        _img("rank3", regular(4, 5, 2), offset_height=1, offset_width=2, target_height=2, target_width=3),
        _img("batch", regular(2, 3, 3, 1), offset_height=0, offset_width=1, target_height=3, target_width=2),
        _img("too_big", regular(3, 3, 1), offset_height=1, offset_width=0, target_height=3, target_width=2)],
         dtypes=_IMG_TYPES),
    _one("pad_to_bounding_box", "pad_to_bounding_box", "Pad", [
        _img("rank3", regular(2, 3, 2), offset_height=1, offset_width=2, target_height=4, target_width=6),
        _img("batch", regular(2, 2, 2, 1), offset_height=0, offset_width=1, target_height=3, target_width=3),
        _img("too_small", regular(3, 3, 1), offset_height=1, offset_width=0, target_height=3, target_width=3)],
         dtypes=_IMG_TYPES),
    _one("resize_image_with_crop_or_pad", "resize_image_with_crop_or_pad", "Slice", [
        _img("crop_both", regular(5, 6, 1), target_height=3, target_width=2),
        _img("pad_both", regular(2, 3, 2), target_height=5, target_width=6),
        _img("crop_and_pad_batch", regular(2, 5, 2, 1), target_height=3, target_width=4)], dtypes=_IMG_TYPES),
    _one("random_flip_left_right", "random_flip_left_right", "RandomUniform", [
        _img("rank3", regular(2, 3, 2), seed=_SEED), _img("rank3_other_seed", regular(2, 3, 2), seed=11),
        _img("batch", regular(6, 2, 3, 1), seed=_SEED)], dtypes=_IMG_TYPES, stateful=True),
    _one("random_flip_up_down", "random_flip_up_down", "RandomUniform", [
        _img("rank3", regular(2, 3, 2), seed=5), _img("batch", regular(6, 2, 3, 1), seed=_SEED)],
         dtypes=_IMG_TYPES, stateful=True),
    OpEntry("RandomUniformInt", [
        Sample("matrix", {"value": regular(5, 6)}, {"size": [2, 3], "seed": _SEED}),
        Sample("image", {"value": regular(4, 4, 3)}, {"size": [3, 2, 3], "seed": 7}),
        Sample("too_big", {"value": regular(2, 2)}, {"size": [3, 1], "seed": 7}),
    ], name="random_crop", build=lambda tf, value, **kw: tf.random_crop(value, **kw), dtypes=_IMG_TYPES,
        stateful=True),
    # ---------------------------------------------------------------- color and intensity
    _one("convert_image_dtype_to_float", "convert_image_dtype", "Cast", [
        _img("to_float32", pixels(2, 2, 3), dtype="float32"), _img("to_float64", pixels(2, 2, 3), dtype="float64")],
         dtypes=("uint8", "int32", "float32", "float64")),
    _one("convert_image_dtype_to_int", "convert_image_dtype", "Cast", [
        _img("to_uint8", pixels(2, 2, 3), dtype="uint8"), _img("to_uint8_saturate", pixels(2, 2, 3), dtype="uint8",
                                                               saturate=True),
        _img("to_int32", pixels(2, 2, 3), dtype="int32"), _img("to_uint16", pixels(2, 2, 3), dtype="uint16")],
         dtypes=("uint8", "int32", "float32", "float64")),
    _one("per_image_standardization", "per_image_standardization", "Mean", [
        _img("rank3", pixels(3, 4, 2)), _img("batch", pixels(2, 2, 3, 3)),
        _img("constant", T(np.full((2, 2, 1), 0.5))), _img("empty_batch", empty(0, 2, 2, 1))],
         dtypes=("uint8", "float32", "float64"), grad_rtol=1e-6, differs={
             "constant:grad": "a constant image has stddev 0: TensorFlow's SqrtGrad kernel returns 0 for a zero "
                              "incoming gradient, sparseflow's Sqrt gradient (g * 0.5 / y) gives NaN"}),
    _one("adjust_brightness", "adjust_brightness", "AddV2", [
        _img("up", pixels(2, 3, 3), delta=0.2), _img("down_batch", pixels(2, 2, 2, 3), delta=-0.3)],
         dtypes=("uint8", "int32", "float32", "float64")),
    OpEntry("AdjustContrastv2", [
        Sample("up", {"images": pixels(3, 3, 3)}, {"contrast_factor": 1.8}),
        Sample("down_batch", {"images": pixels(2, 2, 2, 3)}, {"contrast_factor": 0.4})],
        name="adjust_contrast", build=_api("adjust_contrast"), dtypes=("uint8", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-5}),
    _one("adjust_gamma", "adjust_gamma", "Pow", [
        _img("gamma2", pixels(2, 3, 3), gamma=2.0), _img("gain", pixels(2, 2, 3), gamma=0.5, gain=1.5),
        _img("negative", pixels(2, 2, 1), gamma=-1.0)], dtypes=("uint8", "float32", "float64"),
         rtol={"float32": 1e-5, "float64": 1e-6}, grad_rtol=1e-6),
    OpEntry("AdjustHue", [
        Sample("shift", {"image": pixels(2, 3, 3)}, {"delta": 0.3}),
        Sample("batch", {"image": pixels(2, 2, 2, 3)}, {"delta": -0.2})],
        name="adjust_hue", build=_api("adjust_hue"), dtypes=("uint8", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-5}),
    OpEntry("AdjustSaturation", [
        Sample("more", {"image": pixels(2, 3, 3)}, {"saturation_factor": 1.5}),
        Sample("less_batch", {"image": pixels(2, 2, 2, 3)}, {"saturation_factor": 0.5})],
        name="adjust_saturation", build=_api("adjust_saturation"), dtypes=("uint8", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-5}),
    _one("random_brightness", "random_brightness", "RandomUniform", [
        _img("seeded", pixels(2, 3, 3), max_delta=0.3, seed=_SEED)], dtypes=("uint8", "float32"), stateful=True),
    _one("random_contrast", "random_contrast", "RandomUniform", [
        _img("seeded", pixels(2, 3, 3), lower=0.2, upper=1.8, seed=_SEED)], dtypes=("uint8", "float32"),
         stateful=True, rtol={"float32": 1e-5}),
    _one("random_hue", "random_hue", "RandomUniform", [
        _img("seeded", pixels(2, 3, 3), max_delta=0.4, seed=_SEED)], dtypes=("uint8", "float32"), stateful=True,
         rtol={"float32": 1e-5}),
    _one("random_saturation", "random_saturation", "RandomUniform", [
        _img("seeded", pixels(2, 3, 3), lower=0.3, upper=1.7, seed=_SEED)], dtypes=("uint8", "float32"),
         stateful=True, rtol={"float32": 1e-5}),
    OpEntry("MatMul", [
        Sample("rank3", {"images": pixels(2, 3, 3)}), Sample("batch", {"images": pixels(2, 2, 2, 3)})],
        name="rgb_to_grayscale", build=_api("rgb_to_grayscale"), dtypes=("uint8", "float32", "float64"),
        rtol={"float32": 1e-5, "float64": 1e-6}, grad_rtol=1e-6),
    OpEntry("Tile", [
        Sample("rank3", {"images": pixels(2, 3, 1)}), Sample("batch", {"images": pixels(2, 2, 2, 1)}),
        Sample("not_gray", {"images": pixels(2, 2, 3)})], name="grayscale_to_rgb", build=_api("grayscale_to_rgb"),
        dtypes=("uint8", "float32", "float64")),
]

for _fn in ("rgb_to_yuv", "yuv_to_rgb", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_hsv", "hsv_to_rgb"):
    ENTRIES.append(OpEntry("MatMul" if "hsv" not in _fn else ("RGBToHSV" if _fn == "rgb_to_hsv" else "HSVToRGB"), [
        Sample("rank3", {"images": pixels(2, 3, 3)}), Sample("batch", {"images": pixels(2, 2, 2, 3)})],
        name=_fn, build=_api(_fn), dtypes=_F, rtol={"float32": 1e-5, "float64": 1e-7},
        differs={"*:grad": "TensorFlow declares HSVToRGB not differentiable"} if _fn == "hsv_to_rgb" else {}))


def _unknown_rank_variant(entry):
    """Splits ``entry``: its samples at known ranks, and an "If" entry at unknown rank (the composite
    chooses the 3-D or 4-D branch at run time, inside a cond)."""
    import dataclasses

    known = [dataclasses.replace(x, modes=("const", "static", "dims")) for x in entry.samples]
    unknown = [dataclasses.replace(x, modes=("rank",)) for x in entry.samples]
    return [dataclasses.replace(entry, samples=known),
            dataclasses.replace(entry, op_type="If", name=entry.id + "_unknown_rank", samples=unknown)]


ENTRIES = [part for e in ENTRIES for part in (
    _unknown_rank_variant(e) if e.id in ("flip_left_right", "flip_up_down", "transpose", "random_flip_left_right",
                                         "random_flip_up_down") else [e])]

"""Convolutions, pooling, batch normalization and LRN, with their gradient ops.

SAME and VALID padding, strides, dilations, NCHW where TensorFlow's CPU kernels take it, empty
batches and 1 x 1 images, windows larger than the image, bad strides.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular

_FLOATS = ("float16", "float32", "float64")
# float16 convolutions: TensorFlow accumulates in float16 in places, sparseflow in float32 (1-2 ulp apart).
_SAME1 = {"strides": [1, 1, 1, 1], "padding": "SAME"}
_RTOL = {"float16": 1e-2, "float32": 1e-5}
# TensorFlow's CPU kernels of an empty batch: filter gradients are uninitialized memory, shapes are wrong.
_EMPTY_GARBAGE = "TensorFlow's kernels return uninitialized memory or wrong shapes for an empty batch; " \
                 "sparseflow returns zeros of the right shape"
_ABORTED = "TensorFlow's oneDNN kernel raises AbortedError for a mismatched out_backprop; sparseflow " \
           "InvalidArgumentError naming both shapes"


def _conv(name, x, f, fd=True, **attrs):
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME", **attrs}
    return Sample(name, {"input": x, "filter": f}, attrs, fd=fd)


_CONV = [
    _conv("same", regular(1, 4, 4, 2), regular(3, 3, 2, 3, seed=1)),
    _conv("valid_strided", regular(2, 5, 5, 1), regular(2, 2, 1, 2, seed=1), strides=[1, 2, 2, 1], padding="VALID"),
    _conv("dilated", regular(1, 5, 5, 1), regular(2, 2, 1, 1, seed=1), dilations=[1, 2, 2, 1]),
    _conv("one_pixel", regular(1, 1, 1, 2), regular(1, 1, 2, 2, seed=1)),
    _conv("empty_batch", empty(0, 4, 4, 2), regular(3, 3, 2, 3, seed=1), fd=False),
    _conv("filter_too_big_valid", regular(1, 2, 2, 1), regular(3, 3, 1, 1), fd=False, padding="VALID"),
    _conv("channel_mismatch", regular(1, 4, 4, 2), regular(3, 3, 3, 1), fd=False),
    _conv("zero_stride", regular(1, 4, 4, 1), regular(1, 1, 1, 1), fd=False, strides=[1, 0, 1, 1]),
]

ENTRIES = [
    OpEntry("Conv2D", _CONV + [
        _conv("explicit_padding", regular(1, 3, 3, 1), regular(2, 2, 1, 1, seed=1), padding="EXPLICIT",
              explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0])], dtypes=_FLOATS, rtol=_RTOL,
        differs={"dilated|float64:grad": "TensorFlow has no CPU kernel for the float64 gradient of a dilated "
                                         "convolution; sparseflow's works",
                 "empty_batch|float32": _EMPTY_GARBAGE, "empty_batch|*|const:grad": _EMPTY_GARBAGE,
                 "filter_too_big_valid|*|dims": "a VALID window larger than the image: TensorFlow's oneDNN "
                                                "kernel returns the input's size, sparseflow an empty output",
                 "filter_too_big_valid|*|rank": "as for dims"}),
    OpEntry("DepthwiseConv2dNative", [
        _conv("same", regular(1, 4, 4, 2), regular(3, 3, 2, 2, seed=1)),
        _conv("valid_strided", regular(2, 5, 5, 1), regular(2, 2, 1, 3, seed=1), strides=[1, 2, 2, 1],
              padding="VALID"),
        _conv("one_pixel", regular(1, 1, 1, 2), regular(1, 1, 2, 1, seed=1)),
        _conv("empty_batch", empty(0, 3, 3, 2), regular(2, 2, 2, 1, seed=1), fd=False),
        _conv("channel_mismatch", regular(1, 4, 4, 2), regular(3, 3, 3, 1), fd=False),
    ], dtypes=_FLOATS, rtol=_RTOL, differs={"empty_batch:grad": _EMPTY_GARBAGE}),
]

for _op, _sizes_arg, _other in [("Conv2DBackpropInput", "input_sizes", "filter"),
                                ("Conv2DBackpropFilter", "filter_sizes", "input")]:
    _filter_shape, _input_shape = (3, 3, 2, 3), (1, 4, 4, 2)
    _sizes = _input_shape if _sizes_arg == "input_sizes" else _filter_shape
    _given = _filter_shape if _other == "filter" else _input_shape
    ENTRIES.append(OpEntry(_op, [
        Sample("same", {_sizes_arg: i32(_sizes), _other: regular(*_given), "out_backprop": regular(1, 4, 4, 3, seed=2)},
               {"strides": [1, 1, 1, 1], "padding": "SAME"}, fd=True),
        Sample("valid_strided", {_sizes_arg: i32(_sizes), _other: regular(*_given),
                                 "out_backprop": regular(1, 1, 1, 3, seed=2)},
               {"strides": [1, 2, 2, 1], "padding": "VALID"}, fd=True),
        Sample("empty_batch", {_sizes_arg: i32((0,) + _sizes[1:]) if _sizes_arg == "input_sizes" else i32(_sizes),
                               _other: regular(*_given) if _other == "filter" else empty(0, 4, 4, 2),
                               "out_backprop": empty(0, 4, 4, 3)}, {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        Sample("backprop_mismatch", {_sizes_arg: i32(_sizes), _other: regular(*_given),
                                     "out_backprop": regular(1, 3, 3, 3)}, _SAME1),
    ], dtypes=_FLOATS, rtol=_RTOL, differs={"backprop_mismatch": _ABORTED, "empty_batch": _EMPTY_GARBAGE}))

for _op, _sizes_arg, _other in [("DepthwiseConv2dNativeBackpropInput", "input_sizes", "filter"),
                                ("DepthwiseConv2dNativeBackpropFilter", "filter_sizes", "input")]:
    _sizes = (1, 4, 4, 2) if _sizes_arg == "input_sizes" else (3, 3, 2, 2)
    _given = (3, 3, 2, 2) if _other == "filter" else (1, 4, 4, 2)
    ENTRIES.append(OpEntry(_op, [
        Sample("same", {_sizes_arg: i32(_sizes), _other: regular(*_given), "out_backprop": regular(1, 4, 4, 4, seed=2)},
               {"strides": [1, 1, 1, 1], "padding": "SAME"}, fd=True),
        Sample("empty_batch", {_sizes_arg: i32((0, 4, 4, 2)) if _sizes_arg == "input_sizes" else i32(_sizes),
                               _other: regular(*_given) if _other == "filter" else empty(0, 4, 4, 2),
                               "out_backprop": empty(0, 4, 4, 4)}, {"strides": [1, 1, 1, 1], "padding": "SAME"}),
        Sample("backprop_mismatch", {_sizes_arg: i32(_sizes), _other: regular(*_given),
                                     "out_backprop": regular(1, 3, 3, 4)}, _SAME1),
    ], dtypes=_FLOATS, rtol=_RTOL, differs={"backprop_mismatch": _ABORTED, "empty_batch": _EMPTY_GARBAGE}))


def _pool(name, x, fd=True, **attrs):
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID", **attrs}
    return Sample(name, {"value": x}, attrs, fd=fd)


_POOL = [
    _pool("valid", regular(1, 4, 4, 2)),
    _pool("same_odd", regular(2, 5, 5, 1), padding="SAME"),
    _pool("overlapping", regular(1, 4, 4, 1), ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1], padding="SAME"),
    _pool("one_pixel", regular(1, 1, 1, 3), ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1]),
    _pool("empty_batch", empty(0, 4, 4, 2), fd=False),
    _pool("window_too_big", regular(1, 2, 2, 1), fd=False, ksize=[1, 3, 3, 1]),
    _pool("batch_window", regular(2, 4, 4, 1), fd=False, ksize=[2, 2, 2, 1]),
]
ENTRIES += [
    OpEntry("AvgPool", _POOL, dtypes=_FLOATS),
    OpEntry("MaxPool", [Sample(s.name, {"input": s.args["value"]}, s.attrs, fd=s.fd) for s in _POOL] + [
        Sample("ties", {"input": np.ones((1, 2, 2, 1), np.float32)}, {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1],
                                                                      "padding": "VALID"})],
        dtypes=("float16", "float32", "float64", "int32", "int64", "uint8"),
        differs={"window_too_big|float32|dims": "TensorFlow's oneDNN max pool raises AbortedError for a window "
                                                "larger than the image; sparseflow returns an empty output",
                 "window_too_big|float32|rank": "as for dims",
                 "window_too_big|*|dims:grad": "TensorFlow's MaxPoolGrad of an empty output leaves the input "
                                               "gradient uninitialized; sparseflow's is zeros",
                 "window_too_big|*|rank:grad": "as for dims"}),
    OpEntry("AvgPoolGrad", [
        Sample("valid", {"orig_input_shape": i32([1, 4, 4, 2]), "grad": regular(1, 2, 2, 2)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}, fd=True),
        Sample("same", {"orig_input_shape": i32([1, 3, 3, 1]), "grad": regular(1, 3, 3, 1)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}, fd=True),
        Sample("empty_batch", {"orig_input_shape": i32([0, 4, 4, 2]), "grad": empty(0, 2, 2, 2)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
        Sample("grad_mismatch", {"orig_input_shape": i32([1, 4, 4, 2]), "grad": regular(1, 3, 3, 2)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
    ], dtypes=_FLOATS, differs={"grad_mismatch": "TensorFlow's AvgPoolGrad does not check the gradient's shape "
                                                 "(reads past it); sparseflow raises InvalidArgumentError"}),
]


def _max_pool_grad_build(op):
    def build(tf, orig_input, grad, **attrs):
        orig_output = tf.nn.max_pool(orig_input, **attrs)
        return getattr(tf.raw_ops, op)(orig_input=orig_input, orig_output=orig_output, grad=grad, **attrs)

    return build


for _op in ("MaxPoolGrad", "MaxPoolGradGrad"):
    _g = (1, 2, 2, 2) if _op == "MaxPoolGrad" else (1, 4, 4, 2)
    ENTRIES.append(OpEntry(_op, [
        Sample("valid", {"orig_input": regular(1, 4, 4, 2), "grad": regular(*_g, seed=3)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}, fd=True),
        Sample("ties", {"orig_input": np.ones((1, 4, 4, 2), np.float32), "grad": regular(*_g, seed=3)},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
        Sample("empty_batch", {"orig_input": empty(0, 4, 4, 2), "grad": empty(0, *_g[1:])},
               {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
    ], build=_max_pool_grad_build(_op), dtypes=("float32", "float64")))

ENTRIES += [
    OpEntry("FusedBatchNormV3", [
        Sample("training", {"x": regular(2, 2, 2, 3), "scale": regular(3, lo=0.5, hi=2, seed=1),
                            "offset": regular(3, seed=2), "mean": empty(0), "variance": empty(0)},
               {"epsilon": 0.001}),
        Sample("inference", {"x": regular(2, 2, 2, 3), "scale": regular(3, lo=0.5, hi=2, seed=1),
                             "offset": regular(3, seed=2), "mean": regular(3, seed=3),
                             "variance": regular(3, lo=0.5, hi=2, seed=4)}, {"is_training": False}),
        Sample("nchw_training", {"x": regular(2, 3, 2, 2), "scale": regular(3, lo=0.5, hi=2, seed=1),
                                 "offset": regular(3, seed=2), "mean": empty(0), "variance": empty(0)},
               {"data_format": "NCHW"}),
        Sample("running_average", {"x": regular(2, 1, 1, 2), "scale": regular(2, lo=0.5, hi=2, seed=1),
                                   "offset": regular(2, seed=2), "mean": regular(2, seed=3),
                                   "variance": regular(2, lo=0.5, hi=2, seed=4)}, {"exponential_avg_factor": 0.3}),
        Sample("one_per_channel", {"x": regular(1, 1, 1, 2), "scale": regular(2, lo=0.5, hi=2, seed=1),
                                   "offset": regular(2, seed=2), "mean": empty(0), "variance": empty(0)}),
        Sample("empty_batch", {"x": empty(0, 2, 2, 3), "scale": regular(3, lo=0.5, hi=2, seed=1),
                               "offset": regular(3, seed=2), "mean": empty(0), "variance": empty(0)}),
        Sample("scale_mismatch", {"x": regular(2, 2, 2, 3), "scale": regular(2), "offset": regular(3),
                                  "mean": empty(0), "variance": empty(0)}),
    ], dtypes=("float32",), rtol=1e-5, grad_rtol=1e-4,
        differs={"inference|*|const": "TensorFlow's graph optimizer fails on an inference batch norm of constants "
                                      "(OutOfRangeError); sparseflow computes it"}),
    OpEntry("LRN", [
        Sample("default", {"input": regular(1, 2, 2, 6)}, fd=True),
        Sample("narrow", {"input": regular(2, 1, 1, 4)}, {"depth_radius": 1, "bias": 2.0, "alpha": 0.5, "beta": 0.75},
               fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2, 3)}),
        Sample("rank3", {"input": regular(2, 2, 3)}),
    ], dtypes=("float16", "float32"), rtol=1e-5),
]


def _batch_norm_grad(tf, y_backprop, x, scale, offset, mean, variance, **attrs):
    fwd = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=mean, variance=variance, **attrs)
    return tf.raw_ops.FusedBatchNormGradV3(
        y_backprop=y_backprop, x=x, scale=scale, reserve_space_1=fwd.reserve_space_1,
        reserve_space_2=fwd.reserve_space_2, reserve_space_3=fwd.reserve_space_3, **attrs)


ENTRIES.append(OpEntry("FusedBatchNormGradV3", [
    Sample("training", {"y_backprop": regular(2, 2, 2, 3, seed=5), "x": regular(2, 2, 2, 3),
                        "scale": regular(3, lo=0.5, hi=2, seed=1), "offset": regular(3, seed=2), "mean": empty(0),
                        "variance": empty(0)}, {"epsilon": 0.001}),
    Sample("inference", {"y_backprop": regular(2, 1, 2, 2, seed=5), "x": regular(2, 1, 2, 2),
                         "scale": regular(2, lo=0.5, hi=2, seed=1), "offset": regular(2, seed=2),
                         "mean": regular(2, seed=3), "variance": regular(2, lo=0.5, hi=2, seed=4)},
           {"is_training": False}),
    Sample("nchw", {"y_backprop": regular(2, 3, 2, 2, seed=5), "x": regular(2, 3, 2, 2),
                    "scale": regular(3, lo=0.5, hi=2, seed=1), "offset": regular(3, seed=2), "mean": empty(0),
                    "variance": empty(0)}, {"data_format": "NCHW"}),
    Sample("empty_batch", {"y_backprop": empty(0, 2, 2, 3), "x": empty(0, 2, 2, 3),
                           "scale": regular(3, lo=0.5, hi=2, seed=1), "offset": regular(3, seed=2), "mean": empty(0),
                           "variance": empty(0)}),
], build=_batch_norm_grad, dtypes=("float32",), rtol=1e-5, grad_rtol=1e-3,
    static_shape_differs="TensorFlow's shape function gives reserve_space_4/5 the shape [0], but its kernel returns "
                         "scalars; sparseflow declares and returns scalars",
    differs={"inference|*|const": "TensorFlow's graph optimizer miscomputes an inference batch norm of constants "
                                  "(values in the 1e14); sparseflow computes it"}))

# The V2 ops take the tensor (input or filter) whose shape the V1 ops take as sizes. TensorFlow 2.21 has no
# CPU kernel for them (NoKernel on every sample): checked against a NumPy reference, gradients by finite
# differences.
_NOT_TF_V2 = "TensorFlow 2.21 registers Conv2DBackpropInputV2/FilterV2 kernels for GPU only"


def _pads(size, k, stride, padding, explicit):
    if padding == "VALID":
        return 0, 0, (size - k) // stride + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        return total // 2, total - total // 2, out
    before, after = explicit
    return before, after, (size + before + after - k) // stride + 1


def _conv_v2_check(op_type):
    def check(inputs, attrs, outs):
        x, f, dy = (np.asarray(inputs[k], np.float64) for k in ("input", "filter", "out_backprop"))
        s = attrs["strides"][1]
        ex = attrs.get("explicit_paddings", [0] * 8)
        (t, b, oh), (lft, r, ow) = (_pads(x.shape[i], f.shape[i - 1], s, attrs["padding"], ex[2 * i:2 * i + 2])
                                    for i in (1, 2))
        if dy.shape != (x.shape[0], oh, ow, f.shape[3]):
            return "" if outs is None else f"returned a value for out_backprop of shape {list(dy.shape)}"
        if outs is None:
            return "raised on matching shapes"
        xp = np.pad(x, [(0, 0), (t, b), (lft, r), (0, 0)])
        kh, kw = f.shape[:2]
        if op_type.endswith("FilterV2"):
            want = np.zeros(f.shape)
            for i in range(kh):
                for j in range(kw):
                    patch = xp[:, i:i + s * oh:s, j:j + s * ow:s, :]
                    want[i, j] = np.einsum("nyxc,nyxo->co", patch, dy)
        else:
            grad = np.zeros(xp.shape)
            for i in range(kh):
                for j in range(kw):
                    grad[:, i:i + s * oh:s, j:j + s * ow:s, :] += np.einsum("nyxo,co->nyxc", dy, f[i, j])
            want = grad[:, t:t + x.shape[1], lft:lft + x.shape[2], :]
        got = np.asarray(outs[0], np.float64)
        tol = 2e-2 if outs[0].dtype == np.float16 else 1e-4
        ok = got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol)
        return "" if ok else f"differs from the NumPy reference (max error {np.abs(got - want).max()})"

    return check


for _op in ("Conv2DBackpropInputV2", "Conv2DBackpropFilterV2"):
    _check_v2 = _conv_v2_check(_op)
    ENTRIES.append(OpEntry(_op, [
        Sample("same", {"input": regular(1, 4, 4, 2), "filter": regular(3, 3, 2, 3, seed=1),
                        "out_backprop": regular(1, 4, 4, 3, seed=2)}, _SAME1, fd=True, check=_check_v2),
        Sample("valid_strided", {"input": regular(2, 5, 5, 2), "filter": regular(3, 3, 2, 3, seed=1),
                                 "out_backprop": regular(2, 2, 2, 3, seed=2)},
               {"strides": [1, 2, 2, 1], "padding": "VALID"}, fd=True, check=_check_v2),
        Sample("explicit", {"input": regular(1, 3, 3, 1), "filter": regular(2, 2, 1, 1, seed=1),
                            "out_backprop": regular(1, 3, 3, 1, seed=2)},
               {"strides": [1, 1, 1, 1], "padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 0, 0, 1, 0, 0]},
               fd=True, check=_check_v2),
        Sample("empty_batch", {"input": empty(0, 4, 4, 2), "filter": regular(3, 3, 2, 3, seed=1),
                               "out_backprop": empty(0, 4, 4, 3)}, _SAME1, check=_check_v2),
        Sample("backprop_mismatch", {"input": regular(1, 4, 4, 2), "filter": regular(3, 3, 2, 3, seed=1),
                                     "out_backprop": regular(1, 3, 3, 3)}, _SAME1, check=_check_v2),
    ], dtypes=_FLOATS, tf=_NOT_TF_V2))

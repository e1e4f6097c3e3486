"""3-D convolutions: Conv3D and its gradient ops Conv3DBackpropInputV2 / Conv3DBackpropFilterV2.

SAME and VALID padding, strides, dilations, 1 x 1 x 1 volumes, empty batches, windows larger than
the volume, channel mismatches and strides in the batch dimension. A family of its own so that
recording it does not re-record the 2-D convolutions.
"""

from __future__ import annotations

from tests.opdb.spec import OpEntry, Sample, empty, i32, i64, regular

_FLOATS = ("float16", "float32", "float64")
_RTOL = {"float16": 1e-2, "float32": 1e-5}
_S1 = [1, 1, 1, 1, 1]
_NO_DILATION = "TensorFlow's CPU Conv3D kernel of float16 and float64 does not support dilations " \
               "(InvalidArgumentError); sparseflow's does"
_ONEDNN_GARBAGE = "TensorFlow's float32 (oneDNN) Conv3D returns wrong shapes or uninitialized memory here (an " \
                  "empty batch, a VALID window larger than the volume, a rank-4 input fed at unknown rank); " \
                  "sparseflow returns the empty output its float16/float64 kernels give, or an error"

_BACKPROP_DIFFERS = {
    "backprop_mismatch|float32": "TensorFlow's oneDNN kernel raises AbortedError for a mismatched out_backprop; "
                                 "sparseflow InvalidArgumentError naming both shapes",
    "empty_batch|float32": _ONEDNN_GARBAGE}


def _conv(name, x, f, fd=True, **attrs):
    attrs = {"strides": _S1, "padding": "SAME", **attrs}
    return Sample(name, {"input": x, "filter": f}, attrs, fd=fd)


_IN, _FILTER, _OUT = (1, 3, 3, 3, 2), (2, 2, 2, 2, 3), (1, 3, 3, 3, 3)

ENTRIES = [
    OpEntry("Conv3D", [
        _conv("same", regular(*_IN), regular(*_FILTER, seed=1)),
        _conv("valid_strided", regular(2, 4, 4, 4, 1), regular(2, 2, 2, 1, 2, seed=1), strides=[1, 2, 2, 2, 1],
              padding="VALID"),
        _conv("dilated", regular(1, 4, 4, 4, 1), regular(2, 2, 2, 1, 1, seed=1), dilations=[1, 2, 2, 2, 1]),
        _conv("one_voxel", regular(1, 1, 1, 1, 2), regular(1, 1, 1, 2, 2, seed=1)),
        _conv("empty_batch", empty(0, 3, 3, 3, 2), regular(*_FILTER, seed=1), fd=False),
        _conv("filter_too_big_valid", regular(1, 2, 2, 2, 1), regular(3, 3, 3, 1, 1), fd=False, padding="VALID"),
        _conv("channel_mismatch", regular(*_IN), regular(2, 2, 2, 3, 1), fd=False),
        _conv("batch_stride", regular(*_IN), regular(*_FILTER, seed=1), fd=False, strides=[2, 1, 1, 1, 1]),
        _conv("rank4_input", regular(1, 3, 3, 2), regular(*_FILTER, seed=1), fd=False),
    ], dtypes=_FLOATS, rtol=_RTOL, differs={
        "dilated|float16": _NO_DILATION, "dilated|float64": _NO_DILATION,
        "batch_stride": "sparseflow's shape function rejects a stride in the batch dimension when the graph is "
                        "built (ValueError naming the op); TensorFlow's kernel only when it runs",
        "empty_batch|float32": _ONEDNN_GARBAGE, "filter_too_big_valid|float32": _ONEDNN_GARBAGE,
        "rank4_input|float32|rank": _ONEDNN_GARBAGE,
        "filter_too_big_valid|float64:grad": "TensorFlow's filter gradient of an empty output is uninitialized "
                                             "memory (a NaN among zeros); sparseflow's is zeros"}),
    OpEntry("Conv3DBackpropInputV2", [
        Sample("same", {"input_sizes": i32(_IN), "filter": regular(*_FILTER), "out_backprop": regular(*_OUT, seed=2)},
               {"strides": _S1, "padding": "SAME"}, fd=True),
        Sample("valid_strided_int64_sizes", {"input_sizes": i64([1, 4, 4, 4, 1]),
                                             "filter": regular(2, 2, 2, 1, 2),
                                             "out_backprop": regular(1, 2, 2, 2, 2, seed=2)},
               {"strides": [1, 2, 2, 2, 1], "padding": "VALID"}, fd=True),
        Sample("empty_batch", {"input_sizes": i32((0,) + _IN[1:]), "filter": regular(*_FILTER),
                               "out_backprop": empty(0, 3, 3, 3, 3)}, {"strides": _S1, "padding": "SAME"}),
        Sample("backprop_mismatch", {"input_sizes": i32(_IN), "filter": regular(*_FILTER),
                                     "out_backprop": regular(1, 2, 2, 2, 3)}, {"strides": _S1, "padding": "SAME"}),
    ], dtypes=_FLOATS, rtol=_RTOL, differs=_BACKPROP_DIFFERS),
    OpEntry("Conv3DBackpropFilterV2", [
        Sample("same", {"input": regular(*_IN), "filter_sizes": i32(_FILTER), "out_backprop": regular(*_OUT, seed=2)},
               {"strides": _S1, "padding": "SAME"}, fd=True),
        Sample("valid_strided", {"input": regular(1, 4, 4, 4, 1), "filter_sizes": i32([2, 2, 2, 1, 2]),
                                 "out_backprop": regular(1, 2, 2, 2, 2, seed=2)},
               {"strides": [1, 2, 2, 2, 1], "padding": "VALID"}, fd=True),
        Sample("empty_batch", {"input": empty(0, 3, 3, 3, 2), "filter_sizes": i32(_FILTER),
                               "out_backprop": empty(0, 3, 3, 3, 3)}, {"strides": _S1, "padding": "SAME"}),
        Sample("backprop_mismatch", {"input": regular(*_IN), "filter_sizes": i32(_FILTER),
                                     "out_backprop": regular(1, 2, 2, 2, 3)}, {"strides": _S1, "padding": "SAME"}),
    ], dtypes=_FLOATS, rtol=_RTOL, differs=_BACKPROP_DIFFERS),
]

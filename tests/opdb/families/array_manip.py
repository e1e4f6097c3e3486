"""Roll, TensorScatter*, UnravelIndex, Bitcast, GuaranteeConst, ParallelConcat and EagerPyFunc.

Shifts past the length and negative ones, repeated axes, slices and single elements scattered,
repeated indices (added up), out-of-range indices, empty tensors and empty index lists; bitcasts
that widen, narrow and keep the element size.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, FLOATS, OpEntry, Sample, T, empty, i32, i64, regular

_NUMBERS = ("int32", "int64", "uint8", "float16", "float32", "float64", "complex64")
_REALS = ("int32", "int64", "uint8", "float16", "float32", "float64")


def _roll(name, x, shift, axis, fd=False):
    return Sample(name, {"input": x, "shift": shift, "axis": axis}, fd=fd)


def _scatter(name, tensor, indices, updates, fd=False, grad=True):
    return Sample(name, {"tensor": tensor, "indices": indices, "updates": updates}, fd=fd, grad=grad)


_SCATTER_COMMON = [
    _scatter("elements", regular(4), i32([[1], [3]]), regular(2, seed=1), fd=True),
    _scatter("slices", regular(3, 2), i64([[0], [2]]), regular(2, 2, seed=1), fd=True),
    _scatter("full_index", regular(2, 3), i32([[0, 2], [1, 0]]), regular(2, seed=1), fd=True),
    _scatter("batched_indices", regular(4, 2), i32([[[1], [2]]]), regular(1, 2, 2, seed=1), fd=True),
    _scatter("empty_indices", regular(3), np.zeros((0, 1), np.int32), empty(0)),
    _scatter("empty_tensor", empty(0, 2), np.zeros((0, 1), np.int32), empty(0, 2)),
    _scatter("out_of_range", regular(3), i32([[3]]), regular(1, seed=1)),
    _scatter("negative_index", regular(3), i32([[-1]]), regular(1, seed=1)),
    _scatter("bad_updates_shape", regular(3, 2), i32([[0]]), regular(3, seed=1)),
    _scatter("index_too_long", regular(3), i32([[0, 1]]), regular(1, seed=1)),
]
_REPEATED = [_scatter("repeated_indices", regular(3), i32([[1], [1], [0]]), regular(3, seed=1), fd=True)]
_TIES = [_scatter("ties", T([1.0, 2.0, 3.0]), i32([[0], [1]]), T([1.0, 5.0]))]

ENTRIES = [
    OpEntry("Roll", [
        _roll("vector", regular(5), i32(2), i32(0), fd=True),
        _roll("two_axes", regular(3, 4), i32([1, -1]), i32([0, 1]), fd=True),
        _roll("past_length", regular(4), i64(9), i64(-1), fd=True),
        _roll("repeated_axis", regular(2, 3), i32([1, 1]), i32([1, 1]), fd=True),
        _roll("mixed_index_types", regular(2, 3), i64([1]), i32([0]), fd=True),
        _roll("empty", empty(0, 3), i32(1), i32(0)),
        _roll("rank0", regular(), i32(1), i32(0)),
        _roll("size_mismatch", regular(2, 3), i32([1, 1]), i32([0])),
        _roll("axis_out_of_range", regular(2, 3), i32(1), i32(2)),
        _roll("shift_rank2", regular(2, 3), i32([[1]]), i32([[0]])),
    ], dtypes=ANY_TYPE),
    OpEntry("TensorScatterUpdate", _SCATTER_COMMON, dtypes=ANY_TYPE),
    OpEntry("TensorScatterAdd", _SCATTER_COMMON + _REPEATED, dtypes=_NUMBERS),
    OpEntry("TensorScatterSub", _SCATTER_COMMON + _REPEATED, dtypes=_NUMBERS),
    OpEntry("TensorScatterMin", _SCATTER_COMMON + _REPEATED + _TIES, dtypes=_REALS),
    OpEntry("TensorScatterMax", _SCATTER_COMMON + _REPEATED + _TIES, dtypes=_REALS),
    OpEntry("UnravelIndex", [
        Sample("scalar", {"indices": T(7), "dims": T([3, 4])}),
        Sample("vector", {"indices": T([0, 5, 11]), "dims": T([3, 4])}),
        Sample("three_dims", {"indices": T([13, 1]), "dims": T([2, 3, 4])}),
        Sample("empty", {"indices": T(np.zeros(0)), "dims": T([3, 4])}),
        Sample("out_of_range", {"indices": T([12]), "dims": T([3, 4])}),
        Sample("negative", {"indices": T([-1]), "dims": T([3, 4])}),
        Sample("zero_dim", {"indices": T([0]), "dims": T([3, 0])}),
        Sample("matrix_indices", {"indices": T([[1]]), "dims": T([3, 4])}),
    ], dtypes=("int32", "int64"), type_attr="Tidx", differs={
        "empty": "TensorFlow fails on an empty list of indices (InvalidArgumentError); sparseflow returns the "
                 "empty [len(dims), 0] result",
        "negative": "TensorFlow does not check for negative indices (it returns C++ remainders, [0, -1] here); "
                    "sparseflow fails with InvalidArgumentError naming the bounds"}),
    OpEntry("Bitcast", [
        Sample("to_uint8", {"input": regular(2, 2)}, {"type": "uint8"}),
        Sample("to_int32", {"input": regular(3, 4)}, {"type": "int32"}),
        Sample("to_float64", {"input": regular(2, 8)}, {"type": "float64"}),
        Sample("to_complex64", {"input": regular(8)}, {"type": "complex64"}),
        Sample("scalar_to_uint16", {"input": regular()}, {"type": "uint16"}),
        Sample("empty", {"input": empty(0, 8)}, {"type": "int8"}),
    ], dtypes=("int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64", "complex64"),
        build=lambda tf, input, type: tf.bitcast(input, type)),
    OpEntry("GuaranteeConst", [
        Sample("matrix", {"input": regular(2, 3)}, grad=False),
        Sample("empty", {"input": empty(0, 3)}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("ParallelConcat", [
        Sample("rows", {"values": [regular(1, 3), regular(1, 3, seed=1)]}, {"shape": [2, 3]}, grad=False),
        Sample("one", {"values": [regular(1)]}, {"shape": [1]}, grad=False),
        Sample("empty_rows", {"values": [empty(1, 0), empty(1, 0)]}, {"shape": [2, 0]}, grad=False),
        Sample("not_a_row", {"values": [regular(2, 3)]}, {"shape": [2, 3]}, grad=False),
    ], dtypes=ANY_TYPE),
]


def double(a):
    """A ``tf.py_function`` body both processes import: twice its input, via ``.numpy()``."""
    return a.numpy() * 2


def first_and_sum(a, b):
    return a.numpy()[:1], np.asarray(a.numpy().sum() + b.numpy().sum(), dtype=a.numpy().dtype)


ENTRIES += [
    OpEntry("EagerPyFunc", [
        Sample("double", {"x": regular(2, 3)}, grad=False),
        Sample("empty", {"x": empty(0, 3)}, grad=False),
        Sample("two_outputs", {"x": regular(3), "y": regular(2, seed=1)}, grad=False, kinds=FLOATS),
    ], dtypes=("int32", "float32", "float64"),
        build=lambda tf, x, y=None: (tf.py_function(double, [x], x.dtype) if y is None
                                     else tf.py_function(first_and_sum, [x, y], [x.dtype, x.dtype]))),
]

"""SparseSoftmax, SparseSparseMaximum/Minimum, SparseReduceMax(Sparse), SparseSplit, (De)Serialize(Many)Sparse
and SparseMatMul.

Rows with one and several values, empty SparseTensors, entries present in one operand only, reductions
over every axis and with kept dimensions, splits that do not divide evenly, and serialized rows read back.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, i64, regular

_IDX = i64([[0, 0], [0, 2], [1, 1], [2, 0], [2, 1]])
_SHAPE = i64([3, 3])
_NONE = np.zeros((0, 2), np.int64)
_NUMS = ("int32", "int64", "float32", "float64")


def _sp(name, values, indices=_IDX, shape=_SHAPE, **attrs):
    return Sample(name, {"sp_indices": indices, "sp_values": values, "sp_shape": shape}, attrs)


def _pair(name, a_idx, a_val, b_idx, b_val, shape=_SHAPE):
    """(No gradients: TensorFlow has none, and raises at build time; sparseflow declares them NotDifferentiable.)"""
    return Sample(name, {"a_indices": a_idx, "a_values": a_val, "a_shape": shape, "b_indices": b_idx,
                         "b_values": b_val, "b_shape": shape}, grad=False)


def _reduce(name, axes, values=None, indices=_IDX, shape=_SHAPE, **attrs):
    return Sample(name, {"input_indices": indices, "input_values": regular(5) if values is None else values,
                         "input_shape": shape, "reduction_axes": np.asarray(axes, np.int32)}, attrs)


def _round_trip(tf, sparse_indices, sparse_values, sparse_shape):
    serialized = tf.raw_ops.SerializeManySparse(sparse_indices=sparse_indices, sparse_values=sparse_values,
                                                sparse_shape=sparse_shape)
    back = tf.raw_ops.DeserializeManySparse(serialized_sparse=serialized, dtype=sparse_values.dtype)
    return list(back)


def _one(tf, sparse_indices, sparse_values, sparse_shape):
    serialized = tf.raw_ops.SerializeSparse(sparse_indices=sparse_indices, sparse_values=sparse_values,
                                            sparse_shape=sparse_shape)
    return list(tf.raw_ops.DeserializeSparse(serialized_sparse=serialized, dtype=sparse_values.dtype))


_SERIAL = [Sample("rows", {"sparse_indices": _IDX, "sparse_values": regular(5), "sparse_shape": _SHAPE}, grad=False),
           Sample("empty", {"sparse_indices": _NONE, "sparse_values": empty(0), "sparse_shape": _SHAPE}, grad=False)]

ENTRIES = [
    OpEntry("SparseSoftmax", [
        Sample("rows", {"sp_indices": _IDX, "sp_values": regular(5), "sp_shape": _SHAPE}, fd=True),
        Sample("empty", {"sp_indices": _NONE, "sp_values": empty(0), "sp_shape": _SHAPE}),
        _sp("rank3", regular(3), indices=i64([[0, 0, 1], [0, 0, 2], [1, 0, 0]]), shape=i64([2, 1, 3])),
        _sp("rank1", regular(2), indices=i64([[0], [1]]), shape=i64([3])),
    ], rtol={"float32": 1e-5}),
    OpEntry("SparseSparseMaximum", [
        _pair("overlap", i64([[0, 0], [1, 1]]), T([-1, 2]), i64([[1, 1], [2, 2]]), T([5, -3])),
        _pair("empty", _NONE, empty(0), _NONE, empty(0)),
        _pair("shape_mismatch", i64([[0, 0]]), T([1]), i64([[0, 0]]), T([1]), shape=i64([3])),
    ], dtypes=_NUMS),
    OpEntry("SparseSparseMinimum", [
        _pair("overlap", i64([[0, 0], [1, 1]]), T([-1, 2]), i64([[1, 1], [2, 2]]), T([5, -3])),
        _pair("empty", _NONE, empty(0), _NONE, empty(0)),
    ], dtypes=_NUMS),
    OpEntry("SparseReduceMax", [
        _reduce("rows", [1]), _reduce("columns_keep", [0], keep_dims=True), _reduce("all", [0, 1]),
        _reduce("negative_axis", [-1]), _reduce("no_axes", []), _reduce("bad_axis", [2]),
        _reduce("empty", [1], values=empty(0), indices=_NONE),
    ], dtypes=_NUMS),
    OpEntry("SparseReduceMaxSparse", [
        _reduce("rows", [1]), _reduce("columns_keep", [0], keep_dims=True), _reduce("all", [0, 1]),
        _reduce("empty", [1], values=empty(0), indices=_NONE),
    ], dtypes=_NUMS),
    OpEntry("SparseSplit", [
        Sample("columns", {"split_dim": np.int64(1), "indices": _IDX, "values": regular(5), "shape": _SHAPE},
               {"num_split": 2}),
        Sample("rows_three", {"split_dim": np.int64(0), "indices": _IDX, "values": regular(5), "shape": _SHAPE},
               {"num_split": 3}),
        Sample("negative_dim", {"split_dim": np.int64(-1), "indices": _IDX, "values": regular(5), "shape": _SHAPE},
               {"num_split": 1}),
        Sample("bad_dim", {"split_dim": np.int64(2), "indices": _IDX, "values": regular(5), "shape": _SHAPE},
               {"num_split": 2}),
    ], dtypes=("int32", "float32", "string")),
    OpEntry("SerializeManySparse", _SERIAL, dtypes=("int32", "float64", "string"), build=_round_trip),
    OpEntry("SerializeSparse", _SERIAL, dtypes=("int32", "float64", "string"), build=_one),
    OpEntry("DeserializeManySparse", [
        Sample("garbage", {"serialized_sparse": np.array([[b"x", b"y", b"z"]], object)}, {"dtype": "float32"}),
        Sample("not_three", {"serialized_sparse": np.array([[b"", b""]], object)}, {"dtype": "float32"}),
    ], dtypes=(None,)),
    OpEntry("DeserializeSparse", [
        Sample("garbage", {"serialized_sparse": np.array([b"x", b"y", b"z"], object)}, {"dtype": "float32"}),
    ], dtypes=(None,)),
    OpEntry("SparseMatMul", [
        Sample("plain", {"a": regular(2, 3), "b": regular(3, 4, seed=1)}),
        Sample("transposes", {"a": regular(3, 2), "b": regular(4, 3, seed=1)},
               {"transpose_a": True, "transpose_b": True, "a_is_sparse": True}),
        Sample("empty", {"a": empty(0, 3), "b": regular(3, 2)}),
        Sample("mismatch", {"a": regular(2, 3), "b": regular(2, 3)}),
    ], dtypes=("float32",), type_attr="Ta"),
]

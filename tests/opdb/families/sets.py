"""SetSize, DenseToDenseSetOperation, DenseToSparseSetOperation, SparseToSparseSetOperation.

Every operation (a-b, b-a, intersection, union) on rows with repeated values, empty results,
strings, sparse rows missing, rank 3 sets, mismatched batch dimensions and unordered indices.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, i64

_TYPES = ("int32", "int64", "uint8", "string")
_OPS = ("a-b", "b-a", "intersection", "union")
_A = T([[1, 2, 2, 3], [4, 5, 6, 7]])
_B = T([[3, 1, 9, 9], [8, 8, 8, 8]])
_SP_INDICES = i64([[0, 0], [0, 1], [1, 2]])
_SP_VALUES = T([2, 9, 4])
_SP_SHAPE = i64([2, 3])


def _dense_dense():
    out = [Sample(op, {"set1": _A, "set2": _B}, {"set_operation": op}) for op in _OPS]
    out += [Sample("rank3", {"set1": T([[[1, 2], [3, 3]]]), "set2": T([[[2, 2], [4, 3]]])},
                   {"set_operation": "union"}),
            Sample("batch_mismatch", {"set1": _A, "set2": T([[1, 2]])}, {"set_operation": "union"}),
            Sample("rank1", {"set1": T([1, 2]), "set2": T([2, 3])}, {"set_operation": "union"})]
    return out


def _dense_sparse():
    out = [Sample(op, {"set1": _A, "set2_indices": _SP_INDICES, "set2_values": _SP_VALUES, "set2_shape": _SP_SHAPE},
                  {"set_operation": op}) for op in _OPS]
    out.append(Sample("empty_sparse", {"set1": _A, "set2_indices": np.zeros((0, 2), np.int64),
                                       "set2_values": T(np.zeros(0)), "set2_shape": _SP_SHAPE},
                      {"set_operation": "intersection"}))
    return out


def _sparse_sparse():
    other = {"set2_indices": i64([[0, 0], [1, 0], [1, 1]]), "set2_values": T([9, 4, 5]), "set2_shape": i64([2, 2])}
    mine = {"set1_indices": _SP_INDICES, "set1_values": _SP_VALUES, "set1_shape": _SP_SHAPE}
    out = [Sample(op, {**mine, **other}, {"set_operation": op}) for op in _OPS]
    out.append(Sample("unordered", {**mine, "set1_indices": i64([[1, 2], [0, 0], [0, 1]]), **other},
                      {"set_operation": "union"}))
    out.append(Sample("unordered_not_validated", {**mine, "set1_indices": i64([[1, 2], [0, 0], [0, 1]]), **other},
                      {"set_operation": "union", "validate_indices": False}))
    return out


ENTRIES = [
    OpEntry("SetSize", [
        Sample("rows", {"set_indices": i64([[0, 0], [0, 1], [0, 2], [1, 1]]), "set_values": T([5, 5, 6, 7]),
                        "set_shape": i64([3, 3])}),
        Sample("empty", {"set_indices": np.zeros((0, 2), np.int64), "set_values": T(np.zeros(0)),
                         "set_shape": i64([2, 4])}),
        Sample("out_of_bounds", {"set_indices": i64([[0, 5]]), "set_values": T([1]), "set_shape": i64([1, 2])}),
    ], dtypes=_TYPES),
    OpEntry("DenseToDenseSetOperation", _dense_dense(), dtypes=_TYPES),
    OpEntry("DenseToSparseSetOperation", _dense_sparse(), dtypes=_TYPES),
    OpEntry("SparseToSparseSetOperation", _sparse_sparse(), dtypes=_TYPES, differs={
        "unordered_not_validated": "unordered indices with validate_indices=False: TensorFlow trusts the order and "
                                   "treats a row met twice as two rows (6 values here); sparseflow groups each row's "
                                   "values wherever they are"}),
]

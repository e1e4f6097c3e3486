"""Indexing: GatherV2, GatherNd, ScatterNd, DynamicPartition, DynamicStitch, Unique,
UniqueWithCounts, ListDiff.

int32 and int64 indices, negative and out-of-range indices, repeated indices, batch dimensions,
empty index lists and empty params, rank-0 indices.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, EDGES, OpEntry, Sample, T, empty, i32, i64, regular

_INDEX_TYPES = ("bool", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64", "string")

ENTRIES = [
    OpEntry("GatherV2", [
        Sample("rows", {"params": regular(4, 3), "indices": i32([2, 0, 2]), "axis": i32(0)}, fd=True),
        Sample("cols_int64", {"params": regular(4, 3), "indices": i64([[1], [2]]), "axis": i64(1)}, fd=True),
        Sample("neg_axis", {"params": regular(2, 3, 4), "indices": i32([3, 0]), "axis": i32(-1)}, fd=True),
        Sample("scalar_index", {"params": regular(4, 3), "indices": i32(1), "axis": i32(0)}, fd=True),
        Sample("empty_indices", {"params": regular(4, 3), "indices": i32([]), "axis": i32(0)}),
        Sample("empty_params", {"params": empty(0, 3), "indices": i32([]), "axis": i32(0)}),
        Sample("empty_other_dim", {"params": empty(4, 0), "indices": i32([1, 3]), "axis": i32(0)}),
        Sample("batch_dims", {"params": regular(2, 3, 4), "indices": i32([[0, 2], [1, 1]]), "axis": i32(2)},
               {"batch_dims": 1}, fd=True),
        Sample("out_of_range", {"params": regular(4, 3), "indices": i32([4]), "axis": i32(0)}),
        Sample("negative_index", {"params": regular(4, 3), "indices": i32([-1]), "axis": i32(0)}),
        Sample("axis_out_of_range", {"params": regular(4, 3), "indices": i32([0]), "axis": i32(2)}),
        Sample("rank0_params", {"params": regular(), "indices": i32([0]), "axis": i32(0)}),
    ], dtypes=_INDEX_TYPES, type_attr="Tparams"),
    OpEntry("GatherNd", [
        Sample("elements", {"params": regular(3, 4), "indices": i32([[0, 1], [2, 3]])}, fd=True),
        Sample("rows_int64", {"params": regular(3, 4), "indices": i64([[2], [0]])}, fd=True),
        Sample("whole", {"params": regular(3, 4), "indices": i32(np.zeros((2, 0), np.int32))}),
        Sample("batched", {"params": regular(2, 3), "indices": i32([[[0, 0]], [[1, 2]]])}, fd=True),
        Sample("empty_indices", {"params": regular(3, 4), "indices": i32(np.zeros((0, 2), np.int32))}),
        Sample("empty_params", {"params": empty(0, 3), "indices": i32(np.zeros((0, 1), np.int32))}),
        Sample("out_of_range", {"params": regular(3, 4), "indices": i32([[3, 0]])}),
        Sample("too_deep", {"params": regular(3, 4), "indices": i32([[0, 0, 0]])}),
        Sample("rank0_indices", {"params": regular(3), "indices": i32(1)}),
    ], dtypes=_INDEX_TYPES, type_attr="Tparams"),
    OpEntry("ScatterNd", [
        Sample("elements", {"indices": i32([[0, 1], [2, 0]]), "updates": regular(2), "shape": i32([3, 2])}, fd=True),
        Sample("rows_repeated_int64", {"indices": i64([[1], [1], [0]]), "updates": regular(3, 2),
                                       "shape": i64([3, 2])}, fd=True),
        Sample("empty_updates", {"indices": i32(np.zeros((0, 1), np.int32)), "updates": empty(0, 2),
                                 "shape": i32([3, 2])}),
        Sample("empty_shape", {"indices": i32(np.zeros((0, 1), np.int32)), "updates": empty(0, 0),
                               "shape": i32([0, 0])}),
        Sample("out_of_range", {"indices": i32([[3]]), "updates": regular(1, 2), "shape": i32([3, 2])}),
        Sample("negative_index", {"indices": i32([[-1]]), "updates": regular(1, 2), "shape": i32([3, 2])}),
        Sample("updates_mismatch", {"indices": i32([[0]]), "updates": regular(1, 3), "shape": i32([3, 2])}),
    ], dtypes=("bool", "int32", "int64", "float16", "float32", "float64", "complex64")),
    OpEntry("DynamicPartition", [
        Sample("rows", {"data": regular(5, 2), "partitions": i32([1, 0, 1, 2, 0])}, {"num_partitions": 3}, fd=True),
        Sample("scalars", {"data": regular(4), "partitions": i32([0, 0, 1, 1])}, {"num_partitions": 2}, fd=True),
        Sample("one_partition", {"data": regular(3), "partitions": i32([0, 0, 0])}, {"num_partitions": 1}),
        Sample("empty_partition", {"data": regular(3), "partitions": i32([2, 2, 0])}, {"num_partitions": 3}),
        Sample("empty_data", {"data": empty(0, 2), "partitions": i32([])}, {"num_partitions": 2}),
        Sample("matrix_partitions", {"data": regular(2, 2), "partitions": i32([[1, 0], [0, 1]])},
               {"num_partitions": 2}),
        Sample("rank0", {"data": regular(), "partitions": i32(1)}, {"num_partitions": 2}),
        Sample("out_of_range", {"data": regular(3), "partitions": i32([0, 3, 1])}, {"num_partitions": 2}),
        Sample("negative", {"data": regular(3), "partitions": i32([0, -1, 1])}, {"num_partitions": 2}),
        Sample("shape_mismatch", {"data": regular(3), "partitions": i32([0, 1])}, {"num_partitions": 2}),
    ], dtypes=ANY_TYPE),
    OpEntry("DynamicStitch", [
        Sample("two", {"indices": [i32([0, 2]), i32([1, 3])], "data": [regular(2, 2), regular(2, 2, seed=1)]},
               fd=True),
        Sample("overlap_last_wins", {"indices": [i32([0, 1]), i32([1])], "data": [regular(2), regular(1, seed=1)]},
               fd=True),
        Sample("scalar_indices", {"indices": [i32(1), i32(0)], "data": [regular(3), regular(3, seed=1)]}),
        Sample("gap", {"indices": [i32([0, 3])], "data": [regular(2, 2)]}),
        Sample("empty", {"indices": [i32([]), i32([])], "data": [empty(0, 2), empty(0, 2)]}),
        Sample("one_empty", {"indices": [i32([]), i32([0])], "data": [empty(0, 2), regular(1, 2)]}),
        Sample("negative", {"indices": [i32([-1])], "data": [regular(1)]}),
        Sample("shape_mismatch", {"indices": [i32([0, 1])], "data": [regular(3)]}),
    ], dtypes=ANY_TYPE, differs={"overlap_last_wins:grad": "TensorFlow's gradient also flows to the values that a "
                                                          "later index overwrote; sparseflow's gives them 0"}),
]

for _op in ("Unique", "UniqueWithCounts"):
    ENTRIES.append(OpEntry(_op, [
        Sample("repeats", {"x": T([3, 1, 3, 2, 1])}),
        Sample("int64_idx", {"x": T([2, 2, 2])}, {"out_idx": "int64"}),
        Sample("empty", {"x": empty(0)}),
        Sample("edges", {"x": EDGES}),
        Sample("rank0", {"x": regular()}),
        Sample("matrix", {"x": regular(2, 2)}),
    ], dtypes=("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "string"),
        differs={"edges|float16": "TensorFlow's float16 Unique hashes bits, so 0.0 and -0.0 stay apart (its float32 "
                                  "and float64 ones, like sparseflow's, merge them)"}))

ENTRIES.append(OpEntry("ListDiff", [
    Sample("some", {"x": T([1, 2, 3, 4, 2]), "y": T([2, 5])}),
    Sample("int64_idx", {"x": T([4, 3]), "y": T([])}, {"out_idx": "int64"}),
    Sample("all_removed", {"x": T([1, 1]), "y": T([1])}),
    Sample("empty_x", {"x": empty(0), "y": T([1])}),
    Sample("rank0", {"x": regular(), "y": T([1])}),
    Sample("matrix_y", {"x": T([1, 2]), "y": T([[1]])}),
], dtypes=("int32", "int64", "float32", "float64", "string")))

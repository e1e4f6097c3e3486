"""Shape ops: Shape/ShapeN/Rank/Size, Reshape, ExpandDims, Squeeze, Transpose, BroadcastTo and the
broadcast-argument ops the gradients use, EnsureShape, InvertPermutation.

Shape arguments come as int32 and int64, with -1, negative axes, empty and out-of-range values;
inputs as scalars, size-1 and empty tensors.
"""

from __future__ import annotations

from tests.opdb.spec import ANY_TYPE, EDGES, OpEntry, Sample, empty, i32, i64, regular

ENTRIES = []

_INSPECT = [
    Sample("rank0", {"input": regular()}),
    Sample("matrix", {"input": regular(2, 3)}),
    Sample("size1", {"input": regular(1, 3, 1)}),
    Sample("empty", {"input": empty(0, 3)}),
    Sample("edges", {"input": EDGES}),
]
for _op in ("Shape", "Size"):
    ENTRIES.append(OpEntry(_op, _INSPECT, dtypes=ANY_TYPE))
    ENTRIES.append(OpEntry(_op, [Sample("int64_out", {"input": regular(2, 3)}, {"out_type": "int64"}),
                                 Sample("int64_empty", {"input": empty(4, 0)}, {"out_type": "int64"})],
                           name=f"{_op}_int64", dtypes=("float32",)))
ENTRIES.append(OpEntry("Rank", _INSPECT, dtypes=ANY_TYPE))
ENTRIES.append(OpEntry("ShapeN", [
    Sample("three", {"input": [regular(), regular(2, 3), empty(0, 1, 2)]}),
    Sample("one_int64", {"input": [regular(4)]}, {"out_type": "int64"}),
], dtypes=("float32", "int32", "string")))

ENTRIES.append(OpEntry("Reshape", [
    Sample("flatten", {"tensor": regular(2, 3), "shape": i32([-1])}, fd=True),
    Sample("infer_inner", {"tensor": regular(2, 3), "shape": i64([3, -1])}, fd=True),
    Sample("rank0_to_rank0", {"tensor": regular(), "shape": i32([])}),
    Sample("rank0_to_1x1", {"tensor": regular(), "shape": i32([1, 1])}, fd=True),
    Sample("to_rank0", {"tensor": regular(1, 1), "shape": i64([])}),
    Sample("empty_infer", {"tensor": empty(0, 3), "shape": i32([3, -1])}),
    Sample("empty_known", {"tensor": empty(2, 0), "shape": i32([0, 5])}),
    Sample("empty_ambiguous", {"tensor": empty(0, 3), "shape": i32([0, -1])}),
    Sample("size_mismatch", {"tensor": regular(2, 3), "shape": i32([4, 2])}),
    Sample("two_unknown", {"tensor": regular(2, 3), "shape": i32([-1, -1])}),
    Sample("not_divisible", {"tensor": regular(2, 3), "shape": i32([4, -1])}),
    Sample("negative_dim", {"tensor": regular(2, 3), "shape": i32([-2, 3])}),
], dtypes=ANY_TYPE, differs={"two_unknown|*|const": "TensorFlow's graph optimizer drops a Reshape to [-1, -1] "
                                                   "of a constant; sparseflow reports the bad shape"}))

ENTRIES.append(OpEntry("ExpandDims", [
    Sample("front", {"input": regular(2, 3), "axis": i32(0)}, fd=True),
    Sample("back_negative", {"input": regular(2, 3), "axis": i64(-1)}, fd=True),
    Sample("middle_vector_axis", {"input": regular(2, 3), "axis": i32([1])}),
    Sample("rank0", {"input": regular(), "axis": i32(0)}),
    Sample("rank0_negative", {"input": regular(), "axis": i32(-1)}),
    Sample("empty", {"input": empty(0, 3), "axis": i32(2)}),
    Sample("axis_too_large", {"input": regular(2, 3), "axis": i32(3)}),
    Sample("axis_too_small", {"input": regular(2, 3), "axis": i32(-4)}),
    Sample("two_axes", {"input": regular(2, 3), "axis": i32([0, 1])}),
], dtypes=ANY_TYPE))

ENTRIES.append(OpEntry("Squeeze", [
    Sample("all_ones", {"input": regular(1, 3, 1)}, fd=True),
    Sample("one_axis", {"input": regular(1, 3, 1)}, {"axis": [0]}, fd=True),
    Sample("negative_axis", {"input": regular(1, 3, 1)}, {"axis": [-1]}),
    Sample("rank0", {"input": regular()}),
    Sample("all_to_rank0", {"input": regular(1, 1)}),
    Sample("empty", {"input": empty(0, 1)}, {"axis": [1]}),
    Sample("empty_keeps_zero", {"input": empty(1, 0, 1)}),
    Sample("not_one", {"input": regular(2, 3)}, {"axis": [0]}),
    Sample("axis_out_of_range", {"input": regular(1, 3)}, {"axis": [2]}),
], dtypes=ANY_TYPE))


def _transpose_samples(x="x"):
    return [
        Sample("matrix", {x: regular(2, 3), "perm": i32([1, 0])}, fd=True),
        Sample("cube_int64_perm", {x: regular(2, 3, 4), "perm": i64([2, 0, 1])}, fd=True),
        Sample("identity", {x: regular(2, 3), "perm": i32([0, 1])}),
        Sample("rank0", {x: regular(), "perm": i32([])}),
        Sample("empty", {x: empty(0, 3), "perm": i32([1, 0])}),
        Sample("size1", {x: regular(1, 3, 1), "perm": i32([2, 1, 0])}),
        Sample("repeated", {x: regular(2, 3), "perm": i32([0, 0])}),
        Sample("wrong_length", {x: regular(2, 3), "perm": i32([1, 0, 2])}),
        Sample("out_of_range", {x: regular(2, 3), "perm": i32([2, 0])}),
    ]


ENTRIES.append(OpEntry("Transpose", _transpose_samples(), dtypes=ANY_TYPE))
ENTRIES.append(OpEntry("ConjugateTranspose", _transpose_samples() + [
    Sample("edges", {"x": EDGES, "perm": i32([0])})],
    dtypes=("complex64", "complex128", "float32", "float64", "int32")))

ENTRIES.append(OpEntry("BroadcastTo", [
    Sample("vector_to_matrix", {"input": regular(3), "shape": i32([2, 3])}, fd=True),
    Sample("scalar", {"input": regular(), "shape": i64([2, 2])}, fd=True),
    Sample("size1_dims", {"input": regular(3, 1), "shape": i32([2, 3, 4])}, fd=True),
    Sample("same", {"input": regular(2, 3), "shape": i32([2, 3])}),
    Sample("to_rank0", {"input": regular(), "shape": i32([])}),
    Sample("to_empty", {"input": regular(1, 3), "shape": i32([0, 3])}),
    Sample("empty_to_empty", {"input": empty(0, 1), "shape": i32([2, 0, 4])}),
    Sample("incompatible", {"input": regular(3), "shape": i32([2, 4])}),
    Sample("lower_rank_target", {"input": regular(2, 3), "shape": i32([3])}),
], dtypes=ANY_TYPE))

for _op in ("BroadcastArgs", "BroadcastGradientArgs"):
    ENTRIES.append(OpEntry(_op, [
        Sample("both_sides", {"s0": i32([2, 1, 3]), "s1": i32([4, 3])}),
        Sample("int64", {"s0": i64([5, 1]), "s1": i64([1, 7])}),
        Sample("scalar_and_matrix", {"s0": i32([]), "s1": i32([2, 3])}),
        Sample("both_scalars", {"s0": i32([]), "s1": i32([])}),
        Sample("empty_dim", {"s0": i32([0, 1]), "s1": i32([1, 3])}),
        Sample("ones", {"s0": i32([1, 1]), "s1": i32([1])}),
        Sample("incompatible", {"s0": i32([2, 3]), "s1": i32([4, 3])}),
    ], dtypes=(None,)))

ENTRIES.append(OpEntry("EnsureShape", [
    Sample("exact", {"input": regular(2, 3)}, {"shape": [2, 3]}, fd=True),
    Sample("partial", {"input": regular(2, 3)}, {"shape": [None, 3]}),
    Sample("unknown_rank", {"input": regular(2, 3)}, {"shape": None}),
    Sample("rank0", {"input": regular()}, {"shape": []}),
    Sample("empty", {"input": empty(0, 3)}, {"shape": [None, 3]}),
    Sample("wrong_dim", {"input": regular(2, 3)}, {"shape": [2, 4]}),
    Sample("wrong_rank", {"input": regular(2, 3)}, {"shape": [6]}),
], dtypes=ANY_TYPE, differs={"unknown_rank": "TensorFlow's shape function rejects every known rank against an "
                                             "unknown-rank shape attr; sparseflow lets any shape through"}))

ENTRIES.append(OpEntry("InvertPermutation", [
    Sample("perm", {"x": i32([2, 0, 1])}),
    Sample("perm_int64", {"x": i64([1, 0, 3, 2])}),
    Sample("empty", {"x": i32([])}),
    Sample("repeated", {"x": i32([0, 0])}),
    Sample("out_of_range", {"x": i64([0, 3])}),
    Sample("rank0", {"x": i32(0)}),
], dtypes=(None,)))

"""Segment reductions (sorted, unsorted, sparse), their gradient ops, Bincount and DenseBincount.

Segment ids as int32 and int64, empty segments in the middle and at the end, unsorted and
negative ids (dropped by the unsorted ops), out-of-range ids, empty data, rank-0 data.
"""

from __future__ import annotations

from tests.opdb.spec import OpEntry, Sample, T, empty, i32, i64, regular

_REAL = ("int32", "int64", "float16", "float32", "float64")
_EARLY = {f"length_mismatch|*|{m}": "sparseflow's shape function checks that data and segment_ids have the same "
                                    "length when both are known (ValueError); TensorFlow's kernel checks when it "
                                    "runs" for m in ("const", "static")}
_UNINITIALIZED = {"empty": "TensorFlow's SparseSegment*Grad kernels leave rows that no index reaches uninitialized "
                           "(their values are whatever memory held); sparseflow's are zeros"}

ENTRIES = []
for _op in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
    _smooth = True  # distinct values: no ties at the max/min
    ENTRIES.append(OpEntry(_op, [
        Sample("rows", {"data": regular(5, 2), "segment_ids": i32([0, 0, 1, 1, 1])}, fd=_smooth),
        Sample("gap_int64", {"data": regular(4), "segment_ids": i64([0, 2, 2, 3])}, fd=_smooth),
        Sample("one_segment", {"data": regular(3, 2), "segment_ids": i32([0, 0, 0])}, fd=_smooth),
        Sample("empty", {"data": empty(0, 2), "segment_ids": i32([])}),
        Sample("unsorted", {"data": regular(3), "segment_ids": i32([1, 0, 1])}),
        Sample("negative", {"data": regular(2), "segment_ids": i32([-1, 0])}),
        Sample("length_mismatch", {"data": regular(3), "segment_ids": i32([0, 1])}),
        Sample("rank0", {"data": regular(), "segment_ids": i32(0)}),
    ], dtypes=_REAL + ("complex64",) if _op in ("SegmentSum", "SegmentMean", "SegmentProd") else _REAL,
        differs=_EARLY))

for _op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"):
    _smooth = True
    ENTRIES.append(OpEntry(_op, [
        Sample("unsorted", {"data": regular(5, 2), "segment_ids": i32([2, 0, 2, 1, 0]), "num_segments": i32(3)},
               fd=_smooth),
        Sample("empty_segments", {"data": regular(3), "segment_ids": i64([0, 0, 3]), "num_segments": i64(5)},
               fd=_smooth),
        Sample("negative_dropped", {"data": regular(3), "segment_ids": i32([-1, 1, 0]), "num_segments": i32(2)}),
        Sample("matrix_ids", {"data": regular(2, 2, 3), "segment_ids": i32([[0, 1], [1, 1]]), "num_segments": i32(2)},
               fd=_smooth),
        Sample("empty_data", {"data": empty(0, 3), "segment_ids": i32([]), "num_segments": i32(2)}),
        Sample("zero_segments", {"data": empty(0, 3), "segment_ids": i32([]), "num_segments": i32(0)}),
        Sample("id_out_of_range", {"data": regular(3), "segment_ids": i32([0, 3, 1]), "num_segments": i32(3)}),
        Sample("rank0", {"data": regular(), "segment_ids": i32(1), "num_segments": i32(2)}),
        Sample("shape_mismatch", {"data": regular(3), "segment_ids": i32([0, 1]), "num_segments": i32(2)}),
        Sample("negative_num_segments", {"data": regular(2), "segment_ids": i32([0, 0]), "num_segments": i32(-1)}),
    ], dtypes=_REAL + ("complex64",) if _op in ("UnsortedSegmentSum", "UnsortedSegmentProd") else _REAL))

for _kind in ("Sum", "Mean", "SqrtN"):
    _base = [
        Sample("rows", {"data": regular(4, 2), "indices": i32([3, 0, 3, 1]), "segment_ids": i32([0, 0, 1, 2])},
               fd=True),
        Sample("int64", {"data": regular(3), "indices": i64([2, 2]), "segment_ids": i64([0, 1])}, fd=True),
        Sample("gap", {"data": regular(3, 2), "indices": i32([0, 1]), "segment_ids": i32([0, 2])}),
        Sample("empty", {"data": regular(3, 2), "indices": i32([]), "segment_ids": i32([])}),
        Sample("index_out_of_range", {"data": regular(3), "indices": i32([3]), "segment_ids": i32([0])}),
        Sample("unsorted_ids", {"data": regular(3), "indices": i32([0, 1]), "segment_ids": i32([1, 0])}),
        Sample("mismatch", {"data": regular(3), "indices": i32([0, 1]), "segment_ids": i32([0])}),
    ]
    _empty_grad = {"empty:grad": _UNINITIALIZED["empty"]}
    ENTRIES.append(OpEntry(f"SparseSegment{_kind}", _base, dtypes=("float32", "float64", "float16"),
                           differs=_empty_grad))
    ENTRIES.append(OpEntry(f"SparseSegment{_kind}WithNumSegments", [
        Sample(s.name, {**s.args, "num_segments": i32(4)}, fd=s.fd) for s in _base] + [
        Sample("too_few_segments", {"data": regular(3), "indices": i32([0, 1]), "segment_ids": i32([0, 3]),
                                    "num_segments": i64(2)})],
        dtypes=("float32", "float64", "float16"), differs=_empty_grad))
    ENTRIES.append(OpEntry(f"SparseSegment{_kind}Grad", differs=_UNINITIALIZED, samples=[
        Sample("rows", {"grad": regular(3, 2), "indices": i32([3, 0, 3, 1]), "segment_ids": i32([0, 0, 1, 2]),
                        "output_dim0": i32(5)}, fd=True),
        Sample("int64", {"grad": regular(2), "indices": i64([2, 2]), "segment_ids": i64([0, 1]),
                         "output_dim0": i32(3)}, fd=True),
        Sample("empty", {"grad": empty(0, 2), "indices": i32([]), "segment_ids": i32([]), "output_dim0": i32(3)}),
        Sample("index_out_of_range", {"grad": regular(1), "indices": i32([3]), "segment_ids": i32([0]),
                                      "output_dim0": i32(3)}),
    ], dtypes=("float32", "float64")))

ENTRIES += [
    OpEntry("Bincount", [
        Sample("counts", {"arr": i32([1, 3, 1, 0]), "size": i32(5), "weights": regular(0)}),
        Sample("weighted", {"arr": i32([2, 2, 0]), "size": i32(3), "weights": regular(3)}),
        Sample("dropped", {"arr": i32([7, 1]), "size": i32(3), "weights": regular(0)}),
        Sample("empty", {"arr": i32([]), "size": i32(2), "weights": regular(0)}),
        Sample("size0", {"arr": i32([0]), "size": i32(0), "weights": regular(0)}),
        Sample("negative_value", {"arr": i32([-1, 0]), "size": i32(2), "weights": regular(0)}),
        Sample("negative_size", {"arr": i32([0]), "size": i32(-1), "weights": regular(0)}),
        Sample("weights_mismatch", {"arr": i32([0, 1]), "size": i32(2), "weights": regular(3)}),
    ], dtypes=("int32", "int64", "float32", "float64")),
    OpEntry("DenseBincount", [
        Sample("counts", {"input": T([1, 3, 1, 0]), "size": T(5), "weights": regular(0)}),
        Sample("weighted_2d", {"input": T([[0, 1], [1, 1]]), "size": T(3), "weights": regular(2, 2)}),
        Sample("binary", {"input": T([2, 2, 0]), "size": T(3), "weights": regular(0)}, {"binary_output": True}),
        Sample("empty", {"input": T([]), "size": T(2), "weights": regular(0)}),
        Sample("dropped", {"input": T([7, 1]), "size": T(3), "weights": regular(0)}),
        Sample("negative_size", {"input": T([0]), "size": T(-1), "weights": regular(0)}),
    ], type_attr="Tidx", build=None),
]

"""Slice, StridedSlice (every mask, negative strides, clamping, empty results) and StridedSliceGrad."""

from __future__ import annotations

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, empty, i32, i64, regular


def _ss(name, x, begin, end, strides, fd=False, **masks):
    return Sample(name, {"input": x, "begin": begin, "end": end, "strides": strides}, masks, fd=fd)


ENTRIES = [
    OpEntry("Slice", [
        Sample("middle", {"input": regular(4, 5), "begin": i32([1, 2]), "size": i32([2, 3])}, fd=True),
        Sample("to_end_int64", {"input": regular(4, 5), "begin": i64([1, 0]), "size": i64([-1, 2])}, fd=True),
        Sample("empty_size", {"input": regular(4, 5), "begin": i32([1, 1]), "size": i32([0, 2])}),
        Sample("rank0", {"input": regular(), "begin": i32([]), "size": i32([])}),
        Sample("empty_input", {"input": empty(0, 3), "begin": i32([0, 1]), "size": i32([0, 2])}),
        Sample("past_end", {"input": regular(4, 5), "begin": i32([3, 0]), "size": i32([2, 1])}),
        Sample("negative_begin", {"input": regular(4, 5), "begin": i32([-1, 0]), "size": i32([1, 1])}),
        Sample("wrong_length", {"input": regular(4, 5), "begin": i32([0]), "size": i32([1])}),
    ], dtypes=ANY_TYPE),
    OpEntry("StridedSlice", [
        _ss("range", regular(6), i32([1]), i32([5]), i32([2]), fd=True),
        _ss("reverse", regular(6), i32([-1]), i32([0]), i32([-1]), fd=True),
        _ss("reverse_all", regular(5), i32([0]), i32([0]), i32([-1]), begin_mask=1, end_mask=1),
        _ss("clamped", regular(4), i64([-10]), i64([10]), i64([1]), fd=True),
        _ss("matrix_masks", regular(3, 4), i32([1, 0]), i32([0, 3]), i32([1, 2]), begin_mask=2, end_mask=1),
        _ss("shrink", regular(3, 4), i32([1, 0]), i32([2, 4]), i32([1, 1]), fd=True, shrink_axis_mask=1),
        _ss("shrink_negative", regular(3, 4), i32([0, -1]), i32([3, 0]), i32([1, 1]), shrink_axis_mask=2),
        _ss("new_axis", regular(3, 4), i32([0, 0]), i32([0, 2]), i32([1, 1]), fd=True, new_axis_mask=1),
        _ss("ellipsis", regular(2, 3, 4), i32([0, 1]), i32([0, 3]), i32([1, 1]), fd=True, ellipsis_mask=1),
        _ss("ellipsis_rank0", regular(), i32([0]), i32([0]), i32([1]), ellipsis_mask=1),
        _ss("empty_result", regular(5), i32([3]), i32([1]), i32([1])),
        _ss("empty_input", empty(0, 3), i32([0, 1]), i32([0, 3]), i32([1, 1]), end_mask=1),
        _ss("size1", regular(1, 3, 1), i32([0, 1, 0]), i32([1, 3, 1]), i32([1, 1, 1])),
        _ss("zero_stride", regular(5), i32([0]), i32([3]), i32([0])),
        _ss("shrink_out_of_range", regular(3), i32([5]), i32([6]), i32([1]), shrink_axis_mask=1),
        _ss("length_mismatch", regular(3, 4), i32([0, 0]), i32([1]), i32([1, 1])),
    ], dtypes=ANY_TYPE),
    OpEntry("StridedSliceGrad", [
        Sample("range", {"shape": i32([6]), "begin": i32([1]), "end": i32([5]), "strides": i32([2]),
                         "dy": regular(2)}, fd=True),
        Sample("shrink_int64", {"shape": i64([3, 4]), "begin": i64([1, 0]), "end": i64([2, 4]),
                                "strides": i64([1, 1]), "dy": regular(4)}, {"shrink_axis_mask": 1}, fd=True),
        Sample("reverse", {"shape": i32([4]), "begin": i32([-1]), "end": i32([0]), "strides": i32([-1]),
                           "dy": regular(3)}),
        Sample("empty", {"shape": i32([0, 3]), "begin": i32([0, 0]), "end": i32([0, 3]), "strides": i32([1, 1]),
                         "dy": empty(0, 3)}),
        Sample("dy_mismatch", {"shape": i32([6]), "begin": i32([1]), "end": i32([5]), "strides": i32([2]),
                               "dy": regular(3)}),
    ], dtypes=("int32", "float16", "float32", "float64", "complex64")),
]

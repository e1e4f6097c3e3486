"""Joining and splitting: ConcatV2/ConcatOffset, Pack/Unpack, Split/SplitV, Tile, Pad/PadV2/MirrorPad,
ReverseV2, ReverseSequence.

One-element lists (a single-output op), empty pieces, negative axes, int64 arguments and
out-of-range or mismatched arguments in each.
"""

from __future__ import annotations

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, T, empty, i32, i64, regular

ENTRIES = [
    OpEntry("ConcatV2", [
        Sample("two_rows", {"values": [regular(2, 3), regular(1, 3, seed=1)], "axis": i32(0)}, fd=True),
        Sample("three_cols_neg_axis", {"values": [regular(2, 1), regular(2, 2, seed=1), regular(2, 3, seed=2)],
                                       "axis": i32(-1)}, fd=True),
        Sample("int64_axis", {"values": [regular(2, 1), regular(2, 2, seed=1)], "axis": i64(1)}, fd=True),
        Sample("one", {"values": [regular(2, 3)], "axis": i32(1)}),  # N >= 2: refused at build
        Sample("with_empty", {"values": [empty(0, 3), regular(2, 3)], "axis": i32(0)}),
        Sample("all_empty", {"values": [empty(0, 3), empty(0, 3)], "axis": i32(0)}),
        Sample("empty_other_axis", {"values": [empty(0, 2), empty(0, 3)], "axis": i32(1)}),
        Sample("vectors", {"values": [regular(2), regular(3, seed=1)], "axis": i32(0)}, fd=True),
        Sample("rank0", {"values": [regular(), regular(seed=1)], "axis": i32(0)}),
        Sample("mismatch", {"values": [regular(2, 3), regular(2, 2)], "axis": i32(0)}),
        Sample("rank_mismatch", {"values": [regular(2, 3), regular(3)], "axis": i32(0)}),
        Sample("axis_out_of_range", {"values": [regular(2, 3), regular(2, 3)], "axis": i32(2)}),
    ], dtypes=ANY_TYPE, differs={"int64_axis:grad": "TensorFlow's gradient of a concat along an int64 axis "
                                                    "fails to build (TypeError); sparseflow's works"}),
    OpEntry("ConcatOffset", [
        Sample("rows", {"concat_dim": i32(0), "shape": [i32([2, 3]), i32([1, 3]), i32([4, 3])]}),
        Sample("cols_neg", {"concat_dim": i32(-1), "shape": [i32([2, 1]), i32([2, 5])]}),
        Sample("int64_shapes", {"concat_dim": i32(1), "shape": [i64([2, 0]), i64([2, 3])]}),
        Sample("one", {"concat_dim": i32(0), "shape": [i32([2, 3])]}),
        Sample("mismatch", {"concat_dim": i32(0), "shape": [i32([2, 3]), i32([2, 4])]}),
        Sample("dim_out_of_range", {"concat_dim": i32(2), "shape": [i32([2, 3]), i32([2, 3])]}),
    ], dtypes=(None,)),
    OpEntry("Pack", [
        Sample("scalars", {"values": [regular(), regular(seed=1), regular(seed=2)]}, fd=True),
        Sample("rows", {"values": [regular(3), regular(3, seed=1)]}, fd=True),
        Sample("axis1", {"values": [regular(2, 3), regular(2, 3, seed=1)]}, {"axis": 1}, fd=True),
        Sample("neg_axis", {"values": [regular(2), regular(2, seed=1)]}, {"axis": -1}),
        Sample("one", {"values": [regular(2, 3)]}),
        Sample("empties", {"values": [empty(0, 2), empty(0, 2)]}, {"axis": 1}),
        Sample("mismatch", {"values": [regular(2), regular(3)]}),
        Sample("axis_out_of_range", {"values": [regular(2), regular(2)]}, {"axis": 2}),
    ], dtypes=ANY_TYPE),
    OpEntry("Unpack", [
        Sample("rows", {"value": regular(3, 2)}, {"num": 3}, fd=True),
        Sample("cols_neg_axis", {"value": regular(2, 3)}, {"num": 3, "axis": -1}, fd=True),
        Sample("one", {"value": regular(1, 4)}, {"num": 1}, fd=True),
        Sample("to_scalars", {"value": regular(3)}, {"num": 3}),
        Sample("empty_pieces", {"value": empty(2, 0)}, {"num": 2}),
        Sample("zero_pieces", {"value": empty(0, 3)}, {"num": 0}),
        Sample("wrong_num", {"value": regular(3, 2)}, {"num": 2}),
        Sample("rank0", {"value": regular()}, {"num": 1}),
    ], dtypes=ANY_TYPE),
    OpEntry("Split", [
        Sample("halves", {"axis": i32(0), "value": regular(4, 3)}, {"num_split": 2}, fd=True),
        Sample("neg_axis", {"axis": i32(-1), "value": regular(2, 6)}, {"num_split": 3}, fd=True),
        Sample("one", {"axis": i32(0), "value": regular(4, 3)}, {"num_split": 1}, fd=True),
        Sample("empty", {"axis": i32(0), "value": empty(0, 3)}, {"num_split": 2}),
        Sample("empty_other_axis", {"axis": i32(1), "value": empty(0, 4)}, {"num_split": 2}),
        Sample("not_divisible", {"axis": i32(0), "value": regular(5, 3)}, {"num_split": 2}),
        Sample("axis_out_of_range", {"axis": i32(2), "value": regular(4, 3)}, {"num_split": 2}),
        Sample("rank0", {"axis": i32(0), "value": regular()}, {"num_split": 1}),
    ], dtypes=ANY_TYPE),
    OpEntry("SplitV", [
        Sample("sizes", {"value": regular(6, 2), "size_splits": i32([1, 2, 3]), "axis": i32(0)},
               {"num_split": 3}, fd=True),
        Sample("inferred_int64", {"value": regular(2, 5), "size_splits": i64([2, -1]), "axis": i32(-1)},
               {"num_split": 2}, fd=True),
        Sample("zero_size_piece", {"value": regular(3, 2), "size_splits": i32([0, 3]), "axis": i32(0)},
               {"num_split": 2}),
        Sample("one", {"value": regular(3, 2), "size_splits": i32([3]), "axis": i32(0)}, {"num_split": 1}),
        Sample("empty", {"value": empty(0, 2), "size_splits": i32([0, 0]), "axis": i32(0)}, {"num_split": 2}),
        Sample("sum_mismatch", {"value": regular(6, 2), "size_splits": i32([1, 2]), "axis": i32(0)},
               {"num_split": 2}),
        Sample("two_inferred", {"value": regular(6, 2), "size_splits": i32([-1, -1]), "axis": i32(0)},
               {"num_split": 2}),
        Sample("negative_size", {"value": regular(6, 2), "size_splits": i32([-2, 8]), "axis": i32(0)},
               {"num_split": 2}),
    ], dtypes=ANY_TYPE),
    OpEntry("Tile", [
        Sample("both_dims", {"input": regular(2, 3), "multiples": i32([2, 3])}, fd=True),
        Sample("int64_multiples", {"input": regular(2, 1), "multiples": i64([1, 4])}, fd=True),
        Sample("rank0", {"input": regular(), "multiples": i32([])}),
        Sample("zero_multiple", {"input": regular(2, 3), "multiples": i32([0, 2])}),
        Sample("empty", {"input": empty(0, 3), "multiples": i32([3, 1])}),
        Sample("size1", {"input": regular(1, 1), "multiples": i32([3, 2])}, fd=True),
        Sample("negative", {"input": regular(2, 3), "multiples": i32([-1, 1])}),
        Sample("wrong_length", {"input": regular(2, 3), "multiples": i32([2])}),
    ], dtypes=ANY_TYPE),
]


def _pad_samples(extra=None, kinds=None):
    extra = extra or {}
    return [
        Sample("both_sides", {"input": regular(2, 3), "paddings": i32([[1, 0], [2, 1]]), **extra}, fd=True),
        Sample("int64_paddings", {"input": regular(3), "paddings": i64([[0, 2]]), **extra}, fd=True),
        Sample("rank0", {"input": regular(), "paddings": i32([]).reshape(0, 2), **extra}),
        Sample("no_padding", {"input": regular(2, 2), "paddings": i32([[0, 0], [0, 0]]), **extra}),
        Sample("empty", {"input": empty(0, 2), "paddings": i32([[1, 1], [0, 0]]), **extra}),
        Sample("negative", {"input": regular(2, 3), "paddings": i32([[-1, 0], [0, 0]]), **extra}),
        Sample("wrong_shape", {"input": regular(2, 3), "paddings": i32([[1, 1]]), **extra}),
    ]


ENTRIES += [
    OpEntry("Pad", _pad_samples(), dtypes=ANY_TYPE),
    OpEntry("PadV2", _pad_samples({"constant_values": T(7)}) + [
        Sample("bad_constant", {"input": regular(2), "paddings": i32([[1, 1]]), "constant_values": regular(2)})],
        dtypes=ANY_TYPE),
]

for _mode in ("REFLECT", "SYMMETRIC"):
    ENTRIES.append(OpEntry("MirrorPad", [
        Sample("both_sides", {"input": regular(3, 4), "paddings": i32([[1, 2], [2, 1]])}, {"mode": _mode}, fd=True),
        Sample("int64_paddings", {"input": regular(4), "paddings": i64([[0, 2]])}, {"mode": _mode}, fd=True),
        Sample("no_padding", {"input": regular(2, 2), "paddings": i32([[0, 0], [0, 0]])}, {"mode": _mode}),
        Sample("max_padding", {"input": regular(3), "paddings": i32([[2, 2]])}, {"mode": _mode}),
        Sample("too_much", {"input": regular(3), "paddings": i32([[3, 3]])}, {"mode": _mode}),
        Sample("empty", {"input": empty(0, 3), "paddings": i32([[0, 0], [1, 1]])}, {"mode": _mode}),
        Sample("rank0", {"input": regular(), "paddings": i32([]).reshape(0, 2)}, {"mode": _mode}),
        Sample("negative", {"input": regular(3), "paddings": i32([[-1, 0]])}, {"mode": _mode}),
    ], name=f"MirrorPad_{_mode}", dtypes=ANY_TYPE,
        differs={"empty:grad": "TensorFlow's MirrorPadGrad rejects an empty input; sparseflow's gradient is "
                               "the empty tensor"} if _mode == "SYMMETRIC" else {}))
    ENTRIES.append(OpEntry("MirrorPadGrad", [
        Sample("both_sides", {"input": regular(6, 7), "paddings": i32([[1, 2], [2, 1]])}, {"mode": _mode}, fd=True),
        Sample("int64_paddings", {"input": regular(6), "paddings": i64([[0, 2]])}, {"mode": _mode}, fd=True),
        Sample("no_padding", {"input": regular(2, 2), "paddings": i32([[0, 0], [0, 0]])}, {"mode": _mode}),
        Sample("rank0", {"input": regular(), "paddings": i32([]).reshape(0, 2)}, {"mode": _mode}),
        Sample("empty", {"input": empty(0, 5), "paddings": i32([[0, 0], [1, 1]])}, {"mode": _mode}),
        Sample("too_much", {"input": regular(3), "paddings": i32([[2, 2]])}, {"mode": _mode}),
    ], name=f"MirrorPadGrad_{_mode}", dtypes=("int32", "float32", "float64"),
        differs={"empty": "TensorFlow's MirrorPadGrad rejects an empty input; sparseflow's folds nothing"}))

ENTRIES += [
    OpEntry("ReverseV2", [
        Sample("one_axis", {"tensor": regular(2, 3), "axis": i32([1])}, fd=True),
        Sample("both_neg_int64", {"tensor": regular(2, 3), "axis": i64([-1, 0])}, fd=True),
        Sample("no_axes", {"tensor": regular(2, 3), "axis": i32([])}),
        Sample("rank0", {"tensor": regular(), "axis": i32([])}),
        Sample("empty", {"tensor": empty(0, 3), "axis": i32([0, 1])}),
        Sample("repeated", {"tensor": regular(2, 3), "axis": i32([1, 1])}),
        Sample("out_of_range", {"tensor": regular(2, 3), "axis": i32([2])}),
    ], dtypes=ANY_TYPE),
    OpEntry("ReverseSequence", [
        Sample("batch0_seq1", {"input": regular(3, 4), "seq_lengths": i64([1, 4, 2])}, {"seq_dim": 1}, fd=True),
        Sample("batch1_seq0_int32", {"input": regular(4, 2, 2), "seq_lengths": i32([3, 0])},
               {"seq_dim": 0, "batch_dim": 1}, fd=True),
        Sample("empty_batch", {"input": empty(0, 3), "seq_lengths": i64([])}, {"seq_dim": 1}),
        Sample("too_long", {"input": regular(2, 3), "seq_lengths": i64([4, 1])}, {"seq_dim": 1}),
        Sample("negative_length", {"input": regular(2, 3), "seq_lengths": i64([-1, 1])}, {"seq_dim": 1}),
        Sample("wrong_batch", {"input": regular(2, 3), "seq_lengths": i64([1, 1, 1])}, {"seq_dim": 1}),
        Sample("same_dims", {"input": regular(2, 3), "seq_lengths": i64([1, 1])}, {"seq_dim": 0}),
    ], dtypes=ANY_TYPE),
]

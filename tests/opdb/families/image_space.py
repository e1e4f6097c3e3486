"""Space/depth/batch rearrangements and patch extraction.

Block sizes of 2 and 3, 1-D and 2-D blocks with paddings and crops, extra trailing dimensions, empty
batches, sizes that do not divide, negative paddings; patches with strides, rates, SAME and VALID
padding, windows larger than the image; the TF1 wrappers ``space_to_batch`` / ``batch_to_space``
and ``required_space_to_batch_paddings``.
"""

from __future__ import annotations

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, empty, i32, i64, regular

_PATCH_TYPES = ("bool", "int8", "int32", "int64", "uint8", "uint16", "float16", "float32", "float64", "complex64")


def _space_to_batch(tf, input, paddings, block_size):  # noqa: A002 - TF's argument name
    return tf.space_to_batch(input, paddings, block_size=block_size)


def _batch_to_space(tf, input, crops, block_size):  # noqa: A002
    return tf.batch_to_space(input, crops, block_size=block_size)


def _required_paddings(tf, input_shape, block_shape, base_paddings=None):
    return tf.required_space_to_batch_paddings(input_shape, block_shape, base_paddings=base_paddings)


def _patches(name, x, fd=False, **attrs):
    attrs = {"ksizes": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding": "VALID", **attrs}
    return Sample(name, {"images": x}, attrs, fd=fd)


ENTRIES = [
    OpEntry("SpaceToDepth", [
        Sample("block2", {"input": regular(1, 4, 6, 2)}, {"block_size": 2}, fd=True),
        Sample("block3", {"input": regular(2, 3, 3, 1)}, {"block_size": 3}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 3)}, {"block_size": 2}),
        Sample("not_divisible", {"input": regular(1, 3, 4, 1)}, {"block_size": 2}, grad=False),
        Sample("rank3", {"input": regular(4, 4, 1)}, {"block_size": 2}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("DepthToSpace", [
        Sample("block2", {"input": regular(1, 2, 3, 8)}, {"block_size": 2}, fd=True),
        Sample("block3", {"input": regular(2, 1, 1, 9)}, {"block_size": 3}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 4)}, {"block_size": 2}),
        Sample("not_divisible", {"input": regular(1, 2, 2, 6)}, {"block_size": 2}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("SpaceToBatchND", [
        Sample("square", {"input": regular(1, 4, 4, 1), "block_shape": i32([2, 2]), "paddings": i32([[0, 0], [0, 0]])},
               fd=True),
        Sample("padded", {"input": regular(2, 3, 5, 2), "block_shape": i32([2, 3]), "paddings": i32([[1, 0], [0, 1]])},
               fd=True),
        Sample("one_dim_int64", {"input": regular(2, 6, 3), "block_shape": i64([3]), "paddings": i64([[0, 0]])}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "block_shape": i32([2, 2]),
                               "paddings": i32([[0, 0], [0, 0]])}),
        Sample("not_divisible", {"input": regular(1, 3, 4, 1), "block_shape": i32([2, 2]),
                                 "paddings": i32([[0, 0], [0, 0]])}, grad=False),
        Sample("negative_padding", {"input": regular(1, 4, 4, 1), "block_shape": i32([2, 2]),
                                    "paddings": i32([[-2, 0], [0, 0]])}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("BatchToSpaceND", [
        Sample("square", {"input": regular(4, 2, 2, 1), "block_shape": i32([2, 2]), "crops": i32([[0, 0], [0, 0]])},
               fd=True),
        Sample("cropped", {"input": regular(12, 2, 2, 2), "block_shape": i32([2, 3]), "crops": i32([[1, 0], [0, 2]])},
               fd=True),
        Sample("one_dim_int64", {"input": regular(6, 2, 3), "block_shape": i64([3]), "crops": i64([[1, 1]])}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "block_shape": i32([2, 2]), "crops": i32([[0, 0], [0, 0]])}),
        Sample("batch_not_divisible", {"input": regular(3, 2, 2, 1), "block_shape": i32([2, 2]),
                                       "crops": i32([[0, 0], [0, 0]])}, grad=False),
        Sample("crops_too_big", {"input": regular(4, 1, 1, 1), "block_shape": i32([2, 2]),
                                 "crops": i32([[2, 1], [0, 0]])}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("SpaceToBatch", [
        Sample("square", {"input": regular(1, 4, 6, 1), "paddings": i32([[0, 0], [1, 1]])}, {"block_size": 2},
               fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "paddings": i32([[0, 0], [0, 0]])}, {"block_size": 2}),
        Sample("rank3", {"input": regular(4, 4, 1), "paddings": i32([[0, 0], [0, 0]])}, {"block_size": 2},
               grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("BatchToSpace", [
        Sample("square", {"input": regular(4, 2, 3, 1), "crops": i32([[0, 0], [1, 1]])}, {"block_size": 2}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "crops": i32([[0, 0], [0, 0]])}, {"block_size": 2}),
        Sample("batch_not_divisible", {"input": regular(3, 2, 2, 1), "crops": i32([[0, 0], [0, 0]])},
               {"block_size": 2}, grad=False),
    ], dtypes=ANY_TYPE),
    OpEntry("SpaceToBatchND", [
        Sample("square", {"input": regular(1, 4, 6, 1), "paddings": i32([[0, 0], [1, 1]])}, {"block_size": 2}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "paddings": i32([[0, 0], [0, 0]])}, {"block_size": 2}),
    ], name="space_to_batch", build=_space_to_batch, dtypes=("int32", "float32", "float64")),
    OpEntry("BatchToSpaceND", [
        Sample("square", {"input": regular(4, 2, 3, 1), "crops": i32([[0, 0], [1, 1]])}, {"block_size": 2}),
        Sample("empty_batch", {"input": empty(0, 2, 2, 1), "crops": i32([[0, 0], [0, 0]])}, {"block_size": 2}),
    ], name="batch_to_space", build=_batch_to_space, dtypes=("int32", "float32", "float64")),
    OpEntry("Const", [
        Sample("divisible", {"input_shape": i32([4, 6]), "block_shape": i32([2, 3])}),
        Sample("padded", {"input_shape": i32([5, 7]), "block_shape": i32([2, 3])}),
        Sample("base", {"input_shape": i32([5, 7]), "block_shape": i32([2, 3]),
                        "base_paddings": i32([[1, 0], [2, 2]])}),
    ], name="required_space_to_batch_paddings", build=_required_paddings, dtypes=(None,)),
    OpEntry("ExtractImagePatches", [
        _patches("valid", regular(1, 3, 4, 2), fd=True),
        _patches("same_strided", regular(2, 5, 5, 1), fd=True, ksizes=[1, 3, 2, 1], strides=[1, 2, 3, 1],
                 padding="SAME"),
        _patches("rates", regular(1, 5, 6, 1), fd=True, rates=[1, 2, 2, 1]),
        _patches("same_rates", regular(1, 4, 4, 2), ksizes=[1, 2, 3, 1], rates=[1, 2, 1, 1], padding="SAME"),
        _patches("empty_batch", empty(0, 3, 3, 2)),
        _patches("window_too_big", regular(1, 2, 2, 1), ksizes=[1, 3, 3, 1]),
        _patches("batch_window", regular(2, 3, 3, 1), ksizes=[2, 2, 2, 1]),
    ], dtypes=_PATCH_TYPES, differs={
        "empty_batch:grad": "TensorFlow's gradient fails on an empty batch (InvalidArgumentError from its sparse "
                            "reshape); sparseflow's is zeros",
        "*|*|rank:grad": "TensorFlow's gradient needs the input's rank at build time (ValueError); sparseflow's "
                         "works at unknown rank"}),
    OpEntry("ExtractVolumePatches", [
        Sample("valid", {"input": regular(1, 3, 3, 4, 2)},
               {"ksizes": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 2, 1], "padding": "VALID"}, fd=True),
        Sample("same", {"input": regular(2, 3, 2, 3, 1)},
               {"ksizes": [1, 2, 1, 3, 1], "strides": [1, 2, 1, 1, 1], "padding": "SAME"}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2, 2, 1)},
               {"ksizes": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 1, 1], "padding": "VALID"}),
    ], dtypes=("int32", "uint8", "float16", "float32", "float64"),
        static_shape_differs="TensorFlow's shape function gives an input of unknown dimensions a rank-4 result "
                             "(the op is 5-D); sparseflow's is rank 5",
        differs={"*|*|dims:grad": "TensorFlow's gradient needs every input dimension at build time (TypeError); "
                                  "sparseflow's works with unknown dimensions",
                 "*|*|rank:grad": "as for dims"}),
]

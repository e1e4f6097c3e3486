"""Tensors made from scratch: Fill, Range, LinSpace, OneHot, ZerosLike, OnesLike."""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, EDGES, OpEntry, Sample, T, empty, i32, i64, regular

ENTRIES = [
    OpEntry("Fill", [
        Sample("matrix", {"dims": i32([2, 3]), "value": T(1.5)}, fd=True),
        Sample("int64_dims", {"dims": i64([4]), "value": T(-2)}, fd=True),
        Sample("rank0", {"dims": i32([]), "value": T(3)}, fd=True),
        Sample("empty", {"dims": i32([0, 3]), "value": T(1)}),
        Sample("negative_dim", {"dims": i32([-1, 3]), "value": T(1)}),
        Sample("value_not_scalar", {"dims": i32([2]), "value": regular(2)}),
        Sample("dims_not_vector", {"dims": i32([[2]]), "value": T(1)}),
    ], dtypes=ANY_TYPE),
    OpEntry("Range", [
        Sample("ints", {"start": T(1), "limit": T(7), "delta": T(2)}),
        Sample("down", {"start": T(5), "limit": T(1), "delta": T(-1)}),
        Sample("empty", {"start": T(3), "limit": T(3), "delta": T(1)}),
        Sample("fractional", {"start": T(0.5), "limit": T(2.0), "delta": T(0.25)}),
        Sample("zero_delta", {"start": T(0), "limit": T(3), "delta": T(0)}),
        Sample("wrong_direction", {"start": T(0), "limit": T(3), "delta": T(-1)}),
        Sample("start_not_scalar", {"start": T([0]), "limit": T(3), "delta": T(1)}),
    ], type_attr="Tidx", differs={"*|float16|const": "TensorFlow's shape function cannot size a float16 range of "
                                                     "constants (ValueError); sparseflow's can"}),
    OpEntry("LinSpace", [
        Sample("five", {"start": T(-1.0), "stop": T(1.0), "num": i32(5)}),
        Sample("one", {"start": T(2.0), "stop": T(3.0), "num": i64(1)}),
        Sample("down", {"start": T(3.0), "stop": T(1.0), "num": i32(3)}),
        Sample("zero", {"start": T(0.0), "stop": T(1.0), "num": i32(0)}),
        Sample("negative", {"start": T(0.0), "stop": T(1.0), "num": i32(-1)}),
        Sample("start_not_scalar", {"start": T([0.0]), "stop": T(1.0), "num": i32(2)}),
    ]),
    OpEntry("OneHot", [
        Sample("vector", {"indices": i32([0, 2, -1, 5]), "depth": i32(3), "on_value": T(5), "off_value": T(-1)}),
        Sample("int64_axis0", {"indices": i64([1, 0]), "depth": i32(2), "on_value": T(1), "off_value": T(0)},
               {"axis": 0}),
        Sample("uint8_matrix", {"indices": np.array([[1], [0]], np.uint8), "depth": i32(2), "on_value": T(1),
                                "off_value": T(0)}, {"axis": 1}),
        Sample("rank0", {"indices": i32(1), "depth": i32(3), "on_value": T(1), "off_value": T(0)}),
        Sample("empty", {"indices": i32([]), "depth": i32(3), "on_value": T(1), "off_value": T(0)}),
        Sample("depth0", {"indices": i32([0, 1]), "depth": i32(0), "on_value": T(1), "off_value": T(0)}),
        Sample("negative_depth", {"indices": i32([0]), "depth": i32(-1), "on_value": T(1), "off_value": T(0)}),
        Sample("bad_axis", {"indices": i32([0]), "depth": i32(2), "on_value": T(1), "off_value": T(0)},
               {"axis": 2}),
    ], dtypes=("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64",
               "string")),
]

for _op in ("ZerosLike", "OnesLike"):
    ENTRIES.append(OpEntry(_op, [
        Sample("matrix", {"x": regular(2, 3)}),
        Sample("rank0", {"x": regular()}),
        Sample("empty", {"x": empty(0, 3)}),
        Sample("edges", {"x": EDGES}),
    ], dtypes=ANY_TYPE if _op == "ZerosLike" else None,
        differs={f"*|{d}|const": "TensorFlow's constant folding turns OnesLike of a uint32/uint64 constant into "
                                 "zeros; sparseflow gives ones" for d in ("uint32", "uint64")} if _op == "OnesLike"
        else {}))

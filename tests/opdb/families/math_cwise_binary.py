"""Binary element-wise ops: arithmetic, division and modulo families, comparisons, logic, bitwise.

Every op runs on scalars, equal shapes, every broadcasting pattern (size-1 dimensions, scalar
against tensor, lower rank against higher), empty tensors broadcast against non-empty ones,
incompatible shapes, and every pair of the dtype's edge values (division by zero of each dtype
included: TensorFlow's result or error).
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import EDGE_COL, EDGE_ROW, REALS, OpEntry, Sample, empty, regular

# (op type, (x lo, hi), (y lo, hi), y away from zero, differentiable smoothly, argument names)
BINARY = [
    ("Add", (-2, 2), (-2, 2), False, True), ("AddV2", (-2, 2), (-2, 2), False, True),
    ("Sub", (-2, 2), (-2, 2), False, True), ("Mul", (-2, 2), (-2, 2), False, True),
    ("MulNoNan", (-2, 2), (-2, 2), False, True), ("Div", (-2, 2), (-2, 2), True, True),
    ("DivNoNan", (-2, 2), (-2, 2), True, True), ("RealDiv", (-2, 2), (-2, 2), True, True),
    ("FloorDiv", (-4, 4), (-2, 2), True, False), ("TruncateDiv", (-4, 4), (-2, 2), True, False),
    ("FloorMod", (-4, 4), (-2, 2), True, True), ("TruncateMod", (-4, 4), (-2, 2), True, True),
    ("Mod", (-4, 4), (-2, 2), True, True), ("Pow", (0.5, 2), (0, 3), False, True),
    ("Maximum", (-2, 2), (-2, 2), False, True), ("Minimum", (-2, 2), (-2, 2), False, True),
    ("SquaredDifference", (-2, 2), (-2, 2), False, True), ("Atan2", (-2, 2), (-2, 2), True, True),
    ("Xlogy", (-2, 2), (0.5, 2), False, True), ("Xdivy", (-2, 2), (-2, 2), True, True),
    ("Xlog1py", (-2, 2), (-0.5, 2), False, True),
    ("Less", (-2, 2), (-2, 2), False, False), ("LessEqual", (-2, 2), (-2, 2), False, False),
    ("Greater", (-2, 2), (-2, 2), False, False), ("GreaterEqual", (-2, 2), (-2, 2), False, False),
    ("Equal", (-2, 2), (-2, 2), False, False), ("NotEqual", (-2, 2), (-2, 2), False, False),
    ("BitwiseAnd", (-4, 4), (-4, 4), False, False), ("BitwiseOr", (-4, 4), (-4, 4), False, False),
    ("BitwiseXor", (-4, 4), (-4, 4), False, False),
]
_ARG_NAMES = {"Atan2": ("y", "x")}
_ANY_TYPE = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
             "float32", "float64", "complex64", "complex128", "string")


def _samples(x_range, y_range, away, fd, names=("x", "y")):
    a, b = names

    def x(*shape, seed=0):
        return regular(*shape, lo=x_range[0], hi=x_range[1], seed=seed)

    def y(*shape, seed=5):
        return regular(*shape, lo=y_range[0], hi=y_range[1], seed=seed, away_from_zero=away)

    return [
        Sample("rank0", {a: x(), b: y()}, fd=fd),
        Sample("same_shape", {a: x(2, 3), b: y(2, 3)}, fd=fd),
        Sample("broadcast_both", {a: x(3, 1), b: y(1, 4)}, fd=fd),
        Sample("scalar_tensor", {a: x(), b: y(2, 3)}, fd=fd),
        Sample("tensor_scalar", {a: x(2, 3), b: y()}, fd=fd),
        Sample("lower_rank", {a: x(4), b: y(2, 3, 4)}, fd=fd),
        Sample("size1_dims", {a: x(1, 3, 1), b: y(2, 1, 4)}, fd=fd),
        Sample("empty_scalar", {a: empty(0), b: y()}),
        Sample("empty_broadcast", {a: empty(0, 3), b: y(1, 3)}),
        Sample("broadcast_to_empty", {a: x(2, 1), b: empty(2, 0)}),
        Sample("empty_zero_divisor", {a: empty(0, 2), b: regular(1, 2, lo=0, hi=0)}),
        Sample("edge_pairs", {a: EDGE_COL, b: EDGE_ROW}),
        Sample("incompatible", {a: x(3), b: y(4)}),
        Sample("incompatible_empty", {a: empty(0, 2), b: y(3, 2)}),
    ]


_COMPLEX_INFINITIES = {"edge_pairs|complex*": "complex division and powers with infinite or NaN parts: "
                                              "TensorFlow's formulas give NaN where NumPy's give 0 or inf"}
_DIFFERS = {op: _COMPLEX_INFINITIES for op in ("Div", "DivNoNan", "RealDiv", "Pow", "Xdivy")}
_DIFFERS["FloorDiv"] = {f"edge_pairs|{d}": "a subnormal quotient (1 / -max): TensorFlow's CPU threads flush it to "
                                            "zero, so its floor is -0.0; sparseflow keeps IEEE subnormals (floor -1.0)"
                        for d in ("float32", "float64")}
for _op in ("TruncateDiv", "TruncateMod"):
    _DIFFERS[_op] = {"edge_pairs|*int*": "integer division by zero: TensorFlow 2.21 raises InternalError for "
                                         "TruncateDiv/TruncateMod (InvalidArgumentError for FloorDiv/FloorMod); "
                                         "sparseflow raises InvalidArgumentError for all four, the class of bad input"}

# TensorFlow 2.21's gradients of these for complex inputs leave out a conjugation (they are not u * conj(f')):
# finite differences of TensorFlow's own convention (dL/dRe z + i dL/dIm z) disagree with them.
_UNCONJUGATED = {
    "MulNoNan": "TensorFlow's complex gradient is mul_no_nan(u, y), not mul_no_nan(u, conj(y)) as Mul's u * conj(y)",
    "SquaredDifference": "TensorFlow's complex SquaredDifference is |x - y|^2 (real-valued), yet its gradient is "
                         "2 u (x - y); only Re(u) moves a real value: sparseflow's is 2 Re(u) (x - y)",
    **{op: f"TensorFlow's complex gradients of {op} are the derivatives times u, not their conjugates times u"
       for op in ("Xlogy", "Xdivy", "Xlog1py")},
}
for _op, _why in _UNCONJUGATED.items():
    _DIFFERS[_op] = {**_DIFFERS.get(_op, {}), "*|complex*:grad": _why + " (checked by finite differences)"}

ENTRIES = []
for _op, _x, _y, _away, _fd in BINARY:
    _dtypes = _ANY_TYPE if _op in ("Equal", "NotEqual") else None
    ENTRIES.append(OpEntry(_op, _samples(_x, _y, _away, _fd, _ARG_NAMES.get(_op, ("x", "y"))), dtypes=_dtypes,
                           differs=_DIFFERS.get(_op, {})))

for _op in ("Equal", "NotEqual"):
    ENTRIES.append(OpEntry(_op, [
        Sample("incompatible_no_error", {"x": regular(3), "y": regular(4)}, {"incompatible_shape_error": False}),
        Sample("compatible_no_error", {"x": regular(3, 1), "y": regular(1, 2)},
               {"incompatible_shape_error": False}),
    ], name=f"{_op}_incompatible_shape_error", dtypes=("int32", "float32", "string"),
        static_shape_differs="TensorFlow infers [None] for [None] vs [None], but unequal sizes give a scalar "
                             "False; sparseflow infers an unknown rank"))

for _op in ("LogicalAnd", "LogicalOr"):
    ENTRIES.append(OpEntry(_op, [
        Sample("rank0", {"x": np.bool_(True), "y": np.bool_(False)}),
        Sample("truth_table", {"x": np.array([[True], [False]]), "y": np.array([[True, False]])}),
        Sample("empty", {"x": np.zeros((0, 2), bool), "y": np.ones((1, 2), bool)}),
        Sample("incompatible", {"x": np.ones(3, bool), "y": np.ones(2, bool)}),
    ], dtypes=(None,)))

# The integer power of a negative exponent is an error in TensorFlow; here on its own.
ENTRIES.append(OpEntry("Pow", [
    Sample("negative_exponent", {"x": regular(3, lo=1, hi=3), "y": regular(3, lo=-2, hi=-1)}, kinds=REALS),
    Sample("zero_to_negative", {"x": regular(2, lo=0, hi=0), "y": regular(2, lo=-1, hi=-1)}, kinds=REALS),
], name="Pow_negative_exponent"))

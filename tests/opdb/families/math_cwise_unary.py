"""Unary element-wise ops, complex parts, Cast, ClipByValue, Select/SelectV2 and Where.

Every unary op runs on a scalar, a matrix, size-1 and empty shapes and on every edge value of
each dtype (zeros of both signs, infinities, NaN, the type's extremes); smooth points inside
the op's domain get gradients and a finite-difference check.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import EDGES, FLOATS, NUMBERS, OpEntry, Sample, T, edge_values, empty, regular

# (op type, (lo, hi) of its smooth domain, values away from 0 (kinks, poles), finite-difference check)
UNARY = [
    ("Abs", (-2, 2), True, True), ("Neg", (-2, 2), False, True), ("Sign", (-2, 2), True, True),
    ("Inv", (-2, 2), True, True), ("Reciprocal", (-2, 2), True, True), ("Square", (-2, 2), False, True),
    ("Sqrt", (0.5, 2), False, True), ("Rsqrt", (0.5, 2), False, True), ("Exp", (-2, 2), False, True),
    ("Expm1", (-2, 2), False, True), ("Log", (0.5, 2), False, True), ("Log1p", (-0.5, 2), False, True),
    ("Sin", (-3, 3), False, True), ("Cos", (-3, 3), False, True), ("Tan", (-1, 1), False, True),
    ("Asin", (-0.9, 0.9), False, True), ("Acos", (-0.9, 0.9), False, True), ("Atan", (-3, 3), False, True),
    ("Sinh", (-2, 2), False, True), ("Cosh", (-2, 2), False, True), ("Tanh", (-2, 2), False, True),
    ("Asinh", (-3, 3), False, True), ("Acosh", (1.2, 3), False, True), ("Atanh", (-0.9, 0.9), False, True),
    ("Sigmoid", (-3, 3), False, True), ("Floor", (-2, 2), False, False), ("Ceil", (-2, 2), False, False),
    ("Round", (-2, 2), False, False), ("Rint", (-2, 2), False, False), ("Erf", (-2, 2), False, True),
    ("Erfc", (-2, 2), False, True), ("Erfinv", (-0.9, 0.9), False, True), ("Ndtri", (0.05, 0.95), False, True),
    ("Lgamma", (0.5, 3), False, True), ("Digamma", (0.3, 9), False, True),
    ("IsNan", (-2, 2), False, False), ("IsInf", (-2, 2), False, False), ("IsFinite", (-2, 2), False, False),
    ("Invert", (-2, 2), False, False), ("Conj", (-2, 2), False, True),
]


def _unary_samples(lo, hi, away, fd, x="x"):
    def r(*shape, seed=0):
        return regular(*shape, lo=lo, hi=hi, seed=seed, away_from_zero=away)

    return [
        Sample("rank0", {x: r()}, fd=fd),
        Sample("matrix", {x: r(2, 3, seed=1)}, fd=fd),
        Sample("size1", {x: r(1, 3, 1, seed=2)}, fd=fd),
        Sample("empty", {x: empty(0)}),
        Sample("empty_inner", {x: empty(2, 0, 3)}),
        Sample("edges", {x: EDGES}),
        Sample("half_integers", {x: T([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])}, kinds=FLOATS, grad=False),
    ]


_DIFFERS = {
    "Sign": {"edges|complex128": "TensorFlow's complex128 sign of 0+NaN*j has real part 0 (its complex64 "
                                 "one, like sparseflow, NaN)"},
    "Erf": {"edges|float64": "TensorFlow 2.21's float64 erf returns NaN at +-inf and +-max; sparseflow +-1"},
    "Expm1": {"edges|complex*": "TensorFlow's complex expm1 of inf+0j is NaN+NaN*j; sparseflow gives the "
                                "limit inf+NaN*j (exp(z) - 1)"},
    **{op: {"edges|complex128": "TensorFlow's complex128 1 / (inf+0j) is NaN+NaN*j; sparseflow gives the limit 0 "
                                "(its complex64 one, like sparseflow, 0)"} for op in ("Inv", "Reciprocal")},
    "Round": {"*|int*": "TensorFlow 2.21's integer Round returns zeros; sparseflow returns the integers (rounding "
                        "an integer leaves it)"},
}
# Complex gradients at inf+0j (and at 0 for Sqrt): TensorFlow's complex64 and complex128 kernels disagree with each
# other there; sparseflow's (NumPy's complex arithmetic) are the same for both and agree with one of them.
_INF_GRAD_128 = ("TensorFlow's complex128 gradient at inf+0j is NaN+NaN*j (its complex128 division by an infinity, "
                 "as in Reciprocal); its complex64 one, like sparseflow's, is the limit 0")
_INF_GRAD_64 = ("TensorFlow's complex64 gradient at inf+0j is {}; its complex128 one, like sparseflow's, is NaN+NaN*j "
                "(complex arithmetic on an infinite part)")
for _op in ("Log", "Log1p", "Asinh", "Acosh"):
    _DIFFERS[_op] = {"edges|complex128:grad": _INF_GRAD_128}
for _op in ("Asin", "Acos", "Atan", "Atanh"):
    _DIFFERS[_op] = {"edges|complex64:grad": _INF_GRAD_64.format("0")}
_DIFFERS["Square"] = {"edges|complex64:grad": _INF_GRAD_64.format("inf+inf*j")}
_DIFFERS["Sqrt"] = {"edges|complex*:grad": "at 0 TensorFlow's complex gradient u / (2 conj(sqrt z)) is NaN+NaN*j; "
                                           "sparseflow's is infinite, as the real Sqrt's gradient at 0; at inf+0j "
                                           "as for Log (complex128)"}
_GRAD_RTOL = {"Digamma": 1e-9}  # its gradient (trigamma) is a series good to ~1e-10, like TF's polygamma

# The Sign op's gradient is zero, as TensorFlow's: right for real x, not for complex x (tf.sign of a complex
# tensor builds DivNoNan(x, |x|), checked by finite differences in DivNoNan_sign_complex).
_FD_KINDS = {"Sign": FLOATS}

ENTRIES = [OpEntry(op, _unary_samples(lo, hi, away, fd and _FD_KINDS.get(op, True), "input" if op == "Conj" else "x"),
                   differs=_DIFFERS.get(op, {}), grad_rtol=_GRAD_RTOL.get(op))
           for op, (lo, hi), away, fd in UNARY]

ENTRIES.append(OpEntry("LogicalNot", [
    Sample("rank0", {"x": np.bool_(True)}),
    Sample("matrix", {"x": np.array([[True, False], [False, False]])}),
    Sample("empty", {"x": np.zeros((0, 2), bool)}),
], dtypes=(None,)))

# ---------------------------------------------------------------- complex parts
# Through the public functions, which pick the real output type (float32 or float64) from the input.
for _op, _fn in (("Real", "real"), ("Imag", "imag"), ("Angle", "angle"), ("ComplexAbs", "abs")):
    ENTRIES.append(OpEntry(_op, [
        Sample("rank0", {"x": T(1.5)}, fd=True),
        Sample("matrix", {"x": regular(2, 3, seed=1)}, fd=True),
        Sample("empty", {"x": empty(0, 2)}),
        Sample("edges", {"x": EDGES}),
    ], build=lambda tf, x, _fn=_fn: getattr(tf.math, _fn)(x),
        differs={"edges|complex128:grad": _INF_GRAD_128} if _op == "Angle" else {}))

# tf.sign of a complex tensor: x / |x| (0 at 0), as TensorFlow's public function builds it.
ENTRIES.append(OpEntry("DivNoNan", [
    Sample("rank0", {"x": T(1.5 - 2j)}, fd=True),
    Sample("matrix", {"x": regular(2, 3, seed=1)}, fd=True),
    Sample("empty", {"x": empty(0, 2)}),
    Sample("edges", {"x": EDGES}),
], name="DivNoNan_sign_complex", dtypes=("complex64", "complex128"), build=lambda tf, x: tf.sign(x)))

ENTRIES.append(OpEntry("Complex", [
    Sample("rank0", {"real": T(1.5), "imag": T(-0.5)}, fd=True),
    Sample("broadcast", {"real": regular(3, 1), "imag": regular(1, 4, seed=1)}, fd=True),
    Sample("empty", {"real": empty(0, 2), "imag": empty(1, 2)}),
    Sample("edges", {"real": EDGES, "imag": T(lambda d: EDGES.resolve(d)[::-1].copy())}),
    Sample("incompatible", {"real": regular(3), "imag": regular(4)}),
], build=lambda tf, real, imag: tf.complex(real, imag)))

# ---------------------------------------------------------------- Cast
_CAST_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "complex64", "complex128")


def _cast_entry(src):
    samples = [Sample(f"to_{dst}", {"x": EDGES}, {"DstT": dst}, grad=False) for dst in _CAST_TYPES]
    samples += [Sample(f"in_range_to_{dst}", {"x": T([0, 1, 2.5, 100.7, 0.3])}, {"DstT": dst}, grad=False)
                for dst in _CAST_TYPES]
    samples += [
        Sample("to_same_rank0", {"x": regular()}, {"DstT": src}),
        Sample("to_float64_matrix", {"x": regular(2, 3)}, {"DstT": "float64"}, fd=True),
        Sample("to_complex128_matrix", {"x": regular(2, 3)}, {"DstT": "complex128"}, fd=True),
        Sample("to_int32_empty", {"x": empty(0, 3)}, {"DstT": "int32"}),
        Sample("to_float32_empty", {"x": empty(0, 3)}, {"DstT": "float32"}),
        Sample("truncate_to_float16", {"x": regular(4, lo=-100, hi=100)}, {"DstT": "float16", "Truncate": True}),
    ]
    return OpEntry("Cast", samples, name=f"Cast_from_{src}", dtypes=(src,), type_attr="SrcT",
                   differs={**{f"to_{d}|{b}": "float-to-integer casts of NaN, infinities and values out of "
                               "range are undefined in C++ (TensorFlow returns whatever the CPU gives)"
                               for d in _CAST_TYPES[1:9] for b in ("float16", "float32", "float64", "complex64",
                                                                   "complex128")}})


ENTRIES += [_cast_entry(src) for src in _CAST_TYPES]

# ---------------------------------------------------------------- clipping and selection
# Complex values have no order: the gradient (comparisons) is a TypeError, as TensorFlow's.
ENTRIES.append(OpEntry("ClipByValue", [
    Sample("scalar_bounds", {"t": regular(2, 3), "clip_value_min": T(-0.5), "clip_value_max": T(0.75)}, fd=FLOATS),
    Sample("tensor_bounds", {"t": regular(2, 3), "clip_value_min": regular(2, 3, lo=-2, hi=-0.1, seed=1),
                             "clip_value_max": regular(2, 3, lo=0.1, hi=2, seed=2)}, fd=FLOATS),
    Sample("rank0", {"t": T(3.0), "clip_value_min": T(-1.0), "clip_value_max": T(1.0)}),
    Sample("empty", {"t": empty(0, 3), "clip_value_min": T(0.0), "clip_value_max": T(1.0)}),
    Sample("edges", {"t": EDGES, "clip_value_min": T(-1.0), "clip_value_max": T(1.0)}, grad=False),
    Sample("bad_bounds_shape", {"t": regular(2, 3), "clip_value_min": regular(3), "clip_value_max": T(1.0)}),
], dtypes=None, differs={"*|complex*": "complex numbers have no order: TensorFlow's kernel drops imaginary parts "
                                       "it should not (clip(-0.5+2j, -1, 1) = -0.5+0j); sparseflow orders complex "
                                       "values as NumPy does (by real part, then imaginary part)"}))


def _select_samples(v2):
    out = [
        Sample("same_shape", {"condition": np.array([[True, False, True], [False, False, True]]),
                              "x": regular(2, 3), "y": regular(2, 3, seed=1)}, fd=True),
        Sample("rank0", {"condition": np.bool_(False), "x": T(1.0), "y": T(2.0)}),
        Sample("empty", {"condition": np.zeros((0, 2), bool), "x": empty(0, 2), "y": empty(0, 2)}),
        Sample("edges", {"condition": T(lambda d: np.arange(len(edge_values(d))) % 2 == 0), "x": EDGES,
                         "y": T(lambda d: EDGES.resolve(d)[::-1].copy())}, grad=False),
    ]
    if v2:
        out += [
            Sample("broadcast_all", {"condition": np.array([[True], [False]]), "x": regular(1, 3),
                                     "y": T(0.5)}, fd=True),
            Sample("scalar_condition", {"condition": np.bool_(True), "x": regular(2, 2), "y": regular(2, 1)}),
            Sample("empty_broadcast", {"condition": np.zeros((0, 1), bool), "x": regular(1, 3), "y": T(1.0)}),
            Sample("incompatible", {"condition": np.array([True, False, True]), "x": regular(2), "y": T(1.0)}),
        ]
    else:
        out += [
            Sample("vector_condition_rows", {"condition": np.array([True, False]), "x": regular(2, 3),
                                             "y": regular(2, 3, seed=1)}, fd=True),
            Sample("mismatch", {"condition": np.array([True, False, True]), "x": regular(2, 3),
                                "y": regular(2, 3)}),
        ]
    return out


_SELECT_TYPES = ("bool", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64", "string")
ENTRIES.append(OpEntry("Select", _select_samples(False), dtypes=_SELECT_TYPES))
ENTRIES.append(OpEntry("SelectV2", _select_samples(True), dtypes=_SELECT_TYPES,
                       build=lambda tf, condition, x, y: tf.raw_ops.SelectV2(condition=condition, t=x, e=y)))

ENTRIES.append(OpEntry("Where", differs={"*|float16": "TensorFlow's CPU kernel of Where is unimplemented for "
                                                     "float16; sparseflow's works"}, samples=[
    Sample("vector", {"condition": T([0, 1, 0, 2])}),
    Sample("matrix", {"condition": T([[1, 0], [0, 3], [4, 0]])}),
    Sample("rank0_true", {"condition": T(1)}),
    Sample("rank0_false", {"condition": T(0)}),
    Sample("empty", {"condition": empty(0, 3)}),
    Sample("none_true", {"condition": T(np.zeros((2, 2)))}),
    Sample("edges", {"condition": EDGES}, kinds=NUMBERS),
]))

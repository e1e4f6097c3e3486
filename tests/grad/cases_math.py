"""Finite-difference cases for the math gradients (float64), run by tests/grad/test_all_gradients.py.

One case at least per op type with a math gradient function; points stay away from kinks (|x|,
max ties, rounding steps) and singularities (log/sqrt at 0, asin at +-1, poles of digamma).
Binary ops have broadcasting cases, reductions keepdims / negative / multiple axes, matrix
products every transpose combination. Ops without a public wrapper (Inv, Div, Mod, BatchMatMul,
the V1 diagonal ops) are built with ``raw``.
"""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from sparseflow._src.ops.math_cwise import apply1
from tests.grad.grad_case import GradCase, positive, rand


def raw(op_type, *inputs, **attrs):
    return apply1(op_type, list(inputs), attrs or None)


def away_from_zero(*shape, seed=None):
    """Values in [-2, -0.5) U [0.5, 2): no kinks of abs/sign/max at 0."""
    v = positive(*shape, seed=seed)
    signs = np.where(rand(*shape, seed=None if seed is None else seed + 1) < 0, -1.0, 1.0)
    return v * signs


def distinct(*shape, seed=None):
    """Values with no ties (a shuffled grid with small jitter), for max/min and sorting-like ops."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed if seed is not None else n)
    return (rng.permutation(n) * 0.25 - n * 0.1 + rng.uniform(0, 0.05, n)).reshape(shape)


def well_conditioned(*shape, seed=None):
    """Square matrices (batched) near 2*I: far from singular."""
    n = shape[-1]
    return rand(*shape, seed=seed) * 0.5 + 2.0 * np.eye(n)


def cplx(a, b):
    return tf.complex(a, b)


# ---------------------------------------------------------------- unary element-wise
_UNARY = [
    ("Abs", tf.abs, away_from_zero(3, 4)),
    ("Neg", tf.negative, rand(3, 4)),
    ("Inv", lambda x: raw("Inv", x), away_from_zero(3, 4)),
    ("Reciprocal", tf.reciprocal, away_from_zero(3, 4)),
    ("Square", tf.square, rand(3, 4)),
    ("Sqrt", tf.sqrt, positive(3, 4)),
    ("Rsqrt", tf.rsqrt, positive(3, 4)),
    ("Exp", tf.exp, rand(3, 4)),
    ("Expm1", tf.math.expm1, rand(3, 4)),
    ("Log", tf.log, positive(3, 4)),
    ("Log1p", tf.math.log1p, rand(3, 4, low=-0.5, high=2.0)),
    ("Sin", tf.sin, rand(3, 4, low=-3, high=3)),
    ("Cos", tf.cos, rand(3, 4, low=-3, high=3)),
    ("Tan", tf.tan, rand(3, 4)),
    ("Asin", tf.asin, rand(3, 4, low=-0.9, high=0.9)),
    ("Acos", tf.acos, rand(3, 4, low=-0.9, high=0.9)),
    ("Atan", tf.atan, rand(3, 4, low=-3, high=3)),
    ("Sinh", tf.sinh, rand(3, 4)),
    ("Cosh", tf.cosh, rand(3, 4)),
    ("Tanh", tf.tanh, rand(3, 4, low=-2, high=2)),
    ("Asinh", tf.asinh, rand(3, 4, low=-3, high=3)),
    ("Acosh", tf.acosh, rand(3, 4, low=1.2, high=3.0)),
    ("Atanh", tf.atanh, rand(3, 4, low=-0.9, high=0.9)),
    ("Sigmoid", tf.sigmoid, rand(3, 4, low=-3, high=3)),
    ("Sign", tf.sign, away_from_zero(3, 4)),
    ("Erf", tf.erf, rand(3, 4, low=-2, high=2)),
    ("Erfc", tf.erfc, rand(3, 4, low=-2, high=2)),
    ("Erfinv", tf.math.erfinv, rand(3, 4, low=-0.9, high=0.9)),
    ("Ndtri", tf.math.ndtri, rand(3, 4, low=0.05, high=0.95)),
    ("Lgamma", tf.lgamma, positive(3, 4)),
    ("Digamma", tf.digamma, rand(3, 4, low=0.3, high=9.0)),
]

CASES = [GradCase(op, fn, [x]) for op, fn, x in _UNARY]
CASES += [
    # digamma's gradient (trigamma) on the reflection branch, between its poles
    GradCase("Digamma", tf.digamma, [np.array([-2.6, -1.3, -0.4, 0.2, 0.45])], name="Digamma_negative"),
    GradCase("Digamma", tf.digamma, [np.array([12.0, 40.0, 250.0])], name="Digamma_large", rtol=1e-4),
    GradCase("Conj", lambda a, b: tf.real(tf.conj(cplx(a, b)) * cplx(b, a)), [rand(2, 3), rand(2, 3, seed=5)]),
]

# ---------------------------------------------------------------- binary element-wise (with broadcasting)
_BINARY = [
    ("AddV2", tf.add),
    ("Sub", tf.subtract),
    ("Mul", tf.multiply),
    ("RealDiv", tf.realdiv),
    ("DivNoNan", tf.div_no_nan),
    ("Maximum", tf.maximum),
    ("Minimum", tf.minimum),
    ("SquaredDifference", tf.squared_difference),
]
for _op, _fn in _BINARY:
    _x, _y = distinct(2, 3, seed=1), away_from_zero(2, 3, seed=2)
    CASES.append(GradCase(_op, _fn, [_x, _y]))
    CASES.append(GradCase(_op, _fn, [distinct(4, 1, 3, seed=3), away_from_zero(2, 1, seed=4)],
                          name=f"{_op}_broadcast_both"))
    CASES.append(GradCase(_op, _fn, [distinct(2, 3, seed=5), np.array(0.3)], name=f"{_op}_scalar_y"))
    CASES.append(GradCase(_op, _fn, [np.array(-0.7), away_from_zero(3, 2, seed=6)], name=f"{_op}_scalar_x"))

CASES += [
    GradCase("Add", lambda x, y: raw("Add", x, y), [rand(2, 3), rand(3, seed=2)]),
    GradCase("Div", lambda x, y: raw("Div", x, y), [rand(2, 3), away_from_zero(3, 1, 1, seed=3)]),
    GradCase("MulNoNan", tf.math.multiply_no_nan, [rand(2, 3), away_from_zero(2, 1, seed=4)]),
    GradCase("FloorMod", tf.floormod, [rand(2, 3, low=0.1, high=0.9) + np.array([1.0, -3.0, 5.0]),
                                       np.array([0.8, -1.1, 2.3])]),
    GradCase("TruncateMod", tf.truncatemod, [rand(2, 3, low=0.1, high=0.9) + np.array([1.0, -3.0, 5.0]),
                                             np.array([0.8, -1.1, 2.3])]),
    GradCase("Mod", lambda x, y: raw("Mod", x, y), [rand(3, low=0.1, high=0.9) + np.array([2.0, -4.0, 6.0]),
                                                    np.array(1.7)]),
    GradCase("Pow", tf.pow, [positive(2, 3), rand(2, 3, low=-2, high=2, seed=7)]),
    GradCase("Pow", tf.pow, [positive(4, 1), rand(3, seed=8)], name="Pow_broadcast"),
    # negative bases with an integer exponent: d/dy is taken as 0 there, like TensorFlow
    GradCase("Pow", lambda x: tf.pow(x, tf.constant(3.0, tf.float64)), [away_from_zero(5)], name="Pow_cube"),
    GradCase("Atan2", tf.atan2, [rand(2, 3), away_from_zero(2, 3, seed=9)]),
    GradCase("Atan2", tf.atan2, [rand(2, 3), np.array(0.7)], name="Atan2_broadcast"),
    GradCase("Xlogy", tf.math.xlogy, [rand(2, 3), positive(3, seed=10)]),
    GradCase("Xlog1py", tf.math.xlog1py, [rand(2, 3), rand(2, 1, low=-0.5, high=2.0, seed=11)]),
    GradCase("Xdivy", tf.math.xdivy, [rand(2, 3), away_from_zero(1, 3, seed=12)]),
]

# ---------------------------------------------------------------- reductions, scans, AddN
for _op, _fn, _make in [("Sum", tf.reduce_sum, rand), ("Mean", tf.reduce_mean, rand),
                        ("Prod", tf.reduce_prod, away_from_zero), ("Max", tf.reduce_max, distinct),
                        ("Min", tf.reduce_min, distinct),
                        ("EuclideanNorm", tf.math.reduce_euclidean_norm, away_from_zero)]:
    _x = _make(2, 3, 4, seed=20)
    CASES += [
        GradCase(_op, lambda x, f=_fn: f(x), [_x], name=f"{_op}_all"),
        GradCase(_op, lambda x, f=_fn: f(x, axis=1), [_x], name=f"{_op}_axis1"),
        GradCase(_op, lambda x, f=_fn: f(x, axis=[0, -1], keepdims=True), [_x], name=f"{_op}_keepdims"),
        GradCase(_op, lambda x, f=_fn: f(x, axis=[2, 0]), [_x], name=f"{_op}_two_axes"),
    ]
CASES += [
    GradCase("Prod", lambda x: tf.reduce_prod(x, axis=1),
             [np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [-1.2, 0.7, 2.2]])], name="Prod_zeros"),
    GradCase("Sum", lambda x: tf.reduce_sum(x, axis=[]), [rand(2, 3)], name="Sum_no_axes"),
    GradCase("Cumsum", lambda x: tf.cumsum(x, axis=1), [rand(2, 4)]),
    GradCase("Cumsum", lambda x: tf.cumsum(x, axis=0, exclusive=True, reverse=True), [rand(3, 2)],
             name="Cumsum_exclusive_reverse"),
    GradCase("Cumprod", lambda x: tf.cumprod(x, axis=1), [away_from_zero(2, 4)]),
    GradCase("Cumprod", lambda x: tf.cumprod(x, axis=-1, exclusive=True, reverse=True), [away_from_zero(2, 4)],
             name="Cumprod_exclusive_reverse"),
    GradCase("CumulativeLogsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1), [rand(2, 4)]),
    GradCase("CumulativeLogsumexp",
             # exp(): the exclusive scan starts at log(0) = -inf
             lambda x: tf.exp(tf.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True)), [rand(3, 2)],
             name="CumulativeLogsumexp_exclusive_reverse"),
    GradCase("AddN", lambda a, b, c: tf.add_n([a, b * b, c]), [rand(2, 3), rand(2, 3, seed=1), rand(2, 3, seed=2)]),
]

# ---------------------------------------------------------------- cast, selection, clipping
_COND = np.array([[True, False, True], [False, False, True]])
CASES += [
    GradCase("Cast", lambda x: tf.real(tf.cast(x, tf.complex128) * tf.constant(1.5 - 2j, tf.complex128)),
             [rand(2, 3)]),
    GradCase("Cast", lambda x: tf.cast(tf.cast(x, tf.float32) * 3.0, tf.float64), [rand(2, 3)],
             name="Cast_float32", delta=1e-2, rtol=1e-3, atol=1e-3),
    GradCase("Select", lambda x, y: tf.where(_COND, x, y), [rand(2, 3), rand(2, 3, seed=1)]),
    GradCase("Select", lambda x, y: tf.where([True, False], x, y), [rand(2, 3), rand(2, 3, seed=1)],
             name="Select_rows"),
    GradCase("SelectV2", lambda x, y: tf.where_v2(_COND, x, y), [rand(2, 3), rand(2, 3, seed=1)]),
    GradCase("SelectV2", lambda x, y: tf.where_v2(_COND, x, y), [rand(3), rand(2, 1, seed=1)],
             name="SelectV2_broadcast"),
    GradCase("ClipByValue", lambda t, lo, hi: raw("ClipByValue", t, lo, hi),
             [np.array([[-1.5, -0.2, 0.3], [0.9, 1.6, -0.7]]), np.array(-0.5), np.array(0.8)]),
    GradCase("ClipByValue", lambda t, lo, hi: raw("ClipByValue", t, lo, hi),
             [np.array([[-1.5, -0.2, 0.3], [0.9, 1.6, -0.7]]), np.array([[-0.5, -0.1, -0.4], [0.0, -1.0, -0.3]]),
              np.array([[0.8, 0.4, 0.1], [0.5, 2.0, 1.0]])], name="ClipByValue_elementwise_bounds"),
]

# ---------------------------------------------------------------- complex numbers
CASES += [
    GradCase("Complex", lambda a, b: tf.real(cplx(a, b) * cplx(b, a)), [rand(2, 3), rand(3, seed=3)]),
    GradCase("Real", lambda a, b: tf.real(tf.square(cplx(a, b))), [rand(2, 3), rand(2, 3, seed=3)]),
    GradCase("Imag", lambda a, b: tf.imag(tf.square(cplx(a, b))), [rand(2, 3), rand(2, 3, seed=3)]),
    GradCase("Angle", lambda a, b: tf.angle(cplx(a, b)), [away_from_zero(2, 3), away_from_zero(2, 3, seed=3)]),
    GradCase("ComplexAbs", lambda a, b: tf.abs(cplx(a, b)), [away_from_zero(2, 3), rand(2, 3, seed=3)]),
]

# ---------------------------------------------------------------- matrix products
for _ta in (False, True):
    for _tb in (False, True):
        _a = rand(*((4, 3) if _ta else (3, 4)), seed=30)
        _b = rand(*((2, 4) if _tb else (4, 2)), seed=31)
        CASES.append(GradCase("MatMul", lambda a, b, ta=_ta, tb=_tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb),
                              [_a, _b], name=f"MatMul_ta{int(_ta)}_tb{int(_tb)}"))
for _ax in (False, True):
    for _ay in (False, True):
        _x = rand(*((2, 4, 3) if _ax else (2, 3, 4)), seed=32)
        _y = rand(*((1, 2, 4) if _ay else (1, 4, 2)), seed=33)
        CASES.append(GradCase(
            "BatchMatMulV2", lambda x, y, ax=_ax, ay=_ay: tf.matmul(x, y, adjoint_a=ax, adjoint_b=ay), [_x, _y],
            name=f"BatchMatMulV2_broadcast_adjx{int(_ax)}_adjy{int(_ay)}"))
CASES += [
    GradCase("BatchMatMulV2", lambda x, y: tf.matmul(x, y), [rand(3, 2, 4), rand(4, 2, seed=2)],
             name="BatchMatMulV2_rank2_y"),
    GradCase("BatchMatMul", lambda x, y: raw("BatchMatMul", x, y, adj_y=True), [rand(2, 3, 4), rand(2, 5, 4)]),
    GradCase("BatchMatMulV3", lambda x, y: raw("BatchMatMulV3", x, y, Tout=tf.float64, adj_x=True),
             [rand(2, 4, 3), rand(1, 4, 2, seed=3)]),
]

# ---------------------------------------------------------------- linear algebra and diagonals
CASES += [
    GradCase("MatrixDeterminant", tf.matrix_determinant, [well_conditioned(2, 3, 3)]),
    GradCase("LogMatrixDeterminant", lambda a: tf.linalg.slogdet(a)[1],
             [well_conditioned(2, 3, 3) * np.array([1.0, -1.0]).reshape(2, 1, 1)]),
    GradCase("MatrixInverse", tf.matrix_inverse, [well_conditioned(2, 3, 3)]),
    GradCase("MatrixInverse", lambda a: tf.matrix_inverse(a, adjoint=True), [well_conditioned(3, 3)],
             name="MatrixInverse_adjoint"),
    GradCase("Svd", lambda a: tf.svd(a, compute_uv=False), [rand(2, 4, 3)], name="Svd_values"),
    GradCase("Svd", lambda a: [tf.square(x) for x in tf.svd(a)], [rand(3, 3)], name="Svd_square"),
    GradCase("Svd", lambda a: [tf.square(x) for x in tf.svd(a)], [rand(2, 3, 5)], name="Svd_wide"),
    GradCase("Svd", lambda a: [tf.square(x) for x in tf.svd(a)], [rand(4, 3)], name="Svd_tall"),
    GradCase("Svd", lambda a: [tf.square(x) for x in tf.svd(a, full_matrices=True)], [rand(4, 3)],
             name="Svd_full_matrices"),
    GradCase("MatrixBandPart", lambda a: tf.linalg.band_part(a, 1, 0), [rand(2, 3, 4)]),
    GradCase("MatrixBandPart", lambda a: tf.linalg.band_part(a, -1, 1), [rand(4, 3)], name="MatrixBandPart_all_lower"),
    GradCase("Diag", tf.diag, [rand(2, 3)]),
    GradCase("DiagPart", tf.diag_part, [rand(2, 3, 2, 3)]),
    GradCase("MatrixDiag", lambda d: raw("MatrixDiag", d), [rand(2, 3)]),
    GradCase("MatrixDiagPart", lambda a: raw("MatrixDiagPart", a), [rand(2, 3, 4)]),
    GradCase("MatrixDiagPart", lambda a: raw("MatrixDiagPart", a), [rand(3, 3)], name="MatrixDiagPart_square"),
    GradCase("MatrixSetDiag", lambda a, d: raw("MatrixSetDiag", a, d), [rand(2, 3, 4), rand(2, 3, seed=2)]),
    GradCase("MatrixDiagV3", lambda d: tf.linalg.diag(d, k=1), [rand(2, 3)]),
    GradCase("MatrixDiagV3", lambda d: tf.linalg.diag(d, k=(-1, 1), num_rows=3, num_cols=4), [rand(3, 3)],
             name="MatrixDiagV3_band"),
    GradCase("MatrixDiagPartV3", lambda a: tf.linalg.diag_part(a, k=(-1, 1)), [rand(2, 3, 4)]),
    GradCase("MatrixDiagPartV3", lambda a: tf.linalg.diag_part(a), [rand(4, 3)], name="MatrixDiagPartV3_main"),
    GradCase("MatrixSetDiagV3", lambda a, d: tf.linalg.set_diag(a, d, k=(0, 1)), [rand(2, 3, 4), rand(2, 2, 3)]),
    GradCase("Cast", lambda a: tf.trace(tf.cast(a, tf.float64)), [rand(3, 3)], name="Trace_of_float64"),
    GradCase("Einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b), [rand(2, 3), rand(3, 4)], name="Einsum_matmul"),
    GradCase("Einsum", lambda a, b: tf.einsum("...ij,kj->...ik", a, b), [rand(1, 2, 3), rand(4, 3)],
             name="Einsum_broadcast"),
    GradCase("Einsum", lambda a: tf.einsum("bii->b", a), [rand(2, 3, 3)], name="Einsum_diagonal"),
    GradCase("Einsum", lambda a, b, c: tf.einsum("ab,bc,c->a", a, b, c), [rand(2, 3), rand(3, 2), rand(2)],
             name="Einsum_three_inputs_own_sum"),
    GradCase("Einsum", lambda a: tf.einsum("ijk->j", a), [rand(2, 3, 2)], name="Einsum_reduce"),
]

"""Matrix products and linear algebra: MatMul, BatchMatMul(V2, V3), determinants, inverse, SVD,
diagonals and band parts.

Batch dimensions that broadcast, empty batches and empty matrices (0 x n), 1 x 1 matrices,
transposes and adjoints; singular matrices for the inverse and the determinant.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import FLOATS, OpEntry, Sample, T, empty, i32, i64, np_dtype, regular

_MATMUL_TYPES = ("int32", "int64", "float16", "float32", "float64", "complex64", "complex128")


def near_identity(*shape, seed=0):
    """Batches of square matrices near 2 I: well conditioned, distinct singular values."""

    def make(dtype):
        n = shape[-1]
        base = regular(*shape, seed=seed).resolve(dtype).astype(np.complex128 if "complex" in dtype else np.float64)
        return (0.25 * base + 2.0 * np.eye(n) + np.diag(np.arange(n) * 0.5)).astype(np_dtype(dtype))

    return T(make)


def _mm(name, a, b, fd=True, **attrs):
    return Sample(name, {"a": a, "b": b}, attrs, fd=fd)


def _bmm(name, x, y, fd=True, **attrs):
    return Sample(name, {"x": x, "y": y}, attrs, fd=fd)


ENTRIES = [
    OpEntry("MatMul", [
        _mm("plain", regular(2, 3), regular(3, 4, seed=1)),
        _mm("transpose_a", regular(3, 2), regular(3, 4, seed=1), transpose_a=True),
        _mm("transpose_b", regular(2, 3), regular(4, 3, seed=1), transpose_b=True),
        _mm("transpose_both", regular(3, 2), regular(4, 3, seed=1), transpose_a=True, transpose_b=True),
        _mm("one_by_one", regular(1, 1), regular(1, 1, seed=1)),
        _mm("empty_inner", empty(2, 0), empty(0, 3), fd=False),
        _mm("empty_outer", empty(0, 3), regular(3, 2), fd=False),
        _mm("mismatch", regular(2, 3), regular(2, 3), fd=False),
        _mm("rank1", regular(3), regular(3, 2), fd=False),
    ], dtypes=_MATMUL_TYPES),
]

_BATCH = [
    _bmm("batched", regular(2, 2, 3), regular(2, 3, 4, seed=1)),
    _bmm("adj_x", regular(2, 3, 2), regular(2, 3, 4, seed=1), adj_x=True),
    _bmm("adj_y", regular(2, 2, 3), regular(2, 4, 3, seed=1), adj_y=True),
    _bmm("rank2", regular(2, 3), regular(3, 2, seed=1)),
    _bmm("empty_batch", empty(0, 2, 3), empty(0, 3, 4), fd=False),
    _bmm("empty_inner", empty(2, 2, 0), empty(2, 0, 3), fd=False),
    _bmm("batch_mismatch", regular(2, 2, 3), regular(3, 3, 4), fd=False),
    _bmm("inner_mismatch", regular(2, 2, 3), regular(2, 2, 4), fd=False),
]
_BROADCAST = [
    _bmm("broadcast_batch", regular(2, 1, 2, 3), regular(3, 3, 4, seed=1)),
    _bmm("broadcast_rank", regular(2, 3), regular(4, 3, 2, seed=1)),
    _bmm("broadcast_empty", empty(0, 1, 2, 3), regular(5, 3, 1, seed=1), fd=False),
]
ENTRIES += [
    OpEntry("BatchMatMul", _BATCH, dtypes=_MATMUL_TYPES),
    OpEntry("BatchMatMulV2", _BATCH + _BROADCAST, dtypes=_MATMUL_TYPES),
    OpEntry("BatchMatMulV3", [
        _bmm("same_types", regular(2, 2, 3), regular(2, 3, 4, seed=1), Tout="float32", fd=False),
        Sample("float64", {"x": regular(2, 3).resolve("float64"), "y": regular(3, 2, seed=1).resolve("float64")},
               {"Tout": "float64"}, kinds=FLOATS, fd=True),
        _bmm("int8_to_int32", regular(2, 3), regular(3, 2, seed=1), Tout="int32", fd=False),
        _bmm("broadcast_empty", empty(0, 1, 2, 3), regular(5, 3, 1, seed=1), Tout="float32", fd=False),
    ], dtypes=("float32", "int8"), type_attr="Ta",
        build=lambda tf, x, y, Tout: tf.raw_ops.BatchMatMulV3(x=x, y=y, Tout=Tout)),
]


def _square_samples(singular=True):
    out = [
        Sample("matrix", {"input": near_identity(3, 3)}, fd=True),
        Sample("batch", {"input": near_identity(2, 2, 2, seed=1)}, fd=True),
        Sample("one_by_one", {"input": near_identity(1, 1)}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        Sample("zero_by_zero", {"input": empty(0, 0)}),
        Sample("not_square", {"input": regular(2, 3)}),
        Sample("rank1", {"input": regular(3)}),
    ]
    if singular:
        out.append(Sample("singular", {"input": T([[1.0, 2.0], [2.0, 4.0]])}, grad=False))
    return out


ENTRIES += [
    OpEntry("MatrixDeterminant", _square_samples(), differs={
        "*|complex*:grad": "TensorFlow's complex gradient is u det(A) A^-H, not u conj(det(A)) A^-H "
                           "(sparseflow's; checked by finite differences)"}),
    OpEntry("LogMatrixDeterminant", _square_samples() + [
        Sample("negative_det", {"input": T([[0.0, 1.0], [1.0, 0.0]])}, fd=True)], differs={
        "*|complex*:grad": "TensorFlow's complex gradient ignores the sign output's (a complex determinant's "
                           "phase moves with A) and keeps the imaginary part of the real-valued log|det|'s; "
                           "sparseflow's is (Re(u_log) + i Im(u_sign conj(sign))) A^-H (checked by finite "
                           "differences)"}),
    OpEntry("MatrixInverse", _square_samples() + [
        Sample("adjoint", {"input": near_identity(2, 3, 3, seed=2)}, {"adjoint": True}, fd=True)]),
    OpEntry("Svd", [
        Sample("square", {"input": near_identity(3, 3)}, fd=True),
        Sample("tall", {"input": regular(4, 2)}),
        Sample("batch_wide", {"input": regular(2, 2, 3)}),
        Sample("values_only", {"input": near_identity(3, 3)}, {"compute_uv": False}, fd=True),
        Sample("full_matrices", {"input": regular(3, 2)}, {"full_matrices": True}),
        # No gradient: the trailing columns of U are not unique (build time for known sizes, else when run).
        Sample("full_matrices_wide", {"input": regular(2, 4)}, {"full_matrices": True, "with_v": False}),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        Sample("rank1", {"input": regular(3)}),
    ], build=lambda tf, input, compute_uv=True, full_matrices=False, with_v=True: _svd(tf, input, compute_uv,
                                                                                      full_matrices, with_v),
        dtypes=("float32", "float64", "complex64", "complex128"), rtol=1e-4, grad_rtol=1e-3,
        differs={f"{s}|*|{m}:grad": "TensorFlow builds no gradient of U and V where the matrices' sizes are "
                                    "unknown (at unknown rank TypeError, at unknown dimensions NotImplementedError); "
                                    "sparseflow's is the one of known shapes (checked against it)"
                 for s in ("square", "tall", "batch_wide", "full_matrices", "full_matrices_wide", "empty_batch")
                 for m in ("dims", "rank")} | {
            "*|complex*:grad": "the singular values are real-valued: only the real part of their upstream gradient "
                               "moves them, TensorFlow's complex gradient keeps its imaginary part too (sparseflow's "
                               "checked by finite differences)"}),
]


def _svd(tf, x, compute_uv, full_matrices, with_v):
    """Singular values, and |U| |V| products that do not depend on the singular vectors' signs (without V
    where its trailing columns are any basis of a null space of dimension > 1)."""
    s, u, v = tf.raw_ops.Svd(input=x, compute_uv=compute_uv, full_matrices=full_matrices)
    if not compute_uv:
        return [s]
    return [s, tf.abs(u), tf.abs(v)] if with_v else [s, tf.abs(u)]


ENTRIES += [
    OpEntry("Diag", [
        Sample("vector", {"diagonal": regular(3)}, fd=True),
        Sample("matrix", {"diagonal": regular(2, 2)}, fd=True),
        Sample("empty", {"diagonal": empty(0)}),
        Sample("rank0", {"diagonal": regular()}),
    ]),
    OpEntry("DiagPart", [
        Sample("matrix", {"input": regular(3, 3)}, fd=True),
        Sample("rank4", {"input": regular(2, 3, 2, 3)}, fd=True),
        Sample("empty", {"input": empty(0, 0)}),
        Sample("odd_rank", {"input": regular(2, 2, 2)}),
        Sample("mismatch", {"input": regular(2, 3)}),
    ]),
    OpEntry("MatrixDiag", [
        Sample("vector", {"diagonal": regular(3)}, fd=True),
        Sample("batch", {"diagonal": regular(2, 3)}, fd=True),
        Sample("empty", {"diagonal": empty(2, 0)}),
        Sample("rank0", {"diagonal": regular()}),
    ], dtypes=("bool", "int32", "float32", "float64", "complex64")),
    OpEntry("MatrixDiagPart", [
        Sample("square", {"input": regular(3, 3)}, fd=True),
        Sample("wide_batch", {"input": regular(2, 2, 3)}, fd=True),
        Sample("empty", {"input": empty(0, 3)}),
        Sample("rank1", {"input": regular(3)}),
    ], dtypes=("bool", "int32", "float32", "float64", "complex64")),
    OpEntry("MatrixSetDiag", [
        Sample("square", {"input": regular(3, 3), "diagonal": regular(3, seed=1)}, fd=True),
        Sample("wide_batch", {"input": regular(2, 2, 3), "diagonal": regular(2, 2, seed=1)}, fd=True),
        Sample("empty", {"input": empty(0, 3), "diagonal": empty(0)}),
        Sample("mismatch", {"input": regular(3, 3), "diagonal": regular(2)}),
    ], dtypes=("bool", "int32", "float32", "float64", "complex64")),
    OpEntry("MatrixBandPart", [
        Sample("lower", {"input": regular(3, 4), "num_lower": i64(1), "num_upper": i64(0)}, fd=True),
        Sample("all_upper", {"input": regular(2, 3, 3), "num_lower": i64(0), "num_upper": i64(-1)}, fd=True),
        Sample("int32_bands", {"input": regular(3, 3), "num_lower": i32(-1), "num_upper": i32(1)}),
        Sample("empty", {"input": empty(0, 3), "num_lower": i64(1), "num_upper": i64(1)}),
        Sample("empty_batch", {"input": empty(0, 3, 3), "num_lower": i64(1), "num_upper": i64(0)}),
        Sample("too_wide_band", {"input": regular(2, 2), "num_lower": i64(3), "num_upper": i64(0)}),
        Sample("rank1", {"input": regular(3), "num_lower": i64(0), "num_upper": i64(0)}),
    ], dtypes=("bool", "int32", "float32", "float64", "complex64")),
    OpEntry("MatrixDiagV3", [
        Sample("main", {"diagonal": regular(3), "k": i32(0), "num_rows": i32(-1), "num_cols": i32(-1),
                        "padding_value": T(0)}, fd=True),
        Sample("band_left_right", {"diagonal": regular(2, 3), "k": i32([-1, 0]), "num_rows": i32(-1),
                                   "num_cols": i32(-1), "padding_value": T(9)}, {"align": "LEFT_RIGHT"}, fd=True),
        Sample("offset_rect", {"diagonal": regular(2), "k": i32(1), "num_rows": i32(2), "num_cols": i32(4),
                               "padding_value": T(-1)}),
        Sample("empty", {"diagonal": empty(0), "k": i32(0), "num_rows": i32(-1), "num_cols": i32(-1),
                         "padding_value": T(0)}),
        Sample("bad_k", {"diagonal": regular(3), "k": i32([1, 0]), "num_rows": i32(-1), "num_cols": i32(-1),
                         "padding_value": T(0)}),
    ], dtypes=("int32", "float32", "float64")),
    OpEntry("MatrixDiagPartV3", [
        Sample("main", {"input": regular(3, 3), "k": i32(0), "padding_value": T(0)}, fd=True),
        Sample("band", {"input": regular(2, 3, 4), "k": i32([-1, 1]), "padding_value": T(7)}, fd=True),
        Sample("band_right_left", {"input": regular(3, 4), "k": i32([0, 2]), "padding_value": T(7)},
               {"align": "RIGHT_LEFT"}),
        Sample("empty", {"input": empty(0, 3), "k": i32(0), "padding_value": T(0)}),
        Sample("k_out_of_range", {"input": regular(3, 3), "k": i32(5), "padding_value": T(0)}),
    ], dtypes=("int32", "float32", "float64"),
        differs={f"{s}|*|dims:grad": "TensorFlow's gradient of a band of diagonals needs static dimensions "
                                     "(ValueError); sparseflow's works" for s in ("band", "band_right_left")}),
    OpEntry("MatrixSetDiagV3", [
        Sample("main", {"input": regular(3, 3), "diagonal": regular(3, seed=1), "k": i32(0)}, fd=True),
        Sample("band", {"input": regular(3, 4), "diagonal": regular(2, 3, seed=1), "k": i32([0, 1])},
               {"align": "LEFT_LEFT"}, fd=True),
        Sample("empty", {"input": empty(0, 3), "diagonal": empty(0), "k": i32(0)}),
        Sample("mismatch", {"input": regular(3, 3), "diagonal": regular(2), "k": i32(0)}),
    ], dtypes=("int32", "float32", "float64"),
        differs={"band|*|dims": "with k of unknown length TensorFlow's shape function assumes one diagonal and "
                                "rejects a band (ValueError); sparseflow sets it"}),
]

"""Cholesky, MatrixSolve, MatrixSolveLs, MatrixTriangularSolve, MatrixSquareRoot, Qr, SelfAdjointEigV2.

Batches, 1 x 1 and empty matrices, adjoints, upper and lower triangles, tall and wide least squares
with and without regularization, matrices that are not square, singular or not positive definite.
Hermitian inputs are built as ``(x + x^H) / 2`` (the ops read one triangle, so the gradient with
respect to ``x`` is the one a finite difference sees); eigenvectors and QR factors are compared by
absolute value (their signs are not unique).
"""

from __future__ import annotations

import numpy as np

from tests.opdb.families.math_linalg import near_identity
from tests.opdb.spec import OpEntry, Sample, T, empty, regular


def _hermitian(tf, x):
    return (x + tf.linalg.adjoint(x)) / 2


def _square_errors(key="input"):
    return [Sample("not_square", {key: regular(2, 3)}), Sample("rank1", {key: regular(3)})]


def _solve(name, matrix, rhs, fd=True, grad=True, **attrs):
    return Sample(name, {"matrix": matrix, "rhs": rhs}, attrs, fd=fd, grad=grad)


def _eigh(tf, input, compute_v=True):
    e, v = tf.raw_ops.SelfAdjointEigV2(input=_hermitian(tf, input), compute_v=compute_v)
    return [e, tf.abs(v)] if compute_v else [e]


def _qr(tf, input, full_matrices=False):
    q, r = tf.raw_ops.Qr(input=input, full_matrices=full_matrices)
    return [tf.abs(q), tf.abs(r)]


_SINGULAR = T([[1.0, 2.0], [2.0, 4.0]])

_COMPLEX_GRAD_DIFFERS = ("TensorFlow 2.21's complex gradient disagrees with finite differences of "
                         "L = Re(sum(conj(u) * y)) (dL/dRe + i dL/dIm); sparseflow's agrees with them to ~1e-9")


ENTRIES = [
    OpEntry("Cholesky", [
        Sample("matrix", {"input": near_identity(3, 3)}, fd=True),
        Sample("batch", {"input": near_identity(2, 2, 2, seed=1)}, fd=True),
        Sample("one_by_one", {"input": near_identity(1, 1)}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        Sample("zero_by_zero", {"input": empty(0, 0)}),
        Sample("not_positive_definite", {"input": T([[1.0, 2.0], [2.0, 1.0]])}, grad=False),
        *_square_errors(),
    ], build=lambda tf, input: tf.raw_ops.Cholesky(input=_hermitian(tf, input)), rtol=1e-4, grad_rtol=1e-3,
        differs={"not_positive_definite": "TensorFlow 2.21's CPU kernel returns NaNs for a matrix that is not "
                                          "positive definite; sparseflow fails with InvalidArgumentError ('Cholesky "
                                          "decomposition was not successful')"}),
    OpEntry("MatrixSolve", [
        _solve("vector_rhs", near_identity(3, 3), regular(3, 1, seed=1)),
        _solve("batch", near_identity(2, 2, 2), regular(2, 2, 3, seed=1)),
        _solve("adjoint", near_identity(3, 3, seed=2), regular(3, 2, seed=1), adjoint=True),
        _solve("empty_rhs", near_identity(2, 2), empty(2, 0)),
        _solve("empty_batch", empty(0, 2, 2), empty(0, 2, 1)),
        _solve("singular", _SINGULAR, T([[1.0], [1.0]]), fd=False, grad=False),
        _solve("rows_mismatch", near_identity(2, 2), regular(3, 1), fd=False),
        _solve("not_square", regular(2, 3), regular(2, 1), fd=False),
    ], rtol=1e-4, grad_rtol=1e-3),
    OpEntry("MatrixTriangularSolve", [
        _solve("lower", near_identity(3, 3), regular(3, 2, seed=1)),
        _solve("upper", near_identity(3, 3, seed=1), regular(3, 2, seed=1), lower=False),
        _solve("lower_adjoint", near_identity(2, 3, 3), regular(2, 3, 1, seed=1), adjoint=True),
        _solve("upper_adjoint", near_identity(3, 3), regular(3, 2, seed=1), lower=False, adjoint=True),
        _solve("broadcast_batch", near_identity(2, 1, 2, 2), regular(3, 2, 2, seed=1)),
        _solve("empty", near_identity(2, 2), empty(2, 0)),
        _solve("empty_batch", empty(0, 2, 2), empty(0, 2, 1)),
        _solve("zero_on_diagonal", T([[0.0, 0.0], [1.0, 1.0]]), T([[1.0], [1.0]]), fd=False, grad=False),
        _solve("rows_mismatch", near_identity(2, 2), regular(3, 1), fd=False),
    ], dtypes=("float16", "float32", "float64", "complex64", "complex128"), rtol=1e-4, grad_rtol=1e-3,
        differs={"zero_on_diagonal|complex*": "a division by a complex zero: TensorFlow's gives -inf in the real "
                                              "part where NumPy's gives NaN (both are not finite)"}),
    OpEntry("MatrixSolveLs", [
        Sample("tall", {"matrix": regular(4, 2), "rhs": regular(4, 1, seed=1), "l2_regularizer": np.float64(0)},
               fd=True),
        Sample("tall_regularized", {"matrix": regular(3, 2), "rhs": regular(3, 2, seed=1),
                                    "l2_regularizer": np.float64(0.5)}, fd=True),
        Sample("wide", {"matrix": regular(2, 3), "rhs": regular(2, 1, seed=1), "l2_regularizer": np.float64(0.1)},
               fd=True),
        Sample("square_batch", {"matrix": near_identity(2, 2, 2), "rhs": regular(2, 2, 1, seed=1),
                                "l2_regularizer": np.float64(0)}, fd=True),
        Sample("minimum_norm", {"matrix": regular(2, 3), "rhs": regular(2, 1, seed=1),
                                "l2_regularizer": np.float64(0)}, {"fast": False}, grad=False),
        Sample("empty_batch", {"matrix": empty(0, 3, 2), "rhs": empty(0, 3, 1), "l2_regularizer": np.float64(0)}),
        Sample("rows_mismatch", {"matrix": regular(3, 2), "rhs": regular(2, 1), "l2_regularizer": np.float64(0)}),
    ], dtypes=("float32", "float64", "complex64", "complex128"), rtol=1e-4, grad_rtol=1e-3,
        differs={"*|complex*:grad": _COMPLEX_GRAD_DIFFERS}),
    OpEntry("MatrixSquareRoot", [
        Sample("matrix", {"input": near_identity(3, 3)}, fd=True),
        Sample("batch", {"input": near_identity(2, 2, 2, seed=1)}, fd=True),
        Sample("one_by_one", {"input": near_identity(1, 1)}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        *_square_errors(),
    ], rtol=1e-4, grad_rtol=1e-3, differs={"*|complex*:grad": _COMPLEX_GRAD_DIFFERS}),
    OpEntry("Qr", [
        Sample("square", {"input": near_identity(3, 3)}, fd=True),
        Sample("tall", {"input": regular(4, 2)}, fd=True),
        Sample("wide", {"input": near_identity(2, 2)}, fd=True),
        Sample("wide_3", {"input": regular(2, 3)}, fd=True),
        Sample("batch", {"input": regular(2, 3, 2)}, fd=True),
        Sample("full_tall", {"input": regular(3, 2)}, {"full_matrices": True}, grad=False),
        Sample("full_square", {"input": near_identity(2, 2)}, {"full_matrices": True}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        Sample("rank1", {"input": regular(3)}),
    ], build=_qr, rtol=1e-4, grad_rtol=1e-3),
    OpEntry("SelfAdjointEigV2", [
        Sample("matrix", {"input": near_identity(3, 3)}, fd=True),
        Sample("batch", {"input": near_identity(2, 2, 2, seed=1)}, fd=True),
        Sample("values_only", {"input": near_identity(3, 3, seed=2)}, {"compute_v": False}, fd=True),
        Sample("one_by_one", {"input": near_identity(1, 1)}, fd=True),
        Sample("empty_batch", {"input": empty(0, 2, 2)}),
        *_square_errors(),
    ], build=_eigh, rtol=1e-4, grad_rtol=1e-3),
]


"""Finite-difference cases (float64) for the gradients of the TF1 core additions: Roll, the
TensorScatter family, Cross, the factorizations and solvers, the special functions, the FFT family
(between real tensors: ``complex(x, y)`` in, real and imaginary parts out), SparseSoftmax and
SparseMatMul (float32 only: looser tolerances). RandomGamma's gradient is checked in
tests/grad/test_special_grad.py (its draws change from run to run)."""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from tests.grad.grad_case import GradCase, positive, rand


def _spd(a):
    """A well-conditioned symmetric positive-definite matrix from ``a`` (its symmetric part + 3 I)."""
    n = a.shape[-1].value
    return (a + tf.linalg.adjoint(a)) / 2 + 3.0 * tf.eye(n, dtype=tf.float64)


def _near_identity(*shape, seed=None):
    return rand(*shape, seed=seed) * 0.3 + 2.0 * np.eye(shape[-1])


def _parts(z):
    return [tf.real(z), tf.imag(z)]


_INDICES = np.array([[0], [2]], np.int32)

CASES = [
    GradCase("Roll", lambda x: tf.roll(x, [1, -2], [0, 1]), [rand(3, 4)]),
    GradCase("TensorScatterUpdate", lambda t, u: tf.tensor_scatter_nd_update(t, _INDICES, u), [rand(4, 2),
                                                                                              rand(2, 2, seed=1)]),
    GradCase("TensorScatterAdd", lambda t, u: tf.tensor_scatter_nd_add(t, [[1], [1]], u), [rand(3), rand(2, seed=1)]),
    GradCase("TensorScatterSub", lambda t, u: tf.tensor_scatter_nd_sub(t, _INDICES, u), [rand(4, 2),
                                                                                        rand(2, 2, seed=1)]),
    GradCase("TensorScatterMin", lambda t, u: tf.tensor_scatter_nd_min(t, _INDICES, u),
             [np.array([[0.1, 0.9], [0.5, 0.5], [0.8, -0.3], [0.0, 0.2]]), np.array([[0.4, 0.3], [0.2, 0.6]])]),
    GradCase("TensorScatterMax", lambda t, u: tf.tensor_scatter_nd_max(t, _INDICES, u),
             [np.array([[0.1, 0.9], [0.5, 0.5], [0.8, -0.3], [0.0, 0.2]]), np.array([[0.4, 0.3], [0.2, 0.6]])]),
    GradCase("Cross", lambda a, b: tf.cross(a, b), [rand(2, 3), rand(2, 3, seed=1)]),
    GradCase("Cholesky", lambda a: tf.cholesky(_spd(a)), [rand(3, 3)]),
    GradCase("MatrixSolve", lambda a, b: tf.matrix_solve(a, b), [_near_identity(3, 3), rand(3, 2, seed=1)]),
    GradCase("MatrixSolve", lambda a, b: tf.matrix_solve(a, b, adjoint=True), [_near_identity(2, 3, 3),
                                                                              rand(2, 3, 1, seed=1)],
             name="MatrixSolve_adjoint"),
    GradCase("MatrixTriangularSolve", lambda a, b: tf.matrix_triangular_solve(a, b),
             [_near_identity(3, 3), rand(3, 2, seed=1)]),
    GradCase("MatrixTriangularSolve", lambda a, b: tf.matrix_triangular_solve(a, b, lower=False, adjoint=True),
             [_near_identity(2, 3, 3), rand(3, 2, seed=1)], name="MatrixTriangularSolve_upper_adjoint_broadcast"),
    GradCase("MatrixSolveLs", lambda a, b: tf.matrix_solve_ls(a, b, l2_regularizer=0.1),
             [rand(4, 2), rand(4, 1, seed=1)]),
    GradCase("MatrixSolveLs", lambda a, b: tf.matrix_solve_ls(a, b), [rand(2, 3), rand(2, 2, seed=1)],
             name="MatrixSolveLs_wide"),
    GradCase("MatrixSquareRoot", lambda a: tf.linalg.sqrtm(a), [_near_identity(3, 3)]),
    GradCase("Qr", lambda a: list(tf.qr(a)), [_near_identity(3, 3)]),
    GradCase("Qr", lambda a: list(tf.qr(a)), [rand(4, 2)], name="Qr_tall"),
    GradCase("Qr", lambda a: list(tf.qr(a)), [rand(2, 4)], name="Qr_wide"),
    GradCase("SelfAdjointEigV2", lambda a: [tf.self_adjoint_eig(_spd(a))[0], tf.abs(tf.self_adjoint_eig(_spd(a))[1])],
             [np.array([[0.1, 0.5, -0.3], [0.2, 1.0, 0.4], [0.0, -0.6, 2.0]])]),
    GradCase("SelfAdjointEigV2", lambda a: tf.self_adjoint_eigvals(_spd(a)), [rand(3, 3)],
             name="SelfAdjointEigV2_values"),
    GradCase("Igamma", lambda a, x: tf.igamma(a, x), [positive(2, 3), positive(3, seed=1)]),
    GradCase("Igammac", lambda a, x: tf.igammac(a, x), [positive(3), positive(3, seed=1)]),
    GradCase("Betainc", lambda x: tf.betainc(tf.constant([0.5, 2.0, 3.0], tf.float64),
                                             tf.constant([2.0, 1.5, 4.0], tf.float64), x),
             [np.array([0.2, 0.5, 0.7])]),
    GradCase("Zeta", lambda q: tf.zeta(tf.constant([2.0, 3.5], tf.float64), q), [positive(2)]),
    GradCase("Polygamma", lambda x: tf.polygamma(tf.constant([0.0, 1.0, 2.0], tf.float64), x), [positive(3)]),
    GradCase("SparseSoftmax", lambda v: tf.sparse_softmax(tf.SparseTensor([[0, 0], [0, 2], [1, 1], [1, 2]], v,
                                                                          [2, 3])).values, [rand(4)]),
    GradCase("SparseMatMul", lambda a, b: tf.cast(tf.sparse_matmul(tf.cast(a, tf.float32), tf.cast(b, tf.float32),
                                                                   transpose_b=True), tf.float64),
             [rand(2, 3), rand(4, 3, seed=1)], rtol=2e-2, atol=2e-3, delta=1e-3),
]



def _of_complex(fn, parts=True):
    """``fn`` applied to ``complex(x, y)``, its result split into real and imaginary parts if ``parts``."""
    return lambda x, y: _parts(fn(tf.complex(x, y))) if parts else fn(tf.complex(x, y))


def _of_real(fn):
    return lambda x: _parts(fn(x))


for _suffix, _shape in (("", [2, 4]), ("2D", [3, 4]), ("3D", [2, 2, 3])):
    _lower = _suffix.lower()
    _pair_inputs = [rand(*_shape), rand(*_shape, seed=1)]
    CASES += [
        GradCase("FFT" + _suffix, _of_complex(getattr(tf.signal, "fft" + _lower)), _pair_inputs),
        GradCase("IFFT" + _suffix, _of_complex(getattr(tf.signal, "ifft" + _lower)), _pair_inputs),
        GradCase("RFFT" + _suffix, _of_real(getattr(tf.signal, "rfft" + _lower)), [rand(*_shape)]),
        GradCase("IRFFT" + _suffix, _of_complex(getattr(tf.signal, "irfft" + _lower), parts=False), _pair_inputs),
    ]

CASES += [  # ND transforms over chosen axes, cropping and padding
    GradCase("FFTND", _of_complex(lambda z: tf.fftnd(z, [3, 4], [0, 2])), [rand(2, 3, 3), rand(2, 3, 3, seed=1)]),
    GradCase("IFFTND", _of_complex(lambda z: tf.ifftnd(z, [2, 2], [-1, 0])), [rand(3, 4), rand(3, 4, seed=1)]),
    GradCase("RFFTND", _of_real(lambda x: tf.rfftnd(x, [3, 5], [0, 1], Tcomplex=tf.complex128)), [rand(2, 4)]),
    GradCase("IRFFTND", _of_complex(lambda z: tf.irfftnd(z, [2, 4], [1, 2], Treal=tf.float64), parts=False),
             [rand(2, 3, 3), rand(2, 3, 3, seed=1)]),
]

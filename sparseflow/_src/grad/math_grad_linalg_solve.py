"""Gradients of the factorizations and solvers: Cholesky, MatrixSolve, MatrixTriangularSolve,
MatrixSolveLs (``fast``), MatrixSquareRoot, Qr and SelfAdjointEigV2.

Each is the matrix-calculus adjoint of its forward map: for ``x = A^-1 b``, ``b_bar = A^-H x_bar``
and ``A_bar = -b_bar x^H``; Cholesky's is Murray's (2016) ``Phi(L^H L_bar)`` rule; QR's and the
eigendecomposition's are the standard ones for distinct eigenvalues and full-rank ``R``;
the square root's solves the Sylvester equation ``R^H X + X R^H = R_bar``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[2.0, 0.0], [0.0, 4.0]])
    ...     ga = tf.gradients(tf.reduce_sum(tf.matrix_solve(a, [[2.0], [2.0]])), a)[0]
    ...     print(sess.run(ga).tolist())
    [[-0.5, -0.25], [-0.25, -0.125]]
"""

from __future__ import annotations

from sparseflow._src.grad.math_grad_util import dense, unbroadcast
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.math_einsum import einsum
from sparseflow._src.ops.math_linalg_solve import (
    cholesky,
    cholesky_solve,
    matrix_solve,
    matrix_triangular_solve,
    self_adjoint_eig,
)

__all__: list[str] = []


def _adjoint(x):
    return array_ops.matrix_transpose(x, conjugate=True)


def _mm(a, b, **kw):
    return math_ops.matmul(a, b, **kw)


def _or_zeros(grad, like):
    return array_ops.zeros_like(like) if grad is None else dense(grad)


@RegisterGradient("Cholesky")
def _cholesky_grad(op, grad):
    """A_bar = 1/2 L^-H (Phi + Phi^H) L^-1 with Phi = tril(L^H L_bar), its diagonal halved."""
    chol = op.outputs[0]
    eye = array_ops.ones_like(math_ops.matrix_diag_part(chol))
    chol_inv = matrix_triangular_solve(chol, math_ops.matrix_diag(eye))
    middle = _mm(chol, dense(grad), adjoint_a=True)
    middle = math_ops.matrix_set_diag(math_ops.matrix_band_part(middle, -1, 0), 0.5 * math_ops.matrix_diag_part(middle))
    grad_a = _mm(_mm(chol_inv, middle, adjoint_a=True), chol_inv)
    return [0.5 * (grad_a + _adjoint(grad_a))]


@RegisterGradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    a, x = op.inputs[0], op.outputs[0]
    adjoint = op.get_attr("adjoint")
    grad_b = matrix_solve(a, dense(grad), adjoint=not adjoint)
    grad_a = -_mm(x, grad_b, adjoint_b=True) if adjoint else -_mm(grad_b, x, adjoint_b=True)
    return [grad_a, grad_b]


@RegisterGradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op, grad):
    a, b = op.inputs
    x = op.outputs[0]
    lower, adjoint = op.get_attr("lower"), op.get_attr("adjoint")
    grad_b = matrix_triangular_solve(a, dense(grad), lower=lower, adjoint=not adjoint)
    grad_a = -_mm(x, grad_b, adjoint_b=True) if adjoint else -_mm(grad_b, x, adjoint_b=True)
    grad_a = math_ops.matrix_band_part(grad_a, -1, 0) if lower else math_ops.matrix_band_part(grad_a, 0, -1)
    return [unbroadcast(grad_a, a), unbroadcast(grad_b, b)]


@RegisterGradient("MatrixSolveLs")
def _matrix_solve_ls_grad(op, grad):
    """The adjoint of x = (A^H A + l I)^-1 A^H b (tall or square A) or x = A^H (A A^H + l I)^-1 b
    (wide A); l2_regularizer gets no gradient, as in TensorFlow."""
    if not op.get_attr("fast"):
        raise ValueError("Gradient not defined for fast=False")
    a, b, l2 = op.inputs
    x = op.outputs[0]
    grad = dense(grad)
    shape = a.shape
    if shape.ndims is None or shape[-2].value is None or shape[-1].value is None:
        raise ValueError("The gradient of matrix_solve_ls needs the matrix's inner dimensions statically "
                         "(which of its two formulas applies).")
    m, n = shape[-2].value, shape[-1].value
    l2 = math_ops.cast(l2, a.dtype)
    if m >= n:
        gram = _mm(a, a, adjoint_a=True) + l2 * math_ops.matrix_diag(array_ops.ones_like(a[..., 0, :]))
        z = cholesky_solve(cholesky(gram), grad)
        grad_a = _mm(b - _mm(a, x), z, adjoint_b=True) - _mm(_mm(a, z), x, adjoint_b=True)
        return [grad_a, _mm(a, z), None]
    gram = _mm(a, a, adjoint_b=True) + l2 * math_ops.matrix_diag(array_ops.ones_like(a[..., :, 0]))
    chol = cholesky(gram)
    y = cholesky_solve(chol, b)
    w = cholesky_solve(chol, _mm(a, grad))
    grad_a = _mm(y, grad, adjoint_b=True) - _mm(_mm(w, y, adjoint_b=True), a) - _mm(_mm(y, w, adjoint_b=True), a)
    return [grad_a, w, None]


@RegisterGradient("MatrixSquareRoot")
def _matrix_square_root_grad(op, grad):
    """Solves R^H X + X R^H = R_bar as one linear system of size n^2 (Kronecker products)."""
    root = op.outputs[0]
    root_h = _adjoint(root)
    n = array_ops.shape(root)[-1]
    batch = array_ops.shape(root)[:-2]
    eye = math_ops.matrix_diag(array_ops.ones_like(root[..., 0, :]))
    left = einsum("...ij,...kl->...ikjl", root_h, eye)  # kron(R^H, I): R^H X, row-major vec
    right = einsum("...ij,...kl->...ikjl", eye, math_ops.conj(root))  # kron(I, conj(R)): X R^H
    square = array_ops.concat([batch, [n * n, n * n]], 0)
    system = array_ops.reshape(left + right, square)
    vec = array_ops.reshape(dense(grad), array_ops.concat([batch, [n * n, 1]], 0))
    solution = matrix_solve(system, vec)
    return [array_ops.reshape(solution, array_ops.shape(root))]


def _solve_r_right(x, r):
    """``x @ inv(R)^H`` for upper-triangular ``R``, as ``adjoint(solve(R, adjoint(x)))``."""
    return _adjoint(matrix_triangular_solve(r, _adjoint(x), lower=False, adjoint=False))


def _qr_grad_deep(q, r, dq, dr):
    """The gradient of A = Q R for m >= n (reduced Q, full-rank square R)."""
    qdq = _mm(q, dq, adjoint_a=True)
    qdq_skew = qdq - _adjoint(qdq)
    rdr = _mm(r, dr, adjoint_b=True)
    rdr_skew = rdr - _adjoint(rdr)
    tril = math_ops.matrix_band_part(qdq_skew + rdr_skew, -1, 0)
    grad_a = _mm(q, dr + _solve_r_right(tril, r))
    grad_b = _solve_r_right(dq - _mm(q, qdq), r)
    out = grad_a + grad_b
    if q.dtype.is_complex:
        m = rdr - _adjoint(qdq)
        diag = math_ops.matrix_set_diag(array_ops.zeros_like(m), math_ops.matrix_diag_part(m))
        correction = diag - math_ops.cast(math_ops.real(diag), q.dtype)
        out = out + _solve_r_right(_mm(q, _adjoint(correction)), r)
    return out


@RegisterGradient("Qr")
def _qr_grad(op, dq, dr):
    a = op.inputs[0]
    q, r = op.outputs
    shape = a.shape
    if shape.ndims is None or shape[-2].value is None or shape[-1].value is None:
        raise NotImplementedError("The gradient of qr needs the matrix's inner dimensions statically.")
    m, n = shape[-2].value, shape[-1].value
    if op.get_attr("full_matrices") and m > n:
        raise NotImplementedError("QrGrad not implemented when nrows > ncols and full_matrices is true.")
    dq, dr = _or_zeros(dq, q), _or_zeros(dr, r)
    if m >= n:
        return [_qr_grad_deep(q, r, dq, dr)]
    # A = [X | Y] with X = Q U square: Y's part of R is Q^H Y.
    y, u = a[..., :, m:], r[..., :, :m]
    dv, du = dr[..., :, m:], dr[..., :, :m]
    dy = _mm(q, dv)
    dx = _qr_grad_deep(q, u, dq + _mm(y, dv, adjoint_b=True), du)
    return [array_ops.concat([dx, dy], axis=-1)]


@RegisterGradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    """For distinct eigenvalues: V (diag(e_bar) + F o (V^H V_bar)) V^H, F_ij = 1 / (e_j - e_i),
    symmetrized onto the lower triangle the op reads."""
    e = op.outputs[0]
    grad_e = _or_zeros(grad_e, e)
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        grad_v = _or_zeros(grad_v, v)
        diff = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
        f = math_ops.matrix_set_diag(math_ops.reciprocal(diff), array_ops.zeros_like(e))
        inner = math_ops.matrix_diag(grad_e) + math_ops.conj(f) * _mm(v, grad_v, adjoint_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = math_ops.matrix_diag(grad_e)
    grad_a = _mm(v, _mm(inner, v, adjoint_b=True))
    grad_a = math_ops.matrix_band_part(grad_a + _adjoint(grad_a), -1, 0)
    return [math_ops.matrix_set_diag(grad_a, 0.5 * math_ops.matrix_diag_part(grad_a))]

"""Gradients of matrix products and linear algebra: MatMul, BatchMatMul (V1, V2, V3), determinants,
inverse, SVD, band parts and the diagonal ops, following TensorFlow's ``math_grad.py``,
``linalg_grad.py`` and ``array_grad.py``.

MatMul's gradients are MatMuls with the transposes that undo the forward ones; BatchMatMulV2
(and V3) sum the gradients over broadcast batch dimensions with ``grad_util.unbroadcast``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     b = tf.constant([[1.0, 0.0], [0.0, 2.0]])
    ...     ga, gb = tf.gradients(tf.matmul(a, b, transpose_b=True), [a, b])
    ...     print(sess.run(ga).tolist(), sess.run(gb).tolist())
    [[1.0, 2.0], [1.0, 2.0]] [[4.0, 6.0], [4.0, 6.0]]
"""

from __future__ import annotations

from sparseflow._src.grad.gradients_util import input_needs_gradient
from sparseflow._src.grad.math_grad_util import conj, dense, real_valued, unbroadcast
from sparseflow._src.grad.registry import RegisterGradient
from sparseflow._src.ops import array_ops, control_flow_ops, math_ops
from sparseflow._src.ops.math_cwise import apply1

__all__: list[str] = []


def _mat_mul(a, b, transpose_a=False, transpose_b=False, grad_a=False, grad_b=False):
    """A MatMul node (never BatchMatMul, whatever the static ranks say)."""
    return apply1("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b,
                                     "grad_a": grad_a, "grad_b": grad_b})


@RegisterGradient("MatMul")
def _mat_mul_grad(op, grad):
    t_a, t_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    g = dense(grad)
    if not t_a and not t_b:
        grads = [lambda: _mat_mul(g, b, transpose_b=True, grad_a=True),
                 lambda: _mat_mul(a, g, transpose_a=True, grad_b=True)]
    elif not t_a and t_b:
        grads = [lambda: _mat_mul(g, b, grad_a=True), lambda: _mat_mul(g, a, transpose_a=True, grad_b=True)]
    elif t_a and not t_b:
        grads = [lambda: _mat_mul(b, g, transpose_b=True, grad_a=True), lambda: _mat_mul(a, g, grad_b=True)]
    else:
        grads = [lambda: _mat_mul(b, g, transpose_a=True, transpose_b=True, grad_a=True),
                 lambda: _mat_mul(g, a, transpose_a=True, transpose_b=True, grad_b=True)]
    # An input no x of this gradients call depends on (a placeholder of data) gets no product, as in
    # TensorFlow (whose gating would otherwise force it to run).
    return [make() if input_needs_gradient(op, i) else None for i, make in enumerate(grads)]


def _batch_mat_mul_grads(x, y, grad, adj_x, adj_y):
    """(grad_x, grad_y) at the broadcast batch shape, for ``x @ y`` with adjoint flags."""
    mm = math_ops.matmul
    if not adj_x and not adj_y:
        return mm(grad, y, adjoint_b=True, grad_a=True), mm(x, grad, adjoint_a=True, grad_b=True)
    if not adj_x and adj_y:
        return mm(grad, y, grad_a=True), mm(grad, x, adjoint_a=True, grad_b=True)
    if adj_x and not adj_y:
        return mm(y, grad, adjoint_b=True, grad_a=True), mm(x, grad, grad_b=True)
    return (mm(y, grad, adjoint_a=True, adjoint_b=True, grad_a=True),
            mm(grad, x, adjoint_a=True, adjoint_b=True, grad_b=True))


def _batch_mat_mul_grad(op, grad):
    x, y = op.inputs
    grad = dense(grad)
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if x.dtype.base_dtype == y.dtype.base_dtype == grad.dtype.base_dtype:
        gx, gy = _batch_mat_mul_grads(x, y, grad, adj_x, adj_y)
    else:  # BatchMatMulV3 with mixed types: each gradient is computed in its input's type
        gx, _ = _batch_mat_mul_grads(x, math_ops.cast(y, x.dtype), math_ops.cast(grad, x.dtype), adj_x, adj_y)
        _, gy = _batch_mat_mul_grads(math_ops.cast(x, y.dtype), y, math_ops.cast(grad, y.dtype), adj_x, adj_y)
    return [unbroadcast(gx, x), unbroadcast(gy, y)]


for _op_type in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"):
    RegisterGradient(_op_type)(_batch_mat_mul_grad)


# ---------------------------------------------------------------- determinants, inverse, SVD
def _per_matrix(t):
    """``t`` [...] as [..., 1, 1], to scale each matrix of a batch."""
    return array_ops.expand_dims(array_ops.expand_dims(t, -1), -1)


@RegisterGradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    a_adj_inv = math_ops.matrix_inverse(op.inputs[0], adjoint=True)
    return [_per_matrix(dense(grad) * conj(op.outputs[0])) * a_adj_inv]


@RegisterGradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op, grad_sign, grad_log_abs):
    """``c A^-H`` with ``c = Re(g_log_abs)``, plus for complex ``A`` the phase's ``i Im(g_sign conj(sign))``
    (a real matrix's sign is piecewise constant; a complex one's is ``exp(i arg det A)``)."""
    a = op.inputs[0]
    coeff = real_valued(dense(grad_log_abs))
    if a.dtype.is_complex and grad_sign is not None:
        phase = math_ops.imag(dense(grad_sign) * math_ops.conj(op.outputs[0]))
        real = array_ops.zeros_like(phase) if coeff is None else math_ops.real(coeff)
        coeff = math_ops.complex(real, phase)
    if coeff is None:
        return [None]
    a_adj_inv = math_ops.matrix_inverse(a, adjoint=True)
    return [_per_matrix(coeff) * a_adj_inv]


@RegisterGradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    grad = dense(grad)
    if op.get_attr("adjoint"):  # Y = inv(A^H): dA = -Y G^H Y (TensorFlow ignores the attr here)
        return [-math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_a=True))]
    return [-math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_b=True), adjoint_a=True)]


def _safe_reciprocal(x, epsilon=1e-20):
    """``1 / x`` with a Lorentz broadening, finite for degenerate (equal or zero) singular values."""
    return x * math_ops.reciprocal(x * x + epsilon)


def _adjoint(x):
    return array_ops.matrix_transpose(x, conjugate=True)


def _or_zeros(grad, like):
    return array_ops.zeros_like(like) if grad is None else dense(grad)


@RegisterGradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    """The SVD gradient (Giles 2008; Townsend's derivation for reduced matrices), as in TensorFlow."""
    a = op.inputs[0]
    a_shape = a.shape.with_rank_at_least(2)
    grad_s = math_ops.cast(real_valued(_or_zeros(grad_s, op.outputs[0])), a.dtype)  # singular values are real
    grad_s_mat = math_ops.matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = math_ops.svd(a, compute_uv=True)
        grad_a = math_ops.matmul(u, math_ops.matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a_shape)
        return [grad_a]
    full_matrices = op.get_attr("full_matrices")
    grad_u = _or_zeros(grad_u, op.outputs[1])
    grad_v = _or_zeros(grad_v, op.outputs[2])
    m, n = (None, None) if a_shape.ndims is None else (a_shape[-2].value, a_shape[-1].value)
    s, u, v = math_ops.cast(op.outputs[0], a.dtype), op.outputs[1], op.outputs[2]
    if m is None or n is None:
        grad_a = _svd_grad_any_shape(a, s, u, v, grad_s_mat, grad_u, grad_v, full_matrices)
        grad_a.set_shape(a_shape)
        return [grad_a]
    use_adjoint = m > n
    if use_adjoint:  # differentiate A^H = V S U^H and take the adjoint at the end
        m, n = n, m
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 when full_matrices is "
                                  "True")
    s_mat = math_ops.matrix_diag(s)
    s2 = math_ops.square(s)
    # f[i, j] = 1 / (s_j^2 - s_i^2) off the diagonal: infinite (here broadened) for repeated values.
    f = math_ops.matrix_set_diag(
        _safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)), array_ops.zeros_like(s))
    s_inv_mat = math_ops.matrix_diag(_safe_reciprocal(s))
    v1 = v[..., :, :m]
    grad_v1 = grad_v[..., :, :m]
    u_gu = math_ops.matmul(u, grad_u, adjoint_a=True)
    v_gv = math_ops.matmul(v1, grad_v1, adjoint_a=True)
    f_u = f * u_gu
    f_v = f * v_gv
    term1_nouv = (grad_s_mat + math_ops.matmul(f_u + _adjoint(f_u), s_mat)
                  + math_ops.matmul(s_mat, f_v + _adjoint(f_v)))
    grad_a = math_ops.matmul(u, math_ops.matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = _adjoint(grad_v1)
        term2_nous = gv1t - math_ops.matmul(math_ops.matmul(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2 = v[..., :, m:n]
            grad_v2 = grad_v[..., :, m:n]
            term2_nous -= math_ops.matmul(math_ops.matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a = grad_a + math_ops.matmul(math_ops.matmul(u, s_inv_mat), term2_nous)
    if a.dtype.is_complex:
        eye = math_ops.matrix_diag(array_ops.ones_like(s))
        l = eye * v_gv
        term3_nouv = math_ops.matmul(s_inv_mat, _adjoint(l) - l)
        grad_a = grad_a + 0.5 * math_ops.matmul(u, math_ops.matmul(term3_nouv, v1, adjoint_b=True))
    if use_adjoint:
        grad_a = _adjoint(grad_a)
    grad_a.set_shape(a_shape)
    return [grad_a]


def _svd_grad_any_shape(a, s, u, v, grad_s, grad_u, grad_v, full_matrices):
    """The SVD gradient when the matrices' sizes are unknown when the graph is built (TensorFlow raises
    NotImplementedError there): the same terms, without choosing tall or wide in Python. With
    ``k = min(m, n)``, ``U1, V1`` the first ``k`` columns and ``U2, V2`` the rest (full matrices only)::

        U1 [dS + (F o U1^H dU1 + h.c.) S + S (F o V1^H dV1 + h.c.)] V1^H
          + U1 S^-1 (dV1^H - dV1^H V1 V1^H - V1^H dV2 V2^H) + (dU1 - U1 U1^H dU1 - U2 dU2^H U1) S^-1 V1^H

    The projections vanish on the square side; for complex inputs the phase term is taken from V where
    ``m <= n`` and from U where ``m > n``, as TensorFlow's.
    """
    mm = math_ops.matmul
    shape = array_ops.shape(a)
    m, n = shape[-2], shape[-1]
    checks = []
    if full_matrices:  # the trailing columns of the larger side are unique (up to sign) for |m - n| <= 1 only
        checks.append(control_flow_ops.Assert(
            math_ops.less_equal(math_ops.abs(m - n), 1),
            ["svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True; got m, n =", m, n]))
    with a.graph.control_dependencies(checks):
        k = array_ops.shape(s)[-1]
    u1, gu1, v1, gv1 = u[..., :, :k], grad_u[..., :, :k], v[..., :, :k], grad_v[..., :, :k]
    s_mat = math_ops.matrix_diag(s)
    s2 = math_ops.square(s)
    f = math_ops.matrix_set_diag(
        _safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)), array_ops.zeros_like(s))
    s_inv_mat = math_ops.matrix_diag(_safe_reciprocal(s))
    u_gu = mm(u1, gu1, adjoint_a=True)
    v_gv = mm(v1, gv1, adjoint_a=True)
    f_u, f_v = f * u_gu, f * v_gv
    middle = grad_s + mm(f_u + _adjoint(f_u), s_mat) + mm(s_mat, f_v + _adjoint(f_v))
    gv1t = _adjoint(gv1)
    v_side = gv1t - mm(mm(gv1t, v1), v1, adjoint_b=True)
    u_side = gu1 - mm(u1, u_gu)
    if full_matrices:
        v_side -= mm(mm(v1, grad_v[..., :, k:], adjoint_a=True), v[..., :, k:], adjoint_b=True)
        u_side -= mm(u[..., :, k:], mm(grad_u[..., :, k:], u1, adjoint_a=True))
    grad_a = (mm(u1, mm(middle, v1, adjoint_b=True)) + mm(mm(u1, s_inv_mat), v_side)
              + mm(mm(u_side, s_inv_mat), v1, adjoint_b=True))
    if a.dtype.is_complex:
        eye = math_ops.matrix_diag(array_ops.ones_like(s))
        l_v, l_u = eye * v_gv, eye * u_gu
        phase = math_ops.where_v2(math_ops.greater(m, n), l_u - _adjoint(l_u), _adjoint(l_v) - l_v)
        grad_a = grad_a + 0.5 * mm(u1, mm(mm(s_inv_mat, phase), v1, adjoint_b=True))
    return grad_a


# ---------------------------------------------------------------- band part and diagonals
@RegisterGradient("MatrixBandPart")
def _matrix_band_part_grad(op, grad):
    return [math_ops.matrix_band_part(dense(grad), op.inputs[1], op.inputs[2]), None, None]


RegisterGradient("Diag")(lambda op, grad: [math_ops.diag_part(dense(grad))])
RegisterGradient("DiagPart")(lambda op, grad: [math_ops.diag(dense(grad))])
RegisterGradient("MatrixDiag")(lambda op, grad: [math_ops.matrix_diag_part(dense(grad))])


@RegisterGradient("MatrixDiagV3")
def _matrix_diag_v3_grad(op, grad):
    part = math_ops.matrix_diag_part(dense(grad), k=op.inputs[1], align=op.get_attr("align"))
    return [part, None, None, None, None]


@RegisterGradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    rows_cols = x.shape[-2:] if x.shape.ndims is not None else None
    if rows_cols is not None and rows_cols.is_fully_defined() and rows_cols[0] == rows_cols[1]:
        return [math_ops.matrix_diag(dense(grad))]
    return [math_ops.matrix_set_diag(array_ops.zeros_like(x), dense(grad))]


@RegisterGradient("MatrixDiagPartV3")
def _matrix_diag_part_v3_grad(op, grad):
    x, k = op.inputs[0], op.inputs[1]
    align = op.get_attr("align")
    rows_cols = x.shape[-2:] if x.shape.ndims is not None else None
    if rows_cols is not None and rows_cols.is_fully_defined():
        rows, cols = rows_cols.as_list()
        return [math_ops.matrix_diag(dense(grad), k=k, num_rows=rows, num_cols=cols, align=align), None, None]
    return [math_ops.matrix_set_diag(array_ops.zeros_like(x), dense(grad), k=k, align=align), None, None]


@RegisterGradient("MatrixSetDiag")
def _matrix_set_diag_grad(op, grad):
    grad = dense(grad)
    grad_input = math_ops.matrix_set_diag(grad, array_ops.zeros_like(op.inputs[1]))
    return [grad_input, math_ops.matrix_diag_part(grad)]


@RegisterGradient("MatrixSetDiagV3")
def _matrix_set_diag_v3_grad(op, grad):
    grad = dense(grad)
    k, align = op.inputs[2], op.get_attr("align")
    grad_input = math_ops.matrix_set_diag(grad, array_ops.zeros_like(op.inputs[1]), k=k, align=align)
    return [grad_input, math_ops.matrix_diag_part(grad, k=k, align=align), None]

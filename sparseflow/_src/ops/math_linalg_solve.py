"""Factorizations and solvers of (batches of) matrices: Cholesky, MatrixSolve, MatrixSolveLs,
MatrixTriangularSolve, MatrixSquareRoot, Qr and SelfAdjointEigV2, with ``tf.cholesky``,
``tf.cholesky_solve``, ``tf.matrix_solve(_ls)``, ``tf.matrix_triangular_solve``,
``tf.matrix_square_root``, ``tf.qr``, ``tf.self_adjoint_eig(vals)`` and their ``tf.linalg`` names
(``solve``, ``triangular_solve``, ``lstsq``, ``sqrtm``, ``eigh``, ``eigvalsh``, ``logdet``,
``matvec``).

As in TensorFlow, Cholesky and SelfAdjointEigV2 read only the lower triangle of their input, and
MatrixTriangularSolve only the triangle it is told (``lower``).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[4.0, 2.0], [2.0, 3.0]])
    ...     print(sess.run(tf.cholesky(a)).astype("float64").round(3).tolist())
    ...     print(sess.run(tf.matrix_solve(a, [[2.0], [1.0]])).tolist())
    [[2.0, 0.0], [1.0, 1.414]]
    [[0.5], [0.0]]
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.array_util import debug_shape
from sparseflow._src.ops.math_cwise import apply1, broadcast_shapes, op_scope

__all__ = ["cholesky", "cholesky_solve", "matrix_solve", "matrix_solve_ls", "matrix_triangular_solve",
           "matrix_square_root", "qr", "self_adjoint_eig", "self_adjoint_eigvals"]

_LINALG_T = "{double, float, half, complex64, complex128}"


# ---------------------------------------------------------------- shape functions
def _square(op, shape):
    shape = shape.with_rank_at_least(2)
    if shape.ndims is not None:
        r, c = shape[-2].value, shape[-1].value
        if r is not None and c is not None and r != c:
            raise ValueError(f"Dimensions must be equal, but are {r} and {c} for '{op.name}' (op: '{op.type}') "
                             f"with input shape {debug_shape(shape)}")
        n = r if r is not None else c
        shape = shape[:-2].concatenate([n, n])
    return shape


def _square_shape(op):
    return [_square(op, op.inputs[0].shape)]


def _solve_shape(op):
    """[..., M, K] from a square [..., M, M] matrix and a [..., M, K] right-hand side (equal batches)."""
    matrix = _square(op, op.inputs[0].shape)
    rhs = op.inputs[1].shape.with_rank_at_least(2)
    if matrix.ndims is None or rhs.ndims is None:
        return [unknown_shape() if rhs.ndims is None else rhs]
    if matrix.ndims != rhs.ndims or not matrix[:-2].is_compatible_with(rhs[:-2]) or \
            not matrix[-2].is_compatible_with(rhs[-2]):
        raise ValueError(f"Shapes {debug_shape(matrix)} and {debug_shape(rhs)} are incompatible for '{op.name}' "
                         f"(op: '{op.type}'): the matrix must be [..., M, M] and the right-hand side [..., M, K]")
    return [matrix[:-2].merge_with(rhs[:-2]).concatenate([matrix[-2].merge_with(rhs[-2]), rhs[-1]])]


def _triangular_solve_shape(op):
    """Like MatrixSolve, with batch dimensions that broadcast."""
    matrix = _square(op, op.inputs[0].shape)
    rhs = op.inputs[1].shape.with_rank_at_least(2)
    if matrix.ndims is None or rhs.ndims is None:
        return [unknown_shape()]
    if not matrix[-2].is_compatible_with(rhs[-2]):
        raise ValueError(f"Dimensions must be equal, but are {matrix[-2]} and {rhs[-2]} for '{op.name}' "
                         f"(op: 'MatrixTriangularSolve') with input shapes: {debug_shape(matrix)}, "
                         f"{debug_shape(rhs)}")
    batch = broadcast_shapes(matrix[:-2], rhs[:-2])
    return [batch.concatenate([matrix[-2].merge_with(rhs[-2]), rhs[-1]])]


def _solve_ls_shape(op):
    matrix = op.inputs[0].shape.with_rank_at_least(2)
    rhs = op.inputs[1].shape.with_rank_at_least(2)
    op.inputs[2].shape.with_rank(0)
    if matrix.ndims is None or rhs.ndims is None:
        return [unknown_shape()]
    if matrix.ndims != rhs.ndims or not matrix[:-1].is_compatible_with(rhs[:-1]):
        raise ValueError(f"Shapes {debug_shape(matrix)} and {debug_shape(rhs)} are incompatible for '{op.name}' "
                         f"(op: 'MatrixSolveLs'): the matrix must be [..., M, N] and the right-hand side "
                         f"[..., M, K]")
    return [matrix[:-2].merge_with(rhs[:-2]).concatenate([matrix[-1], rhs[-1]])]


def _qr_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(2)
    if s.ndims is None:
        return [unknown_shape(), unknown_shape()]
    m, n = s[-2].value, s[-1].value
    p = None if m is None or n is None else min(m, n)
    if op._attrs["full_matrices"]:
        return [s[:-2].concatenate([m, m]), s[:-2].concatenate([m, n])]
    return [s[:-2].concatenate([m, p]), s[:-2].concatenate([p, n])]


def _eig_shape(op):
    s = _square(op, op.inputs[0].shape)
    if s.ndims is None:
        return [unknown_shape(), unknown_shape()]
    e = s[:-1]
    return [e, s if op._attrs["compute_v"] else TensorShape([0])]


register_op("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs=[f"T: {_LINALG_T}"],
            shape_fn=_square_shape)
register_op("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"], attrs=[f"T: {_LINALG_T}"],
            shape_fn=_square_shape)
register_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs=["adjoint: bool = false", f"T: {_LINALG_T}"], shape_fn=_solve_shape)
register_op("MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs=["lower: bool = true", "adjoint: bool = false",
                   "T: {bfloat16, double, float, half, complex64, complex128}"], shape_fn=_triangular_solve_shape)
register_op("MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: double"], outputs=["output: T"],
            attrs=[f"T: {_LINALG_T}", "fast: bool = true"], shape_fn=_solve_ls_shape)
register_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"], attrs=["full_matrices: bool = false",
                                                                       f"T: {_LINALG_T}"], shape_fn=_qr_shape)
register_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
            attrs=["compute_v: bool = true", f"T: {_LINALG_T}"], shape_fn=_eig_shape)


# ---------------------------------------------------------------- wrappers
def cholesky(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """The lower-triangular ``L`` with ``L @ adjoint(L) = input`` for each Hermitian positive-definite
    innermost matrix (only the lower triangle of ``input`` is read).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.cholesky([[9.0, 0.0], [3.0, 5.0]])).tolist())
        [[3.0, 0.0], [1.0, 2.0]]
    """
    return apply1("Cholesky", [input], name=name)


def cholesky_solve(chol, rhs, name=None):
    """The solution ``x`` of ``A x = rhs`` given ``chol = cholesky(A)`` (two triangular solves).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     chol = tf.cholesky([[4.0, 2.0], [2.0, 3.0]])
        ...     print(sess.run(tf.cholesky_solve(chol, [[2.0], [1.0]])).round(6).tolist())
        [[0.5], [0.0]]
    """
    with op_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """The solution ``x`` of ``matrix @ x = rhs`` (of ``adjoint(matrix) @ x = rhs`` if ``adjoint``);
    a singular matrix fails with InvalidArgumentError.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [[2.0], [2.0]])).tolist())
        [[1.0], [0.5]]
    """
    return apply1("MatrixSolve", [matrix, rhs], {"adjoint": adjoint}, name=name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """The solution of ``matrix @ x = rhs`` for a lower (or upper) triangular ``matrix``, reading only
    that triangle; batch dimensions broadcast.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.triangular_solve([[2.0, 9.0], [1.0, 1.0]], [[2.0], [2.0]])).tolist())
        [[1.0], [1.0]]
    """
    return apply1("MatrixTriangularSolve", [matrix, rhs], {"lower": lower, "adjoint": adjoint}, name=name)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution ``x`` minimizing ``||matrix @ x - rhs||^2 + l2_regularizer ||x||^2``.

    ``fast`` solves the regularized normal equations by Cholesky (full-rank matrices); otherwise a
    complete orthogonal decomposition gives the minimum-norm solution (``l2_regularizer`` ignored).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.linalg.lstsq([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [1.0], [2.0]])
        ...     print(sess.run(x).round(6).tolist())
        [[1.0], [1.0]]
    """
    attrs = {"fast": fast}
    with op_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]) as scope:
        return apply1("MatrixSolveLs", [matrix, rhs, convert_to_tensor(l2_regularizer, dtype="float64")], attrs,
                      name=scope)


def matrix_square_root(input, name=None):  # noqa: A002
    """The principal square root ``X`` (``X @ X = input``) of each innermost square matrix.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.sqrtm([[4.0, 0.0], [0.0, 9.0]])).tolist())
        [[2.0, 0.0], [0.0, 3.0]]
    """
    return apply1("MatrixSquareRoot", [input], name=name)


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """``(q, r)``: orthonormal columns ``q`` and upper-triangular ``r`` with ``q @ r = input``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     q, r = tf.qr([[3.0, 1.0], [4.0, 2.0]])
        ...     print(abs(sess.run(r)).astype('float64').round(3).tolist())
        [[5.0, 2.2], [0.0, 0.4]]
    """
    q, r = apply_op("Qr", [input], {"full_matrices": full_matrices}, name=name).outputs
    return q, r


def self_adjoint_eig(tensor, name=None):
    """``(e, v)``: the eigenvalues (ascending) and eigenvectors (columns) of each Hermitian matrix,
    from its lower triangle.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     e, v = tf.linalg.eigh([[2.0, 1.0], [1.0, 2.0]])
        ...     print(sess.run(e).round(6).tolist())
        [1.0, 3.0]
    """
    e, v = apply_op("SelfAdjointEigV2", [tensor], {"compute_v": True}, name=name).outputs
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each Hermitian matrix, from its lower triangle.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.self_adjoint_eigvals([[2.0, 7.0], [0.0, 1.0]])).tolist())
        [1.0, 2.0]
    """
    return apply_op("SelfAdjointEigV2", [tensor], {"compute_v": False}, name=name).outputs[0]


def logdet(matrix, name=None):
    """``log(det(matrix))`` of Hermitian positive-definite matrices, from their Cholesky factor.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.linalg.logdet([[4.0, 0.0], [0.0, 1.0]]))), 6))
        1.386294
    """
    from sparseflow._src.ops.math_arith import real
    from sparseflow._src.ops.math_cwise import WRAPPERS
    from sparseflow._src.ops.math_linalg import matrix_diag_part
    from sparseflow._src.ops.math_reduction import reduce_sum

    with op_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * reduce_sum(WRAPPERS["log"](real(matrix_diag_part(chol))), axis=[-1])


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """The matrix-vector product ``a @ b`` over the innermost dimensions (batches broadcast).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.matvec([[1, 2], [3, 4]], [1, 1])).tolist())
        [3, 7]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_matmul import matmul

    with op_scope(name, "MatVec", [a, b]):
        prod = matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a,
                      a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse)
        return array_ops.squeeze(prod, axis=[-1])

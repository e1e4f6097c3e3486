"""CPU kernels of Cholesky, MatrixSolve, MatrixSolveLs, MatrixTriangularSolve, MatrixSquareRoot, Qr
and SelfAdjointEigV2 on NumPy's LAPACK (SciPy's for triangular solves and square roots); half
precision computes in float32.

Example:
    >>> a, b = np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [2.0]])
    >>> batched_triangular_solve(a, b, lower=True, adjoint=False).tolist()
    [[1.0], [1.0]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _work_dtype(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _square(x, op):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise invalid(f"Input matrix must be square. {op}: input shape {dbg(x.shape)}")


def _adjoint(x):
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if np.iscomplexobj(x) else x


def _factory(fn):
    """A kernel factory calling ``fn(x..., attrs)`` in the working precision, cast back to T."""

    def factory(node):
        out = np.dtype(node.attrs["T"].as_numpy_dtype)
        work = _work_dtype(out)
        attrs = node.attrs

        def compute(*inputs):
            # the T inputs (matrix, rhs) in the working precision; MatrixSolveLs's l2_regularizer as it is
            arrays = [np.asarray(v, dtype=work) if i < 2 else np.asarray(v) for i, v in enumerate(inputs)]
            result = fn(*arrays, attrs)
            if isinstance(result, tuple):
                return tuple(np.asarray(r).astype(out, copy=False) for r in result)
            return np.asarray(result).astype(out, copy=False)

        return compute

    return factory


def _lower_hermitian(x):
    """The Hermitian matrix whose lower triangle is ``x``'s (the part TensorFlow's kernels read)."""
    low = np.tril(x)
    return low + _adjoint(np.tril(x, -1))


def _cholesky(x, attrs):
    _square(x, "Cholesky")
    if x.size == 0:
        return x.copy()
    try:
        return np.linalg.cholesky(_lower_hermitian(x))
    except np.linalg.LinAlgError:
        raise invalid("Cholesky decomposition was not successful. The input might not be valid.") from None


def _matrix_solve(matrix, rhs, attrs):
    _square(matrix, "MatrixSolve")
    if rhs.ndim != matrix.ndim or rhs.shape[:-2] != matrix.shape[:-2] or rhs.shape[-2] != matrix.shape[-2]:
        raise invalid(f"Input matrix and right-hand side must have the same batch and row dimensions: "
                      f"{dbg(matrix.shape)} vs. {dbg(rhs.shape)}")
    if matrix.size == 0 or rhs.size == 0:
        return np.zeros(rhs.shape, rhs.dtype)
    a = _adjoint(matrix) if attrs.get("adjoint", False) else matrix
    try:
        with np.errstate(all="ignore"):
            x = np.linalg.solve(a, rhs)
    except np.linalg.LinAlgError:
        raise invalid("Input matrix is not invertible.") from None
    if not np.isfinite(x).all() and np.isfinite(a).all() and np.isfinite(rhs).all():
        raise invalid("Input matrix is not invertible.")
    return x


def batched_triangular_solve(matrix, rhs, lower, adjoint):
    """``x`` with ``tri(matrix) @ x = rhs`` (or its adjoint), batch dimensions broadcast."""
    batch = np.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    m = np.broadcast_to(matrix, batch + matrix.shape[-2:]).reshape((count,) + matrix.shape[-2:])
    b = np.broadcast_to(rhs, batch + rhs.shape[-2:]).reshape((count,) + rhs.shape[-2:])
    out = np.empty(b.shape, np.result_type(m, b))
    trans = ("C" if np.iscomplexobj(m) else "T") if adjoint else "N"
    with np.errstate(all="ignore"):
        for i in range(m.shape[0]):
            if b.shape[-2] == 0 or b.shape[-1] == 0:
                continue
            out[i] = _triangular(m[i], b[i], lower, trans)
    return out.reshape(batch + rhs.shape[-2:])


def _triangular(m, b, lower, trans):
    import scipy.linalg  # (here, not at the top: kept out of every process's `import sparseflow`)

    try:
        return scipy.linalg.solve_triangular(m, b, lower=lower, trans=trans, check_finite=False)
    except np.linalg.LinAlgError:  # a zero on the diagonal: substitution gives inf / nan, as TensorFlow does
        tri = np.tril(m) if lower else np.triu(m)
        a = _adjoint(tri) if trans != "N" else tri
        x = np.zeros(b.shape, np.result_type(m, b))
        forward = (lower and trans == "N") or (not lower and trans != "N")
        for r in (range(len(a)) if forward else range(len(a) - 1, -1, -1)):
            x[r] = (b[r] - a[r] @ x) / a[r, r]
        return x


def _matrix_triangular_solve(matrix, rhs, attrs):
    _square(matrix, "MatrixTriangularSolve")
    if rhs.ndim < 2 or matrix.shape[-1] != rhs.shape[-2]:
        raise invalid(f"Input matrix and right-hand side must have matching rows: {dbg(matrix.shape)} vs. "
                      f"{dbg(rhs.shape)}")
    try:
        np.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise invalid(f"Incompatible batch dimensions: {dbg(matrix.shape)} vs. {dbg(rhs.shape)}") from None
    return batched_triangular_solve(matrix, rhs, attrs.get("lower", True), attrs.get("adjoint", False))


def _matrix_solve_ls(matrix, rhs, l2, attrs):
    if matrix.ndim < 2 or rhs.ndim != matrix.ndim or matrix.shape[:-1] != rhs.shape[:-1]:
        raise invalid(f"Input matrix and right-hand side must have the same batch and row dimensions: "
                      f"{dbg(matrix.shape)} vs. {dbg(rhs.shape)}")
    l2 = float(l2)
    if l2 < 0:
        raise invalid(f"l2_regularizer must be non-negative, got {l2}")
    m, n = matrix.shape[-2:]
    out = np.zeros(matrix.shape[:-2] + (n, rhs.shape[-1]), np.result_type(matrix, rhs))
    if out.size == 0 or m == 0:
        return out
    if not attrs.get("fast", True):
        count = int(np.prod(matrix.shape[:-2], dtype=np.int64))
        flat_a, flat_b = matrix.reshape((count, m, n)), rhs.reshape((count, m, rhs.shape[-1]))
        res = [np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(flat_a, flat_b)]
        return np.stack(res).reshape(out.shape)
    ah = _adjoint(matrix)
    try:
        if m >= n:  # (A^H A + l2 I) x = A^H b
            gram = ah @ matrix + l2 * np.eye(n, dtype=matrix.dtype)
            chol = np.linalg.cholesky(gram)
            return _cho_solve(chol, ah @ rhs)
        gram = matrix @ ah + l2 * np.eye(m, dtype=matrix.dtype)  # x = A^H (A A^H + l2 I)^-1 b
        return ah @ _cho_solve(np.linalg.cholesky(gram), rhs)
    except np.linalg.LinAlgError:
        raise invalid("Input matrix is rank deficient (its normal equations are not positive definite): use "
                      "fast=False for a minimum-norm solution, or a positive l2_regularizer.") from None


def _cho_solve(chol, b):
    y = batched_triangular_solve(chol, b, True, False)
    return batched_triangular_solve(chol, y, True, True)


def _matrix_square_root(x, attrs):
    _square(x, "MatrixSquareRoot")
    if x.size == 0:
        return x.copy()
    flat = x.reshape((int(np.prod(x.shape[:-2], dtype=np.int64)),) + x.shape[-2:])
    out = np.empty(flat.shape, x.dtype)
    import scipy.linalg  # (here, not at the top: kept out of every process's `import sparseflow`)

    for i, a in enumerate(flat):
        with np.errstate(all="ignore"):
            root = scipy.linalg.sqrtm(a)
        root = root[0] if isinstance(root, tuple) else root
        if np.iscomplexobj(root) and not np.iscomplexobj(out):
            # a real matrix without a real square root (negative eigenvalues): NaN, not a complex value
            root = np.where(np.abs(root.imag) > 1e-7 * max(1.0, float(np.abs(root).max())), np.nan, root.real)
        out[i] = root
    return out.reshape(x.shape)


def _qr(x, attrs):
    if x.ndim < 2:
        raise invalid(f"input must have rank >= 2, got shape {dbg(x.shape)}")
    m, n = x.shape[-2:]
    full = attrs.get("full_matrices", False)
    p = min(m, n)
    if x.size == 0:
        k = m if full else p
        return (np.zeros(x.shape[:-2] + (m, k), x.dtype) + (np.eye(m, k, dtype=x.dtype) if m and k else 0),
                np.zeros(x.shape[:-2] + (k, n), x.dtype))
    return np.linalg.qr(x, mode="complete" if full else "reduced")


def _self_adjoint_eig(x, attrs):
    _square(x, "SelfAdjointEigV2")
    compute_v = attrs.get("compute_v", True)
    if x.size == 0:
        e = np.zeros(x.shape[:-1], x.real.dtype)
        return e, (x.copy() if compute_v else np.zeros((0,), x.dtype))
    h = _lower_hermitian(x)
    if not compute_v:
        return np.linalg.eigvalsh(h), np.zeros((0,), x.dtype)
    e, v = np.linalg.eigh(h)
    return e, v


register_kernel("Cholesky")(_factory(_cholesky))
register_kernel("MatrixSolve")(_factory(_matrix_solve))
register_kernel("MatrixTriangularSolve")(_factory(_matrix_triangular_solve))
register_kernel("MatrixSolveLs")(_factory(_matrix_solve_ls))
register_kernel("MatrixSquareRoot")(_factory(_matrix_square_root))
register_kernel("Qr")(_factory(_qr))
register_kernel("SelfAdjointEigV2")(_factory(_self_adjoint_eig))


"""CPU kernels of matrix products and linear algebra: MatMul, BatchMatMul*, MatrixDeterminant,
LogMatrixDeterminant, MatrixInverse, Diag/DiagPart, MatrixDiag*/MatrixDiagPart*/MatrixSetDiag*
(V1 and V3 with several diagonals and alignments) and MatrixBandPart.

Example:
    >>> from sparseflow._src.kernels.math_linalg_kernels import diag_part
    >>> diag_part(np.arange(9).reshape(3, 3), -1, 1, 0, "RIGHT_LEFT").tolist()
    [[0, 1, 5], [0, 4, 8], [3, 7, 0]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import parallel_gemm
from sparseflow._src.kernels.registry import register_kernel

_GEMM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # BLAS GEMMs: blocked on the intra-op pool


def _shape(v) -> str:
    return "[" + ",".join(str(d) for d in np.shape(v)) + "]"


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _adjoint(x):
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if np.iscomplexobj(x) else x


# ---------------------------------------------------------------- products
@register_kernel("MatMul")
def _matmul(node):
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(a, b):
        if np.ndim(a) != 2 or np.ndim(b) != 2:
            raise _invalid(f"In[0] and In[1] must be matrices: In[0]: {_shape(a)}, In[1]: {_shape(b)}")
        a2, b2 = (a.T if ta else a), (b.T if tb else b)
        if a2.shape[1] != b2.shape[0]:
            raise _invalid(f"Matrix size-incompatible: In[0]: {_shape(a)}, In[1]: {_shape(b)}")
        r = parallel_gemm.matmul(a2, b2) if a2.dtype == b2.dtype and a2.dtype in _GEMM_DTYPES else np.matmul(a2, b2)
        return r if r.dtype == out else r.astype(out)

    return compute


def _batch_factory(broadcast: bool):
    def factory(node):
        adj_x, adj_y = node.attrs.get("adj_x", False), node.attrs.get("adj_y", False)
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

        def compute(x, y):
            if np.ndim(x) < 2 or np.ndim(y) < 2:
                raise _invalid(f"In[0] and In[1] must have rank >= 2: {_shape(x)} {_shape(y)}")
            x = np.asarray(x, dtype=out)
            y = np.asarray(y, dtype=out)
            x2, y2 = (_adjoint(x) if adj_x else x), (_adjoint(y) if adj_y else y)
            if x2.shape[-1] != y2.shape[-2]:
                raise _invalid(f"In[0] mismatch In[1] shape: {x2.shape[-1]} vs. {y2.shape[-2]}: {_shape(x)} "
                               f"{_shape(y)} {int(adj_x)} {int(adj_y)}")
            bx, by = x2.shape[:-2], y2.shape[:-2]
            if not broadcast and bx != by:
                raise _invalid(f"In[0] and In[1] must have compatible batch dimensions: {_shape(x)} vs. "
                               f"{_shape(y)}")
            try:
                np.broadcast_shapes(bx, by)
            except ValueError:
                raise _invalid(f"In[0] and In[1] must have compatible batch dimensions: {_shape(x)} vs. "
                               f"{_shape(y)}") from None
            return np.matmul(x2, y2).astype(out, copy=False)

        return compute

    return factory


register_kernel("BatchMatMul")(_batch_factory(False))
register_kernel("BatchMatMulV2")(_batch_factory(True))
register_kernel("BatchMatMulV3")(_batch_factory(True))


# ---------------------------------------------------------------- determinants and inverses
def _square(x, op):
    if np.ndim(x) < 2 or np.shape(x)[-1] != np.shape(x)[-2]:
        raise _invalid(f"Input matrix must be square. {op}: input shape {_shape(x)}")


def _compute_dtype(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else dtype


@register_kernel("MatrixDeterminant")
def _det(node):
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(x):
        _square(x, "MatrixDeterminant")
        return np.asarray(np.linalg.det(np.asarray(x, dtype=_compute_dtype(out)))).astype(out)[()]

    return compute


@register_kernel("LogMatrixDeterminant")
def _slogdet(node):
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(x):
        _square(x, "LogMatrixDeterminant")
        sign, logdet = np.linalg.slogdet(np.asarray(x, dtype=_compute_dtype(out)))
        return np.asarray(sign).astype(out)[()], np.asarray(logdet).astype(out)[()]

    return compute


@register_kernel("MatrixInverse")
def _inverse(node):
    adjoint = bool(node.attrs.get("adjoint", False))
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(x):
        _square(x, "MatrixInverse")
        a = np.asarray(x, dtype=_compute_dtype(out))
        if adjoint:
            a = _adjoint(a)
        if a.size == 0:
            return np.array(a, dtype=out)
        try:
            inv = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise _invalid("Input is not invertible.") from None
        return inv.astype(out, copy=False)

    return compute


@register_kernel("Svd")
def _svd(node):
    compute_uv = bool(node.attrs.get("compute_uv", True))
    full = bool(node.attrs.get("full_matrices", False))
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(x):
        a = np.asarray(x, dtype=_compute_dtype(out))
        if a.ndim < 2:
            raise _invalid(f"Input must have rank >= 2, got {a.ndim}")
        m, n = a.shape[-2:]
        if not compute_uv:
            s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (min(m, n),))
            return s.astype(out), np.zeros((0,), out), np.zeros((0,), out)
        if a.size == 0:
            p = min(m, n)
            u = np.zeros(a.shape[:-2] + (m, m if full else p), out)
            v = np.zeros(a.shape[:-2] + (n, n if full else p), out)
            return np.zeros(a.shape[:-2] + (p,), out), u, v
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        return s.astype(out), u.astype(out), _adjoint(vh).astype(out)

    return compute


# ---------------------------------------------------------------- Diag / DiagPart (tensor diagonals)
@register_kernel("Diag")
def _diag(node):
    def compute(d):
        d = np.asarray(d)
        if d.ndim < 1:
            raise _invalid(f"Input must be at least rank 1, got {d.ndim}")
        n = d.size
        out = np.zeros((n, n), dtype=d.dtype)
        out[np.arange(n), np.arange(n)] = d.reshape(-1)
        return out.reshape(d.shape + d.shape)

    return compute


@register_kernel("DiagPart")
def _diag_part_tensor(node):
    def compute(x):
        x = np.asarray(x)
        k = x.ndim // 2
        if x.ndim % 2 or x.ndim == 0 or x.shape[:k] != x.shape[k:]:
            raise _invalid(f"Invalid shape {_shape(x)}: dimensions must be D1..Dk, D1..Dk")
        n = int(np.prod(x.shape[:k], dtype=np.int64))
        flat = x.reshape(n, n)
        return flat[np.arange(n), np.arange(n)].reshape(x.shape[:k])

    return compute


# ---------------------------------------------------------------- batched matrix diagonals
def _diag_geometry(d, rows, cols, max_len, align):
    """(length, offset into the stored diagonal, first row, first column) of diagonal ``d``."""
    left_super, left_sub = align.split("_")[0] == "LEFT", align.split("_")[1] == "LEFT"
    length = min(rows + min(0, d), cols - max(0, d))
    left = (d >= 0 and left_super) or (d <= 0 and left_sub)
    return length, (0 if left else max_len - length), max(0, -d), max(0, d)


def _k_range(k, rows=None, cols=None):
    k = np.asarray(k).reshape(-1)
    if k.size not in (1, 2):
        raise _invalid(f"diag_index must be a scalar or a vector with at most 2 elements, got {_shape(k)}")
    lo, hi = int(k[0]), int(k[-1])
    if lo > hi:
        raise _invalid(f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")
    if rows is not None:
        for what, d in (("lower", lo), ("upper", hi)):
            if d != 0 and not -rows < d < cols:
                raise _invalid(f"{what}_diag_index is out of bound: {d}. It must be between {-rows} and "
                               f"{cols}")
    return lo, hi


def diag_part(x, lo, hi, padding, align):
    """The diagonals ``lo..hi`` of each innermost matrix of ``x`` (MatrixDiagPartV3 semantics)."""
    x = np.asarray(x)
    rows, cols = x.shape[-2:]
    max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    n = hi - lo + 1
    out = np.full(x.shape[:-2] + (n, max(max_len, 0)), padding, dtype=x.dtype)
    for j, d in enumerate(range(hi, lo - 1, -1)):
        length, offset, r0, c0 = _diag_geometry(d, rows, cols, max_len, align)
        if length > 0:
            i = np.arange(length)
            out[..., j, offset:offset + length] = x[..., r0 + i, c0 + i]
    return out[..., 0, :] if lo == hi else out


def set_diag(x, diagonal, lo, hi, align):
    """``x`` with diagonals ``lo..hi`` replaced by ``diagonal`` (MatrixSetDiagV3 semantics)."""
    x = np.array(x, copy=True)
    rows, cols = x.shape[-2:]
    max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    diagonal = np.asarray(diagonal)
    if lo == hi:
        diagonal = diagonal[..., None, :]
    expected = x.shape[:-2] + (hi - lo + 1, max(max_len, 0))
    if diagonal.shape != expected:
        shown = expected if lo != hi else expected[:-2] + expected[-1:]
        raise _invalid(f"diagonal must have shape [{','.join(map(str, shown))}], got "
                       f"{_shape(diagonal if lo != hi else diagonal[..., 0, :])}")
    for j, d in enumerate(range(hi, lo - 1, -1)):
        length, offset, r0, c0 = _diag_geometry(d, rows, cols, max_len, align)
        if length > 0:
            i = np.arange(length)
            x[..., r0 + i, c0 + i] = diagonal[..., j, offset:offset + length]
    return x


def make_diag(diagonal, lo, hi, rows, cols, padding, align):
    """Matrices holding ``diagonal`` on diagonals ``lo..hi`` and ``padding`` elsewhere (MatrixDiagV3)."""
    diagonal = np.asarray(diagonal)
    if diagonal.ndim < (1 if lo == hi else 2):
        raise _invalid(f"diagonal must be at least {1 if lo == hi else 2}-dimensional, got "
                       f"{_shape(diagonal)}")
    if lo != hi and diagonal.shape[-2] != hi - lo + 1:
        raise _invalid(f"The number of diagonals provided in the input does not match the lower_diag_index "
                       f"and upper_diag_index range: {diagonal.shape[-2]} vs. {hi - lo + 1}")
    max_len = diagonal.shape[-1]
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows != min_rows and cols != min_cols:
        raise _invalid(f"The number of rows or columns is not consistent with the specified d_lower, "
                       f"d_upper, and diagonal. num_rows: {rows}, num_cols: {cols}")
    batch = diagonal.shape[:-1] if lo == hi else diagonal.shape[:-2]
    out = np.full(batch + (rows, cols), padding, dtype=diagonal.dtype)
    return set_diag(out, diagonal, lo, hi, align)


@register_kernel("MatrixDiagV3")
def _matrix_diag_v3(node):
    align = node.attrs.get("align", "RIGHT_LEFT")

    def compute(diagonal, k, num_rows, num_cols, padding):
        lo, hi = _k_range(k)
        return make_diag(diagonal, lo, hi, int(num_rows), int(num_cols), padding, align)

    return compute


@register_kernel("MatrixDiagPartV3")
def _matrix_diag_part_v3(node):
    align = node.attrs.get("align", "RIGHT_LEFT")

    def compute(x, k, padding):
        if np.ndim(x) < 2:
            raise _invalid(f"input must be at least 2-dim, received shape: {_shape(x)}")
        lo, hi = _k_range(k, *np.shape(x)[-2:])
        return diag_part(x, lo, hi, padding, align)

    return compute


@register_kernel("MatrixSetDiagV3")
def _matrix_set_diag_v3(node):
    align = node.attrs.get("align", "RIGHT_LEFT")

    def compute(x, diagonal, k):
        if np.ndim(x) < 2:
            raise _invalid(f"input must be at least 2-dim, received shape: {_shape(x)}")
        lo, hi = _k_range(k, *np.shape(x)[-2:])
        return set_diag(x, diagonal, lo, hi, align)

    return compute


@register_kernel("MatrixDiag")
def _matrix_diag_v1(node):
    return lambda d: make_diag(d, 0, 0, -1, -1, np.zeros((), np.asarray(d).dtype), "LEFT_LEFT")


@register_kernel("MatrixDiagPart")
def _matrix_diag_part_v1(node):
    def compute(x):
        if np.ndim(x) < 2:
            raise _invalid(f"input must be at least 2-dim, received shape: {_shape(x)}")
        return diag_part(x, 0, 0, np.zeros((), np.asarray(x).dtype), "LEFT_LEFT")

    return compute


@register_kernel("MatrixSetDiag")
def _matrix_set_diag_v1(node):
    return lambda x, d: set_diag(x, d, 0, 0, "LEFT_LEFT")


@register_kernel("MatrixBandPart")
def _band_part(node):
    def compute(x, num_lower, num_upper):
        x = np.asarray(x)
        if x.ndim < 2:
            raise _invalid(f"input must be at least 2-dim, received shape: {_shape(x)}")
        rows, cols = x.shape[-2:]
        lower, upper = int(num_lower), int(num_upper)
        if lower > rows:
            raise _invalid(f"num_lower must be negative or less or equal to number of rows ({rows}) got: "
                           f"{lower}")
        if upper > cols:
            raise _invalid(f"num_upper must be negative or less or equal to number of columns ({cols}) got: "
                           f"{upper}")
        m = np.arange(rows)[:, None]
        n = np.arange(cols)[None, :]
        keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
        return np.where(keep, x, np.zeros((), x.dtype))

    return compute

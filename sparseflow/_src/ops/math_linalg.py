"""Linear algebra: determinants, inverses, diagonals and bands of (batches of) matrices, ``trace``,
``eye`` and ``norm``.

``tf.linalg.diag`` / ``diag_part`` / ``set_diag`` are TensorFlow's V3 ops (several diagonals
``k = (lo, hi)``, alignment ``RIGHT_LEFT`` by default); the V1 ops are registered for imported
graphs. ``tf.diag`` / ``tf.diag_part`` are the tensor (not batched matrix) Diag / DiagPart.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     print(sess.run(tf.matrix_determinant(a)), sess.run(tf.trace(a)), sess.run(tf.eye(2)).tolist())
    -2.0 5.0 [[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.constant_op import constant
from sparseflow._src.ops.math_cwise import COMPLEX, apply1, op_scope, unchanged_shape

__all__ = ["diag", "diag_part", "eye", "log_matrix_determinant", "matrix_band_part", "matrix_determinant",
           "matrix_diag", "matrix_diag_part", "matrix_inverse", "matrix_set_diag", "norm", "svd", "trace"]

_LINALG_T = f"{{double, float, half, {COMPLEX}}}"
_ALIGN = "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'"


# ---------------------------------------------------------------- shape functions
def _square(shape):
    shape = shape.with_rank_at_least(2)
    if shape.ndims is None:
        return shape
    rows, cols = shape[-2].value, shape[-1].value
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"Dimensions must be equal, but are {rows} and {cols}")
    n = rows if rows is not None else cols
    return shape[:-2].concatenate([n, n])


def _det_shape(op):
    return [_square(op.inputs[0].shape)[:-2]]


def _inverse_shape(op):
    return [_square(op.inputs[0].shape)]


def _diag_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(1)
    return [s.concatenate(s)]


def _diag_part_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return [unknown_shape()]
    if s.ndims % 2 or s.ndims == 0:
        raise ValueError(f"Input must have even rank <= 6, input rank is {s.ndims}")
    k = s.ndims // 2
    return [s[:k].merge_with(s[k:])]


def _diag_range(k_tensor):
    """(lower, upper) diagonal indices from a constant ``k``, or None."""
    k = constant_value(k_tensor)
    if k is None:
        return None
    k = np.asarray(k).reshape(-1)
    if k.size not in (1, 2):
        raise ValueError("diag_index must be a scalar or a vector with at most 2 elements")
    lo, hi = int(k[0]), int(k[-1])
    if lo > hi:
        raise ValueError(f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")
    return lo, hi


def check_diag_bounds(lo, hi, rows, cols):
    """Diagonal ``d`` of a rows x cols matrix exists when ``-rows < d < cols`` (0 always does)."""
    for what, d in (("lower", lo), ("upper", hi)):
        if d != 0 and not -rows < d < cols:
            raise ValueError(f"{what}_diag_index is out of bound: {d}. It must be between {-rows} and {cols}")


def _matrix_diag_v3_shape(op):
    diag = op.inputs[0].shape
    k = _diag_range(op.inputs[1])
    rows, cols = (constant_value(op.inputs[i]) for i in (2, 3))
    if k is None or diag.ndims is None:
        return [unknown_shape()]
    lo, hi = k
    diag = diag.with_rank_at_least(1 if lo == hi else 2)
    batch = diag[:-1] if lo == hi else diag[:-2]
    max_len = diag[-1].value
    if rows is None or cols is None or max_len is None:
        return [batch.concatenate([None, None])]
    rows, cols = int(rows), int(cols)
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows != min_rows and cols != min_cols:
        raise ValueError(f"The number of rows or columns is not consistent with the specified d_lower, "
                         f"d_upper, and diagonal: {rows} x {cols}")
    return [batch.concatenate([rows, cols])]


def _matrix_diag_part_v3_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(2)
    k = _diag_range(op.inputs[1])
    if k is None or s.ndims is None:
        return [unknown_shape()]
    lo, hi = k
    rows, cols = s[-2].value, s[-1].value
    max_len = None
    if rows is not None and cols is not None:
        check_diag_bounds(lo, hi, rows, cols)
        max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    dims = [] if lo == hi else [hi - lo + 1]
    return [s[:-2].concatenate(dims + [max_len])]


def _matrix_set_diag_shape(op):
    """The input's shape; the diagonal must be its batch shape plus min(rows, cols), as in TensorFlow."""
    s = op.inputs[0].shape.with_rank_at_least(2)
    d = op.inputs[1].shape.with_rank_at_least(1)
    if op.type == "MatrixSetDiag" and s.ndims is not None and d.ndims is not None:  # V3: checked at run time
        if d.ndims != s.ndims - 1:
            raise ValueError(f"Shape must be rank {s.ndims - 1} but is rank {d.ndims} for the diagonal of "
                             f"{op.name} (input shape {s})")
        batch = s[:-2].merge_with(d[:-1])
        r, c, n = s[-2].value, s[-1].value, d[-1].value
        if r is not None and c is not None and n is not None and n != min(r, c):
            raise ValueError(f"Dimensions must be equal, but are {min(r, c)} and {n} for the diagonal of "
                             f"{op.name} (input shape {s}, diagonal shape {d})")
        s = batch.concatenate(s[-2:])
    return [s]


def _matrix_diag_v1_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(1)
    return [s.concatenate([s[-1]]) if s.ndims is not None else s]


def _matrix_diag_part_v1_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(2)
    if s.ndims is None:
        return [s]
    r, c = s[-2].value, s[-1].value
    return [s[:-2].concatenate([None if r is None or c is None else min(r, c)])]


register_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"], attrs=[f"T: {_LINALG_T}"],
            shape_fn=_det_shape)
register_op("LogMatrixDeterminant", inputs=["input: T"], outputs=["sign: T", "log_abs_determinant: T"],
            attrs=[f"T: {_LINALG_T}"], shape_fn=lambda op: _det_shape(op) * 2)
register_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
            attrs=["adjoint: bool = False", f"T: {_LINALG_T}"], shape_fn=_inverse_shape)
_DIAG_T = "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}"
register_op("Diag", inputs=["diagonal: T"], outputs=["output: T"], attrs=[_DIAG_T], shape_fn=_diag_shape)
register_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=[_DIAG_T],
            shape_fn=_diag_part_shape)
register_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=_matrix_diag_v1_shape)
register_op("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=["T: type"],
            shape_fn=_matrix_diag_part_v1_shape)
register_op("MatrixSetDiag", inputs=["input: T", "diagonal: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=_matrix_set_diag_shape)
register_op("MatrixDiagV3", inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
                                    "padding_value: T"], outputs=["output: T"], attrs=["T: type", _ALIGN],
            shape_fn=_matrix_diag_v3_shape)
register_op("MatrixDiagPartV3", inputs=["input: T", "k: int32", "padding_value: T"], outputs=["diagonal: T"],
            attrs=["T: type", _ALIGN], shape_fn=_matrix_diag_part_v3_shape)
register_op("MatrixSetDiagV3", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
            attrs=["T: type", _ALIGN], shape_fn=_matrix_set_diag_shape)
def _svd_shape(op):
    s = op.inputs[0].shape.with_rank_at_least(2)
    if s.ndims is None:
        return None
    m, n = s[-2].value, s[-1].value
    p = None if m is None or n is None else min(m, n)
    batch = s[:-2]
    if not op._attrs["compute_uv"]:
        return [batch.concatenate([p]), TensorShape([0]), TensorShape([0])]
    full = op._attrs["full_matrices"]
    return [batch.concatenate([p]), batch.concatenate([m, m if full else p]),
            batch.concatenate([n, n if full else p])]


register_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
            attrs=["compute_uv: bool = true", "full_matrices: bool = false", f"T: {_LINALG_T}"],
            shape_fn=_svd_shape)
register_op("MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
            outputs=["band: T"], attrs=["T: type", "Tindex: {int32, int64} = DT_INT64"],
            shape_fn=unchanged_shape)


# ---------------------------------------------------------------- wrappers
def matrix_determinant(input, name=None):  # noqa: A002 - TF's argument name
    """The determinant of each innermost square matrix of ``input`` [..., M, M].

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.det([[[2.0, 0.0], [0.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]])))
        [6. 0.]
    """
    return apply1("MatrixDeterminant", [input], name=name)


def log_matrix_determinant(input, name=None):  # noqa: A002
    """``(sign, log|det|)`` of each innermost square matrix (LogMatrixDeterminant).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sign, logdet = sess.run(tf.linalg.slogdet([[-2.0, 0.0], [0.0, 1.0]]))
        ...     print(sign, logdet)
        -1.0 0.6931472
    """
    from sparseflow._src.framework.op_def_library import apply_op

    sign, logdet = apply_op("LogMatrixDeterminant", [input], name=name).outputs
    return sign, logdet


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse (of the adjoint if ``adjoint``) of each innermost square matrix; singular
    matrices fail when run with InvalidArgumentError.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_inverse([[2.0, 0.0], [0.0, 4.0]])))
        [[0.5  0.  ]
         [0.   0.25]]
    """
    return apply1("MatrixInverse", [input], {"adjoint": adjoint}, name=name)


def diag(diagonal, name=None):
    """A tensor with ``diagonal`` on its diagonal: rank k input -> rank 2k output (Diag).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.diag([1, 2])).tolist())
        [[1, 0], [0, 2]]
    """
    return apply1("Diag", [diagonal], name=name)


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a rank-2k tensor with shape [D1..Dk, D1..Dk] (DiagPart).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.diag_part([[1, 7], [8, 2]])))
        [1 2]
    """
    return apply1("DiagPart", [input], name=name)


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Batched matrices with the given diagonals ``k`` (an int or ``(lo, hi)``), MatrixDiagV3.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.diag([1, 2], k=1)).tolist())
        [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    if getattr(diagonal, "dtype", None) == dtypes.bool:
        padding_value = bool(padding_value)
    return apply1("MatrixDiagV3", [diagonal, k, num_rows, num_cols, padding_value], {"align": align},
                  name=name)


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The diagonals ``k`` of each innermost matrix of ``input`` (MatrixDiagPartV3).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]])))
        [1 5]
    """
    if getattr(input, "dtype", None) == dtypes.bool:
        padding_value = bool(padding_value)
    return apply1("MatrixDiagPartV3", [input, k, padding_value], {"align": align}, name=name)


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with its diagonals ``k`` replaced by ``diagonal`` (MatrixSetDiagV3).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.set_diag([[0, 0], [0, 0]], [7, 8])).tolist())
        [[7, 0], [0, 8]]
    """
    return apply1("MatrixSetDiagV3", [input, diagonal, k], {"align": align}, name=name)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps ``num_lower`` sub- and ``num_upper`` superdiagonals (negative: all), zeroes the rest.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.band_part([[1, 1, 1]] * 3, 0, -1)).tolist())
        [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    """
    return apply1("MatrixBandPart", [input, num_lower, num_upper], name=name)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values ``s`` (descending), and ``u``, ``v`` with ``tensor = u @ diag(s) @ adjoint(v)``
    when ``compute_uv``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False)))
        [4. 3.]
    """
    from sparseflow._src.framework.op_def_library import apply_op
    from sparseflow._src.ops.math_arith import real

    with op_scope(name, "svd", [tensor]):
        attrs = {"compute_uv": compute_uv, "full_matrices": full_matrices}
        s, u, v = apply_op("Svd", [tensor], attrs).outputs
        return (real(s), u, v) if compute_uv else real(s)


def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost two dimensions of ``matrix``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.adjoint(tf.constant([[1 + 1j, 2 + 0j]]))).tolist())
        [[(1-1j)], [(2-0j)]]
    """
    from sparseflow._src.ops import array_ops

    with op_scope(name, "adjoint", [matrix]):
        matrix = convert_to_tensor(matrix, name="matrix")
        return array_ops.matrix_transpose(matrix, conjugate=True)


def trace(x, name=None):
    """The sum of the main diagonal of each innermost matrix of ``x``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.trace([[1, 2], [3, 4]])))
        5
    """
    from sparseflow._src.ops.math_reduction import reduce_sum

    with op_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return reduce_sum(matrix_diag_part(x), [-1], name=scope)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix (or a batch of them) of ``num_rows`` x ``num_columns``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.eye(2, 3, dtype=tf.int32)).tolist())
        [[1, 0, 0], [0, 1, 0]]
    """
    with op_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        is_square = num_columns is None
        batch_shape = [] if batch_shape is None else batch_shape
        num_columns = num_rows if num_columns is None else num_columns
        if isinstance(num_rows, Tensor) or isinstance(num_columns, Tensor) or isinstance(batch_shape, Tensor):
            return _dynamic_eye(num_rows, num_columns, batch_shape, dtype, is_square)
        if not isinstance(num_rows, (int, np.integer)) or not isinstance(num_columns, (int, np.integer)):
            raise TypeError(f"Arguments `num_rows` and `num_columns` must be positive integer values. "
                            f"Received: num_rows={num_rows}, num_columns={num_columns}")
        is_square = num_rows == num_columns
        batch = TensorShape(batch_shape).as_list()
        diag_ones = constant(1, dtype=dtype, shape=batch + [min(num_rows, num_columns)], name="ones")
        if is_square:
            return matrix_diag(diag_ones)
        zeros = constant(0, dtype=dtype, shape=batch + [num_rows, num_columns], name="zeros")
        return matrix_set_diag(zeros, diag_ones)


def _dynamic_eye(num_rows, num_columns, batch_shape, dtype, is_square):
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_cwise import WRAPPERS

    diag_size = WRAPPERS["minimum"](num_rows, num_columns)
    batch = convert_to_tensor(batch_shape, name="shape", dtype=dtypes.int32)
    diag_ones = array_ops.ones(array_ops.concat((batch, [diag_size]), axis=0), dtype=dtype)
    if is_square:
        return matrix_diag(diag_ones)
    zeros = array_ops.zeros(array_ops.concat((batch, [num_rows, num_columns]), axis=0), dtype=dtype)
    return matrix_set_diag(zeros, diag_ones)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The vector norm over ``axis`` (all elements when None), or the matrix norm over two axes.

    ``ord``: 'euclidean'/'fro'/2, 1, inf, or any p > 0 for vectors; 'euclidean'/'fro', 1, inf and 2
    (the largest singular value) for matrices.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.norm([[3.0, 4.0], [0.0, 0.0]], axis=1)))
        ...     print(sess.run(tf.norm([3.0, -4.0], ord=1)))
        [5. 0.]
        7.0
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_arith import abs as abs_
    from sparseflow._src.ops.math_arith import conj
    from sparseflow._src.ops.math_arith import pow as pow_
    from sparseflow._src.ops.math_reduction import _lookup, reduce_max, reduce_sum

    keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        if ord not in ("euclidean", "fro", 1, 2, np.inf):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], "
                             f"got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        bad = isinstance(ord, str) or not np.isreal(ord) or ord <= 0
        if ord not in ("euclidean", 1, 2, np.inf) and bad:
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}.")
        if axis is not None:
            axis = (axis,)
    with op_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor)
        if is_matrix and ord in (2, 2.0):
            result = _matrix_2_norm(tensor, axis)
        elif ord in ("fro", "euclidean", 2, 2.0):
            result = apply1("Sqrt", [reduce_sum(tensor * conj(tensor), axis, keepdims=True)])
        else:
            result = abs_(tensor)
            if ord == 1:
                result = reduce_sum(result, None if axis is None else axis[0], keepdims=True)
                if is_matrix:
                    result = reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix:
                    result = reduce_sum(result, axis[1], keepdims=True)
                result = reduce_max(result, None if axis is None else axis[0], keepdims=True)
            else:
                result = pow_(reduce_sum(pow_(result, ord), axis, keepdims=True), 1.0 / ord)
        if not keepdims:
            result = array_ops.squeeze(result, axis)
        return result


def _matrix_2_norm(tensor, axis):
    """The largest singular value over the two ``axis`` dimensions, kept as size-1 dimensions."""
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_arith import abs as abs_
    from sparseflow._src.ops.math_reduction import reduce_max

    rank = tensor.shape.ndims
    if rank is None:
        raise NotImplementedError("The matrix 2-norm of a tensor of unknown rank is not supported.")
    positive = [a + rank if a < 0 else a for a in axis]
    perm_before = [i for i in range(rank) if i not in positive] + positive
    perm_after = [perm_before.index(i) for i in range(rank)]
    singular = svd(array_ops.transpose(tensor, perm=perm_before), compute_uv=False)
    largest = array_ops.expand_dims(reduce_max(abs_(singular), axis=-1, keepdims=True), axis=-1)
    return array_ops.transpose(largest, perm=perm_after)

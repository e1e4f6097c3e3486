"""CPU kernels of a dense layer's fused ops (made by the ``remap`` pass) and of Relu, ReluGrad,
BiasAdd and BiasAddGrad on large float matrices: numba loops over row chunks on all cores
(``intra_op.parallel_for``), one memory pass each.

- ``_FusedMatMul``: the product (``parallel_gemm``), and ``+ bias`` (and ``max(., 0)``) in place on
  each block of the output right after it is made;
- ``_FusedReluGradBiasAddGrad``: ``g * (y > 0)`` and its column sums, accumulated in float64 per
  chunk, in the same pass;
- ``_SlicedMatMul``: ``Slice(a @ b, begin, size)`` as the product of the rows of ``a`` and the columns
  of ``b`` the slice keeps (a concat's gradient keeps only its inputs' columns): no work on the
  rest, and a contiguous result that a following Reshape only views.

Relu keeps NaN (``NaN > 0`` is false but ``max`` propagates it, as ``np.maximum``); ReluGrad is
``g * (y > 0)`` literally, so a NaN or infinite gradient propagates as in TensorFlow.

Example:
    >>> import numpy as np
    >>> from sparseflow._src.kernels.registry import KernelNode
    >>> from sparseflow._src.framework import dtypes
    >>> node = KernelNode("n", "_FusedMatMul", {"T": dtypes.float32, "transpose_a": False, "transpose_b": False,
    ...                   "num_args": 1, "fused_ops": ["BiasAdd", "Relu"]}, [], [dtypes.float32], "")
    >>> _fused_matmul(node)(np.eye(2, dtype=np.float32), np.array([[1, -2], [3, 4]], np.float32),
    ...                     np.array([0.5, 0.5], np.float32)).tolist()
    [[1.5, 0.0], [3.5, 4.5]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import parallel_gemm
from sparseflow._src.kernels.array_slice_kernels import slice_index
from sparseflow._src.kernels.intra_op import parallel_for
from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.registry import register_kernel

# Elements per chunk at least: a chunk handed to a pool thread must outlast its wake-up (~30 us).
# W3's 256x1024 ReLU gradient (~55 us on one thread) took 92-141 us split in six chunks over two.
PARALLEL_MIN_ELEMENTS = 1 << 18
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# The loops below index one row at a time (``x[r]``, then ``row[c]``): LLVM vectorizes a loop over a
# 1-D row, not one that indexes the 2-D array (``x[r, c]``). W3's [256, 512] bias-and-ReLU block took
# 119 us so, 12 us by rows (warm, one core); in the step, right after its GEMM, 0.19 ms against 0.05
# (four such blocks a step); the [256, 1024] ReLU gradient with column sums 74 us against 46.


@cached_njit(nogil=True)
def _bias_act_block(x, bias, relu, r0, r1, c0, c1):
    """``x[r, c] = x[r, c] + bias[c]`` (then ``max(., 0)`` keeping NaN) on the block ``[r0:r1, c0:c1]``,
    in place."""
    b = bias[c0:c1]
    for r in range(r0, r1):
        row = x[r, c0:c1]
        if relu:
            for c in range(row.shape[0]):
                v = row[c] + b[c]
                row[c] = 0 if v < 0 else v
        else:
            for c in range(row.shape[0]):
                row[c] += b[c]


@cached_njit(nogil=True)
def _relu_grad_rows(g, y, out, sums, lo, hi):
    """``out = g * (y > 0)`` for rows ``lo..hi``; ``sums`` (float64) gets their column sums added."""
    for r in range(lo, hi):
        gr, yr, outr = g[r], y[r], out[r]
        for c in range(gr.shape[0]):
            v = gr[c] if yr[c] > 0 else gr[c] * 0  # NaN/inf gradients stay NaN, as g * (y > 0)
            outr[c] = v
            sums[c] += v


@cached_njit(nogil=True)
def _relu_rows(x, out, lo, hi):
    for r in range(lo, hi):
        xr, outr = x[r], out[r]
        for c in range(xr.shape[0]):
            v = xr[c]
            outr[c] = 0 if v < 0 else v


@cached_njit(nogil=True)
def _column_sums(x, sums, lo, hi):
    for r in range(lo, hi):
        xr = x[r]
        for c in range(xr.shape[0]):
            sums[c] += xr[c]


def _rows_per_chunk(x) -> int:
    return max(1, PARALLEL_MIN_ELEMENTS // max(1, x.shape[1]))


def _is_matrix(x) -> bool:
    return isinstance(x, np.ndarray) and x.ndim == 2 and x.dtype in _FLOATS and x.flags.c_contiguous


def add_bias_act(x: np.ndarray, bias: np.ndarray, relu: bool) -> None:
    """``x += bias`` (and ReLU) in place on a C-contiguous float matrix, on all cores."""
    bias = np.ascontiguousarray(bias, dtype=x.dtype)
    parallel_for(lambda lo, hi: _bias_act_block(x, bias, relu, lo, hi, 0, x.shape[1]), x.shape[0],
                 _rows_per_chunk(x))


def relu_grad_and_bias_grad(g: np.ndarray, y: np.ndarray):
    """``(g * (y > 0), column sums of it)`` in one pass over row chunks, on all cores."""
    out = np.empty_like(g)
    partials = {}

    def chunk(lo, hi):
        sums = np.zeros(g.shape[1], np.float64)
        _relu_grad_rows(g, y, out, sums, lo, hi)
        partials[lo] = sums

    parallel_for(chunk, g.shape[0], _rows_per_chunk(g))
    return out, _total(partials, g.dtype)


def _total(partials: dict, dtype):
    """The chunks' partial sums added in row order (the same result whatever thread finished first)."""
    keys = sorted(partials)
    total = partials[keys[0]]
    for k in keys[1:]:
        total = total + partials[k]
    return total.astype(dtype)


def _shape(v) -> str:
    return "[" + ",".join(str(d) for d in np.shape(v)) + "]"


def _matrix_operands(a, b, ta: bool, tb: bool):
    """``a`` and ``b`` as the product's two matrices (transposed as the attributes say), checked as
    MatMul checks them."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"In[0] and In[1] must be matrices: In[0]: {_shape(a)}, "
                                                      f"In[1]: {_shape(b)}")
    a2, b2 = (a.T if ta else a), (b.T if tb else b)
    if a2.shape[1] != b2.shape[0]:
        raise errors.InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {_shape(a)}, "
                                                      f"In[1]: {_shape(b)}")
    return a2, b2


@register_kernel("_FusedMatMul")
def _fused_matmul(node):
    ta, tb = bool(node.attrs.get("transpose_a", False)), bool(node.attrs.get("transpose_b", False))
    ops = list(node.attrs.get("fused_ops", []))
    if ops not in (["BiasAdd"], ["BiasAdd", "Relu"]):
        raise errors.UnimplementedError(None, None, f"_FusedMatMul supports fused_ops [BiasAdd] and [BiasAdd, Relu], "
                                                    f"not {ops}.")
    relu = ops[-1] == "Relu"
    out_dtype = np.dtype(node.attrs["T"].as_numpy_dtype)

    def compute(a, b, bias):
        bias = np.asarray(bias)
        a2, b2 = _matrix_operands(a, b, ta, tb)
        if bias.ndim != 1 or bias.shape[0] != b2.shape[1]:
            raise errors.InvalidArgumentError(
                None, None, f"Must provide as many biases as the last dimension of the input tensor: "
                            f"{_shape(bias)} vs. [{a2.shape[0]},{b2.shape[1]}]")
        if a2.dtype == b2.dtype == out_dtype and out_dtype in _FLOATS:
            bias = np.ascontiguousarray(bias, dtype=out_dtype)
            # bias (+ ReLU) on each block as soon as the block's product is made, still in cache
            return parallel_gemm.matmul(a2, b2, lambda x, *block: _bias_act_block(x, bias, relu, *block))
        x = np.matmul(a2, b2).astype(out_dtype, copy=False) + bias
        return np.maximum(x, 0) if relu else x

    return compute


@register_kernel("_SlicedMatMul")
def _sliced_matmul(node):
    ta, tb = bool(node.attrs.get("transpose_a", False)), bool(node.attrs.get("transpose_b", False))
    out_dtype = np.dtype(node.attrs["T"].as_numpy_dtype)

    def compute(a, b, begin, size):
        a2, b2 = _matrix_operands(a, b, ta, tb)
        rows, cols = slice_index((a2.shape[0], b2.shape[1]), begin, size)
        a2, b2 = a2[rows], b2[:, cols]
        if a2.dtype == b2.dtype == out_dtype and out_dtype in _FLOATS:
            return parallel_gemm.matmul(a2, b2)
        return np.matmul(a2, b2).astype(out_dtype, copy=False)

    return compute


@register_kernel("_FusedReluGradBiasAddGrad")
def _fused_relu_grad_bias_grad(node):
    def compute(g, y):
        g, y = np.asarray(g), np.asarray(y)
        if g.shape != y.shape:
            raise errors.InvalidArgumentError(None, None, f"gradients and features must have the same shape: "
                                                          f"{_shape(g)} vs. {_shape(y)}")
        if g.ndim != 2:
            raise errors.InvalidArgumentError(None, None, f"Input tensor must be 2D: {_shape(g)}")
        if _is_matrix(g) and _is_matrix(y) and g.dtype == y.dtype and g.shape[0]:
            return relu_grad_and_bias_grad(g, y)
        out = g * (y > 0)
        return out, out.sum(axis=0, dtype=np.float64).astype(g.dtype)

    return compute


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)`` (NaN kept) on all cores for a large C-contiguous float matrix, else NumPy."""
    if _is_matrix(x) and x.size >= 2 * PARALLEL_MIN_ELEMENTS:
        out = np.empty_like(x)
        parallel_for(lambda lo, hi: _relu_rows(x, out, lo, hi), x.shape[0], _rows_per_chunk(x))
        return out
    return np.maximum(x, 0)


def column_sums(x: np.ndarray):
    """Sums over the rows of a large C-contiguous float matrix (float64 partials), else None."""
    if not (_is_matrix(x) and x.size >= 2 * PARALLEL_MIN_ELEMENTS):
        return None
    partials = {}

    def chunk(lo, hi):
        sums = np.zeros(x.shape[1], np.float64)
        _column_sums(x, sums, lo, hi)
        partials[lo] = sums

    parallel_for(chunk, x.shape[0], _rows_per_chunk(x))
    return _total(partials, x.dtype)

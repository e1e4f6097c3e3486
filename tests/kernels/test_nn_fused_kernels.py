"""The fused dense-layer kernels and the intra-op pool: equal to NumPy for any chunking, NaN and
infinity handled as the unfused ops, the same result whatever the thread count."""

import numpy as np
import pytest

from sparseflow._src.framework import dtypes
from sparseflow._src.kernels import intra_op
from sparseflow._src.kernels import nn_fused_kernels as K
from sparseflow._src.kernels.registry import KernelNode, get_kernel


def _kernel(op_type, dtype=dtypes.float32, **attrs):
    return get_kernel(op_type).factory(KernelNode("k", op_type, {"T": dtype, **attrs}, [], [dtype], ""))


@pytest.mark.parametrize("rows", [1, 7, 300, 5000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("depth", [1, 9])  # 1: an outer product, made without BLAS, with the same epilogue
def test_fused_matmul_equals_matmul_bias_relu(rows, dtype, relu, depth):
    rng = np.random.default_rng(rows)
    a, b = rng.standard_normal((rows, depth)).astype(dtype), rng.standard_normal((depth, 33)).astype(dtype)
    bias = rng.standard_normal(33).astype(dtype)
    fused_ops = ["BiasAdd", "Relu"] if relu else ["BiasAdd"]
    got = _kernel("_FusedMatMul", dtypes.as_dtype(dtype), transpose_a=False, transpose_b=False, num_args=1,
                  fused_ops=fused_ops)(a, b, bias)
    want = a @ b + bias
    np.testing.assert_array_equal(got, np.maximum(want, 0) if relu else want)
    assert got.dtype == dtype


def test_fused_matmul_transposes_and_errors():
    rng = np.random.default_rng(0)
    a, b, bias = rng.random((9, 40), np.float32), rng.random((5, 9), np.float32), rng.random(5, np.float32)
    k = _kernel("_FusedMatMul", transpose_a=True, transpose_b=True, num_args=1, fused_ops=["BiasAdd", "Relu"])
    np.testing.assert_allclose(k(a, b, bias), np.maximum(a.T @ b.T + bias, 0), rtol=1e-6)
    with pytest.raises(Exception, match="as many biases"):
        k(a, b, bias[:3])
    with pytest.raises(Exception, match="size-incompatible"):
        k(a, b[:, :4], bias)


def test_relu_keeps_nan_and_relu_grad_propagates_nan_and_inf():
    x = np.zeros((4000, 20), np.float32)
    x[5, 3], x[6, 4] = np.nan, -np.inf
    b = np.zeros(20, np.float32)
    K.add_bias_act(x, b, relu=True)
    assert np.isnan(x[5, 3]) and x[6, 4] == 0
    g = np.ones((4000, 20), np.float32)
    y = np.ones((4000, 20), np.float32)
    g[1, 1], y[1, 1] = np.nan, -1.0  # NaN gradient where the unit was off: NaN * 0 = NaN, as g * (y > 0)
    g[2, 2], y[2, 2] = np.inf, -1.0
    out, sums = K.relu_grad_and_bias_grad(g, y)
    want = g * (y > 0)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(sums, want.sum(0, dtype=np.float64).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [True, False])
def test_bias_act_block_changes_only_its_block(dtype, relu):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((9, 70)).astype(dtype)
    x[4, 30], x[5, 31] = np.nan, -np.inf
    bias = rng.standard_normal(70).astype(dtype)
    want = x.copy()
    block = want[2:7, 17:53] + bias[17:53]
    want[2:7, 17:53] = np.where(block < 0, 0, block) if relu else block
    K._bias_act_block(x, bias, relu, 2, 7, 17, 53)
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_results_do_not_depend_on_the_thread_count(threads):
    rng = np.random.default_rng(3)
    g, y = rng.standard_normal((10000, 64)).astype(np.float32), rng.standard_normal((10000, 64)).astype(np.float32)
    ref_out, ref_sums = K.relu_grad_and_bias_grad(g, y)
    calls = []

    def chunked(fn, n, min_chunk, _threads=None):
        calls.append(n)
        return intra_op.parallel_for(fn, n, min_chunk, threads)

    old = K.parallel_for
    K.parallel_for = chunked
    try:
        out, sums = K.relu_grad_and_bias_grad(g, y)
    finally:
        K.parallel_for = old
    assert calls
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-6)
    np.testing.assert_allclose(sums, (g * (y > 0)).sum(0, dtype=np.float64), rtol=1e-5)


def test_parallel_for_covers_the_range_once_and_reraises_errors():
    seen = np.zeros(1000, np.int64)

    def mark(lo, hi):
        seen[lo:hi] += 1

    intra_op.parallel_for(mark, 1000, 10, threads=4)
    assert (seen == 1).all()

    def boom(lo, hi):
        if lo > 0:
            raise ValueError("chunk failed")

    with pytest.raises(ValueError, match="chunk failed"):
        intra_op.parallel_for(boom, 1000, 10, threads=4)
    intra_op.parallel_for(mark, 0, 10)  # an empty range calls nothing


def test_fused_relu_grad_bias_grad_kernel_small_and_mismatched():
    k = _kernel("_FusedReluGradBiasAddGrad")
    g, y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), np.array([[1.0, -1.0], [0.0, 5.0]], np.float32)
    out, sums = k(g, y)
    assert out.tolist() == [[1.0, 0.0], [0.0, 4.0]] and sums.tolist() == [1.0, 4.0]
    with pytest.raises(Exception, match="same shape"):
        k(g, y[:1])


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("m,k,n", [(517, 130, 90), (40, 300, 600)])  # split by rows / by columns
def test_gemm_in_blocks_on_the_pool_equals_one_blas_call(threads, ta, tb, m, k, n, monkeypatch):
    from sparseflow._src.kernels import parallel_gemm

    monkeypatch.setattr(intra_op, "intra_op_threads", lambda: threads)
    monkeypatch.setattr(intra_op, "gemm_mode", lambda: "pool")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    a2, b2 = (a.T if ta else a), (b.T if tb else b)
    seen = np.zeros((m, n), np.int32)

    def epilogue(out, r0, r1, c0, c1):
        seen[r0:r1, c0:c1] += 1
        out[r0:r1, c0:c1] += 1.0

    got = parallel_gemm.matmul(a2, b2, epilogue, min_flop=0)
    np.testing.assert_allclose(got, a2 @ b2 + 1.0, rtol=1e-5, atol=1e-4)
    assert got.flags.c_contiguous
    assert (seen == 1).all()  # the epilogue's blocks tile the output

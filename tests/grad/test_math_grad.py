"""Behaviours of the math gradients that the finite-difference cases cannot pin down: how ties
are broken, what integer and non-differentiable inputs receive, IndexedSlices arriving from a
gather, dynamic shapes, second derivatives, node names, and registry coverage of the math ops."""

from __future__ import annotations

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import get_op_def, registered_ops
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.grad.registry import get_gradient_function


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


# ---------------------------------------------------------------- ties
def test_reduce_max_splits_gradient_equally_among_ties():
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 5.0]])
    (g,) = tf.gradients(tf.reduce_max(x, axis=1), x)
    np.testing.assert_allclose(run(g), [[0, 0.5, 0.5], [0, 0, 1]])


def test_reduce_min_ties_with_keepdims_and_upstream_gradient():
    x = tf.constant([[2.0, 2.0, 2.0], [4.0, 1.0, 1.0]])
    m = tf.reduce_min(x, axis=-1, keepdims=True)
    (g,) = tf.gradients(m, x, grad_ys=tf.constant([[3.0], [-2.0]]))
    np.testing.assert_allclose(run(g), [[1, 1, 1], [0, -1, -1]])


@pytest.mark.parametrize("fn", [tf.maximum, tf.minimum])
def test_maximum_and_minimum_give_ties_to_x(fn):
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([1.0, 0.0, 3.0])
    gx, gy = tf.gradients(tf.reduce_sum(fn(x, y) * [1.0, 2.0, 4.0]), [x, y])
    expect_x = [1, 2, 4] if fn is tf.maximum else [1, 0, 4]
    np.testing.assert_allclose(run(gx), expect_x)
    np.testing.assert_allclose(run(gy), np.array([1, 2, 4]) - expect_x)


def test_maximum_with_a_scalar_sums_its_gradient():
    x = tf.constant([[0.5, 2.0], [3.0, -1.0]])
    y = tf.constant(1.0)
    gx, gy = tf.gradients(tf.reduce_sum(tf.maximum(x, y)), [x, y])
    np.testing.assert_allclose(run(gx), [[0, 1], [1, 0]])
    assert gy.shape.as_list() == []
    assert run(gy) == 2.0


# ---------------------------------------------------------------- None, zeros and integers
def test_cast_from_integer_gives_none():
    i = tf.constant([1, 2, 3])
    x = tf.constant([0.5, 1.5, 2.5])
    gi, gx = tf.gradients(tf.reduce_sum(tf.cast(i, tf.float32) * x), [i, x])
    assert gi is None
    np.testing.assert_allclose(run(gx), [1, 2, 3])


def test_cast_to_integer_blocks_the_gradient():
    x = tf.constant([0.5, 1.5])
    y = tf.cast(tf.cast(x, tf.int32), tf.float32) + x
    np.testing.assert_allclose(run(tf.gradients(y, x)[0]), [1, 1])


def test_cast_between_floats_casts_the_gradient_back():
    x = tf.constant([0.5, 1.5], tf.float64)
    (g,) = tf.gradients(tf.cast(x, tf.float32) * 2.0, x)
    assert g.dtype == tf.float64
    np.testing.assert_allclose(run(g), [2, 2])


@pytest.mark.parametrize("fn", [tf.floor, tf.ceil, tf.round, tf.rint, lambda x: tf.floordiv(x, 0.7),
                                lambda x: tf.truncatediv(x, 0.7), lambda x: tf.cast(tf.argmax(x), tf.float32)])
def test_piecewise_constant_ops_pass_no_gradient(fn):
    x = tf.constant([0.3, 1.7, -2.2])
    assert tf.gradients(tf.reduce_sum(fn(x)), x)[0] is None
    np.testing.assert_allclose(run(tf.gradients(tf.reduce_sum(fn(x) + x), x)[0]), [1, 1, 1])


def test_sign_gradient_is_zeros():
    x = tf.constant([-2.0, 3.0])
    np.testing.assert_array_equal(run(tf.gradients(tf.sign(x), x)[0]), [0, 0])


def test_sign_of_complex_is_x_over_abs_with_its_derivative_as_gradient():
    """tf.sign of a complex tensor builds DivNoNan(x, |x|) (as TensorFlow's): its gradient is the
    derivative of x / |x| (TensorFlow's convention: dL/dRe z + i dL/dIm z), not the Sign op's zeros."""
    z0 = np.array([3 + 4j, 0j])
    z = tf.placeholder(tf.complex128)
    y = tf.sign(z)
    assert y.op.type == "DivNoNan"
    (g,) = tf.gradients(y, z, grad_ys=tf.constant([1 - 0.5j, 2j]))
    # d(z/|z|) at 3+4j: a real loss Re(conj(u) z/|z|) moves only with the tangential direction i z/|z|.
    phase = (3 + 4j) / 5
    expect = 1j * phase * np.real(np.conj(1 - 0.5j) * 1j * phase) / 5
    np.testing.assert_allclose(run(g, {z: z0}), [expect, 0], atol=1e-12)


def test_comparison_and_select_route_gradient_only_to_the_values():
    x = tf.constant([1.0, -2.0, 3.0])
    y = tf.constant([5.0, 6.0, 7.0])
    out = tf.where(x > 0, x * 2.0, y)
    gx, gy = tf.gradients(tf.reduce_sum(out), [x, y])
    np.testing.assert_allclose(run(gx), [2, 0, 2])
    np.testing.assert_allclose(run(gy), [0, 1, 0])


def test_pow_with_zero_base_is_finite_like_tensorflow():
    x = tf.constant([0.0, 0.0, 2.0, -2.0])
    y = tf.constant([2.0, 0.5, 3.0, 2.0])
    gx, gy = tf.gradients(tf.reduce_sum(tf.pow(x, y)), [x, y])
    gx, gy = run([gx, gy])
    np.testing.assert_allclose(gx[[0, 2, 3]], [0, 12, -4])
    assert np.isinf(gx[1])  # 0.5 * 0^-0.5, as in TensorFlow
    np.testing.assert_allclose(gy, [0, 0, 8 * np.log(2.0), 0])  # no real log for x <= 0: 0


def test_div_no_nan_gradient_is_zero_where_the_divisor_is_zero():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([0.0, 4.0])
    gx, gy = tf.gradients(tf.reduce_sum(tf.div_no_nan(x, y)), [x, y])
    np.testing.assert_allclose(run(gx), [0, 0.25])
    np.testing.assert_allclose(run(gy), [0, -2.0 / 16])


# ---------------------------------------------------------------- IndexedSlices from gather
def test_elementwise_gradient_densifies_indexed_slices():
    w = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = tf.gather(tf.square(w), [2, 0, 2])
    (g,) = tf.gradients(tf.reduce_sum(rows), w)
    assert not isinstance(g, IndexedSlices)
    np.testing.assert_allclose(run(g), [[2, 4], [0, 0], [20, 24]])


def test_cast_keeps_indexed_slices_like_tensorflow():
    w = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(tf.cast(w, tf.float32), [1, 1])), w)
    assert isinstance(g, IndexedSlices)
    assert g.values.dtype == tf.float64
    np.testing.assert_allclose(run(tf.convert_to_tensor(g)), [[0, 0], [2, 2]])


# ---------------------------------------------------------------- dynamic shapes
def test_reductions_with_unknown_shapes_and_axes():
    x = tf.placeholder(tf.float64, [None, 3])
    axes = tf.placeholder(tf.int32, [None])
    value = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    feed = {x: value, axes: [-1]}
    g_sum, g_mean, g_prod, g_max = (tf.gradients(f(x, axes), x)[0] for f in
                                    (tf.reduce_sum, tf.reduce_mean, tf.reduce_prod, tf.reduce_max))
    np.testing.assert_allclose(run(g_sum, feed), np.ones((2, 3)))
    np.testing.assert_allclose(run(g_mean, feed), np.full((2, 3), 1 / 3))
    np.testing.assert_allclose(run(g_prod, feed), [[6, 3, 2], [30, 24, 20]])
    np.testing.assert_allclose(run(g_max, feed), [[0, 0, 1], [0, 0, 1]])


@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("shape", [(3, 2), (2, 3, 4), (3, 3)])
def test_svd_gradient_at_unknown_rank_is_that_of_known_shapes(shape, full_matrices):
    """TensorFlow builds no SVD gradient of U and V where the matrices' sizes are unknown; sparseflow's
    computes the same terms without choosing tall or wide when the graph is built."""
    value = np.cos(np.arange(np.prod(shape)) * 1.3).reshape(shape) + (np.arange(shape[-1]) == 0)
    known = tf.constant(value)
    unknown = tf.placeholder(tf.float64)
    grads = []
    for a in (known, unknown):
        s, u, v = tf.svd(a, full_matrices=full_matrices)
        grads += tf.gradients([tf.reduce_sum(s * s), tf.reduce_sum(tf.abs(u)), tf.reduce_sum(tf.abs(v))], a)
    want, got = run(grads, {unknown: value})
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_svd_gradient_of_full_matrices_far_from_square_fails_when_run_at_unknown_rank():
    a = tf.placeholder(tf.float64)
    _, u, _ = tf.svd(a, full_matrices=True)
    (g,) = tf.gradients(tf.reduce_sum(tf.abs(u)), a)
    with pytest.raises(tf.errors.InvalidArgumentError, match="abs\\(m - n\\) > 1"):
        run(g, {a: np.ones((2, 4))})


def test_mean_over_partially_known_shape():
    x = tf.placeholder(tf.float32, [None, 4])
    (g,) = tf.gradients(tf.reduce_mean(x), x)
    assert g.dtype == tf.float32
    np.testing.assert_allclose(run(g, {x: np.zeros((5, 4))}), np.full((5, 4), 1 / 20))


def test_binary_broadcasting_with_unknown_dimensions():
    x = tf.placeholder(tf.float64, [None, 1, 3])
    y = tf.placeholder(tf.float64, [None, 3])
    gx, gy = tf.gradients(tf.reduce_sum(x / y), [x, y])
    xv, yv = np.full((2, 1, 3), 2.0), np.array([[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]])
    gx, gy = run([gx, gy], {x: xv, y: yv})
    np.testing.assert_allclose(gx, np.broadcast_to((1 / yv).sum(0), (2, 1, 3)))
    np.testing.assert_allclose(gy, -2 * 2.0 / yv ** 2)


def test_batch_matmul_sums_over_broadcast_batch_dimensions():
    x = tf.placeholder(tf.float64, [None, 2, 3])
    y = tf.constant(np.arange(6.0).reshape(3, 2))
    gx, gy = tf.gradients(tf.reduce_sum(tf.matmul(x, y)), [x, y])
    gx, gy = run([gx, gy], {x: np.ones((4, 2, 3))})
    assert gy.shape == (3, 2)
    np.testing.assert_allclose(gy, np.full((3, 2), 8.0))
    np.testing.assert_allclose(gx, np.broadcast_to([1.0, 5.0, 9.0], (4, 2, 3)))


# ---------------------------------------------------------------- second derivatives
@pytest.mark.parametrize("fn, second", [
    (tf.tanh, lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2)),
    (tf.sigmoid, lambda v: (s := 1 / (1 + np.exp(-v))) * (1 - s) * (1 - 2 * s)),
    (tf.log, lambda v: -1 / v ** 2),
    (tf.sqrt, lambda v: -0.25 * v ** -1.5),
    (tf.reciprocal, lambda v: 2 / v ** 3),
    (lambda x: tf.pow(x, 3.0), lambda v: 6 * v),
    (tf.sin, lambda v: -np.sin(v)),
    (tf.erf, lambda v: -4 * v / np.sqrt(np.pi) * np.exp(-v ** 2)),
])
def test_second_derivatives(fn, second):
    v = np.array([0.3, 0.9, 1.7])
    x = tf.constant(v)
    (g,) = tf.gradients(tf.reduce_sum(fn(x)), x)
    (gg,) = tf.gradients(g, x)
    np.testing.assert_allclose(run(gg), second(v), rtol=1e-10)


def test_hessian_of_a_quadratic_form_through_matmul():
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    x = tf.constant([[1.0], [2.0]], tf.float64)
    q = tf.matmul(tf.matmul(x, tf.constant(a), transpose_a=True), x)
    (g,) = tf.gradients(q, x)
    rows = [tf.gradients(g[i, 0], x)[0] for i in range(2)]
    np.testing.assert_allclose(np.hstack(run(rows)), a + a.T)


def test_digamma_gradient_is_trigamma():
    x = tf.constant([1.0, 0.5, -0.5, 30.0], tf.float64)
    (g,) = tf.gradients(tf.reduce_sum(tf.digamma(x)), x)
    z = 30.0
    tail = 1 / z + 1 / (2 * z ** 2) + 1 / (6 * z ** 3) - 1 / (30 * z ** 5) + 1 / (42 * z ** 7)  # asymptotic
    np.testing.assert_allclose(run(g), [np.pi ** 2 / 6, np.pi ** 2 / 2, np.pi ** 2 / 2 + 4, tail], rtol=1e-8)


# ---------------------------------------------------------------- graph structure and names
def test_gradient_ops_are_named_after_the_forward_op():
    x = tf.constant([1.0, 2.0])
    (g,) = tf.gradients(tf.square(x), x)
    assert g.op.name.startswith("gradients/Square_grad/")


def test_matmul_gradients_are_matmuls_with_transposes():
    a = tf.constant(np.ones((2, 3)))
    b = tf.constant(np.ones((3, 4)))
    ga, gb = tf.gradients(tf.matmul(a, b), [a, b])
    assert ga.op.type == gb.op.type == "MatMul"
    assert (ga.op.get_attr("transpose_a"), ga.op.get_attr("transpose_b")) == (False, True)
    assert (gb.op.get_attr("transpose_a"), gb.op.get_attr("transpose_b")) == (True, False)
    assert ga.op.name.startswith("gradients/MatMul_grad/")


def test_equal_static_shapes_add_no_reduction():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 4.0])
    before = len(tf.get_default_graph().get_operations())
    gx, gy = tf.gradients(x + y, [x, y])
    new_types = {op.type for op in tf.get_default_graph().get_operations()[before:]}
    assert not new_types & {"BroadcastGradientArgs", "Sum", "Reshape"}


def test_every_math_op_has_a_gradient_or_not_differentiable():
    math_ops = [n for n in registered_ops() if "/ops/math_" in get_op_def(n).site.replace("\\", "/")]
    assert len(math_ops) > 100
    missing = [n for n in math_ops if get_gradient_function(n) is None]
    assert not missing, f"math ops without a gradient entry: {missing}"

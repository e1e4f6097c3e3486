"""Gradients of the special functions (Igamma, Igammac, Betainc, Zeta, Polygamma) and of RandomGamma
(in ``alpha``, by implicit reparameterization); the derivative ops IgammaGradA and RandomGammaGrad
and RandomPoissonV2 are NotDifferentiable. As in TensorFlow, only the arguments with a closed-form
derivative get one: ``x`` of Betainc, ``q`` of Zeta, ``x`` of Polygamma.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant(1.0)
    ...     print(round(float(sess.run(tf.gradients(tf.igamma(1.0, x), x)[0])), 6))
    0.367879
"""

from __future__ import annotations

from sparseflow._src.grad.math_grad_util import dense, unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.math_cwise import apply1
from sparseflow._src.ops.math_special_ops import polygamma, zeta

__all__: list[str] = []


def _igamma_partials(a, x):
    partial_a = apply1("IgammaGradA", [a, x])
    partial_x = math_ops.exp(-x + math_ops.xlogy(a - 1, x) - math_ops.lgamma(a))
    return partial_a, partial_x


@RegisterGradient("Igamma")
def _igamma_grad(op, grad):
    a, x = op.inputs
    grad = dense(grad)
    partial_a, partial_x = _igamma_partials(a, x)
    return [unbroadcast(partial_a * grad, a), unbroadcast(partial_x * grad, x)]


@RegisterGradient("Igammac")
def _igammac_grad(op, grad):
    a, x = op.inputs
    grad = dense(grad)
    partial_a, partial_x = _igamma_partials(a, x)
    return [unbroadcast(-partial_a * grad, a), unbroadcast(-partial_x * grad, x)]


@RegisterGradient("Betainc")
def _betainc_grad(op, grad):
    a, b, x = op.inputs
    log_beta = math_ops.lgamma(a) + math_ops.lgamma(b) - math_ops.lgamma(a + b)
    partial_x = math_ops.exp(math_ops.xlog1py(b - 1, -x) + math_ops.xlogy(a - 1, x) - log_beta)
    return [None, None, unbroadcast(partial_x * dense(grad), x)]


@RegisterGradient("Zeta")
def _zeta_grad(op, grad):
    x, q = op.inputs
    return [None, unbroadcast(-x * zeta(x + 1, q) * dense(grad), q)]


@RegisterGradient("Polygamma")
def _polygamma_grad(op, grad):
    n, x = op.inputs
    return [None, unbroadcast(polygamma(n + 1, x) * dense(grad), x)]


@RegisterGradient("RandomGamma")
def _random_gamma_grad(op, grad):
    shape, alpha = op.inputs
    sample = op.outputs[0]
    sample_dims = array_ops.shape(shape)[0]
    alpha_b = array_ops.reshape(alpha, array_ops.concat(
        [array_ops.ones([sample_dims], dtype="int32"), array_ops.shape(alpha)], 0))
    partial = apply1("RandomGammaGrad", [alpha_b, sample])
    return [None, math_ops.reduce_sum(dense(grad) * partial, axis=array_ops.range(sample_dims))]


for _op_type in ("IgammaGradA", "RandomGammaGrad", "RandomPoissonV2"):
    NotDifferentiable(_op_type)

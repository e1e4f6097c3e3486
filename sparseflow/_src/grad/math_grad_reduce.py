"""Gradients of reductions (Sum, Mean, Prod, Max, Min, EuclideanNorm), scans (Cumsum, Cumprod,
CumulativeLogsumexp), AddN, Cast, selection (Select, SelectV2, ClipByValue) and the complex-number
ops (Complex, Real, Imag, Angle, ComplexAbs), following TensorFlow's ``math_grad.py``.

A reduction's gradient is the output gradient reshaped to the kept-dimensions shape and spread
over the input (Tile when every shape is static, BroadcastTo otherwise). Max and Min split the
gradient equally among tied extremes; Prod uses exclusive cumulative products so zeros in the
input are handled.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 5.0]])
    ...     print(sess.run(tf.gradients(tf.reduce_max(x, axis=1), x)[0]))
    ...     print(sess.run(tf.gradients(tf.reduce_prod(x, axis=1), x)[0]))
    [[0.  0.5 0.5]
     [0.  0.  1. ]]
    [[ 9.  3.  3.]
     [ 0. 10.  0.]]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.grad.math_grad_util import (
    FLOAT_TYPES,
    conj,
    dense,
    kept_dims_shape,
    real_valued,
    reshape_to_kept_dims,
    static_axes,
    unbroadcast,
    zeros_scalar,
)
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops

__all__: list[str] = []

NotDifferentiable("All")
NotDifferentiable("Any")
NotDifferentiable("ArgMax")
NotDifferentiable("ArgMin")
NotDifferentiable("Where")


# ---------------------------------------------------------------- reductions
def _spread(op, grad):
    """The gradient of Sum: ``grad`` reshaped to the kept-dims shape and repeated over ``op.inputs[0]``."""
    x = op.inputs[0]
    (grad,) = reshape_to_kept_dims(op, dense(grad))
    kept = kept_dims_shape(x, op.inputs[1])
    if isinstance(kept, list) and x.shape.is_fully_defined():
        multiples = [d // max(k, 1) for d, k in zip(x.shape.as_list(), kept)]
        return array_ops.tile(grad, multiples)
    if isinstance(kept, list) and all(k == 1 for k in kept):  # reduced to a scalar, rank known
        return array_ops.tile(grad, array_ops.shape(x))
    return array_ops.broadcast_to(grad, array_ops.shape(x))


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return [_spread(op, grad), None]


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    sum_grad = _spread(op, grad)
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        factor = int(np.prod(x.shape.as_list())) // max(int(np.prod(y.shape.as_list())), 1)
        factor = math_ops.cast(factor, sum_grad.dtype)
    else:
        sizes = math_ops.reduce_prod(array_ops.shape(x)), math_ops.reduce_prod(array_ops.shape(y))
        factor = math_ops.cast(math_ops.floordiv(sizes[0], math_ops.maximum(sizes[1], 1)), sum_grad.dtype)
    return [math_ops.truediv(sum_grad, factor), None]


def _min_or_max_grad(op, grad):
    x = op.inputs[0]
    y, grad = reshape_to_kept_dims(op, op.outputs[0], dense(grad))
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype)
    num_selected = math_ops.reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [math_ops.divide(indicators, num_selected) * grad, None]


RegisterGradient("Max")(_min_or_max_grad)
RegisterGradient("Min")(_min_or_max_grad)


@RegisterGradient("EuclideanNorm")
def _euclidean_norm_grad(op, grad):
    output, grad = reshape_to_kept_dims(op, op.outputs[0], real_valued(dense(grad)))  # a complex norm is real
    return [math_ops.truediv(op.inputs[0], output / grad), None]


def _prod_layout(x, axes_tensor):
    """(perm, reduced_num, other_num) for moving the reduced axes of ``x`` to the front."""
    axes = static_axes(x, axes_tensor)
    if axes is not None:
        rank = x.shape.ndims
        other = [i for i in range(rank) if i not in axes]
        perm = axes + other
        dims = x.shape.as_list()
        if all(dims[i] is not None for i in range(rank)):
            return perm, int(np.prod([dims[i] for i in axes])), int(np.prod([dims[i] for i in other]))
        shape = array_ops.shape(x)
        sizes = [math_ops.reduce_prod(array_ops.gather(shape, idx)) if idx else 1 for idx in (axes, other)]
        return perm, sizes[0], sizes[1]
    shape = array_ops.shape(x)
    rank = array_ops.rank(x)
    reduced = math_ops.floormod(math_ops.cast(array_ops.reshape(axes_tensor, [-1]), dtypes.int32) + rank, rank)
    other, _ = array_ops.setdiff1d(array_ops.range(0, rank), reduced)
    perm = array_ops.concat([reduced, other], 0)
    return (perm, math_ops.reduce_prod(array_ops.gather(shape, reduced)),
            math_ops.reduce_prod(array_ops.gather(shape, other)))


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    x = op.inputs[0]
    input_shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    (grad,) = reshape_to_kept_dims(op, dense(grad))
    grad = array_ops.broadcast_to(grad, input_shape)
    perm, reduced_num, other_num = _prod_layout(x, op.inputs[1])
    permuted = array_ops.transpose(x, perm)
    permuted_shape = (permuted.shape.as_list() if permuted.shape.is_fully_defined()
                      else array_ops.shape(permuted))
    reshaped = array_ops.reshape(permuted, array_ops.stack([reduced_num, other_num])
                                 if not isinstance(reduced_num, int) or not isinstance(other_num, int)
                                 else [reduced_num, other_num])
    # The product of every other entry: exclusive products from the left times from the right.
    left = math_ops.cumprod(reshaped, axis=0, exclusive=True)
    right = math_ops.cumprod(reshaped, axis=0, exclusive=True, reverse=True)
    y = array_ops.reshape(conj(left) * conj(right), permuted_shape)
    inverse = np.argsort(perm).tolist() if isinstance(perm, list) else array_ops.invert_permutation(perm)
    out = grad * array_ops.transpose(y, inverse)
    return [array_ops.reshape(out, input_shape), None]


# ---------------------------------------------------------------- scans and AddN
@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    return [math_ops.cumsum(dense(grad), op.inputs[1], exclusive=op.get_attr("exclusive"),
                            reverse=not op.get_attr("reverse")), None]


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = math_ops.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = math_ops.cumsum(conj(prod) * dense(grad), axis, exclusive=exclusive, reverse=not reverse)
    return [out / conj(x), None]  # like TensorFlow: not defined where x has zeros


@RegisterGradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, grad):
    x, axis = op.inputs
    grad = dense(grad)
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = float(np.finfo(grad.dtype.as_numpy_dtype).min)
    # The gradient's positive and negative parts, in log space (log of 0 is the lowest float).
    log_pos = math_ops.where_v2(math_ops.greater(grad, 0.0), math_ops.log(grad), lowest)
    log_neg = math_ops.where_v2(math_ops.less(grad, 0.0), math_ops.log(-grad), lowest)

    def part(log_grad):
        scanned = math_ops.cumulative_logsumexp(log_grad - op.outputs[0], axis=axis, reverse=not reverse,
                                                exclusive=exclusive)
        return math_ops.exp(scanned + x)

    return [part(log_pos) - part(log_neg), None]


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


# ---------------------------------------------------------------- cast and selection
@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype.base_dtype
    if src in FLOAT_TYPES and grad.dtype.base_dtype in FLOAT_TYPES:
        return [math_ops.cast(grad, src)]
    return [None]


@RegisterGradient("Select")
def _select_grad(op, grad):
    c, x = op.inputs[0], op.inputs[1]
    grad = dense(grad)
    zeros = array_ops.zeros_like(x)
    return [None, math_ops.where(c, grad, zeros), math_ops.where(c, zeros, grad)]


@RegisterGradient("SelectV2")
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    grad = dense(grad)
    zeros = zeros_scalar(grad.dtype.base_dtype)
    gx = math_ops.where_v2(c, grad, zeros)
    gy = math_ops.where_v2(c, zeros, grad)
    return [None, unbroadcast(gx, x), unbroadcast(gy, y)]


@RegisterGradient("ClipByValue")
def _clip_by_value_grad(op, grad):
    x, lo, hi = op.inputs
    grad = dense(grad)
    zeros = array_ops.zeros_like(grad)
    below = math_ops.less(x, lo)
    above = math_ops.greater(x, hi)
    gx = math_ops.where_v2(math_ops.logical_or(below, above), zeros, grad)
    return [gx, unbroadcast(math_ops.where_v2(below, grad, zeros), lo),
            unbroadcast(math_ops.where_v2(above, grad, zeros), hi)]


# ---------------------------------------------------------------- complex numbers
@RegisterGradient("Complex")
def _complex_grad(op, grad):
    re, im = op.inputs
    grad = dense(grad)
    return [unbroadcast(math_ops.real(grad), re), unbroadcast(math_ops.imag(grad), im)]


def _as_complex(real_part, imag_part=None):
    zero = array_ops.zeros_like(real_part if imag_part is None else imag_part)
    return math_ops.complex(real_part, zero) if imag_part is None else math_ops.complex(zero, imag_part)


RegisterGradient("Real")(lambda op, grad: [_as_complex(dense(grad))])
RegisterGradient("Imag")(lambda op, grad: [_as_complex(None, dense(grad))])


@RegisterGradient("Angle")
def _angle_grad(op, grad):
    x = op.inputs[0]
    z = math_ops.reciprocal(math_ops.complex(math_ops.imag(x), math_ops.real(x)))
    return [-_as_complex(dense(grad)) * z]


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    return [math_ops.div_no_nan(_as_complex(dense(grad)) * op.inputs[0], _as_complex(op.outputs[0]))]

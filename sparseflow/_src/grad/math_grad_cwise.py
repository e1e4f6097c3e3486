"""Gradients of the element-wise math ops, declared as tables (one row per op type).

Unary rows map ``(op, grad)`` to the input's gradient; ``x`` is the input, ``y`` the output (both
conjugated for complex dtypes, as in TensorFlow). Binary rows map ``(x, y, z, grad)`` to the two
gradients at the broadcast shape; ``grad_util.unbroadcast`` then sums each down to its input's
shape, for every row alike. Comparisons, logical and bitwise ops, and the piecewise-constant
rounding ops are declared NotDifferentiable.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1.0, 2.0])
    ...     b = tf.constant(3.0)
    ...     gx, gb = tf.gradients(tf.reduce_sum(tf.maximum(x * b, 4.5)), [x, b])
    ...     print(sess.run(gx), sess.run(gb))
    [0. 3.] 2.0
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.grad.math_grad_util import conj, dense, real_valued, unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops

__all__: list[str] = []

_TWO_OVER_ROOT_PI = 2.0 / np.sqrt(np.pi)


def _x(op):
    return conj(op.inputs[0])


def _y(op):
    return conj(op.outputs[0])


def _trigamma(x):
    """The derivative of digamma, built from elementwise ops (no Polygamma op is registered).

    Reflection ``psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)`` moves ``x < 0.5`` to ``z >= 0.5``;
    the recurrence ``psi1(z) = 1/z^2 + psi1(z + 1)`` moves ``z`` to ``w = z + 6 >= 6.5`` where the
    asymptotic series (Bernoulli terms to ``w^-9``) is accurate to about 1e-10. The poles (0, -1,
    -2, ..., -inf) give inf, as TensorFlow's polygamma does.
    """
    reflect = math_ops.less(x, 0.5)
    z = math_ops.where_v2(reflect, 1.0 - x, x)
    total = math_ops.reciprocal(math_ops.square(z))
    for k in range(1, 6):
        total = total + math_ops.reciprocal(math_ops.square(z + float(k)))
    inv = math_ops.reciprocal(z + 6.0)
    inv2 = math_ops.square(inv)
    series = inv * (1.0 + inv * (0.5 + inv * (1.0 / 6.0 + inv2 * (-1.0 / 30.0 + inv2 * (
        1.0 / 42.0 + inv2 * (-1.0 / 30.0))))))
    psi1 = total + series
    reflected = np.pi ** 2 * math_ops.reciprocal(math_ops.square(math_ops.sin(np.pi * x))) - psi1
    pole = math_ops.logical_and(math_ops.less_equal(x, 0.0), math_ops.equal(math_ops.floor(x), x))
    return math_ops.where_v2(pole, np.inf, math_ops.where_v2(reflect, reflected, psi1))


def _one_minus_x2(op):
    return 1.0 - math_ops.square(_x(op))


# op type -> fn(op, grad) -> the input's gradient
_UNARY = {
    "Abs": lambda op, g: g * math_ops.sign(op.inputs[0]),
    "Neg": lambda op, g: -g,
    "Inv": lambda op, g: -g * math_ops.square(_y(op)),
    "Reciprocal": lambda op, g: -g * math_ops.square(_y(op)),
    "Square": lambda op, g: g * (2.0 * _x(op)),
    "Sqrt": lambda op, g: g * 0.5 / _y(op),
    "Rsqrt": lambda op, g: -0.5 * g * _y(op) * math_ops.square(_y(op)),
    "Exp": lambda op, g: g * _y(op),
    "Expm1": lambda op, g: g * math_ops.exp(_x(op)),
    "Log": lambda op, g: g * math_ops.reciprocal(_x(op)),
    "Log1p": lambda op, g: g * math_ops.reciprocal(1.0 + _x(op)),
    "Sin": lambda op, g: g * math_ops.cos(_x(op)),
    "Cos": lambda op, g: -g * math_ops.sin(_x(op)),
    "Tan": lambda op, g: math_ops.square(math_ops.reciprocal(math_ops.cos(_x(op)))) * g,
    "Asin": lambda op, g: g * math_ops.reciprocal(math_ops.sqrt(_one_minus_x2(op))),
    "Acos": lambda op, g: -g * math_ops.reciprocal(math_ops.sqrt(_one_minus_x2(op))),
    "Atan": lambda op, g: g * math_ops.reciprocal(1.0 + math_ops.square(_x(op))),
    "Sinh": lambda op, g: g * math_ops.cosh(_x(op)),
    "Cosh": lambda op, g: g * math_ops.sinh(_x(op)),
    "Tanh": lambda op, g: g * (1.0 - math_ops.square(_y(op))),
    "Asinh": lambda op, g: g / math_ops.cosh(_y(op)),
    "Acosh": lambda op, g: g / math_ops.sinh(_y(op)),
    "Atanh": lambda op, g: g * math_ops.reciprocal(_one_minus_x2(op)),
    "Sigmoid": lambda op, g: g * (_y(op) * (1.0 - _y(op))),
    "Sign": lambda op, g: array_ops.zeros_like(op.inputs[0]),
    "Erf": lambda op, g: g * _TWO_OVER_ROOT_PI * math_ops.exp(-math_ops.square(_x(op))),
    "Erfc": lambda op, g: g * -_TWO_OVER_ROOT_PI * math_ops.exp(-math_ops.square(_x(op))),
    "Erfinv": lambda op, g: g * (np.sqrt(np.pi) / 2.0) * math_ops.exp(math_ops.square(op.outputs[0])),
    "Ndtri": lambda op, g: g * np.sqrt(2.0 * np.pi) * math_ops.exp(math_ops.square(op.outputs[0]) / 2.0),
    "Lgamma": lambda op, g: g * math_ops.digamma(_x(op)),
    "Digamma": lambda op, g: g * _trigamma(_x(op)),
    "Conj": lambda op, g: math_ops.conj(g),
}


def _not_zero(x):
    return math_ops.cast(math_ops.not_equal(x, 0.0), x.dtype)


def _pow(x, y, z, g):
    x, y, z = conj(x), conj(y), conj(z)
    gx = g * y * math_ops.pow(x, y - 1.0)
    # No real logarithm for x <= 0: TensorFlow returns 0 there (and avoids the false singularity at 0).
    mask = math_ops.not_equal(x, 0.0) if x.dtype.is_complex else math_ops.greater(x, 0.0)
    safe_x = math_ops.where_v2(mask, x, array_ops.ones_like(x))
    log_x = math_ops.where_v2(mask, math_ops.log(safe_x), array_ops.zeros_like(x))
    return gx, g * z * log_x


def _max_min(select):
    def rule(x, y, z, g):
        zeros = array_ops.zeros_like(g)
        x_wins = select(x, y)  # ties go to x, like TensorFlow
        return math_ops.where_v2(x_wins, g, zeros), math_ops.where_v2(x_wins, zeros, g)

    return rule


def _squared_difference(x, y, z, g):
    gx = (2.0 * real_valued(g)) * (x - y)  # complex z = |x - y|^2 is real-valued
    return gx, -gx


def _div(x, y, z, g):
    x, y = conj(x), conj(y)
    return math_ops.divide(g, y), g * math_ops.divide(math_ops.divide(-x, y), y)


def _div_no_nan(x, y, z, g):
    x, y = conj(x), conj(y)
    return math_ops.div_no_nan(g, y), g * math_ops.div_no_nan(math_ops.div_no_nan(-x, y), y)


def _atan2(y, x, z, g):
    g_inv = g / (math_ops.square(x) + math_ops.square(y))
    return x * g_inv, -y * g_inv


def _xlogy(x, y, z, g):
    return conj(math_ops.xlogy(_not_zero(x), y)) * g, conj(math_ops.xdivy(x, y)) * g


def _xlog1py(x, y, z, g):
    return conj(math_ops.xlog1py(_not_zero(x), y)) * g, conj(math_ops.xdivy(x, y + 1.0)) * g


def _xdivy(x, y, z, g):
    return conj(math_ops.xdivy(_not_zero(x), y)) * g, conj(math_ops.xdivy(-x, math_ops.square(y))) * g


# op type -> fn(x, y, z, grad) -> (dx, dy) at the broadcast shape
_BINARY = {
    "Add": lambda x, y, z, g: (g, g),
    "AddV2": lambda x, y, z, g: (g, g),
    "Sub": lambda x, y, z, g: (g, -g),
    "Mul": lambda x, y, z, g: (g * conj(y), conj(x) * g),
    "MulNoNan": lambda x, y, z, g: (math_ops.multiply_no_nan(g, conj(y)), math_ops.multiply_no_nan(conj(x), g)),
    "Div": _div,
    "RealDiv": _div,
    "DivNoNan": _div_no_nan,
    "FloorMod": lambda x, y, z, g: (g, g * -math_ops.floordiv(x, y)),
    "TruncateMod": lambda x, y, z, g: (g, g * -math_ops.truncatediv(x, y)),
    "Mod": lambda x, y, z, g: (g, g * -math_ops.truncatediv(x, y)),
    "Pow": _pow,
    "Maximum": _max_min(math_ops.greater_equal),
    "Minimum": _max_min(math_ops.less_equal),
    "SquaredDifference": _squared_difference,
    "Atan2": _atan2,
    "Xlogy": _xlogy,
    "Xlog1py": _xlog1py,
    "Xdivy": _xdivy,
}

# Piecewise constant (TensorFlow returns None for them), boolean-valued, or integer-only ops.
NOT_DIFFERENTIABLE = [
    "Floor", "Ceil", "Round", "Rint", "FloorDiv", "TruncateDiv",
    "IsNan", "IsInf", "IsFinite",
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert",
]


def _unary_grad(rule):
    def grad_fn(op, grad):
        return [rule(op, dense(grad))]

    return grad_fn


def _binary_grad(rule):
    def grad_fn(op, grad):
        x, y = op.inputs
        gx, gy = rule(x, y, op.outputs[0], dense(grad))
        return [unbroadcast(gx, x), unbroadcast(gy, y)]

    return grad_fn


for _op_type, _rule in _UNARY.items():
    RegisterGradient(_op_type)(_unary_grad(_rule))
for _op_type, _rule in _BINARY.items():
    RegisterGradient(_op_type)(_binary_grad(_rule))
for _op_type in NOT_DIFFERENTIABLE:
    NotDifferentiable(_op_type)

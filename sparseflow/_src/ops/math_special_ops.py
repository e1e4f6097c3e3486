"""Special functions: the regularized incomplete gamma functions (Igamma, Igammac and IgammaGradA,
the derivative of Igamma in ``a``), Zeta (Hurwitz), Polygamma, Betainc (the regularized incomplete
beta function) and RandomGammaGrad (the derivative of a gamma sample in its shape), with
``tf.igamma``, ``tf.igammac``, ``tf.zeta``, ``tf.polygamma``, ``tf.betainc`` and ``tf.lbeta``.
Kernels evaluate them with SciPy's ``scipy.special``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.igamma(1.0, [0.0, 1.0])).round(6), sess.run(tf.lbeta([1.0, 2.0])).round(6))
    [0.       0.632121] -0.693147
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import unknown_shape
from sparseflow._src.ops.math_cwise import apply1, broadcast_shape_fn, broadcast_shapes, op_scope

__all__ = ["igamma", "igammac", "zeta", "polygamma", "betainc", "lbeta"]

for _op_type, _types in (("Igamma", "{bfloat16, half, float, double}"), ("Igammac", "{bfloat16, half, float, double}"),
                         ("IgammaGradA", "{float, double}"), ("Zeta", "{float, double}"),
                         ("Polygamma", "{float, double}"), ("RandomGammaGrad", "{float, double}")):
    _args = ("alpha", "sample") if _op_type == "RandomGammaGrad" else ("x", "q") if _op_type == "Zeta" else ("a", "x")
    register_op(_op_type, inputs=[f"{_args[0]}: T", f"{_args[1]}: T"],
                outputs=["output: T" if _op_type == "RandomGammaGrad" else "z: T"], attrs=[f"T: {_types}"],
                shape_fn=broadcast_shape_fn)


def _betainc_shape(op):
    """All three shapes equal, or scalars (Betainc does not broadcast otherwise)."""
    shapes = [t.shape for t in op.inputs]
    out = None
    for s in shapes:
        if s.ndims == 0:
            continue
        if s.ndims is None:
            return [unknown_shape()]
        if out is not None and not out.is_compatible_with(s):
            raise ValueError(f"Shapes of a, b and x must be equal or scalars for '{op.name}' (op: 'Betainc'): "
                             f"{', '.join(str(x) for x in shapes)}")
        out = s if out is None else out.merge_with(s)
    return [shapes[0] if out is None else broadcast_shapes(out, out)]


register_op("Betainc", inputs=["a: T", "b: T", "x: T"], outputs=["z: T"], attrs=["T: {float, double}"],
            shape_fn=_betainc_shape)


def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function ``P(a, x)``, element-wise with broadcasting.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.igamma(2.0, 1.0)).round(6))
        0.264241
    """
    return apply1("Igamma", [a, x], name=name)


def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.igammac(2.0, 1.0)).round(6))
        0.735759
    """
    return apply1("Igammac", [a, x], name=name)


def zeta(x, q, name=None):
    """The Hurwitz zeta function ``sum_n (n + q)^-x``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.zeta(2.0, 1.0)).round(6))
        1.644934
    """
    return apply1("Zeta", [x, q], name=name)


def polygamma(a, x, name=None):
    """The ``a``-th derivative of the digamma function at ``x`` (``a`` a non-negative integer value).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.polygamma(1.0, 1.0)).round(6))
        1.644934
    """
    return apply1("Polygamma", [a, x], name=name)


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function ``I_x(a, b)``; ``a``, ``b`` and ``x`` have one shape
    (or are scalars).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.betainc(2.0, 3.0, 0.5)).round(6))
        0.6875
    """
    return apply1("Betainc", [a, b, x], name=name)


def lbeta(x, name=None):
    """``log(|Beta(x)|)`` over the last dimension: ``sum(lgamma(x)) - lgamma(sum(x))``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.lbeta([[1.0, 1.0], [2.0, 3.0]])).round(6))
        [ 0.       -2.484907]
    """
    from sparseflow._src.ops.math_cwise import WRAPPERS
    from sparseflow._src.ops.math_reduction import reduce_sum

    with op_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = reduce_sum(WRAPPERS["lgamma"](x), axis=[-1])
        log_gamma_sum_x = WRAPPERS["lgamma"](reduce_sum(x, axis=[-1]))
        return log_prod_gamma_x - log_gamma_sum_x

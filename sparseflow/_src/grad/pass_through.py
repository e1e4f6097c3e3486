"""``tf.grad_pass_through``: a function whose gradient is the identity, whatever it computes
(a straight-through estimator), and ``tf.no_gradient`` (``NotDifferentiable`` under its TF2 name).
EagerPyFunc (``tf.py_function``) has no gradient, like ``tf.py_func``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([0.3, 1.7])
    ...     y = tf.grad_pass_through(tf.round)(x)
    ...     print(sess.run(y), sess.run(tf.gradients(y * 3.0, x)[0]))
    [0. 2.] [3. 3.]
"""

from __future__ import annotations

import functools

from sparseflow._src.grad.custom_gradient import custom_gradient
from sparseflow._src.grad.registry import NotDifferentiable

__all__ = ["grad_pass_through", "no_gradient"]

no_gradient = NotDifferentiable
NotDifferentiable("EagerPyFunc")


def grad_pass_through(f):
    """``f`` whose gradient passes the incoming gradient straight to its inputs (one per input).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant(2.0)
        ...     print(sess.run(tf.gradients(tf.grad_pass_through(tf.sign)(x), x)[0]))
        1.0
    """

    @custom_gradient
    def _pass_through(*args):
        def grad(*dys):
            return dys if len(dys) > 1 else dys[0]

        return f(*args), grad

    return functools.wraps(f)(_pass_through) if callable(f) else _pass_through

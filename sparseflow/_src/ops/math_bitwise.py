"""Public wrappers of the bitwise ops declared in ``math_cwise`` (BitwiseAnd/Or/Xor, Invert), for
``tf.bitwise``; the shifts are in ``math_misc_ops``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(bitwise_xor([5, 3], 1)))
    [4 2]
"""

from __future__ import annotations

from sparseflow._src.ops.math_cwise import apply1

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert"]


def bitwise_and(x, y, name=None):
    """``x & y`` element-wise with broadcasting (integer types)."""
    return apply1("BitwiseAnd", [x, y], name=name)


def bitwise_or(x, y, name=None):
    """``x | y`` element-wise with broadcasting (integer types)."""
    return apply1("BitwiseOr", [x, y], name=name)


def bitwise_xor(x, y, name=None):
    """``x ^ y`` element-wise with broadcasting (integer types)."""
    return apply1("BitwiseXor", [x, y], name=name)


def invert(x, name=None):
    """``~x`` element-wise: every bit flipped (integer types)."""
    return apply1("Invert", [x], name=name)

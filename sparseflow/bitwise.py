"""``tf.bitwise``: element-wise bit operations on integer tensors.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.bitwise.bitwise_and(12, 10)), sess.run(tf.bitwise.invert(tf.constant(0, tf.uint8))))
    8 255
"""

# ruff: noqa: F401
from sparseflow._src.ops.math_bitwise import bitwise_and, bitwise_or, bitwise_xor, invert
from sparseflow._src.ops.math_misc_ops import left_shift, right_shift

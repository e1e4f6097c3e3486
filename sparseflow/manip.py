"""``tf.manip``: TF1's home of ``roll``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.manip.roll([1, 2, 3], 1, 0)))
    [3 1 2]
"""

# ruff: noqa: F401
from sparseflow._src.ops.array_manip_ops import roll

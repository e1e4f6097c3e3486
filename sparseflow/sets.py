"""``tf.sets``: set operations over the last dimension of dense or sparse tensors.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.sets.union([[1, 2]], [[3]])).values.tolist())
    [1, 2, 3]
"""

# ruff: noqa: F401
from sparseflow._src.ops.sets_ops import set_difference, set_intersection, set_size, set_union
from sparseflow._src.ops.sets_ops import set_difference as difference
from sparseflow._src.ops.sets_ops import set_intersection as intersection
from sparseflow._src.ops.sets_ops import set_size as size
from sparseflow._src.ops.sets_ops import set_union as union

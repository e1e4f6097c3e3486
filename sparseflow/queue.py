"""``tf.queue``: the queue classes (also available as ``tf.FIFOQueue``, ...).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.queue.FIFOQueue(capacity=2, dtypes=tf.int32)
    ...     with tf.Session() as sess:
    ...         sess.run(q.enqueue(7))
    ...         print(sess.run(q.dequeue()))
    7
"""

# ruff: noqa: F401
from sparseflow._src.ops.queue_ops import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue

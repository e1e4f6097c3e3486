"""``sparseflow.distribute.collectives``: all-reduce, all-gather and broadcast across the worker
tasks of a cluster (docs/distributed.md, "Collectives").

Given a graph tensor, ``all_reduce`` / ``all_gather`` build TensorFlow's ``CollectiveReduce`` /
``CollectiveGather`` ops (``broadcast_send`` / ``broadcast_recv`` and the ``*_v2`` forms too);
given an array, they run at once among the processes' ``tf.train.Server`` tasks.

Example:
    >>> import numpy as np
    >>> import sparseflow as tf
    >>> from sparseflow.distribute import collectives
    >>> server = tf.train.Server.create_local_server()
    >>> collectives.all_reduce(np.array([1.0, 2.0]), server=server).tolist()   # a group of one task
    [1.0, 2.0]
    >>> server.stop()
"""

# ruff: noqa: F401
from sparseflow._src.ops.collective_ops import (
    all_gather_v2,
    all_reduce_v2,
    broadcast_recv,
    broadcast_recv_v2,
    broadcast_send,
    broadcast_send_v2,
)
from sparseflow._src.training.collectives import all_gather, all_reduce, barrier, broadcast, rank

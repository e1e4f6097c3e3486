"""The collectives as Python calls (``sparseflow.distribute.collectives``): given a graph tensor
they build the collective ops (ops/collective_ops.py); given an array they run at once among the
tasks of a cluster, through the collective executor of this process's ``tf.train.Server``
(distributed/collectives.py). The strategies build on both.

Example:
    >>> import numpy as np
    >>> import sparseflow as tf
    >>> server = tf.train.Server.create_local_server()
    >>> all_reduce(np.array([1.0, 2.0]), final_op="Div", server=server).tolist()   # a group of one task
    [1.0, 2.0]
    >>> with tf.Graph().as_default():
    ...     all_reduce(tf.constant([1.0]), 2, 1, 1).op.type
    'CollectiveReduce'
    >>> server.stop()
"""

from __future__ import annotations

import threading
import time

import numpy as np

from sparseflow._src.distributed.collectives import ClusterCollectiveExecutor
from sparseflow._src.framework import errors

_servers_lock = threading.Lock()


def _server(server):
    if server is not None:
        return server
    from sparseflow._src.distributed.server import _LOCAL_SERVERS

    with _servers_lock:
        servers = list(_LOCAL_SERVERS.values())
    if len(servers) != 1:
        raise ValueError(f"Collectives outside a graph need this process's tf.train.Server; there are "
                         f"{len(servers)} here: pass server=.")
    return servers[0]


def _executor(server) -> ClusterCollectiveExecutor:
    ex = getattr(server.worker, "collectives", None)
    if ex is None:
        raise errors.FailedPreconditionError(None, None, f"{server.task} has no collective executor.")
    return ex


def _defaults(server, group_size, group_key, instance_key):
    if group_size is None:
        job = server.server_def["job_name"]
        group_size = len(server.cluster_spec.task_indices(job))
    return int(group_size), int(0 if group_key is None else group_key), int(0 if instance_key is None
                                                                           else instance_key)


def _is_graph_tensor(t) -> bool:
    from sparseflow._src.framework.operation import Tensor

    return isinstance(t, Tensor)


def all_reduce(t, group_size=None, group_key=None, instance_key=None, merge_op="Add", final_op="Id",
               communication_hint="auto", timeout=0, *, server=None, device=None, out=None, name=None):
    """All-reduce of ``t`` among ``group_size`` members: ``merge_op`` ("Add", "Mul", "Min", "Max"),
    then ``final_op`` ("Id", or "Div": the mean).

    Given a graph tensor, builds a ``CollectiveReduce`` op (TensorFlow's ``collective_ops.all_reduce``).
    Given an array, runs now as member ``device`` (CPU:0 of the task) of the process's server
    (``server=`` when it has several): ``group_size`` defaults to the tasks of the server's job,
    ``group_key`` and ``instance_key`` to 0 (runs of one instance pair up in order). ``out``: an
    array to write the result into (may be ``t`` itself). Returns a NumPy array, identical on every
    member. ``timeout`` (seconds, 0: ``SPARSEFLOW_COLLECTIVE_TIMEOUT``) bounds the wait.
    """
    if _is_graph_tensor(t):
        from sparseflow._src.ops import collective_ops

        return collective_ops.all_reduce(t, group_size, group_key, instance_key, merge_op, final_op,
                                         communication_hint=communication_hint, timeout=timeout, name=name)
    srv = _server(server)
    size, key, inst = _defaults(srv, group_size, group_key, instance_key)
    return _executor(srv).all_reduce(np.asarray(t), device=device or f"{srv.task}/device:CPU:0", group_size=size,
                                     group_key=key, instance_key=inst, merge_op=merge_op, final_op=final_op,
                                     timeout=timeout, what="all_reduce", out=out)


def all_gather(t, group_size=None, group_key=None, instance_key=None, communication_hint="auto", timeout=0, *,
               server=None, device=None, name=None):
    """Every member's ``t`` concatenated along dim 0, in rank order (``CollectiveGather`` for a graph
    tensor). Outside a graph members may differ in dim 0."""
    if _is_graph_tensor(t):
        from sparseflow._src.ops import collective_ops

        return collective_ops.all_gather(t, group_size, group_key, instance_key,
                                         communication_hint=communication_hint, timeout=timeout, name=name)
    srv = _server(server)
    size, key, inst = _defaults(srv, group_size, group_key, instance_key)
    return _executor(srv).all_gather(np.asarray(t), device=device or f"{srv.task}/device:CPU:0", group_size=size,
                                     group_key=key, instance_key=inst, timeout=timeout, what="all_gather")


def broadcast(t, root=0, group_size=None, group_key=None, instance_key=None, timeout=0, *, server=None,
              device=None):
    """The tensor of the member of rank ``root`` on every member (outside a graph; in a graph use
    ``broadcast_send`` / ``broadcast_recv``). Every member passes ``t``: the root its value, the
    others an array of the same shape and dtype (its values are not read)."""
    srv = _server(server)
    size, key, inst = _defaults(srv, group_size, group_key, instance_key)
    ex = _executor(srv)
    dev = device or f"{srv.task}/device:CPU:0"
    seconds = timeout if timeout and timeout > 0 else None
    deadline = time.monotonic() + (seconds or 600.0)
    group = ex.group(dev, size, key, deadline)
    if not 0 <= root < size:
        raise ValueError(f"broadcast: root must be a rank in [0, {size}), got {root}.")
    arr = np.asarray(t)
    is_root = group.rank_of(dev) == root
    return ex.broadcast(arr if is_root else None, device=dev, group_size=size, group_key=key, instance_key=inst,
                        root=is_root, shape=arr.shape, dtype=arr.dtype, timeout=timeout, what="broadcast")


def barrier(group_size=None, group_key=None, instance_key=None, timeout=0, *, server=None, device=None):
    """Returns once every member called it (an all-reduce of one number)."""
    all_reduce(np.zeros(1, np.int32), group_size, group_key, instance_key, timeout=timeout, server=server,
               device=device)


def rank(group_size=None, group_key=None, *, server=None, device=None, timeout=0) -> int:
    """This member's rank in the group (joins it if needed)."""
    srv = _server(server)
    size, key, _ = _defaults(srv, group_size, group_key, 0)
    dev = device or f"{srv.task}/device:CPU:0"
    deadline = time.monotonic() + (timeout if timeout and timeout > 0 else 600.0)
    return _executor(srv).group(dev, size, key, deadline).rank_of(dev)


__all__ = ["all_reduce", "all_gather", "broadcast", "barrier", "rank"]

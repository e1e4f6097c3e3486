"""``tf.train.replica_device_setter``: variables on parameter servers, everything else on the worker.

``replica_device_setter(...)`` returns a device function for ``tf.device``. Each op whose type is
a "ps op" (variables and mutable tables by default) goes to ``ps_device`` with a task chosen by
``ps_strategy`` (round robin over the ps tasks unless told otherwise); every other op goes to
``worker_device``. With ``merge_devices`` (the default) the fields an inner ``tf.device`` scope
already set win; the strategy is only consulted when the op's job is unset or is the ps job.
Ops made under ``colocate_with`` (variable reads, initializers, optimizer slots and updates)
follow their variable and never reach the device function.

The strategies: round robin (default), :class:`GreedyLoadBalancingStrategy` (the least loaded
task by a load function such as :func:`byte_size_load_fn`) and :class:`RandomStrategy` (a hash
of the op name).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    ...         a = tf.Variable(1.0, name="a")
    ...         b = tf.Variable(2.0, name="b")
    ...         c = tf.Variable(3.0, name="c")
    ...         s = a + b
    >>> a.device, b.device, c.device, s.device
    ('/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:0', '/job:worker')
"""

from __future__ import annotations

import hashlib

import numpy as np

from sparseflow._src.distributed.cluster_spec import ClusterSpec
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.tensor_shape import as_shape

__all__ = ["replica_device_setter", "GreedyLoadBalancingStrategy", "RandomStrategy", "byte_size_load_fn",
           "STANDARD_PS_OPS"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
                   "DecisionTreeResource")


class _RoundRobinStrategy:
    """Ps task 0, 1, ..., num_tasks - 1, 0, ... in the order ps ops are created."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Places each ps op on the task with the least load so far (ties: the lowest task), then adds
    ``load_fn(op)`` to that task's load. The result depends on the order ops are created.

    >>> import sparseflow as tf
    >>> strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
    ...         big = tf.Variable(tf.zeros([100]), name="big")
    ...         small = [tf.Variable(tf.zeros([10])) for _ in range(3)]
    >>> big.device, [v.device for v in small]
    ('/job:ps/task:0', ['/job:ps/task:1', '/job:ps/task:1', '/job:ps/task:1'])
    """

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


class RandomStrategy:
    """A ps task from the MD5 hash of ``"<op name>_<seed>"``: deterministic across runs and
    processes, independent of the order ops are created."""

    def __init__(self, num_ps_tasks, seed=0):
        self._num_tasks = num_ps_tasks
        self._seed = seed

    def __call__(self, op):
        digest = hashlib.md5(f"{op.name}_{self._seed}".encode()).hexdigest()
        return int(int(digest, 16) % self._num_tasks)


def byte_size_load_fn(op):
    """The bytes of ``op``'s single output (a variable's size), for GreedyLoadBalancingStrategy."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op.name} (type {op.type}) must have a single output to measure its byte size, "
                         f"but has {len(op.outputs)}.")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined() and "shape" in op.attrs:  # a variable's declared shape
        shape = as_shape(op.attrs["shape"])
    if not shape.is_fully_defined():
        raise ValueError(f"Op {op.name} (type {op.type}) has the output shape {shape}, which is not fully "
                         f"defined; byte_size_load_fn needs a static shape.")
    return shape.num_elements() * output.dtype.base_dtype.size


def _spec(device) -> DeviceSpec:
    if isinstance(device, DeviceSpec):
        return device
    return DeviceSpec.from_string(device.to_string() if hasattr(device, "to_string") else (device or ""))


class _ReplicaDeviceChooser:
    """The device function: ps ops to the ps job (task by strategy), the rest to the worker."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        """The device of ``op`` given the device inner scopes gave it so far (``op.device``)."""
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = _spec(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = DeviceSpec(ps.job, ps.replica, int(self._ps_strategy(op)), ps.device_type, ps.device_index)
            return ps.merge_from(current).to_string()
        return _spec(self._worker_device or "").merge_from(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``tf.device`` that puts ps ops (variables) on parameter servers.

    ``cluster`` (a dict or ClusterSpec) overrides ``ps_tasks`` with the number of tasks of the ps
    job; returns None (no placement) when there are no ps tasks.

    >>> import sparseflow as tf
    >>> cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222"]}
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
    ...         w = tf.Variable([1.0], name="w")
    ...         with tf.device("/cpu:0"):
    ...             b = tf.Variable([1.0], name="b")
    ...         y = w * b
    >>> w.device, b.device, y.device
    ('/job:ps/task:0', '/job:ps/task:1/device:CPU:0', '/job:worker/task:0')
    """
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        jobs = spec.as_dict()
        ps_job = _spec(ps_device).job
        if ps_job not in jobs or jobs[ps_job] is None:
            return None
        ps_tasks = len(jobs[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError(f"ps_strategy must be callable, got {ps_strategy!r}")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function

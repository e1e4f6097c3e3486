"""All-reduce strategies: dense variables mirrored on every worker, embedding tables sharded over them.

* ``MultiWorkerMirroredStrategy``: every worker holds its own copy of every dense variable (and of
  the global step and optimizer slots), the same bits everywhere: the chief initializes or
  restores them and broadcasts them when the session starts; each step every worker averages the
  dense gradients with the others (all-reduce in buckets, overlapping the backward pass:
  all_reduce_optimizer.py) and applies the same update. Synchronous. Embedding tables are sharded
  over the workers (as ``PsStrategy`` shards them) and trained synchronously too, with no state
  kept between steps: every worker all-gathers the row gradients (keys, gradients, counters) of
  the step, keeps the keys its own shard owns and applies their mean over the workers there once,
  with the table's per-row optimizer; the last dense bucket waits for that push, so no worker
  pulls a row before its update is in. With the same seeds and data, N workers with batch B give
  the parameters (dense and table rows) of one process with batch N*B.
* ``HybridStrategy``: the same mirrored dense variables and all-reduced dense gradients; the
  tables' rows are pushed asynchronously instead, each worker its share of the global mean
  gradient (1/N of its own), applied by the shard's per-row optimizer as it arrives. ``staleness``
  bounds how far behind a worker's pushes may be: 0 waits for them within the step, k > 0 lets a
  step return once its pushes are sent, with at most k of its steps' pushes in flight (the rows
  it pulls then miss at most its last k steps' pushes and the other workers' last k + 1).

Both run between-graph, launched like ``PsStrategy`` (``sparseflow launch --ps 0 --workers N``,
``mpiexec -n N``, ``TF_CONFIG`` of a worker job, or of a chief and a worker job as Kubeflow's TFJob
sets it: the chief is then a worker that also checkpoints, rank 0 of the all-reduce and the first
table shard, as in TensorFlow) and used as strategy.py shows: ``scope()``,
``wrap_optimizer(opt)`` with ``sparseflow.embedding.minimize``, ``training_session()`` (its
scaffold broadcasts the chief's variables), ``finish()`` and ``release()``. A plain ``tf.Session``
on ``strategy.target`` works too, after ``strategy.initialize(sess)``. Every worker must run the
same number of steps: each step's all-reduce waits for all of them, and fails, naming the worker
that is missing, when one has died (at once) or stopped taking part (at ``collective_timeout``).

Example (one worker, in-process)::

    >>> import sparseflow as tf
    >>> from sparseflow._src.distributed.cluster_resolver import SimpleClusterResolver
    >>> from sparseflow._src.distributed.launcher import free_ports
    >>> spec = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{free_ports(1)[0]}"]})
    >>> s = MultiWorkerMirroredStrategy(SimpleClusterResolver(spec, task_type="worker", task_id=0))
    >>> with tf.Graph().as_default():
    ...     with s.scope():
    ...         w = tf.Variable([2.0], name="w")
    ...         step = tf.train.get_or_create_global_step()
    ...         opt = s.wrap_optimizer(tf.train.GradientDescentOptimizer(0.5))
    ...         train = opt.minimize(tf.reduce_sum(w * w), global_step=step)
    ...     with s.training_session() as sess:
    ...         _ = sess.run(train)
    ...         print(sess.run(w), int(sess.run(step)))
    ...         s.finish(sess)
    [0.] 1
    >>> s.server.stop()
"""

from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

from sparseflow._src.embedding import embedding_ops
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.ops import (
    array_index_ops,
    array_join_ops,
    array_ops,
    collective_ops,
    constant_op,
    core_ops,
    math_cast_select,
    math_ops,
    nn_segment_ops,
)
from sparseflow._src.ops.variables import local_variables_initializer
from sparseflow._src.training.distribute.all_reduce_optimizer import AllReduceOptimizer
from sparseflow._src.training.distribute.strategy import Strategy

__all__ = ["MultiWorkerMirroredStrategy", "HybridStrategy", "TableUpdate"]

DEFAULT_BUCKET_BYTES = 4 << 20  # a bucket's all-reduce starts once this many bytes of gradients are in
DEFAULT_GROUP_KEY = 0x53464D  # the collective group of the strategy's workers
_BCAST_DTYPES = (dtypes.bool, dtypes.float32, dtypes.float16, dtypes.float64, dtypes.int32, dtypes.int64)


class TableUpdate(NamedTuple):
    """The table ops of one step: ``ops`` (in the train op) and ``before_last_bucket`` (ops every
    worker must have run before any ends the step: the last dense bucket's all-reduce waits for
    them, or a barrier when there is no dense gradient)."""

    ops: list
    before_last_bucket: list


class MultiWorkerMirroredStrategy(Strategy):
    """Mirrored dense variables kept identical by all-reduced gradients; tables sharded over the
    workers and trained synchronously (see the module docstring).

    Args:
        cluster_resolver: the cluster (default: ``resolve_cluster()``: ``TF_CONFIG``, mpiexec).
        bucket_bytes: gradient bytes per all-reduce bucket (smaller: more overlap, more runs).
        group_key: the collective group key of the strategy's all-reduces and broadcasts.
        collective_timeout: seconds a step's collective waits for the other workers (0:
            ``SPARSEFLOW_COLLECTIVE_TIMEOUT``, 120 s by default); a dead worker fails it at once.
    """

    def __init__(self, cluster_resolver=None, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                 group_key: int = DEFAULT_GROUP_KEY, collective_timeout: float = 0, **kwargs):
        if int(bucket_bytes) < 1:
            raise ValueError(f"bucket_bytes must be positive, got {bucket_bytes}")
        self.bucket_bytes = int(bucket_bytes)
        self.group_key = int(group_key)
        self.collective_timeout = float(collective_timeout)
        self._instance_keys = itertools.count(1)
        self._mirror_sync: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> op
        super().__init__(cluster_resolver, **kwargs)

    # ------------------------------------------------------------------ the cluster and placement
    def _check_cluster(self):
        if "ps" in self.cluster_spec.jobs and self.cluster_spec.num_tasks("ps"):
            raise ValueError(f"{type(self).__name__} has no ps job (the workers hold the variables and serve the "
                             f"table shards): launch with --ps 0, or use ParameterServerStrategy for ps tasks")
        other = sorted(set(self.cluster_spec.jobs) - set(self.TRAINING_JOBS) - {"ps", "evaluator"})
        if other:
            raise ValueError(f"{type(self).__name__} trains on the tasks of the chief and worker jobs; the cluster "
                             f"also has {other}")
        if "chief" in self.cluster_spec.jobs and self.cluster_spec.num_tasks("chief") > 1:
            raise ValueError(f"{type(self).__name__}: a cluster has one chief task, this one "
                             f"{self.cluster_spec.num_tasks('chief')}")
        if not self.workers:
            raise ValueError(f"{type(self).__name__} needs a chief or worker job: {self.cluster_spec.as_dict()}")

    def device_function(self):
        """Everything (variables too) on this worker's task; embedding tables sharded over the training
        tasks, chief first (``/job:chief/task:0`` as in TensorFlow's MultiWorkerMirroredStrategy: a
        worker that also checkpoints, rank 0 of the all-reduce), then the worker job's tasks."""
        return _OnThisTask(self.task_device, self.workers).device_function

    def next_instance_key(self) -> int:
        """A new collective instance key (every worker builds its graph in the same order)."""
        return next(self._instance_keys)

    def wrap_optimizer(self, optimizer):
        """``optimizer`` behind an all-reduce of the dense gradients (``AllReduceOptimizer``)."""
        if isinstance(optimizer, AllReduceOptimizer):
            return optimizer
        return AllReduceOptimizer(optimizer, self)

    # ------------------------------------------------------------------ tables
    def table_update(self, grads_and_lookups) -> TableUpdate:
        """Synchronous by key, with no state between steps: every worker all-gathers the row gradients
        (keys, gradients, counters) of every table, keeps the keys its own shard owns, and applies
        their mean over the workers there, once (duplicate keys summed); the last dense bucket (or a
        one-number all-reduce) waits for that push, so no worker pulls a row before its update."""
        pairs = list(grads_and_lookups)
        if not pairs:
            return TableUpdate([], [])
        _check_sharded(pairs, self)
        by_table: dict = {}
        for grad, lk in pairs:
            by_table.setdefault(lk.table.name, (lk.table, []))[1].append((grad, lk))
        workers = [DeviceSpec.from_string(w) for w in self.workers]
        for table, _ in by_table.values():  # each worker pushes into the shard on its own task
            shards = [DeviceSpec.from_string(d) for d in table.shard_devices]
            if [(d.job, d.task) for d in shards] != [(w.job, w.task) for w in workers]:
                raise ValueError(f"{type(self).__name__}: embedding table {table.name!r} is sharded over "
                                 f"{table.shard_devices}, not one shard per worker in order: create it inside "
                                 f"strategy.scope() without devices=.")
        g = get_default_graph()
        pushes, gathered = [], {}
        with g.device(self.task_device), g.name_scope("mirrored_table_sync"):
            for table, group in by_table.values():
                keys = tuple(lk.keys for _, lk in group)
                if keys not in gathered:  # tables looked up with the same keys gather them once
                    gathered[keys] = self._gather(_concat([math_ops.cast(k, dtypes.int64) for k in keys]))
                all_keys = gathered[keys]
                grads = self._gather(_concat([_dense_rows(gr, lk) for gr, lk in group]))
                counts = self._gather_optional([lk.counts for _, lk in group])
                clicks = self._gather_optional([lk.clicks for _, lk in group])
                mine = array_ops.reshape(math_cast_select.where(math_ops.equal(
                    embedding_ops.part_index(all_keys, table.num_parts), self.worker_index)), [-1])
                k, gr, c, cl, lr = table._push_inputs(_take(all_keys, mine),
                                                      _take(grads, mine) * (1.0 / self.num_workers),
                                                      _take(counts, mine), _take(clicks, mine), None)
                with g.colocate_with(table.handles[self.worker_index].op):
                    pushes.append(embedding_ops.table_push(table.handles[self.worker_index], k, gr, c, cl, lr,
                                                           name=f"{table.name}_sync_push"))
        return TableUpdate([], [core_ops.group(*pushes, name="mirrored_table_pushes")])

    def _gather(self, t):
        return collective_ops.all_gather(t, self.num_workers, self.group_key, self.next_instance_key(),
                                         timeout=self.collective_timeout)

    def _gather_optional(self, parts):
        """The members' per-key counters gathered, or the empty "none" vector when no lookup has any."""
        if all(_is_empty(p) for p in parts):
            return parts[0]
        return self._gather(_concat([math_ops.cast(p, dtypes.float32) for p in parts]))

    def step_barrier(self, deps, name="all_workers_done"):
        """An all-reduce of one number after ``deps``: done once every worker has run its ``deps``."""
        g = get_default_graph()
        with g.device(self.task_device), g.name_scope(name), g.control_dependencies(deps):
            handle = collective_ops.all_reduce_start([constant_op.constant([0], dtypes.int32)], self.num_workers,
                                                     self.group_key, self.next_instance_key(),
                                                     timeout=self.collective_timeout)
        return collective_ops.all_reduce_done(handle, dtypes.int32, [[1]], name=name)[0].op

    # ------------------------------------------------------------------ mirrored variables
    def mirrored_variables(self, graph=None) -> list:
        """The global variables of ``graph`` on this worker's task (every worker has the same list)."""
        g = graph or get_default_graph()
        mine = DeviceSpec.from_string(self.task_device)
        out = []
        for v in g.get_collection(GraphKeys.GLOBAL_VARIABLES):
            d = DeviceSpec.from_string(v.device or "")
            if (d.job, d.task or 0) == (mine.job, mine.task):
                out.append(v)
        return out

    def sync_op(self, timeout: float = 600.0):
        """The op making this worker's variables the chief's: the chief broadcasts its values (one
        broadcast per dtype), the others receive and assign them. Run after the chief initialized or
        restored (the scaffold of ``training_session`` runs it as the local init op)."""
        g = get_default_graph()
        if g in self._mirror_sync:
            return self._mirror_sync[g]
        by_dtype: dict = {}
        for v in self.mirrored_variables(g):
            d = v.dtype.base_dtype
            if d not in _BCAST_DTYPES:
                raise TypeError(f"{type(self).__name__} broadcasts variables of {[t.name for t in _BCAST_DTYPES]}; "
                                f"{v.name} is {d.name}: place it outside the strategy's scope.")
            if not v.get_shape().is_fully_defined():
                raise ValueError(f"{type(self).__name__} mirrors variables of a fully defined shape; {v.name} has "
                                 f"{v.get_shape()}.")
            by_dtype.setdefault(d, []).append(v)
        ops = []
        with g.device(self.task_device), g.name_scope("mirror_from_chief"):
            for d, vs in by_dtype.items():
                sizes = [v.get_shape().num_elements() for v in vs]
                total = sum(sizes)
                key = self.next_instance_key()
                if self.num_workers == 1:
                    continue
                if self.is_chief:
                    flat = array_join_ops.concat([array_ops.reshape(v.read_value(), [-1]) for v in vs], 0)
                    ops.append(collective_ops.broadcast_send(flat, [total], d, self.num_workers, self.group_key,
                                                             key, timeout=timeout).op)
                else:
                    flat = collective_ops.broadcast_recv([total], d, self.num_workers, self.group_key, key,
                                                         timeout=timeout)
                    parts = array_join_ops.split(flat, sizes) if len(vs) > 1 else [flat]
                    ops += [v.assign(array_ops.reshape(p, v.get_shape()), read_value=False) for v, p in zip(vs, parts)]
            op = core_ops.group(*ops, name="mirror_from_chief")
        self._mirror_sync[g] = op
        return op

    def _scaffold(self, scaffold, timeout):
        from sparseflow._src.training.session.scaffold import Scaffold

        base = scaffold if scaffold is not None else Scaffold()
        local = base.local_init_op if base.local_init_op is not None else Scaffold.default_local_init_op()
        with get_default_graph().control_dependencies([local]):
            sync = core_ops.group(self.sync_op(timeout), name="mirrored_local_init")
        # nothing to wait for before the local init: the broadcast itself waits for the chief
        ready = constant_op.constant([], dtypes.string, name="mirrored_ready_for_local_init")
        return Scaffold(ready_for_local_init_op=ready, local_init_op=sync, copy_from_scaffold=base)

    def training_session(self, checkpoint_dir=None, hooks=None, save_checkpoint_steps=None,
                         save_checkpoint_secs=None, max_wait_secs=600.0, scaffold=None, **kwargs):
        """``Strategy.training_session`` whose scaffold gives every worker the chief's variables when
        the session starts (after the chief initialized them or restored ``checkpoint_dir``)."""
        return super().training_session(checkpoint_dir, hooks, save_checkpoint_steps, save_checkpoint_secs,
                                         max_wait_secs, self._scaffold(scaffold, max_wait_secs), **kwargs)

    def initialize(self, sess, init_op=None, timeout: float = 600.0) -> None:
        """For a plain session on ``target``: the chief runs ``init_op`` (default: initialize the global
        variables), every worker initializes its local variables and takes the chief's values."""
        with sess.graph.as_default():
            sync = self.sync_op(timeout)
            local = local_variables_initializer()
        if self.is_chief:
            sess.run(init_op if init_op is not None else _global_init(sess.graph))
        sess.run(local)
        sess.run(sync)


class HybridStrategy(MultiWorkerMirroredStrategy):
    """Mirrored dense variables with all-reduced gradients (sync); table rows pushed asynchronously
    to their shards, with a bounded ``staleness`` (see the module docstring).

    Args:
        staleness: steps of pushes a worker may have in flight (0: each step waits for its pushes).
        The others are ``MultiWorkerMirroredStrategy``'s.
    """

    def __init__(self, cluster_resolver=None, staleness: int = 0, **kwargs):
        if int(staleness) < 0:
            raise ValueError(f"staleness must be >= 0 (0: a step waits for its table pushes), got {staleness}")
        self.staleness = int(staleness)
        super().__init__(cluster_resolver, **kwargs)

    def table_update(self, grads_and_lookups) -> TableUpdate:
        """Each worker pushes 1/N of its row gradients (the global mean's share) to the owning shards."""
        pairs = list(grads_and_lookups)
        if not pairs:
            return TableUpdate([], [])
        _check_sharded(pairs, self)
        from sparseflow._src.embedding.api import apply_lookup_gradients

        scale = 1.0 / self.num_workers
        g = get_default_graph()
        with g.device(self.task_device):
            scaled = [(_scaled(grad, scale) if self.num_workers > 1 else grad, lk) for grad, lk in pairs]
            push = apply_lookup_gradients(scaled, staleness=self.staleness, name="hybrid_table_push")
        return TableUpdate([push], [])

    def finish(self, sess, timeout: float = 600.0) -> None:
        """Waits for this worker's table pushes still in flight, then ``Strategy.finish``."""
        from sparseflow._src.kernels.embedding_cluster import flush_pending_pushes

        flush_pending_pushes(self.server.worker, timeout)
        super().finish(sess, timeout)


class _OnThisTask:
    """A device function putting every op on ``task`` (merged with the op's own device, as
    ``replica_device_setter`` does); embedding tables created under it are sharded over
    ``table_shard_devices`` (read by the embedding layer)."""

    def __init__(self, task: str, table_shard_devices):
        self._task = DeviceSpec.from_string(task)
        self.table_shard_devices = list(table_shard_devices)

    def device_function(self, op):
        return self._task.merge_from(DeviceSpec.from_string(op.device or "")).to_string()


def _scaled(grad, scale):
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values * scale, grad.indices, grad.dense_shape)
    return math_ops.multiply(grad, scale)


def _check_sharded(pairs, strategy):
    local = sorted({lk.table.name for _, lk in pairs if not lk.table.shard_devices})
    if local:
        raise ValueError(f"{type(strategy).__name__}: embedding table(s) {local} are not sharded over the workers: "
                         f"create them inside strategy.scope() (devices=None).")


def _is_empty(t) -> bool:
    return t.shape.ndims == 1 and t.shape[0] == 0


def _take(t, indices):
    return t if _is_empty(t) else array_index_ops.gather(t, indices)


def _concat(parts):
    return parts[0] if len(parts) == 1 else array_join_ops.concat(parts, 0)


def _dense_rows(grad, lk):
    """The gradient of a lookup's pulled rows as a float32 [U, dim] tensor."""
    if isinstance(grad, IndexedSlices):
        grad = nn_segment_ops.unsorted_segment_sum(grad.values, grad.indices, array_ops.size(lk.keys))
    return math_ops.cast(grad, dtypes.float32)


def _global_init(graph):
    from sparseflow._src.ops.variables import global_variables_initializer

    with graph.as_default():
        return global_variables_initializer()
